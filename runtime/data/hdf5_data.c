/* Caffe's HDF5Data source (rt_data.h): a list of .h5 files, each with a "data" dataset of
 * samples and a "label" dataset of class indices, read through libhdf5 (its conversion to
 * float from whatever type the file stores) into one in-memory dataset of floats, in list
 * order; the loader then gives it the promises of every in-memory source (order from (seed,
 * epoch), the same global batches for any rank count, exact resume). Trainers link libhdf5
 * only when their spec reads HDF5 (the generated code sets rt_run_config.load_hdf5). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_data.h"

#define H5_HINT "the source of an HDF5Data layer lists .h5 files, one a line, each with datasets \"data\" " \
                "[N, C, H, W] and \"label\" [N]"

#ifndef RT_WITH_HDF5   /* built with WITH_HDF5=0 (mk/hdf5.mk) */
rt_status rt_dataset_load_hdf5(rt_dataset *ds, const char *list, int classes, rt_err *err) {
    (void)classes;
    memset(ds, 0, sizeof *ds);
    return rt_fail(err, RT_E_ARG, "rebuild trainc and the runtime with libhdf5-dev installed (WITH_HDF5=1, the default)",
                   "cannot read the HDF5 list %s: this runtime was built without libhdf5 (WITH_HDF5=0)", list);
}

rt_status rt_hdf5_probe(const char *list, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    return rt_fail(err, RT_E_ARG, "rebuild trainc with libhdf5-dev installed (WITH_HDF5=1)",
                   "cannot read the HDF5 list %s: built without libhdf5 (WITH_HDF5=0)", list);
}
#else
#include <hdf5.h>

/* The list's file names, one a line (blank lines skipped, surrounding blanks trimmed). */
static rt_status read_list(const char *list, char ***files, int *n, rt_err *err) {
    *files = NULL, *n = 0;
    FILE *f = fopen(list, "r");
    if (!f)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, H5_HINT, "cannot read the HDF5 list %s: %s",
                       list, strerror(errno));
    char line[4096];
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = line + strspn(line, " \t");
        size_t len = strcspn(s, "\r\n");
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
        if (!len) continue;
        if (*n == cap) *files = realloc(*files, (size_t)(cap = cap ? 2 * cap : 16) * sizeof **files);
        (*files)[(*n)++] = strndup(s, len);
    }
    fclose(f);
    if (*n == 0) return rt_fail(err, RT_E_FORMAT, H5_HINT, "the HDF5 list %s names no files", list);
    return RT_OK;
}

static void free_list(char **files, int n) {
    for (int i = 0; i < n; i++) free(files[i]);
    free(files);
}

/* A dataset's dimensions (at most 4) and, with out, its values as floats. */
static rt_status read_dataset(hid_t file, const char *path, const char *name, int *ndim, hsize_t dims[4], float **out,
                              rt_err *err) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0)
        return rt_fail(err, RT_E_FORMAT, H5_HINT, "%s has no dataset \"%s\"", path, name);
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    hid_t space = ds >= 0 ? H5Dget_space(ds) : -1;
    int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    rt_status st = RT_OK;
    if (nd < 1 || nd > 4)
        st = rt_fail(err, RT_E_FORMAT, H5_HINT, "%s: dataset \"%s\" has %d dimensions (1 to 4)", path, name, nd);
    if (!st) {
        H5Sget_simple_extent_dims(space, dims, NULL);
        *ndim = nd;
    }
    if (!st && out) {
        size_t count = 1;
        for (int k = 0; k < nd; k++) count *= (size_t)dims[k];
        *out = malloc((count ? count : 1) * sizeof(float));
        if (!*out) st = rt_fail(err, RT_E_IO, NULL, "%s: dataset \"%s\" does not fit in memory", path, name);
        else if (H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0)
            st = rt_fail(err, RT_E_FORMAT, H5_HINT, "%s: dataset \"%s\" cannot be read as numbers", path, name);
        if (st) free(*out), *out = NULL;
    }
    if (space >= 0) H5Sclose(space);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

