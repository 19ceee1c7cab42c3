/* Encoded image datasets: opening a folder or packed shards behind one call, reading a
 * sample's bytes (a file, or a checksummed shard record), and naming where a sample lives. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "image_set.h"

void image_set_where(const struct rt_image_set *s, long i, char *out, size_t cap) {
    if (s->packed)
        snprintf(out, cap, "%s/%s at offset %llu", s->root, s->shard_names[s->shard[i]],
                 (unsigned long long)s->offset[i]);
    else if (!s->root[0])   /* an ImageData list's whole paths */
        snprintf(out, cap, "%s", s->paths[i]);
    else
        snprintf(out, cap, "%s/%s", s->root, s->paths[i]);
}

static uint8_t *reserve(uint8_t **buf, size_t *cap, size_t need) {
    if (need > *cap) {
        *buf = rt_xrealloc(*buf, need);
        *cap = need;
    }
    return *buf;
}

static int read_file(const char *path, uint8_t **buf, size_t *cap, size_t *len, char *why, size_t why_cap) {
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, why_cap, "cannot open: %s", strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    size_t n = (size_t)st.st_size, got = 0;
    reserve(buf, cap, n + 1);
    while (got < n) {
        ssize_t r = read(fd, *buf + got, n - got);
        if (r <= 0) {
            snprintf(why, why_cap, "read failed after %zu of %zu bytes: %s", got, n, r ? strerror(errno) : "end of file");
            close(fd);
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    *len = n;
    return 0;
}

int image_set_read(const struct rt_image_set *s, long i, uint8_t **buf, size_t *cap, size_t *len,
                   char *why, size_t why_cap) {
    if (!s->packed) {
        char path[4096];
        image_set_where(s, i, path, sizeof path);
        return read_file(path, buf, cap, len, why, why_cap);
    }
    size_t n = s->length[i], total = sizeof(rt_rec_header) + n;
    reserve(buf, cap, total);
    ssize_t r = pread(s->fds[s->shard[i]], *buf, total, (off_t)s->offset[i]);
    if (r != (ssize_t)total) {
        snprintf(why, why_cap, "short read (%zd of %zu bytes): %s", r, total, r < 0 ? strerror(errno) : "shard truncated");
        return -1;
    }
    rt_rec_header h;
    memcpy(&h, *buf, sizeof h);
    if (h.magic != RT_REC_MAGIC || h.length != n) {
        snprintf(why, why_cap, "not a record header (the shard or its index is damaged; re-run trainc pack)");
        return -1;
    }
    uint32_t crc = (uint32_t)crc32(0L, *buf + sizeof h, (uInt)n);
    if (crc != h.crc32) {
        snprintf(why, why_cap, "checksum mismatch (crc32 %08x, record says %08x): the shard is corrupt", crc, h.crc32);
        return -1;
    }
    memmove(*buf, *buf + sizeof h, n);
    *len = n;
    return 0;
}

void image_set_free(struct rt_image_set *s) {
    for (long i = 0; s->paths && i < s->n; i++) free(s->paths[i]);
    for (int k = 0; k < s->n_shards; k++) {
        if (s->fds && s->fds[k] >= 0) close(s->fds[k]);
        free(s->shard_names[k]);
    }
    for (int k = 0; s->classes && k < s->n_classes; k++) free(s->classes[k]);
    free(s->paths), free(s->shard_names), free(s->fds), free(s->shard), free(s->offset);
    free(s->length), free(s->classes), free(s->root);
    memset(s, 0, sizeof *s);
}

static int exists(const char *p) { return access(p, F_OK) == 0; }

rt_status rt_dataset_open_images(rt_dataset *ds, const char *path, const rt_dataset *train,
                                 int out_h, int out_w, int classes, rt_err *err) {
    memset(ds, 0, sizeof *ds);
    struct rt_image_set *s = rt_xcalloc(1, sizeof *s);
    const struct rt_image_set *known = train ? train->encoded : NULL;
    char index[4096];
    snprintf(index, sizeof index, "%s.index", path);
    rt_status st;
    struct stat sb;
    if (exists(index)) st = image_shards_open(s, &ds->labels, index, known, err);
    else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) st = image_folder_open(s, &ds->labels, path, known, err);
    else
        st = rt_fail(err, RT_E_NOT_FOUND,
                     "pass --data DIR holding train/ and val/ image folders (train/<class>/*.JPEG), or "
                     "the output of trainc pack (train.index, val.index and their shards)",
                     "image data %s: neither a folder nor a packed index %s", path, index);
    if (st) {
        free(s);
        return st;
    }
    const struct rt_image_set *names = known ? known : s;
    if (classes > 0 && names->n_classes != classes) {
        st = rt_fail(err, RT_E_MISMATCH, "set net.classes to the number of class folders, or point --data at the right set",
                     "%s has %d classes but the net has %d outputs", path, names->n_classes, classes);
        image_set_free(s);
        free(s);
        free(ds->labels);
        ds->labels = NULL;
        return st;
    }
    ds->encoded = s;
    ds->n = s->n;
    ds->c = 3, ds->h = out_h, ds->w = out_w;
    ds->classes = names->n_classes;
    return RT_OK;
}

const char *rt_dataset_class_name(const rt_dataset *ds, int k) {
    return ds->encoded && k >= 0 && k < ds->encoded->n_classes ? ds->encoded->classes[k] : NULL;
}
