/* Shared state of the Caffe importer's stages: reading protobuf-text values with checks,
 * the layers translated so far, and the notes and errors they produce. */
#ifndef TRAINC_IMPORT_CAFFE_INTERNAL_H
#define TRAINC_IMPORT_CAFFE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "ast.h"
#include "diag.h"
#include "import_caffe.h"

#define IC_MAX_INPUTS 16
#define IC_MAX_NOTES 256

/* One trainc layer, as the spec will print it. */
typedef struct ic_layer {
    const char *type;                   /* trainc layer field: conv, linear, bn, ... */
    const char *name;
    const char *inputs[IC_MAX_INPUTS];  /* trainc layer names; empty = the previous layer */
    int n_inputs;
    char args[512];                     /* the layer's fields, " out: 20 kernel: 5" */
    src_loc loc;                        /* the Caffe layer it came from */
    const char *caffe_type;             /* its Caffe type, for the summary */
    const char *folded;                 /* the name of a Scale folded into it, or NULL */
    int unread_ok;                      /* a Slice's part: left out when no layer reads it */
} ic_layer;

/* A Caffe blob: which trainc layer wrote it last, and its shape [C, H, W]. */
typedef struct ic_blob {
    const char *name;
    const char *producer;               /* "data" for the net input */
    int64_t c, h, w;
    int axes;                           /* Caffe's axes, N included: 4 (an image), 2 after InnerProduct or
                                         * Flatten ([N, C]), what a Reshape made; [C, H, W] pads with 1s */
} ic_blob;

/* A blob only a layer outside the training net writes (a TEST-phase data layer, say). */
typedef struct ic_test_top {
    const char *blob, *layer, *type;
} ic_test_top;
#define IC_MAX_TEST_TOPS 64

/* A data layer mapped to a split of the data block (import_caffe_data.c). */
typedef struct ic_data {
    int set;
    const ast_node *layer;
    const char *name, *type;            /* "Data" (an LMDB) or "DummyData" */
    const char *source;                 /* the database path */
    int64_t batch, crop;
    long records;                       /* the database's records (DummyData: one batch) */
    int c, h, w;
    double scale, mean[4];              /* transform_param */
    int n_mean, mirror;
    const char *root;                   /* ImageData: root_folder ("" = none) */
    int64_t new_h, new_w;               /* ImageData: new_height/new_width (0 = the images' own) */
    int gray;                           /* ImageData: is_color: false (one channel, cv::imread's gray) */
    int leveldb;                        /* Data: backend LEVELDB (Caffe's default) rather than LMDB */
    const char *mean_file;              /* Data, ImageData: transform_param mean_file, exact (the path found), or NULL */
    int mean_c, mean_h, mean_w;         /* its image's shape, checked against the database's (ImageData: the resized images) */
    int shuffled;                       /* Data: NVCaffe's cache + shuffle (reordered every epoch, as trainc does) */
    int db_h, db_w;                     /* Data with crop_size: the database's stored size (h, w: the crop) */
} ic_data;

typedef struct ic_ctx {
    diag_ctx *diag;
    ast_arena *arena;
    const import_caffe_options *opt;
    /* the net */
    const char *net_name;
    int64_t batch;                      /* from the Input shape; 0 = unknown */
    int64_t in_c, in_h, in_w;
    int have_input;
    ic_layer *layers;
    int n_layers, cap_layers;
    ic_blob *blobs;
    int n_blobs, cap_blobs;
    int have_loss;
    int64_t classes;                    /* channels the loss reads */
    /* notes printed as comments at the top of the spec */
    char *notes[IC_MAX_NOTES];
    int n_notes;
    int bn_stats_noted;                 /* the running-statistics note is written once */
    int n_caffe_layers, n_approximations;   /* for the summary */
    const char *solver_summary;         /* one line on the optimizer and the LR, for the summary */
    ic_test_top test_tops[IC_MAX_TEST_TOPS];
    int n_test_tops;
    ic_data train_data, val_data;       /* data layers, or train_data.set 0 with an Input layer */
    int resize_noted;                   /* the note on ImageData's decoding is in the spec once */
    const ast_node *val_layer;          /* the TEST-phase data layer, read once the net is known */
    char precision[128];                /* NVCaffe's net-level precision as a precision block, or "" */
    const ast_node *root;               /* the net, and the index of the layer being read in it */
    int cur;
} ic_ctx;

/* ---- reading values (import_caffe_value.c) ---- */
/* The first FIELD node `name` in msg (its value is ->a), or NULL. */
ast_node *ic_get(const ast_node *msg, const char *name);
/* Numbers and words with a type check; a wrong type is an error at the value. Return 0 when
 * the field is absent (out keeps the default), 1 when read, -1 on error. */
