/* The network IR that sema produces and the code generator consumes: layers in schedule
 * order with resolved inputs, per-image output shapes, every attribute with its default
 * applied, and the parameter / MAC / activation-byte counts.
 *
 * Example: the layer `conv { name: "conv1" out: 64 kernel: 7 stride: 2 pad: 3 bias: false }`
 * fed by data [3,224,224] becomes
 *   { .kind = NET_CONV, .name = "conv1", .n_inputs = 1, .inputs = {-1},
 *     .in = {3,224,224}, .out = {64,112,112}, .conv = { .out = 64, .kernel = {7,7},
 *     .stride = {2,2}, .pad = {3,3}, .dilation = {1,1}, .groups = 1, .bias = 0 },
 *     .params = 9408, .macs = 118013952, .act_bytes = 3211264 }
 * A generator walks net->layers[0..n_layers) once; every layer's inputs precede it. */
#ifndef TRAINC_NET_H
#define TRAINC_NET_H

#include <stdbool.h>
#include <stdint.h>
#include "ast.h"

/* Layer kinds: enum suffix, spec field name (the schema message of the same name). */
#define NET_LAYER_KINDS(X)                 \
    X(CONV, "conv")                        \
    X(LINEAR, "linear")                    \
    X(BN, "bn")                            \
    X(LN, "ln")                            \
    X(RELU, "relu")                        \
    X(GELU, "gelu")                        \
    X(RELU6, "relu6")                      \
    X(SIGMOID, "sigmoid")                  \
    X(SILU, "silu")                        \
    X(HARDSWISH, "hardswish")              \
    X(HARDSIGMOID, "hardsigmoid")          \
    X(FLATTEN, "flatten")                  \
    X(RESHAPE, "reshape")                  \
    X(STOP_GRADIENT, "stop_gradient")      \
    X(GAP, "gap")                          \
    X(MAXPOOL, "maxpool")                  \
    X(AVGPOOL, "avgpool")                  \
    X(ADAPTIVE_AVGPOOL, "adaptive_avgpool") \
    X(DROPOUT, "dropout")                  \
    X(LRN, "lrn")                          \
    X(ADD, "add")                          \
    X(CONCAT, "concat")                    \
    X(MUL, "mul")                          \
    X(CHANNEL_SHUFFLE, "channel_shuffle")  \
    X(CHANNEL_SLICE, "channel_slice")      \
    X(TOKENS, "tokens")                    \
    X(LEARNED, "learned")                  \
    X(SELECT_TOKEN, "select_token")        \
    X(ATTENTION, "attention")              \
    X(SPACE_TO_DEPTH, "space_to_depth")    \
    X(LAYER_SCALE, "layer_scale")          \
    X(STOCHASTIC_DEPTH, "stochastic_depth") \
    X(SOFTMAX_CE, "softmax_ce")

typedef enum {
#define NET_KIND_ENUM(id, name) NET_##id,
    NET_LAYER_KINDS(NET_KIND_ENUM)
#undef NET_KIND_ENUM
    NET_KIND_COUNT
} net_kind;

const char *net_kind_name(net_kind kind);     /* "conv", ... */

#define NET_INPUT_DATA (-1)   /* input index meaning the network input */
#define NET_MAX_INPUTS 16     /* add/concat fan-in limit */
#define NET_MAX_HEADS 8       /* softmax_ce layers: the main loss head and auxiliary ones */

typedef struct { int64_t c, h, w; } net_shape;   /* per image, NCHW without N */

/* A layer's initial weights or bias (schema message "filler"); NET_FILL_TORCH: absent. */
typedef enum { NET_FILL_TORCH, NET_FILL_CONSTANT, NET_FILL_UNIFORM, NET_FILL_GAUSSIAN, NET_FILL_XAVIER,
               NET_FILL_MSRA } net_fill_kind;
typedef enum { NET_FAN_IN, NET_FAN_OUT, NET_FAN_AVERAGE } net_fan;
typedef struct {
    net_fill_kind kind;
    double value, min, max, mean, std;
    net_fan fan;
} net_filler;

