/* Caffe's files, with the messages of its caffe.proto: a mean_file (a BlobProto: its per-channel
 * averages for `trainc import caffe`, its whole mean image for the trainer), and LMDB databases of
 * Datum records (a Data layer's `backend: LMDB` source, as Caffe's
 * convert_imageset and convert_mnist_data write them) read into a dataset in memory: the
 * records in key order, each a raw [channels][height][width] byte image and a label,
 * decoded with the Datum message of Caffe's caffe.proto (runtime/data/caffe_datum.proto,
 * compiled by protoc-c). Once in memory the loader gives it the promises of every in-memory
 * source: order and augmentation from (seed, epoch, position), the same global batches for
 * any rank count, exact resume. A record that is not a Datum, or not like the first one, is
 * named by its position and key. Trainers link liblmdb and libprotobuf-c only when their
 * spec reads an LMDB (the generated code sets rt_run_config.load_lmdb). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_data.h"

#ifndef RT_WITH_LMDB   /* built with WITH_LMDB=0 (mk/lmdb.mk) */
rt_status rt_dataset_load_lmdb(rt_dataset *ds, const char *path, int classes, rt_err *err) {
    (void)classes;
    memset(ds, 0, sizeof *ds);
    return rt_fail(err, RT_E_ARG, "rebuild trainc and the runtime with liblmdb-dev, libprotobuf-c-dev and "
                   "protobuf-c-compiler installed (WITH_LMDB=1, the default)",
                   "cannot read the LMDB database %s: this runtime was built without liblmdb (WITH_LMDB=0)", path);
}

rt_status rt_caffe_mean_file(const char *path, int *c, int *h, int *w, double channel_mean[4], rt_err *err) {
    *c = *h = *w = 0;
    (void)channel_mean;
    return rt_fail(err, RT_E_ARG, "rebuild with libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)",
                   "cannot read the mean file %s: built without protobuf-c (WITH_LMDB=0)", path);
}

rt_status rt_caffe_mean_image(const char *path, int *c, int *h, int *w, float **image, rt_err *err) {
    *image = NULL;
    double m[4];
    return rt_caffe_mean_file(path, c, h, w, m, err);
}

rt_status rt_lmdb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    return rt_fail(err, RT_E_ARG, "rebuild with liblmdb-dev, libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)",
                   "cannot read the LMDB database %s: built without liblmdb (WITH_LMDB=0)", path);
}
#else
#include <lmdb.h>

/* The Datum message's generated code is caffe_proto.c's (shared with the caffemodel reader). */
#include "caffe_datum.pb-c.h"

#define LMDB_HINT "point the spec's path (or --data) at the folder Caffe's convert_imageset wrote (the one with data.mdb)"

static rt_status lmdb_fail(rt_err *err, const char *path, const char *what, int rc) {
    return rt_fail(err, rc == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, LMDB_HINT, "cannot %s the LMDB database %s: %s", what,
                   path, mdb_strerror(rc));
}

/* Opens path read-only, without the lock file (nothing is written beside the database), in
 * a read transaction with its main database and record count. */
typedef struct {
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_stat ms;
} lmdb_view;

static void view_close(lmdb_view *v) {
    if (v->txn) mdb_txn_abort(v->txn);
    if (v->env) mdb_env_close(v->env);
    memset(v, 0, sizeof *v);
}

static rt_status view_open(lmdb_view *v, const char *path, rt_err *err) {
    memset(v, 0, sizeof *v);
    struct stat sb;
    if (stat(path, &sb) != 0)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, LMDB_HINT, "LMDB database %s: %s", path,
                       errno == ENOENT ? "does not exist" : strerror(errno));
    int rc = mdb_env_create(&v->env);
    if (!rc) rc = mdb_env_open(v->env, path, MDB_RDONLY | MDB_NOLOCK | (S_ISDIR(sb.st_mode) ? 0 : MDB_NOSUBDIR), 0444);
    if (rc) {
        view_close(v);
        return lmdb_fail(err, path, "open", rc);
    }
    rc = mdb_txn_begin(v->env, NULL, MDB_RDONLY, &v->txn);
    if (!rc) rc = mdb_dbi_open(v->txn, NULL, 0, &v->dbi);
    if (!rc) rc = mdb_stat(v->txn, v->dbi, &v->ms);
    if (rc) {
        view_close(v);
        return lmdb_fail(err, path, "read", rc);
    }
    if (v->ms.ms_entries == 0) {
        view_close(v);
        return rt_fail(err, RT_E_FORMAT, LMDB_HINT, "the LMDB database %s has no records", path);
    }
    return RT_OK;
}

rt_status rt_lmdb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    lmdb_view v;
    rt_status st = view_open(&v, path, err);
    if (st) return st;
    MDB_cursor *cur = NULL;
    MDB_val key, val;
    int rc = mdb_cursor_open(v.txn, v.dbi, &cur);
    if (!rc) rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
    if (rc) st = lmdb_fail(err, path, "read", rc);
    rt_dataset one = { .n = 1 };
    int32_t label = 0;
    one.labels = &label;
    if (!st) st = rt_datum_take(&one, path, 0, &(rt_datum_bytes){ key.mv_data, key.mv_size },
                                &(rt_datum_bytes){ val.mv_data, val.mv_size }, 0, err);
    if (!st) *n = (long)v.ms.ms_entries, *c = one.c, *h = one.h, *w = one.w;
    free(one.images);
    if (cur) mdb_cursor_close(cur);
    view_close(&v);
    return st;
}