int ic_int(ic_ctx *ic, const ast_node *msg, const char *name, int64_t *out);
int ic_float(ic_ctx *ic, const ast_node *msg, const char *name, double *out);
int ic_bool(ic_ctx *ic, const ast_node *msg, const char *name, int *out);
int ic_word(ic_ctx *ic, const ast_node *msg, const char *name, const char **out);
int ic_msg(ic_ctx *ic, const ast_node *msg, const char *name, const ast_node **out);
/* Every field of msg must be in `known` (NULL-terminated); reports the others, naming `what`. */
int ic_only_fields(ic_ctx *ic, const ast_node *msg, const char *what, const char *const *known);
/* An error at `at`; returns -1. */
int ic_error(ic_ctx *ic, const ast_node *at, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A setting trainc cannot honour exactly: an error, or with --approximate a note in the spec. */
int ic_approximate(ic_ctx *ic, const ast_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with a hint of its own (what to write instead), for a refusal the generic one
 * leaves the user guessing at. */
int ic_approximate_hint(ic_ctx *ic, const ast_node *at, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A note printed at the top of the spec. */
void ic_note(ic_ctx *ic, const ast_node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "file:line" of a node, for comments. */
void ic_where(char *buf, size_t cap, const ast_node *at);
/* The shortest text that reads back as v (one of 8 rotating buffers). */
const char *ic_num(double v);
/* appends printf text to a fixed buffer */
void ic_append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- the net (import_caffe_net.c, import_caffe_layers.c, import_caffe_learned.c) ---- */
/* What a Caffe layer reads and writes. */
typedef struct layer_io {
    const ast_node *layer, *param;      /* the layer and its TYPE_param message (may be NULL) */
    const char *name, *type;
    ic_blob *in[IC_MAX_INPUTS];
    int n_in;
    const char *top;
} layer_io;

#define KNOWN(...) ((const char *const[]){ __VA_ARGS__, NULL })
/* Appends the layer's weight_filler (and bias_filler) to args. */
int ic_map_fillers(ic_ctx *ic, const layer_io *io, int has_bias, char *args, size_t cap);
/* Its param { lr_mult decay_mult }: 1 passes, 0 is refused, others are approximated. */
int ic_map_param_mults(ic_ctx *ic, const layer_io *io, int has_bias, char *args, size_t cap);
/* BatchNorm and the Scale after it (`next`) as one bn; sets *consumed. */
/* A Scale layer that no BatchNorm folded: layer_scale when it has no bias. */
int ic_translate_scale(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o);
int ic_translate_batch_norm(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o, const ast_node *next,
                            int *consumed);
int ic_import_net(ic_ctx *ic, const ast_node *root);
ic_blob *ic_blob_find(ic_ctx *ic, const char *name);
/* A layer's propagate_down: one per bottom; true passes; false is accepted where no gradient
 * goes anyway (bottoms from first_plain on, such as a loss's labels, and the net's input);
 * elsewhere it sets stop[bottom] (the caller reads that bottom through a stop_gradient), or
 * where stop is NULL (a loss's scores) it is refused. */
int ic_propagate_down(ic_ctx *ic, const ast_node *L, const char *name, int first_plain, int *stop);
/* The trainc layer a layer reads for bottom blob b: its producer, or with stop set a
 * stop_gradient named LAYER/stop_BLOB added before it (Caffe's propagate_down: false). */
const char *ic_bottom_input(ic_ctx *ic, const ast_node *L, const char *layer, const ic_blob *b, int stop);
/* 1 for Caffe's data layer types (Data, ImageData, HDF5Data, ...). */
int ic_is_data_layer(const char *type);
/* The layer outside the training net that writes blob, or NULL. */
const ic_test_top *ic_test_top_find(const ic_ctx *ic, const char *blob);
/* An error for a layer reading blob `name` (at `at`), which no training layer writes. */
int ic_missing_blob(ic_ctx *ic, const ast_node *at, const char *layer, const char *name);
/* Sets blob `name` (4 axes; callers change ->axes where Caffe's shape has other axes). */
ic_blob *ic_blob_set(ic_ctx *ic, const char *name, const char *producer, int64_t c, int64_t h, int64_t w);
ic_layer *ic_layer_add(ic_ctx *ic, const char *type, const char *name, const ast_node *at);
/* Translates one Caffe layer; `next` is the layer after it (for BatchNorm + Scale), and
 * *consumed is set to 1 when it was folded in. */
int ic_import_layer(ic_ctx *ic, const ast_node *layer, const ast_node *next, int *consumed);

/* ---- the data layers (import_caffe_data.c) ---- */
/* A data layer of the training net (train 1: the net's input, data.train) or the TEST
 * phase's (data.val); the ones trainc cannot read are refused saying what to do. */
int ic_data_layer(ic_ctx *ic, const ast_node *L, const char *type, const char *name, int train);
/* The data block: the data layers' splits, or the Input layer's batch. */
int ic_print_data(ic_ctx *ic, FILE *out);

/* ---- the solver (import_caffe_solver.c) ---- */
/* Prints the solver block (and seed) to out; errors are reported in ic. */
int ic_import_solver(ic_ctx *ic, FILE *out, const ast_node *root);

#endif
