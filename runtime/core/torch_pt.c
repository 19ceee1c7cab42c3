/* torch.save files (rt_torch_pt.h): the zip's central directory (zip64 where torch writes it,
 * always for its own files), the stored records' data offsets from their local headers,
 * data.pkl through the pickle machine (torch_pickle.c), and each tensor's bytes located in its
 * storage's record. The result is an rt_safetensors table whose offsets count from the start
 * of the file, so rt_safetensors_read_f32 reads the tensors. CRCs are not checked: every
 * offset and size is, against its record and the file. */
#include "rt_torch_pt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PT_HINT "pass a state_dict as torch.save(model.state_dict(), path) writes it (PyTorch 1.6 or later), " \
                "or a .safetensors file"
#define PT_MAX_PICKLE (512u << 20)
#define PT_MAX_DIR (64u << 20)

typedef struct {
    char *name;
    uint64_t data, size;   /* the stored bytes: file offset and length */
    int method;
    uint64_t local;        /* the local header's offset */
} zip_entry;

typedef struct {
    FILE *f;
    uint64_t file_size;
    zip_entry *e;
    int n;
} zip;

static uint64_t le(const unsigned char *b, int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | b[k];
    return v;
}

static int read_at(FILE *f, uint64_t at, void *buf, size_t n) {
    return fseeko(f, (off_t)at, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

int rt_torch_pt_sniff(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char b[4];
    int n = (int)fread(b, 1, 4, f);
    fclose(f);
    if (n == 4 && !memcmp(b, "PK\3\4", 4)) return 1;
    /* before 1.6 torch.save wrote pickles back to back: protocol 2's PROTO, then LONG1 of
     * its 10-byte magic number */
    return n == 4 && b[0] == 0x80 && b[1] == 2 && b[2] == 0x8a && b[3] == 10 ? 2 : 0;
}

static void zip_free(zip *z) {
    for (int k = 0; k < z->n; k++) free(z->e[k].name);
    free(z->e);
    z->e = NULL, z->n = 0;
}

/* The central directory's place: the end record, and zip64's when its locator precedes it. */
static rt_status find_directory(zip *z, const char *path, uint64_t *dir_at, uint64_t *dir_size, uint64_t *count,
                                rt_err *err) {
    size_t tail = z->file_size < 65557 ? (size_t)z->file_size : 65557;   /* 22-byte record + 64 KiB comment */
    unsigned char *b = malloc(tail ? tail : 1);
    if (!b || !read_at(z->f, z->file_size - tail, b, tail)) {
        free(b);
        return rt_fail(err, RT_E_IO, PT_HINT, "cannot read %s", path);
    }
    long end = -1;
    for (long k = (long)tail - 22; k >= 0; k--)
        if (!memcmp(b + k, "PK\5\6", 4)) { end = k; break; }
    if (end < 0) {
        free(b);
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: no zip end record (a torch.save file is a zip)", path);
    }
    *count = le(b + end + 10, 2), *dir_size = le(b + end + 12, 4), *dir_at = le(b + end + 16, 4);
    uint64_t end_at = z->file_size - tail + (uint64_t)end;
    free(b);
    unsigned char loc[20], z64[56];
    if (end_at >= 20 && read_at(z->f, end_at - 20, loc, 20) && !memcmp(loc, "PK\6\7", 4)) {
        uint64_t at = le(loc + 8, 8);
        if (at > z->file_size - 56 || !read_at(z->f, at, z64, 56) || memcmp(z64, "PK\6\6", 4))
            return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: a damaged zip64 end record", path);
        *count = le(z64 + 32, 8), *dir_size = le(z64 + 40, 8), *dir_at = le(z64 + 48, 8);
    }
    if (*dir_size > PT_MAX_DIR || *dir_at > z->file_size || *dir_size > z->file_size - *dir_at ||
        *count > *dir_size / 46)
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: the zip's central directory lies outside the file", path);
    return RT_OK;
}

/* zip64's extra field (id 1): the 8-byte values of the fields that hold 0xFFFFFFFF, in order. */
static void zip64_extra(const unsigned char *x, size_t n, uint64_t *usize, uint64_t *csize, uint64_t *local) {
    for (size_t k = 0; k + 4 <= n;) {
        size_t id = (size_t)le(x + k, 2), len = (size_t)le(x + k + 2, 2);
        if (k + 4 + len > n) return;
        if (id == 1) {
            const unsigned char *v = x + k + 4, *e = v + len;
            uint64_t *fields[3] = { usize, csize, local };
            for (int f = 0; f < 3; f++)
                if (*fields[f] == 0xffffffffu && v + 8 <= e) *fields[f] = le(v, 8), v += 8;
            return;
        }
        k += 4 + len;
    }
}

static rt_status zip_open(zip *z, const char *path, rt_err *err) {
    uint64_t at = 0, size = 0, count = 0;
    rt_status st = find_directory(z, path, &at, &size, &count, err);
    if (st != RT_OK) return st;
    unsigned char *d = malloc(size ? size : 1);
    if (!d || !read_at(z->f, at, d, size)) {
        free(d);
        return rt_fail(err, RT_E_IO, PT_HINT, "cannot read the zip directory of %s", path);
    }
    z->e = calloc(count ? count : 1, sizeof *z->e);
    const unsigned char *p = d, *end = d + size;
    for (uint64_t k = 0; k < count; k++) {
        if (end - p < 46 || memcmp(p, "PK\1\2", 4)) {
            free(d);
            return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: a damaged zip directory entry", path);
        }
        size_t name_len = (size_t)le(p + 28, 2), extra_len = (size_t)le(p + 30, 2), comment_len = (size_t)le(p + 32, 2);
        if ((size_t)(end - p) < 46 + name_len + extra_len + comment_len) {
            free(d);
            return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: a damaged zip directory entry", path);
        }
        zip_entry *e = &z->e[z->n++];
        e->method = (int)le(p + 10, 2);
        uint64_t csize = le(p + 20, 4), usize = le(p + 24, 4);
        e->local = le(p + 42, 4);
        zip64_extra(p + 46 + name_len, extra_len, &usize, &csize, &e->local);
        e->size = csize;
        e->name = malloc(name_len + 1);
        memcpy(e->name, p + 46, name_len);
        e->name[name_len] = '\0';
        p += 46 + name_len + extra_len + comment_len;
    }
    free(d);
    return RT_OK;
}

static zip_entry *zip_find(zip *z, const char *name) {
    for (int k = 0; k < z->n; k++)
        if (!strcmp(z->e[k].name, name)) return &z->e[k];
    return NULL;
}

/* The record's data: after its local header (whose own name and extra lengths count). */
static rt_status entry_data(zip *z, zip_entry *e, const char *path, rt_err *err) {
    unsigned char h[30];
    if (e->method != 0)
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: zip record '%s' is compressed (method %d); torch.save stores "
                       "its records uncompressed", path, e->name, e->method);
    if (e->local > z->file_size - 30 || !read_at(z->f, e->local, h, 30) || memcmp(h, "PK\3\4", 4))
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: zip record '%s' has no local header", path, e->name);
    e->data = e->local + 30 + le(h + 26, 2) + le(h + 28, 2);
    if (e->data > z->file_size || e->size > z->file_size - e->data)
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: zip record '%s' runs past the end of the file", path, e->name);
    return RT_OK;
}

static rt_status locate(zip *z, const char *path, const char *prefix, const rt_pt_state_dict *sd, rt_safetensors *s,
                        rt_err *err) {
    s->t = calloc((size_t)(sd->n ? sd->n : 1), sizeof *s->t);
    for (int k = 0; k < sd->n; k++) {
        const rt_pt_tensor *t = &sd->t[k];
        char rec[1100];
        if (snprintf(rec, sizeof rec, "%sdata/%s", prefix, t->storage_key) >= (int)sizeof rec)
            return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: tensor '%s' names a storage key of %zu bytes", path, t->name,
                           strlen(t->storage_key));
        zip_entry *e = zip_find(z, rec);
        if (!e) return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: tensor '%s' names storage record '%s', which the zip lacks",
                               path, t->name, rec);
        rt_status st = entry_data(z, e, path, err);
        if (st != RT_OK) return st;
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] && numel > UINT64_MAX / 16 / (uint64_t)t->shape[d]) numel = UINT64_MAX / 16;
            else numel *= (uint64_t)t->shape[d];
        }
        uint64_t eb = (uint64_t)t->elem_bytes, storage = (uint64_t)t->storage_numel;
        if (storage > e->size / eb || (uint64_t)t->offset > storage || numel > storage - (uint64_t)t->offset)
            return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: tensor '%s' (%llu elements from element %lld) lies outside its "
                           "storage record '%s' (%llu bytes)", path, t->name, (unsigned long long)numel, t->offset, rec,
                           (unsigned long long)e->size);
        rt_st_tensor *o = &s->t[s->n++];
        o->name = strdup(t->name);
        snprintf(o->dtype, sizeof o->dtype, "%s", t->dtype);
        o->ndim = t->ndim;
        memcpy(o->shape, t->shape, sizeof o->shape);
        o->begin = e->data + (uint64_t)t->offset * eb;
        o->end = o->begin + numel * eb;
    }
    return RT_OK;
}

