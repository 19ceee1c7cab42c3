/* Caffe's .caffemodel weight files (rt_caffemodel.h): read into the spec's init block by
 * layer name and blob index, and written for `trainc export --format caffemodel`, with the
 * NetParameter of Caffe's caffe.proto compiled by protoc-c (runtime/data/caffe_datum.proto;
 * its code in caffe_proto.c). Only trainers whose init block can read one link it (and so
 * libprotobuf-c): the generated code sets rt_init_config.apply_caffemodel. */
#include "rt_caffemodel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RT_WITH_LMDB   /* built with WITH_LMDB=0 (mk/lmdb.mk): no protobuf-c */
#define NO_PROTOBUF_HINT "rebuild trainc and the runtime with libprotobuf-c-dev and protobuf-c-compiler (WITH_LMDB=1)"
rt_status rt_caffemodel_write(const char *path, const char *net_name, const rt_caffe_layer *layers, int n,
                              rt_err *err) {
    (void)net_name, (void)layers, (void)n;
    return rt_fail(err, RT_E_ARG, NO_PROTOBUF_HINT, "cannot write %s: built without protobuf-c (WITH_LMDB=0)", path);
}

long rt_init_apply_caffemodel(const rt_init_config *cfg, const char *path, float *params, long n_params,
                              float *buffers, long n_buffers) {
    (void)cfg, (void)params, (void)n_params, (void)buffers, (void)n_buffers;
    rt_die_hint(NO_PROTOBUF_HINT, "init: cannot read the caffemodel %s: built without protobuf-c (WITH_LMDB=0)", path);
}
#else
#include "caffe_datum.pb-c.h"

#define CM_HINT "pass the .caffemodel of this net (Caffe's snapshot, or `trainc export --format caffemodel`)"

/* ---- reading ------------------------------------------------------------------------ */

/* One layer of any of the three versions, as the reader needs it. */
typedef struct {
    const char *name, *type;      /* type NULL for V1/V0 layers (V1 has an enum) */
    const char *bottom0, *top0;   /* NULL when absent */
    size_t n_blobs;
    Caffe__BlobProto **blobs;
} cm_layer;

typedef struct {
    Caffe__NetParameter *net;
    cm_layer *layers;
    size_t n;
    const char *path;
} cm_file;

static uint8_t *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *buf = NULL;
    size_t cap = 0, got;
    *len = 0;
    do {
        if (*len == cap) {
            uint8_t *grown = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (!grown) { free(buf); fclose(f); return NULL; }
            buf = grown;
        }
        got = fread(buf + *len, 1, cap - *len, f);
        *len += got;
    } while (got > 0);
    int bad = ferror(f);
    fclose(f);
    if (bad) free(buf), buf = NULL;
    return buf;
}

static void cm_open(cm_file *cm, const char *path) {
    memset(cm, 0, sizeof *cm);
    cm->path = path;
    rt_err err;
    if (rt_require_regular_file(path, "caffemodel", CM_HINT, &err) != RT_OK) rt_die_hint(err.hint, "init: %s", err.msg);
    size_t len = 0;
    uint8_t *buf = read_all(path, &len);
    if (!buf) rt_die_hint(CM_HINT, "init: cannot read the caffemodel %s: %s", path, strerror(errno ? errno : EIO));
    cm->net = caffe__net_parameter__unpack(NULL, len, buf);
    free(buf);
    if (!cm->net) rt_die_hint(CM_HINT, "init: %s (%zu bytes) is not a Caffe NetParameter (a .caffemodel)", path, len);
    size_t n = cm->net->n_layer + cm->net->n_layers;
    cm->layers = rt_xcalloc(n ? n : 1, sizeof *cm->layers);
    for (size_t i = 0; i < cm->net->n_layer; i++) {
        const Caffe__LayerParameter *L = cm->net->layer[i];
        cm->layers[cm->n++] = (cm_layer){ L->name, L->type, L->n_bottom ? L->bottom[0] : NULL,
                                          L->n_top ? L->top[0] : NULL, L->n_blobs, L->blobs };
    }
    for (size_t i = 0; i < cm->net->n_layers; i++) {   /* V1, or V0 inside it */
        const Caffe__V1LayerParameter *L = cm->net->layers[i];
        cm_layer *v = &cm->layers[cm->n++];
        *v = (cm_layer){ L->name, NULL, L->n_bottom ? L->bottom[0] : NULL, L->n_top ? L->top[0] : NULL, L->n_blobs,
                         L->blobs };
        if (L->layer && (!v->name || !*v->name)) v->name = L->layer->name, v->type = L->layer->type;
        if (L->layer && !v->n_blobs) v->n_blobs = L->layer->n_blobs, v->blobs = L->layer->blobs;
    }
    if (cm->n == 0) rt_die_hint(CM_HINT, "init: %s is a NetParameter without layers, not a caffemodel", path);
}