typedef struct {
    int64_t out;              /* output channels */
    int64_t kernel[2], stride[2], pad[2], dilation[2];   /* [h, w] */
    int64_t groups;
    bool bias;
    net_filler weight_filler, bias_filler;
    double lr_mult[2], decay_mult[2];   /* Caffe's per-blob multipliers [weight, bias] */
} net_conv_attr;

typedef struct {              /* in = flattened input */
    int64_t in, out;
    bool bias;
    net_filler weight_filler, bias_filler;
    double lr_mult[2], decay_mult[2];
} net_linear_attr;
typedef struct {                  /* bn; ln uses eps only */
    double eps, momentum;
    bool use_global_stats, affine;    /* bn: frozen statistics; learned gamma and beta */
    double gamma_init;                /* bn: gamma's initial value (1: identity) */
} net_norm_attr;
typedef struct { int64_t kernel[2], stride[2], pad[2]; bool ceil_mode; } net_pool_attr;   /* max/avg */
typedef struct { int64_t size; } net_adaptive_attr;
typedef struct { double p; } net_drop_attr;                       /* dropout, stochastic_depth */
typedef struct { int64_t size; double alpha, beta, k; bool within_channel; } net_lrn_attr;
typedef struct { double init; } net_scale_attr;                   /* layer_scale */
typedef struct {
    int64_t groups, start;    /* channel_shuffle: groups; channel_slice: first channel */
    bool gate;                /* mul: the second input is [C,1,1], broadcast over positions */
    bool tokens;              /* concat: along the tokens (H of [C, T, 1]), not the channels */
} net_channel_attr;
/* The token layers (sema_token.c). A sequence of T tokens of C features is the shape [C, T, 1]:
 * the channels are each token's features, as conv, ln and add see them (a 1x1 conv is the
 * per-token linear), stored channel-major. */
typedef struct {
    int64_t heads;            /* attention: heads, dividing C */
    int64_t window, shift;    /* attention: Swin's window (0: global over tokens) and cyclic shift */
    int64_t index;            /* select_token: the token taken; space_to_depth: the block */
    net_filler filler;        /* learned: its initial values (default zeros) */
} net_token_attr;

typedef struct { double weight; } net_loss_attr;          /* softmax_ce: loss_weight */

typedef struct net_layer {
    net_kind kind;
    const char *name;         /* unique; lives in the spec's arena */
    src_loc loc;              /* the layer's message in the spec */
    int n_inputs;
    int inputs[NET_MAX_INPUTS];   /* indices of earlier layers, NET_INPUT_DATA for the data */
    net_shape in;             /* shape of inputs[0] */
    net_shape out;
    union {                   /* the member named by kind; kinds without attributes have none */
        net_conv_attr conv;
        net_linear_attr linear;
        net_norm_attr norm;
        net_pool_attr pool;
        net_adaptive_attr adaptive;
        net_drop_attr drop;
        net_lrn_attr lrn;
        net_scale_attr scale;
        net_channel_attr channel;
        net_token_attr token;
        net_loss_attr loss;
    };
    int64_t params;           /* learnable parameters (weights + bias + affine) */
    int64_t macs;             /* forward multiply-accumulates per image (conv and linear only) */
    int64_t act_bytes;        /* fp32 output bytes per image */
} net_layer;

typedef struct net_desc {
    net_shape input;          /* net.input_shape */
    int64_t classes;          /* net.classes, or the last layer's output size if not given */
    int n_layers;
    net_layer *layers;        /* malloc'd, schedule order */
    int loss_layer;           /* index of the main head's explicit softmax_ce (the last layer), or -1
                               * (the loss is implicit after the last layer); any other softmax_ce
                               * is an auxiliary head */
    int64_t params, macs, act_bytes;   /* totals */
} net_desc;

void net_desc_free(net_desc *net);
/* Index of the layer named `name`, or -1. */
int net_find(const net_desc *net, const char *name);
/* C*H*W, assuming it was checked not to overflow. */
static inline int64_t net_shape_size(net_shape s) { return s.c * s.h * s.w; }

#endif
