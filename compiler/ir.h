/* The code generator's view of a net: ops in schedule order over values (tensors), with
 * parameters laid out and memory planned. Built from sema's net (ir_build.c); read by
 * autodiff/plan.c and the emitters. */
#ifndef TRAINC_IR_H
#define TRAINC_IR_H

#include <stdio.h>
#include "ast.h"

/* Every op kind, with its C name stem. The count sentinel below keeps per-kind tables
 * complete. */
#define IR_OPS(X) \
    X(CONV, "conv") X(LINEAR, "linear") X(BN, "bn") X(LN, "ln") X(RELU, "relu") \
    X(GELU, "gelu") X(MAXPOOL, "maxpool") X(AVGPOOL, "avgpool") X(GAP, "gap") \
    X(DROPOUT, "dropout") X(LRN, "lrn") X(ADD, "add") X(CONCAT, "concat") \
    X(FLATTEN, "flatten") X(LAYER_SCALE, "layer_scale") X(DROP_PATH, "stochastic_depth")

typedef enum {
#define IR_ENUM(kind, name) IR_##kind,
    IR_OPS(IR_ENUM)
#undef IR_ENUM
    IR_OP_COUNT
} ir_op_kind;

#define IR_MAX_INPUTS 8

typedef struct {
    ir_op_kind kind;
    const char *name;          /* layer name from the spec */
    char ident[96];            /* C identifier derived from the name, unique in the net */
    src_loc loc;
    int n_in;
    int in[IR_MAX_INPUTS];     /* value ids: 0 is the network input, op k produces value k+1 */
    int c, h, w;               /* output shape per image */
    int in_c, in_h, in_w;      /* shape of in[0] per image */
    /* attributes (those of the op's kind) */
    int kh, kw, sh, sw, ph, pw, dh, dw, groups, bias;
    double eps, momentum, p, init;
    int lrn_size;
    double lrn_alpha, lrn_beta, lrn_k;
    /* parameters, in floats from the start of params/grads; -1 when absent */
    long w_off, w_count, b_off, b_count;
    long buf_off;              /* BN: running mean at buf_off, running var at buf_off + c */
    long fan_in;
    /* A ReLU fused into this conv / linear / bn / add, on both backends: the op's output is
     * the activated value, its gradient the ReLU's, and the relu layer has no op of its own
     * (ir_build.c decides when that is safe and the backend can run it). */
    int act;                   /* 0 none, 1 relu (rt_act) */
    const char *act_name;      /* the fused relu layer's name and place, for comments */
    src_loc act_loc;
} ir_op;

/* How backward delivers the gradient of one op input, decided once by the plan (plan.c:
 * the first consumer in backward order writes a gradient, later ones add) and only
 * printed by the emitters. */
typedef enum {
    GRAD_NONE = 0,   /* the network input: no gradient */
    GRAD_WRITE,      /* the first writer: the op writes (or copies into) the value's gradient */
    GRAD_ADD,        /* a later writer that adds in place (conv: din_add; add: accumulate) */
    GRAD_SCRATCH,    /* a later writer that cannot add in place: it writes scratch_of, which is
                      * then accumulated into the gradient */
    GRAD_SHARED,     /* an add's input whose gradient buffer is the add's output gradient: nothing */
} ir_grad_route;

typedef enum { T_ACT, T_GRAD, T_SAVED, T_SCRATCH } ir_tensor_kind;

typedef struct {
    ir_tensor_kind kind;
    int op;                    /* op it belongs to (producer, or consumer for scratch) */
    long bytes;
    int first, last;           /* schedule steps during which it is live */
    long offset;               /* byte offset in the arena */
} ir_tensor;

/* A gradient bucket: consecutive parameter tensors (a contiguous range of grads) that are
 * all-reduced together as soon as backward has written the last of them. */
typedef struct {
    long offset, count;        /* in floats */
    int n_tensors, n_layers;
    int ready_op;              /* op whose backward writes the bucket's last gradient */
    int first_op;              /* op of the bucket's first tensor (the first written) */
} ir_bucket;

typedef struct {
    int n_ops;
    ir_op *ops;
    int batch;                 /* per-rank batch the code is specialized for */
    int in_c, in_h, in_w, classes;
    double label_smoothing;
    long n_params, n_buffers;  /* parameter buffer length (with alignment gaps), BN buffers */
    long param_count;          /* trainable values: n_params less the gaps */
    /* Alignment (set by ir_build): arena tensors on align_bytes (CPU 64, CUDA 256), parameter
     * tensors on param_align elements (CPU 1: packed; CUDA 128: cuBLASLt and cuDNN pick
     * kernels that assume 256-byte-aligned operands, and the 16-bit weight copy has 2-byte
     * elements) */
    long align_bytes, param_align;
    /* memory plan */
    int n_tensors;
    ir_tensor *tensors;
    int *act_of, *grad_of, *saved_of;   /* per value / op: tensor index, -1 if none */
    int *alias;                /* per value: the value whose buffer it shares (flatten) */
    int *scratch_of;           /* per (op, input slot): scratch tensor for GRAD_SCRATCH, or -1 */
    ir_grad_route *route;      /* per (op, input slot): how backward delivers that gradient */
    int share_add_grads;       /* set before ir_plan (CPU schedule): adds hand their gradient
                                * buffer on (GRAD_SHARED) */
    int act_bytes;             /* bytes of an activation element: 4, or 2 (CUDA BF16/FP16);
                                * saved statistics and indices stay 4 */
    long arena_bytes, arena_naive_bytes;
    /* data parallelism (buckets.c); 0 buckets until ir_plan_buckets runs */
    int n_buckets;
    ir_bucket *buckets;
    int sync_bn;               /* batch norm statistics all-reduced over ranks */
} ir_net;

extern const char *const ir_op_names[IR_OP_COUNT];

long ir_value_elems(const ir_net *net, int value);   /* per batch */
/* Lays parameters out contiguously in reverse schedule order (the order backward finishes
 * their gradients, so gradient buckets are contiguous) and BN buffers in schedule order. */
void ir_layout_params(ir_net *net);
/* Appends the backward pass and plans memory: liveness over the fixed schedule
 * (forward ops, loss, backward ops in reverse) and first-fit offsets in one arena. */
void ir_plan(ir_net *net);
/* Groups the parameter tensors, in layout order, into buckets of at most bucket_mb MiB
 * (a tensor larger than the cap gets a bucket of its own). */
void ir_plan_buckets(ir_net *net, double bucket_mb);
/* Writes the bucket plan: one line per bucket with its range, bytes and layers. */
void ir_print_buckets(FILE *out, const ir_net *net, double bucket_mb);
/* The route of input slot k of op j. */
static inline ir_grad_route ir_route(const ir_net *net, int j, int k) { return net->route[j * IR_MAX_INPUTS + k]; }
/* Writes plan.txt: tensors, lifetimes, offsets, peak vs naive. */
void ir_print_plan(FILE *out, const ir_net *net);
void ir_net_free(ir_net *net);

#endif