/* Reads the BlobProto at path: its [C, H, W] and, when image is not NULL, its values (malloc'd),
 * else their per-channel averages. */
static rt_status read_mean(const char *path, int *c, int *h, int *w, double channel_mean[4], float **image, rt_err *err) {
    *c = *h = *w = 0;
    const char *hint = "give the mean image Caffe's compute_image_mean wrote (a BlobProto, .binaryproto)";
    FILE *f = fopen(path, "rb");
    if (!f) return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, hint, "cannot read the mean file %s: %s", path,
                           strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len == cap) {
            uint8_t *grown = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!grown) break;
            buf = grown;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    int read_error = ferror(f) || !buf;
    fclose(f);
    if (read_error) {
        free(buf);
        return rt_fail(err, RT_E_IO, hint, "cannot read the mean file %s", path);
    }
    Caffe__BlobProto *b = caffe__blob_proto__unpack(NULL, len, buf);
    free(buf);
    if (!b) return rt_fail(err, RT_E_FORMAT, hint, "the mean file %s is not a Caffe BlobProto", path);
    long dims[4] = { b->num, b->channels, b->height, b->width };
    if (b->shape) {   /* the newer files: a shape [1, C, H, W] or [C, H, W] */
        size_t n = b->shape->n_dim, o = n == 4 ? 1 : 0;
        for (int k = 1; k < 4; k++) dims[k] = n == 3 || n == 4 ? (long)b->shape->dim[k - 1 + o] : 0;
    }
    long plane = dims[2] * dims[3];
    rt_status st = RT_OK;
    if (dims[1] < 1 || dims[1] > 4 || plane < 1 || b->n_data != (size_t)(dims[1] * plane))
        st = rt_fail(err, RT_E_FORMAT, hint, "the mean file %s holds %zu values for a %ldx%ldx%ld mean image", path,
                     b->n_data, dims[1], dims[2], dims[3]);
    if (!st && image) {
        *image = malloc((size_t)b->n_data * sizeof **image);
        if (!*image) st = rt_fail(err, RT_E_IO, NULL, "the mean file %s does not fit in memory", path);
        for (size_t i = 0; !st && i < b->n_data; i++) (*image)[i] = b->data[i];
    }
    for (long ch = 0; !st && !image && ch < dims[1]; ch++) {
        double sum = 0;
        for (long i = 0; i < plane; i++) sum += b->data[ch * plane + i];
        channel_mean[ch] = sum / (double)plane;
    }
    if (!st) *c = (int)dims[1], *h = (int)dims[2], *w = (int)dims[3];
    caffe__blob_proto__free_unpacked(b, NULL);
    return st;
}

rt_status rt_caffe_mean_file(const char *path, int *c, int *h, int *w, double channel_mean[4], rt_err *err) {
    return read_mean(path, c, h, w, channel_mean, NULL, err);
}

rt_status rt_caffe_mean_image(const char *path, int *c, int *h, int *w, float **image, rt_err *err) {
    *image = NULL;
    return read_mean(path, c, h, w, NULL, image, err);
}

rt_status rt_dataset_load_lmdb(rt_dataset *ds, const char *path, int classes, rt_err *err) {
    memset(ds, 0, sizeof *ds);
    lmdb_view v;
    rt_status st = view_open(&v, path, err);
    if (st) return st;
    MDB_cursor *cur = NULL;
    int rc = mdb_cursor_open(v.txn, v.dbi, &cur);
    if (rc) st = lmdb_fail(err, path, "read", rc);
    if (!st) {
        ds->n = (long)v.ms.ms_entries;
        ds->classes = classes;
        ds->labels = malloc((size_t)ds->n * sizeof *ds->labels);
        if (!ds->labels) st = rt_fail(err, RT_E_IO, NULL, "%s: %ld labels do not fit in memory", path, ds->n);
    }
    MDB_val key, val;
    long i = 0;
    for (int op = MDB_FIRST; !st && (rc = mdb_cursor_get(cur, &key, &val, op)) == 0; op = MDB_NEXT, i++) {
        if (i >= ds->n) {
            st = rt_fail(err, RT_E_MISMATCH, LMDB_HINT, "%s: more records than its count (%ld); the database changed "
                         "while it was read", path, ds->n);
            break;
        }
        st = rt_datum_take(ds, path, i, &(rt_datum_bytes){ key.mv_data, key.mv_size },
                           &(rt_datum_bytes){ val.mv_data, val.mv_size }, classes, err);
    }
    if (!st && rc != MDB_NOTFOUND) st = lmdb_fail(err, path, "read", rc);
    if (!st && i != ds->n)
        st = rt_fail(err, RT_E_TRUNCATED, LMDB_HINT, "%s: %ld records read of the %ld it counts", path, i, ds->n);
    if (!st && classes <= 0) {
        int max = 0;
        for (long k = 0; k < ds->n; k++) max = ds->labels[k] > max ? ds->labels[k] : max;
        ds->classes = max + 1;
    }
    if (cur) mdb_cursor_close(cur);
    view_close(&v);
    if (st) rt_dataset_free(ds);
    return st;
}

#endif
