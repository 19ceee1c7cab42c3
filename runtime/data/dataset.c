/* Datasets in memory: loading an IDX split (finding the files, cross-checking images and
 * labels), a synthetic stand-in, and freeing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "image_set.h"
#include "rt_data.h"
#include "rt_rng.h"

#define DATA_HINT "pass --data DIR with <split>-images-idx3-ubyte.gz and <split>-labels-idx1-ubyte.gz " \
                  "(Debian: apt-get install dataset-fashion-mnist puts them in " RT_DEFAULT_DATA_DIR ")"

/* Finds DIR/<split>-<kind>-ubyte.gz or the uncompressed name. */
static rt_status find_file(const char *dir, const char *split, const char *kind, char *out,
                           size_t cap, rt_err *err) {
    struct stat st;
    if (stat(dir, &st) != 0)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, DATA_HINT, "data directory %s %s%s", dir,
                       errno == ENOENT ? "does not exist" : "cannot be reached: ",
                       errno == ENOENT ? "" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return rt_fail(err, RT_E_NOT_FOUND, DATA_HINT, "data directory %s is not a directory", dir);
    /* A directory this user may not list or enter would otherwise look empty ("missing file"). */
    if (access(dir, R_OK | X_OK) != 0)
        return rt_fail(err, RT_E_IO, "give the user running the trainer read and search permission on it "
                       "(chmod a+rx), or copy the dataset elsewhere", "cannot read data directory %s: %s", dir,
                       strerror(errno));
    snprintf(out, cap, "%s/%s-%s-ubyte.gz", dir, split, kind);
    if (access(out, F_OK) == 0) return RT_OK;
    if (errno != ENOENT) return rt_fail(err, RT_E_IO, DATA_HINT, "cannot reach %s: %s", out, strerror(errno));
    snprintf(out, cap, "%s/%s-%s-ubyte", dir, split, kind);
    if (access(out, F_OK) == 0) return RT_OK;
    if (errno != ENOENT) return rt_fail(err, RT_E_IO, DATA_HINT, "cannot reach %s: %s", out, strerror(errno));
    return rt_fail(err, RT_E_NOT_FOUND, DATA_HINT, "missing file %s/%s-%s-ubyte.gz (also tried %s)",
                   dir, split, kind, out);
}

static rt_status check_labels(const char *path, const uint8_t *raw, long n, int *classes,
                              rt_err *err) {
    int max = 0;
    for (long i = 0; i < n; i++) {
        if (*classes > 0 && raw[i] >= *classes)
            return rt_fail(err, RT_E_RANGE,
                           "the labels do not match the model's number of classes; check the "
                           "spec's class count or the dataset",
                           "%s: label %d at index %ld (byte offset %ld) is outside 0..%d", path,
                           raw[i], i, 8 + i, *classes - 1);
        if (raw[i] > max) max = raw[i];
    }
    if (*classes <= 0) *classes = max + 1;
    return RT_OK;
}

rt_status rt_dataset_load_idx(rt_dataset *ds, const char *dir, const char *split, int classes,
                              rt_err *err) {
    memset(ds, 0, sizeof *ds);
    char ipath[4096], lpath[4096];
    rt_status st = find_file(dir, split, "images-idx3", ipath, sizeof ipath, err);
    if (!st) st = find_file(dir, split, "labels-idx1", lpath, sizeof lpath, err);
    if (st) return st;
    uint8_t *images = NULL, *labels = NULL;
    long idims[3] = {0}, ldims[3] = {0};
    st = rt_idx_read(ipath, 3, &images, idims, err);
    if (!st) st = rt_idx_read(lpath, 1, &labels, ldims, err);
    if (!st && ldims[0] != idims[0])
        st = rt_fail(err, RT_E_MISMATCH,
                     "the two files come from different splits or datasets; re-download them",
                     "label count != image count: %s has %ld labels but %s has %ld images",
                     lpath, ldims[0], ipath, idims[0]);
    if (!st) st = check_labels(lpath, labels, ldims[0], &classes, err);
    if (st) {
        free(images);
        free(labels);
        return st;
    }
    ds->n = idims[0];
    ds->c = 1;
    ds->h = (int)idims[1];
    ds->w = (int)idims[2];
    ds->images = images;
    ds->labels = rt_xmalloc((size_t)ds->n * sizeof(int32_t));
    for (long i = 0; i < ds->n; i++) ds->labels[i] = labels[i];
    free(labels);
    ds->classes = classes;
    return RT_OK;
}

void rt_dataset_synthetic(rt_dataset *ds, long n, int c, int h, int w, int classes,
                          uint64_t seed) {
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0 || classes <= 0)
        rt_die("rt_dataset_synthetic: bad shape n=%ld c=%d h=%d w=%d classes=%d", n, c, h, w,
               classes);
    ds->n = n;
    ds->c = c;
    ds->h = h;
    ds->w = w;
    ds->classes = classes;
    ds->images = rt_xmalloc((size_t)n * c * h * w);
    ds->labels = rt_xmalloc((size_t)n * sizeof(int32_t));
    for (long i = 0; i < n; i++) {
        int k = (int)(rt_hash_u64(seed, (uint64_t)i, 1) % (uint64_t)classes);
        ds->labels[i] = k;
        /* Blob centre fixed per class, so a small net can learn the task. */
        uint64_t at = rt_hash_u64(seed, (uint64_t)k, 2);
        int cy = (int)(at % (uint64_t)h), cx = (int)((at >> 20) % (uint64_t)w);
        int r = (h < w ? h : w) / 5 + 1;
        uint8_t *img = ds->images + (size_t)i * c * h * w;
        for (int ch = 0; ch < c; ch++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    uint64_t noise = rt_hash_u64(seed, (uint64_t)i, 3 + (((uint64_t)ch * h + y) * w + x));
                    int inside = (y - cy) * (y - cy) + (x - cx) * (x - cx) <= r * r;
                    img[((size_t)ch * h + y) * w + x] = (uint8_t)((inside ? 160 : 0) + noise % 64);
                }
    }
}

void rt_dataset_free(rt_dataset *ds) {
    if (ds->encoded) image_set_free(ds->encoded);
    free(ds->encoded);
    free(ds->images);
    free(ds->values);
    free(ds->labels);
    memset(ds, 0, sizeof *ds);
}
