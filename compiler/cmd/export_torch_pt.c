/* trainc export -o FILE.pt: a state_dict as torch.save writes it (torch.load reads it): a ZIP
 * archive of stored (uncompressed) entries, archive/data.pkl, archive/data/<k> per tensor
 * (its raw little-endian values) and archive/version ("3"), where data.pkl is a protocol-2
 * pickle of an OrderedDict mapping each key to
 * torch._utils._rebuild_tensor_v2(storage, 0, size, stride, False, OrderedDict()), the
 * storage a persistent id ("storage", torch.FloatStorage or LongStorage, "<k>", "cpu", numel)
 * that torch.load resolves to archive/data/<k>. Only these pickle opcodes are written. */
#include "export.h"
#include "output_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef struct {
    unsigned char *b;
    size_t n, cap;
} buf;

static void put(buf *o, const void *p, size_t n) {
    if (o->n + n > o->cap) {
        while (o->n + n > o->cap) o->cap = o->cap ? 2 * o->cap : 4096;
        o->b = realloc(o->b, o->cap);
    }
    memcpy(o->b + o->n, p, n);
    o->n += n;
}
static void byte(buf *o, int c) { unsigned char u = (unsigned char)c; put(o, &u, 1); }
static void le(buf *o, uint64_t v, int bytes) {
    for (int k = 0; k < bytes; k++) byte(o, (int)(v >> (8 * k) & 0xff));
}

/* pickle opcodes (Lib/pickle.py) */
static void p_global(buf *o, const char *module, const char *name) {   /* GLOBAL 'c' */
    byte(o, 'c'), put(o, module, strlen(module)), byte(o, '\n'), put(o, name, strlen(name)), byte(o, '\n');
}
static void p_str(buf *o, const char *s) { byte(o, 'X'), le(o, strlen(s), 4), put(o, s, strlen(s)); }   /* BINUNICODE */
static void p_int(buf *o, long v) { byte(o, 'J'), le(o, (uint64_t)(uint32_t)(int32_t)v, 4); }        /* BININT */
static void p_ordered_dict(buf *o) { p_global(o, "collections", "OrderedDict"), byte(o, ')'), byte(o, 'R'); }

static void pickle_tensor(buf *o, const export_tensor *t, int k) {
    char key[32];
    snprintf(key, sizeof key, "%d", k);
    long numel = 1, stride[4];
    for (int d = t->ndim - 1; d >= 0; d--) stride[d] = numel, numel *= t->shape[d];
    p_str(o, t->name);
    p_global(o, "torch._utils", "_rebuild_tensor_v2");
    byte(o, '(');                                   /* MARK: the arguments */
    byte(o, '(');                                   /* the persistent id */
    p_str(o, "storage");
    p_global(o, "torch", t->dtype == EXPORT_I64 ? "LongStorage" : "FloatStorage");
    p_str(o, key), p_str(o, "cpu"), p_int(o, numel);
    byte(o, 't'), byte(o, 'Q');                     /* TUPLE, BINPERSID */
    p_int(o, 0);                                    /* storage offset */
    byte(o, '(');
    for (int d = 0; d < t->ndim; d++) p_int(o, t->shape[d]);
    byte(o, 't');
    byte(o, '(');
    for (int d = 0; d < t->ndim; d++) p_int(o, stride[d]);
    byte(o, 't');
    byte(o, 0x89);                                  /* NEWFALSE: requires_grad */
    p_ordered_dict(o);                              /* backward hooks */
    byte(o, 't'), byte(o, 'R');                     /* TUPLE, REDUCE */
}

typedef struct {
    char name[64];
    uint32_t crc, size, offset;
} zip_entry;

/* A stored entry: local header (its data 64-byte aligned through the extra field, as torch
 * writes them), then the bytes. */
static void zip_add(buf *z, zip_entry *e, const char *name, const void *data, size_t n) {
    snprintf(e->name, sizeof e->name, "%s", name);
    e->crc = (uint32_t)crc32(crc32(0, NULL, 0), data, (uInt)n), e->size = (uint32_t)n, e->offset = (uint32_t)z->n;
    size_t nl = strlen(name), pad = (64 - (z->n + 30 + nl + 4) % 64) % 64;
    le(z, 0x04034b50, 4), le(z, 20, 2), le(z, 0, 2), le(z, 0, 2), le(z, 0, 2), le(z, 0, 2);
    le(z, e->crc, 4), le(z, n, 4), le(z, n, 4), le(z, nl, 2), le(z, 4 + pad, 2);
    put(z, name, nl);
    le(z, 0xfa57, 2), le(z, pad, 2);                /* an extra field of padding */
    for (size_t i = 0; i < pad; i++) byte(z, 'Z');
    put(z, data, n);
}

int export_write_torch_pt(const char *path, const export_tensor *ts, int n, char *err, size_t cap) {
    buf pk = { 0 }, z = { 0 };
    byte(&pk, 0x80), byte(&pk, 2);                  /* PROTO 2 */
    p_ordered_dict(&pk);
    byte(&pk, '(');
    for (int i = 0; i < n; i++) pickle_tensor(&pk, &ts[i], i);
    byte(&pk, 'u'), byte(&pk, '.');                 /* SETITEMS, STOP */
    zip_entry *es = calloc((size_t)n + 2, sizeof *es);
    zip_add(&z, &es[0], "archive/data.pkl", pk.b, pk.n);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "archive/data/%d", i);
        zip_add(&z, &es[i + 1], name, ts[i].data, export_tensor_bytes(&ts[i]));
    }
    zip_add(&z, &es[n + 1], "archive/version", "3\n", 2);
    size_t dir_at = z.n;
    for (int i = 0; i < n + 2; i++) {               /* the central directory */
        size_t nl = strlen(es[i].name);
        le(&z, 0x02014b50, 4), le(&z, 20, 2), le(&z, 20, 2), le(&z, 0, 2), le(&z, 0, 2), le(&z, 0, 2), le(&z, 0, 2);
        le(&z, es[i].crc, 4), le(&z, es[i].size, 4), le(&z, es[i].size, 4), le(&z, nl, 2), le(&z, 0, 2), le(&z, 0, 2);
        le(&z, 0, 2), le(&z, 0, 2), le(&z, 0, 4), le(&z, es[i].offset, 4);
        put(&z, es[i].name, nl);
    }
    size_t dir_bytes = z.n - dir_at;
    le(&z, 0x06054b50, 4), le(&z, 0, 2), le(&z, 0, 2), le(&z, (uint64_t)n + 2, 2), le(&z, (uint64_t)n + 2, 2);
    le(&z, dir_bytes, 4), le(&z, dir_at, 4), le(&z, 0, 2);
    int rc = 0;
    if (z.n > 0xffffffffu || n + 2 > 0xffff) {   /* ZIP64 is not written */
        snprintf(err, cap, "the state_dict is %zu bytes in %d tensors, beyond a plain ZIP; write .safetensors", z.n, n);
        rc = 1;
    } else {
        rc = output_write_all(path, z.b, z.n, err, cap);
    }
    free(pk.b), free(z.b), free(es);
    return rc;
}