/* One file: its sample count and [C, H, W] ([N, D] is [D, 1, 1]); with data/labels, its values. */
static rt_status read_file(const char *path, long *n, int chw[3], float **data, float **labels, rt_err *err) {
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0)
        return rt_fail(err, RT_E_NOT_FOUND, H5_HINT, "cannot open the HDF5 file %s (missing, or not HDF5)", path);
    int nd = 0, nl = 0;
    hsize_t d[4] = { 0 }, l[4] = { 0 };
    rt_status st = read_dataset(file, path, "data", &nd, d, data, err);
    if (!st) st = read_dataset(file, path, "label", &nl, l, labels, err);
    if (!st && nd < 2)
        st = rt_fail(err, RT_E_FORMAT, H5_HINT, "%s: dataset \"data\" has 1 dimension; samples are its rows", path);
    if (!st && (l[0] != d[0] || (nl == 2 && l[1] != 1) || nl > 2))
        st = rt_fail(err, RT_E_MISMATCH, H5_HINT, "%s: \"label\" is %s%llu%s for %llu samples (one class index each)",
                     path, nl > 1 ? "[" : "", (unsigned long long)l[0], nl > 1 ? ", ...]" : " values",
                     (unsigned long long)d[0]);
    if (!st) {
        *n = (long)d[0];
        chw[0] = (int)d[1], chw[1] = nd > 2 ? (int)d[2] : 1, chw[2] = nd > 3 ? (int)d[3] : 1;
    }
    H5Fclose(file);
    if (st && data) free(*data), *data = NULL;
    if (st && labels) free(*labels), *labels = NULL;
    return st;
}

/* HDF5's own error stack printing off: every failure becomes one message of ours. */
static void quiet(void) { H5Eset_auto2(H5E_DEFAULT, NULL, NULL); }

rt_status rt_hdf5_probe(const char *list, long *n, int *c, int *h, int *w, rt_err *err) {
    *n = 0, *c = *h = *w = 0;
    quiet();
    char **files;
    int nf;
    rt_status st = read_list(list, &files, &nf, err);
    for (int i = 0; !st && i < nf; i++) {
        long k;
        int chw[3];
        st = read_file(files[i], &k, chw, NULL, NULL, err);
        if (!st && i > 0 && (chw[0] != *c || chw[1] != *h || chw[2] != *w))
            st = rt_fail(err, RT_E_MISMATCH, "give every file's samples the same shape", "%s: samples of %dx%dx%d, "
                         "%s had %dx%dx%d", files[i], chw[0], chw[1], chw[2], files[0], *c, *h, *w);
        if (!st) *n += k, *c = chw[0], *h = chw[1], *w = chw[2];
    }
    free_list(files, nf);
    return st;
}

rt_status rt_dataset_load_hdf5(rt_dataset *ds, const char *list, int classes, rt_err *err) {
    memset(ds, 0, sizeof *ds);
    long total;
    int c, h, w;
    rt_status st = rt_hdf5_probe(list, &total, &c, &h, &w, err);
    if (st) return st;
    char **files;
    int nf;
    st = read_list(list, &files, &nf, err);
    if (st) return st;
    size_t sample = (size_t)c * h * w;
    ds->n = total, ds->c = c, ds->h = h, ds->w = w;
    ds->values = malloc((size_t)total * sample * sizeof(float));
    ds->labels = malloc((size_t)(total ? total : 1) * sizeof *ds->labels);
    if (!ds->values || !ds->labels)
        st = rt_fail(err, RT_E_IO, "use a machine with more memory, or fewer files", "%s: %ld samples of %dx%dx%d do "
                     "not fit in memory", list, total, c, h, w);
    long at = 0;
    int max_label = 0;
    for (int i = 0; !st && i < nf; i++) {
        long k;
        int chw[3];
        float *data = NULL, *labels = NULL;
        st = read_file(files[i], &k, chw, &data, &labels, err);
        for (long r = 0; !st && r < k; r++) {
            float v = labels[r];
            if (!(v >= 0) || v != floorf(v) || v > 2147483647.0f || (classes > 0 && v >= (float)classes))
                st = rt_fail(err, RT_E_RANGE, "labels are class indices 0..classes-1; check net.classes or the file",
                             "%s: \"label\" row %ld is %g, not a class index 0..%d", files[i], r, (double)v,
                             classes > 0 ? classes - 1 : 2147483647);
            else
                ds->labels[at + r] = (int32_t)v, max_label = (int)v > max_label ? (int)v : max_label;
        }
        for (size_t q = 0; !st && q < (size_t)k * sample; q++)
            if (!isfinite(data[q]))
                st = rt_fail(err, RT_E_RANGE, "write finite values", "%s: \"data\" row %ld holds %g", files[i],
                             (long)(q / sample), (double)data[q]);
        if (!st) memcpy(ds->values + (size_t)at * sample, data, (size_t)k * sample * sizeof(float));
        at += k;
        free(data), free(labels);
    }
    free_list(files, nf);
    ds->classes = classes > 0 ? classes : max_label + 1;
    if (st) rt_dataset_free(ds);
    return st;
}
#endif