static void cm_close(cm_file *cm) {
    free(cm->layers);
    caffe__net_parameter__free_unpacked(cm->net, NULL);
}

/* The layer by name; of several (a net's TRAIN and TEST copies), the first that holds blobs. */
static const cm_layer *cm_find(const cm_file *cm, const char *name) {
    const cm_layer *any = NULL;
    for (size_t i = 0; i < cm->n; i++) {
        if (!cm->layers[i].name || strcmp(cm->layers[i].name, name)) continue;
        if (cm->layers[i].n_blobs) return &cm->layers[i];
        if (!any) any = &cm->layers[i];
    }
    return any;
}

/* A blob's shape: BlobShape, else num/channels/height/width; returns its value count. */
static int blob_shape(const Caffe__BlobProto *b, long shape[8], long *count) {
    int nd = 0;
    if (b->shape) {
        for (size_t k = 0; k < b->shape->n_dim && nd < 8; k++) shape[nd++] = (long)b->shape->dim[k];
    } else if (b->has_num || b->has_channels || b->has_height || b->has_width) {
        shape[0] = b->num, shape[1] = b->channels, shape[2] = b->height, shape[3] = b->width, nd = 4;
    } else {   /* no shape: as many values as it holds */
        shape[0] = (long)(b->n_data ? b->n_data : b->n_double_data), nd = 1;
    }
    long c = 1;
    for (int k = 0; k < nd; k++) c *= shape[k];
    *count = c;
    return nd;
}

static void shape_text(char *buf, size_t cap, const long *shape, int ndim) {
    int n = snprintf(buf, cap, "[");
    for (int k = 0; k < ndim && n < (int)cap; k++) n += snprintf(buf + n, cap - (size_t)n, "%s%ld", k ? ", " : "", shape[k]);
    if (n < (int)cap) snprintf(buf + n, cap - (size_t)n, "]");
}

/* The same dimensions once every 1 is left out (V1's [1, 1, out, in] is [out, in]). */
static int same_dims(const long *a, int na, const long *b, int nb) {
    int i = 0, j = 0;
    for (;;) {
        while (i < na && a[i] == 1) i++;
        while (j < nb && b[j] == 1) j++;
        if (i == na || j == nb) return i == na && j == nb;
        if (a[i++] != b[j++]) return 0;
    }
}

/* Value k of a blob, float or double. */
static double blob_at(const Caffe__BlobProto *b, size_t k) { return b->n_data ? b->data[k] : b->double_data[k]; }

static const char *const blob_names[] = { "first", "second", "third", "fourth", "fifth" };

/* The layer and blob that hold entry e; a bn's gamma and beta without caffe_scale: NVCaffe's
 * BatchNorm's own, or the Scale named NAME_scale, or the Scale that reads the BatchNorm's top. */
