/* Packed shards (written by trainc pack): PATH.index lists the shard files and each record's
 * shard, offset, length and label; classes.txt beside it names the labels. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "image_set.h"

static char *dir_of(const char *path) {
    char *d = rt_xstrdup(path);
    char *slash = strrchr(d, '/');
    if (slash) *slash = 0;
    else strcpy(d, ".");
    return d;
}

static rt_status read_classes(struct rt_image_set *s, rt_err *err) {
    char p[4096], line[4096];
    snprintf(p, sizeof p, "%s/classes.txt", s->root);
    FILE *f = fopen(p, "r");
    if (!f) return rt_fail(err, RT_E_NOT_FOUND, "re-run trainc pack into this directory", "cannot open %s: %s", p, strerror(errno));
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0]) continue;
        if (s->n_classes == cap) s->classes = rt_xrealloc(s->classes, (size_t)(cap = cap ? 2 * cap : 64) * sizeof(char *));
        s->classes[s->n_classes++] = rt_xstrdup(line);
    }
    fclose(f);
    return RT_OK;
}

rt_status image_shards_open(struct rt_image_set *s, int32_t **labels, const char *index_path,
                            const struct rt_image_set *known, rt_err *err) {
    memset(s, 0, sizeof *s);
    s->packed = 1;
    s->root = dir_of(index_path);
    FILE *f = fopen(index_path, "r");
    if (!f) return rt_fail(err, RT_E_IO, NULL, "cannot open %s: %s", index_path, strerror(errno));
    char magic[64];
    int version = 0;
    long n = -1;
    int shards = -1;
    rt_status st = RT_OK;
    if (fscanf(f, "%63s %d %ld %d", magic, &version, &n, &shards) != 4 || strcmp(magic, RT_PACK_INDEX_MAGIC) ||
        version != 1 || n < 0 || shards < 0)
        st = rt_fail(err, RT_E_FORMAT, "re-run trainc pack", "%s: not a trainc pack index (version 1)", index_path);
    if (!st) {
        s->n = n, s->n_shards = shards;
        s->shard_names = rt_xcalloc((size_t)shards + 1, sizeof(char *));
        s->fds = rt_xmalloc(((size_t)shards + 1) * sizeof(int));
        for (int k = 0; k <= shards; k++) s->fds[k] = -1;
        s->shard = rt_xmalloc(((size_t)n + 1) * sizeof(uint32_t));
        s->offset = rt_xmalloc(((size_t)n + 1) * sizeof(uint64_t));
        s->length = rt_xmalloc(((size_t)n + 1) * sizeof(uint32_t));
        *labels = rt_xmalloc(((size_t)n + 1) * sizeof(int32_t));
    }
    char name[1024];
    for (int k = 0; !st && k < shards; k++) {
        if (fscanf(f, " shard %1023s", name) != 1) {
            st = rt_fail(err, RT_E_TRUNCATED, "re-run trainc pack", "%s: shard list ends after %d of %d", index_path, k, shards);
            break;
        }
        s->shard_names[k] = rt_xstrdup(name);
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", s->root, name);
        s->fds[k] = open(p, O_RDONLY);
        if (s->fds[k] < 0) st = rt_fail(err, RT_E_NOT_FOUND, "re-run trainc pack", "cannot open shard %s: %s", p, strerror(errno));
    }
    for (long i = 0; !st && i < n; i++) {
        unsigned sh, len;
        unsigned long long off;
        int lab;
        if (fscanf(f, "%u %llu %u %d", &sh, &off, &len, &lab) != 4 || (int)sh >= shards || lab < 0) {
            st = rt_fail(err, RT_E_FORMAT, "re-run trainc pack", "%s: record %ld of %ld is missing or malformed", index_path, i, n);
            break;
        }
        s->shard[i] = sh, s->offset[i] = off, s->length[i] = len, (*labels)[i] = lab;
    }
    fclose(f);
    if (!st && !known) st = read_classes(s, err);
    const struct rt_image_set *names = known ? known : s;
    for (long i = 0; !st && i < n; i++)
        if ((*labels)[i] >= names->n_classes)
            st = rt_fail(err, RT_E_RANGE, "re-run trainc pack", "%s: record %ld has label %d but there are %d classes",
                         index_path, i, (*labels)[i], names->n_classes);
    if (st) {
        if (s->n_shards) free(*labels);
        *labels = NULL;
        image_set_free(s);
    }
    return st;
}