/* Reads PREFIX/data.pkl (the one top-level folder's) and checks PREFIX/byteorder. */
static rt_status read_pickle(zip *z, const char *path, char *prefix, size_t cap, unsigned char **pkl, size_t *n,
                             rt_err *err) {
    zip_entry *e = NULL;
    for (int k = 0; k < z->n && !e; k++) {
        const char *name = z->e[k].name, *slash = strchr(name, '/');
        if (slash && !strcmp(slash, "/data.pkl") && (size_t)(slash - name) + 2 <= cap) {
            e = &z->e[k];
            snprintf(prefix, cap, "%.*s/", (int)(slash - name), name);
        }
    }
    if (!e) return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: a zip without the data.pkl of a torch.save file", path);
    rt_status st = entry_data(z, e, path, err);
    if (st != RT_OK) return st;
    char rec[1100];
    snprintf(rec, sizeof rec, "%sbyteorder", prefix);
    zip_entry *order = zip_find(z, rec);
    char text[8] = "";
    if (order && entry_data(z, order, path, err) == RT_OK && order->size < sizeof text &&
        read_at(z->f, order->data, text, (size_t)order->size) && !strncmp(text, "big", 3))
        return rt_fail(err, RT_E_FORMAT, "save it on a little-endian machine", "%s holds big-endian tensors", path);
    if (e->size > PT_MAX_PICKLE)
        return rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: data.pkl is %llu bytes, more than a state_dict's", path,
                       (unsigned long long)e->size);
    *n = (size_t)e->size;
    *pkl = malloc(*n ? *n : 1);
    if (!*pkl || !read_at(z->f, e->data, *pkl, *n)) return rt_fail(err, RT_E_IO, PT_HINT, "cannot read data.pkl of %s", path);
    return RT_OK;
}