static const Caffe__BlobProto *locate(const cm_file *cm, const rt_init_named *e, const char *layer,
                                      const cm_layer **holder, int *index) {
    const cm_layer *L = cm_find(cm, layer);
    if (!L)
        rt_die_hint("list the layer in init.fresh to initialize it anew, or give it the name it has in the caffemodel",
                    "init: %s has no layer \"%s\" (for %s)", cm->path, layer, e->alt && *e->alt ? e->alt : e->key);
    int blob = e->caffe_blob;
    if (e->caffe_kind == RT_CAFFE_BN_AFFINE) {
        if (L->n_blobs >= 5) {
            blob += 3;   /* NVCaffe's BatchNorm with scale_bias: mean, variance, factor, gamma, beta */
        } else {
            char own_scale[300];   /* what `trainc export` names it without caffe_scale */
            snprintf(own_scale, sizeof own_scale, "%s_scale", layer);
            const cm_layer *S = cm_find(cm, own_scale);
            if (S && (!S->type || strcmp(S->type, "Scale") || !S->n_blobs)) S = NULL;
            for (size_t i = 0; L->top0 && i < cm->n && !S; i++)
                if (cm->layers[i].type && !strcmp(cm->layers[i].type, "Scale") && cm->layers[i].bottom0 &&
                    !strcmp(cm->layers[i].bottom0, L->top0) && cm->layers[i].n_blobs)
                    S = &cm->layers[i];
            if (!S)
                rt_die_hint("list the layer in init.fresh, or give the bn affine: false if Caffe's BatchNorm has no Scale "
                            "after it", "init: %s has no Scale layer after the BatchNorm \"%s\" to give %s its %s",
                            cm->path, layer, e->alt && *e->alt ? e->alt : e->key, blob ? "beta" : "gamma");
            L = S;
        }
    }
    if ((size_t)blob >= L->n_blobs)
        rt_die_hint("make the layer's bias_term (or its Scale's) agree with the caffemodel's, or list it in init.fresh",
                    "init: layer \"%s\" in %s holds %zu blob%s; %s needs its %s", L->name, cm->path, L->n_blobs,
                    L->n_blobs == 1 ? "" : "s", e->alt && *e->alt ? e->alt : e->key, blob_names[blob]);
    *holder = L, *index = blob;
    return L->blobs[blob];
}

long rt_init_apply_caffemodel(const rt_init_config *cfg, const char *path, float *params, long n_params,
                              float *buffers, long n_buffers) {
    cm_file cm;
    cm_open(&cm, path);
    long copied = 0;
    for (int i = 0; i < cfg->n_named; i++) {
        const rt_init_named *e = &cfg->named[i];
        char own[256];
        snprintf(own, sizeof own, "%s", e->alt && *e->alt ? e->alt : e->key);
        if (strrchr(own, '.')) *strrchr(own, '.') = 0;
        const char *layer = e->caffe_layer && *e->caffe_layer ? e->caffe_layer : own;
        const cm_layer *L;
        int blob;
        const Caffe__BlobProto *b = locate(&cm, e, layer, &L, &blob);
        long shape[8], count;
        int nd = blob_shape(b, shape, &count);
        char want[96], got[96];
        shape_text(want, sizeof want, e->shape, e->ndim);
        shape_text(got, sizeof got, shape, nd);
        size_t held = b->n_data ? b->n_data : b->n_double_data;
        if (held != (size_t)count)
            rt_die_hint(CM_HINT, "init: the %s blob of layer \"%s\" in %s is %s but holds %zu values (a damaged file)",
                        blob_names[blob], L->name, path, got, held);
        if (!same_dims(shape, nd, e->shape, e->ndim) || count != e->count)
            rt_die_hint("list the layer in init.fresh (a new classifier, say), or make the shapes agree",
                        "init: the %s blob of layer \"%s\" is %s in %s but %s here (%s)", blob_names[blob], L->name,
                        got, path, want, e->alt && *e->alt ? e->alt : e->key);
        long limit = e->buffer ? n_buffers : n_params;
        if (e->dst < 0 || e->dst + e->count > limit) rt_die("init: tensor %s lies outside its buffer (a compiler bug)", e->key);
        double factor = 1;
        if (e->caffe_kind == RT_CAFFE_BN_STAT) {   /* Caffe keeps sums; the third blob is their weight */
            if (L->n_blobs < 3 || (L->blobs[2]->n_data + L->blobs[2]->n_double_data) < 1)
                rt_die_hint(CM_HINT, "init: BatchNorm \"%s\" in %s has no third blob (its moving-average factor)", L->name,
                            path);
            double w = blob_at(L->blobs[2], 0);
            factor = w == 0 ? 0 : 1 / w;
        }
        float *dst = (e->buffer ? buffers : params) + e->dst;
        for (long k = 0; k < e->count; k++) dst[k] = (float)(blob_at(b, (size_t)k) * factor);
        copied += e->count;
    }
    cm_close(&cm);
    return copied;
}

