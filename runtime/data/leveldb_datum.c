/* Caffe's LevelDB databases of Datum records (a Data layer's `backend: LEVELDB`, Caffe's
 * default, as convert_imageset and convert_mnist_data write them), read through libleveldb's
 * C API into a dataset in memory: the records in key order, each decoded by the LMDB reader's
 * rt_datum_take (lmdb_datum.c), so the two databases give the same dataset for the same
 * records and the loader gives it the same promises. The database is opened read-only in
 * spirit (no create, no writes; LevelDB still takes its LOCK file, so the ranks of one machine
 * read it in turn). Trainers link libleveldb
 * only when their spec reads one (the generated code sets rt_run_config.load_lmdb to this
 * reader). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rt_data.h"

#define LEVELDB_HINT "point the spec's path (or --data) at the folder Caffe's convert_imageset wrote " \
                     "(-backend leveldb: the one with CURRENT and *.ldb files)"

#ifndef RT_WITH_LEVELDB   /* built with WITH_LEVELDB=0 (mk/leveldb.mk) */
rt_status rt_dataset_load_leveldb(rt_dataset *ds, const char *path, int classes, rt_err *err) {
    (void)classes;
    memset(ds, 0, sizeof *ds);
    return rt_fail(err, RT_E_ARG, "rebuild trainc and the runtime with libleveldb-dev (and protobuf-c) installed "
                   "(WITH_LEVELDB=1, the default)", "cannot read the LevelDB database %s: this runtime was built "
                   "without libleveldb (WITH_LEVELDB=0)", path);
}

rt_status rt_leveldb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    return rt_fail(err, RT_E_ARG, "rebuild trainc with libleveldb-dev installed (WITH_LEVELDB=1)",
                   "cannot read the LevelDB database %s: built without libleveldb (WITH_LEVELDB=0)", path);
}
#else
#include <leveldb/c.h>

typedef struct {
    leveldb_t *db;
    leveldb_options_t *opt;
    leveldb_readoptions_t *ropt;
    leveldb_iterator_t *it;
} ldb_view;

static void view_close(ldb_view *v) {
    if (v->it) leveldb_iter_destroy(v->it);
    if (v->ropt) leveldb_readoptions_destroy(v->ropt);
    if (v->db) leveldb_close(v->db);
    if (v->opt) leveldb_options_destroy(v->opt);
    memset(v, 0, sizeof *v);
}

/* Opens path (never creating it) with an iterator at its first record. */
static rt_status view_open(ldb_view *v, const char *path, rt_err *err) {
    memset(v, 0, sizeof *v);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return rt_fail(err, RT_E_NOT_FOUND, LEVELDB_HINT, "LevelDB database %s: %s", path,
                       stat(path, &sb) != 0 ? "does not exist" : "is not a folder");
    v->opt = leveldb_options_create();
    leveldb_options_set_create_if_missing(v->opt, 0);
    char *msg = NULL;
    /* LevelDB admits one process at a time (its LOCK file): the ranks of a run on one machine
     * take turns, each reading the whole database and closing it (a few seconds at most). */
    for (int tries = 0; !(v->db = leveldb_open(v->opt, path, &msg)) && msg && strstr(msg, "LOCK") && tries < 6000; tries++) {
        leveldb_free(msg);
        msg = NULL;
        nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
    }
    if (!v->db) {
        rt_status st = rt_fail(err, RT_E_FORMAT, LEVELDB_HINT, "cannot open the LevelDB database %s: %s", path,
                               msg ? msg : "unknown error");
        leveldb_free(msg);
        view_close(v);
        return st;
    }
    v->ropt = leveldb_readoptions_create();
    leveldb_readoptions_set_verify_checksums(v->ropt, 1);   /* a damaged block is an error, not data */
    leveldb_readoptions_set_fill_cache(v->ropt, 0);
    v->it = leveldb_create_iterator(v->db, v->ropt);
    leveldb_iter_seek_to_first(v->it);
    return RT_OK;
}

static rt_status iter_error(ldb_view *v, const char *path, rt_err *err) {
    char *msg = NULL;
    leveldb_iter_get_error(v->it, &msg);
    if (!msg) return RT_OK;
    rt_status st = rt_fail(err, RT_E_FORMAT, "the database is damaged; rewrite it", "LevelDB database %s: %s", path, msg);
    leveldb_free(msg);
    return st;
}

static rt_datum_bytes key_of(leveldb_iterator_t *it) {
    size_t n;
    const char *p = leveldb_iter_key(it, &n);
    return (rt_datum_bytes){ p, n };
}

static rt_datum_bytes value_of(leveldb_iterator_t *it) {
    size_t n;
    const char *p = leveldb_iter_value(it, &n);
    return (rt_datum_bytes){ p, n };
}

/* The record count (LevelDB keeps none: one pass over the keys). */
static rt_status count_records(ldb_view *v, const char *path, long *n, rt_err *err) {
    *n = 0;
    for (leveldb_iter_seek_to_first(v->it); leveldb_iter_valid(v->it); leveldb_iter_next(v->it)) (*n)++;
    rt_status st = iter_error(v, path, err);
    if (!st && *n == 0) st = rt_fail(err, RT_E_FORMAT, LEVELDB_HINT, "the LevelDB database %s has no records", path);
    leveldb_iter_seek_to_first(v->it);
    return st;
}

rt_status rt_leveldb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    ldb_view v;
    rt_status st = view_open(&v, path, err);
    if (st) return st;
    long count = 0;
    st = count_records(&v, path, &count, err);
    rt_dataset one = { .n = 1 };
    int32_t label = 0;
    one.labels = &label;
    if (!st) {
        rt_datum_bytes k = key_of(v.it), val = value_of(v.it);
        st = rt_datum_take(&one, path, 0, &k, &val, 0, err);
    }
    if (!st) *n = count, *c = one.c, *h = one.h, *w = one.w;
    free(one.images);
    view_close(&v);
    return st;
}

rt_status rt_dataset_load_leveldb(rt_dataset *ds, const char *path, int classes, rt_err *err) {
    memset(ds, 0, sizeof *ds);
    ldb_view v;
    rt_status st = view_open(&v, path, err);
    if (st) return st;
    st = count_records(&v, path, &ds->n, err);
    if (!st) {
        ds->classes = classes;
        ds->labels = malloc((size_t)ds->n * sizeof *ds->labels);
        if (!ds->labels) st = rt_fail(err, RT_E_IO, NULL, "%s: %ld labels do not fit in memory", path, ds->n);
    }
    long i = 0;
    for (; !st && leveldb_iter_valid(v.it); leveldb_iter_next(v.it), i++) {
        if (i >= ds->n) {
            st = rt_fail(err, RT_E_MISMATCH, LEVELDB_HINT, "%s: more records than counted (%ld); the database changed "
                         "while it was read", path, ds->n);
            break;
        }
        rt_datum_bytes k = key_of(v.it), val = value_of(v.it);
        st = rt_datum_take(ds, path, i, &k, &val, classes, err);
    }
    if (!st) st = iter_error(&v, path, err);
    if (!st && i != ds->n)
        st = rt_fail(err, RT_E_TRUNCATED, LEVELDB_HINT, "%s: %ld records read of the %ld counted", path, i, ds->n);
    if (!st && classes <= 0) {
        int max = 0;
        for (long k = 0; k < ds->n; k++) max = ds->labels[k] > max ? ds->labels[k] : max;
        ds->classes = max + 1;
    }
    view_close(&v);
    if (st) rt_dataset_free(ds);
    return st;
}
#endif