rt_status rt_torch_pt_open(rt_safetensors *s, const char *path, rt_err *err) {
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    rt_status regular = rt_require_regular_file(path, "torch.save file", PT_HINT, err);
    if (regular != RT_OK) return regular;
    if (rt_torch_pt_sniff(path) == 2)
        return rt_fail(err, RT_E_FORMAT, "save it again with PyTorch 1.6 or later: torch.save(torch.load(path), path)",
                       "%s is a torch.save file of the format before PyTorch 1.6 (pickles, not a zip)", path);
    struct stat sb;
    zip z = { 0 };
    z.f = fopen(path, "rb");
    if (!z.f || fstat(fileno(z.f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (z.f) fclose(z.f);
        return rt_fail(err, RT_E_IO, "check the path (--init-from or init.checkpoint)", "cannot open %s", path);
    }
    z.file_size = (uint64_t)sb.st_size;
    unsigned char *pkl = NULL;
    size_t n = 0;
    char prefix[1024];
    rt_pt_state_dict sd = { 0 };
    rt_status st = zip_open(&z, path, err);
    if (st == RT_OK) st = read_pickle(&z, path, prefix, sizeof prefix, &pkl, &n, err);
    if (st == RT_OK) {
        char msg[400];
        if (rt_pt_unpickle(pkl, n, &sd, msg, sizeof msg) != 0)
            st = rt_fail(err, RT_E_FORMAT, PT_HINT, "%s: %s", path, msg);
    }
    if (st == RT_OK) st = locate(&z, path, prefix, &sd, s, err);
    free(pkl);
    rt_pt_state_dict_free(&sd);
    zip_free(&z);
    s->f = z.f;
    s->data_start = 0, s->data_bytes = z.file_size;
    if (st != RT_OK) rt_safetensors_close(s);
    return st;
}