/* ---- writing ------------------------------------------------------------------------ */

rt_status rt_caffemodel_write(const char *path, const char *net_name, const rt_caffe_layer *layers, int n,
                              rt_err *err) {
    Caffe__NetParameter net = CAFFE__NET_PARAMETER__INIT;
    net.name = (char *)net_name;
    net.n_layer = (size_t)n;
    net.layer = rt_xcalloc((size_t)(n ? n : 1), sizeof *net.layer);
    Caffe__LayerParameter *lp = rt_xcalloc((size_t)(n ? n : 1), sizeof *lp);
    Caffe__BlobProto *bp = rt_xcalloc((size_t)(n ? n : 1) * RT_CAFFE_MAX_BLOBS, sizeof *bp);
    Caffe__BlobProto **bpp = rt_xcalloc((size_t)(n ? n : 1) * RT_CAFFE_MAX_BLOBS, sizeof *bpp);
    Caffe__BlobShape *shapes = rt_xcalloc((size_t)(n ? n : 1) * RT_CAFFE_MAX_BLOBS, sizeof *shapes);
    int64_t *dims = rt_xcalloc((size_t)(n ? n : 1) * RT_CAFFE_MAX_BLOBS * 4, sizeof *dims);
    float **fills = rt_xcalloc((size_t)(n ? n : 1) * RT_CAFFE_MAX_BLOBS, sizeof *fills);
    for (int i = 0; i < n; i++) {
        caffe__layer_parameter__init(&lp[i]);
        lp[i].name = (char *)layers[i].name, lp[i].type = (char *)layers[i].type;
        lp[i].n_blobs = (size_t)layers[i].n_blobs, lp[i].blobs = &bpp[i * RT_CAFFE_MAX_BLOBS];
        for (int j = 0; j < layers[i].n_blobs; j++) {
            int k = i * RT_CAFFE_MAX_BLOBS + j;
            const rt_caffe_blob *src = &layers[i].blobs[j];
            caffe__blob_proto__init(&bp[k]);
            caffe__blob_shape__init(&shapes[k]);
            long count = 1;
            for (int d = 0; d < src->ndim; d++) dims[k * 4 + d] = src->shape[d], count *= src->shape[d];
            shapes[k].n_dim = (size_t)src->ndim, shapes[k].dim = &dims[k * 4];
            bp[k].shape = &shapes[k];
            bp[k].n_data = (size_t)count;
            if (src->fill) {
                fills[k] = rt_xcalloc((size_t)count, sizeof(float));
                for (long v = 0; v < count; v++) fills[k][v] = src->fill_value;
                bp[k].data = fills[k];
            } else {
                bp[k].data = (float *)src->data;
            }
            bpp[k] = &bp[k];
        }
        net.layer[i] = &lp[i];
    }
    size_t len = caffe__net_parameter__get_packed_size(&net);
    uint8_t *buf = malloc(len ? len : 1);
    rt_status st = RT_OK;
    if (!buf) st = rt_fail(err, RT_E_IO, NULL, "%s: %zu bytes do not fit in memory", path, len);
    if (!st) caffe__net_parameter__pack(&net, buf);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = st ? NULL : fopen(tmp, "wb");
    if (!st && !f) st = rt_fail(err, RT_E_IO, "choose a writable -o path", "cannot write %s: %s", tmp, strerror(errno));
    if (f) {
        int bad = fwrite(buf, 1, len, f) != len;
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, path) != 0) {
            st = rt_fail(err, RT_E_IO, "choose a writable -o path", "cannot write %s: %s", path, strerror(errno));
            unlink(tmp);
        }
    }
    for (int k = 0; k < n * RT_CAFFE_MAX_BLOBS; k++) free(fills[k]);
    free(fills), free(dims), free(shapes), free(bpp), free(bp), free(lp), free(net.layer), free(buf);
    return st;
}
#endif
