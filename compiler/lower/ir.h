/* The code generator's view of a net: ops in schedule order over values (tensors), with
 * parameters laid out and memory planned. Built from sema's net (ir_build.c); read by
 * autodiff/plan.c and the emitters. */
#ifndef TRAINC_IR_H
#define TRAINC_IR_H

#include <stdio.h>
#include "ast.h"
#include "net.h"

/* Every op kind: enum suffix, name (the spec's layer keyword; "activation" stands for the
 * family relu6, sigmoid, silu, hardswish, hardsigmoid, one op with act_fn), what its backward reads
 * besides its output gradient: its input activation (in[0]) and its own output; whether its
 * backward reduces per-channel partial sums (the plan sizes their scratch: ir_partial_sum_channels);
 * and its weight's and bias's parameter class (rt_param_tensor.no_decay: decay, or exempt as
 * a bias or as a norm's parameter under the solver's exemptions). Switches
 * over op kinds list every kind (no default:), so -Wswitch names each place a new op must
 * fill; the count sentinel and the static assertion in plan.c keep ir_ops complete. */
#define IR_OPS(X)                                  \
    /*  kind              name                in out sums              weight's class      bias's class */ \
    X(CONV,             "conv",             1, 0, IR_SUMS_IF_BIAS, IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(LINEAR,           "linear",           1, 0, IR_SUMS_IF_BIAS, IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(BN,               "bn",               1, 0, IR_SUMS,         IR_NO_DECAY_NORM,  IR_NO_DECAY_NORM) \
    X(LN,               "ln",               1, 0, IR_SUMS,         IR_NO_DECAY_NORM,  IR_NO_DECAY_NORM) \
    X(RELU,             "relu",             0, 1, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(GELU,             "gelu",             1, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(ACTIVATION,       "activation",       1, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(MAXPOOL,          "maxpool",          0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(AVGPOOL,          "avgpool",          0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(GAP,              "gap",              0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(DROPOUT,          "dropout",          0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(LRN,              "lrn",              1, 1, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(ADD,              "add",              0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(CONCAT,           "concat",           0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(MUL,              "mul",              1, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) /* and in[1] (plan.c) */ \
    X(CHANNEL_SHUFFLE,  "channel_shuffle",  0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(CHANNEL_SLICE,    "channel_slice",    0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) /* and select_token (tokens) */ \
    X(LEARNED,          "learned",          0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(ATTENTION,        "attention",        1, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(SPACE_TO_DEPTH,   "space_to_depth",   0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) \
    X(FLATTEN,          "flatten",          0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) /* and tokens, reshape: views */ \
    X(STOP_GRADIENT,    "stop_gradient",    0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS) /* a copy; no backward */ \
    X(LAYER_SCALE,      "layer_scale",      1, 0, IR_SUMS,         IR_NO_DECAY_BIAS,  IR_NO_DECAY_BIAS) \
    X(STOCHASTIC_DEPTH, "stochastic_depth", 0, 0, IR_NO_SUMS,      IR_DECAY,          IR_NO_DECAY_BIAS)

/* Per-channel partial sums in the backward: none, always, or when the op has a bias. */
enum { IR_NO_SUMS, IR_SUMS, IR_SUMS_IF_BIAS };
/* A parameter's class: the values of rt_param_tensor.no_decay (rt_trainer.h RT_PARAM_*). */
enum { IR_DECAY = 0, IR_NO_DECAY_BIAS = 1, IR_NO_DECAY_NORM = 2 };

typedef enum {
#define IR_ENUM(kind, name, in, out, sums, wclass, bclass) IR_##kind,
    IR_OPS(IR_ENUM)
#undef IR_ENUM
    IR_OP_COUNT
} ir_op_kind;

typedef struct {
    const char *name;
    int backward_reads_input, backward_reads_output;
    int sums;                       /* IR_NO_SUMS, IR_SUMS, IR_SUMS_IF_BIAS */
    int weight_class, bias_class;   /* IR_DECAY, IR_NO_DECAY_BIAS, IR_NO_DECAY_NORM */
} ir_op_info;
extern const ir_op_info ir_ops[];

/* The CPU conv's algorithm (rt_conv_algo's values; rt_conv_choice.h), chosen by lowering. */
typedef enum {
    IR_CONV_IM2COL = 0, IR_CONV_WINOGRAD, IR_CONV_WINOGRAD_F4, IR_CONV_STRIDED, IR_CONV_STRIDED_WINOGRAD,
    IR_CONV_DNNL_BF16, IR_CONV_C1
} ir_conv_algo;
/* cuDNN's fused conv engines (fuse_conv_bn.c): none, conv + genstats (the per-channel sum
 * and sum of squares of the output written by the conv's epilogue: ConvBNfprop's pattern
  * without its prologue), the one graph that ConvBNfprop runs in FP16 and the generic
  * runtime-fusion engine (support surface 70) in BF16, or scale-bias-ReLU + conv + genstats
  * (ConvBNfprop's full form, FP16: the conv reads the previous bn's raw input and applies that
  * bn's scale, bias and ReLU in its prologue). */
typedef enum { IR_CONV_BN_NONE = 0, IR_CONV_BN_GENSTATS, IR_CONV_BN_GENSTATS_RT, IR_CONV_BN_SBR } ir_conv_bn;

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
    double eps, momentum, p, init;   /* init: layer_scale's and bn's initial gamma */
    int bn_frozen;             /* bn: Caffe's use_global_stats (running statistics in training too) */
    int ch_start;              /* channel_slice: first channel taken (groups: channel_shuffle's) */
    int mul_gate;              /* mul: in[1] is a [C,1,1] gate broadcast over positions (else
                                * the same shape as in[0]) */
    /* concat and channel_slice along the tokens of [C, T, 1] sequences (concat axis TOKENS,
     * select_token) rather than the channels: the same runtime ops on rows of tokens */
    int tokens;
    int window, shift;         /* attention: Swin's window and cyclic shift (0: global) */
    int heads;                 /* attention: heads; its parameters are laid out as torch's
                                * in_proj_weight [3C, C] then out_proj.weight [C, C] (w_off),
                                * in_proj_bias [3C] then out_proj.bias [C] (b_off) */
    int act_fn;                /* activation: which one (rt_activation: relu6, sigmoid, silu,
                                * hardswish, hardsigmoid; the spec keyword is the layer's) */
    int lrn_size, lrn_within;  /* lrn_within: Caffe's region WITHIN_CHANNEL (spatial window) */
    double lrn_alpha, lrn_beta, lrn_k;
    /* parameters, in floats from the start of params/grads; -1 when absent */
    long w_off, w_count, b_off, b_count;
    long buf_off;              /* BN: running mean at buf_off, running var at buf_off + c */
    long fan_in, fan_out;      /* conv, linear: Caffe's fans (in/groups x kh x kw, out x kh x kw) */
    net_filler wfill, bfill;   /* conv, linear: initial weights and bias */
    double lr_mult[2], decay_mult[2];   /* conv, linear: Caffe's multipliers [weight, bias]; else 1 */
    /* A ReLU fused into this conv / linear / bn / add, on both backends: the op's output is
     * the activated value, its gradient the ReLU's, and the relu layer has no op of its own
     * (ir_build.c decides when that is safe and the backend can run it). */
    int act;                   /* 0 none, 1 relu (rt_act) */
    /* dropout, stochastic_depth: the mask's salt, rt_hash_u64(step seed, salt, 0): the layer's
     * index in the spec's net, so every backend, fused or not, draws the same mask (an op's
     * index would not do: fusion gives each backend its own op list). */
    int salt;
    /* conv on the CPU (lower.c choose_conv_algos, rt_conv_choice.h): the algorithm, and where
     * it needs something the host may lack (AVX-512F, oneDNN's BF16 convolutions), what runs
     * instead (conv_alt, then conv_fallback); all three equal where nothing depends on the host */
    ir_conv_algo conv_algo, conv_alt, conv_fallback;
    /* CPU (lower.c choose_conv_pool): on a conv, the index of the max pooling its call also
     * computes (conv2d_relu_maxpool: each image's output pooled while in cache; the runtime
     * takes its AVX-512 kernel where the CPU has it, else the two ops one after the other), or
     * -1; on that pooling, pooled_in = the conv's index (it emits nothing of its own), else -1. */
    int pools_into, pooled_in;
    /* CUDA (lower.c choose_bias_act): on a conv or linear with a bias and no ReLU, the index of
     * the GELU or activation op, its output's only reader, whose kernel adds the bias
     * (bias_act.cu: act(x + b) in one pass; the conv's output is kept without it), or -1; on
     * that activation, act_bias_of = the conv's or linear's index, else -1. */
    int bias_act, act_bias_of;
    /* CUDA (fuse_bias_act_grad.c; --no-bias-act-grad: off): on such an activation, its backward
     * also sums the conv's bias gradient (bias_act_bgrad.cu: din written once and summed on the
     * way), so the conv's backward has no bias pass; else 0. */
    int act_bgrad;
    /* CUDA (fuse_dw_bias.c; --no-dw-bias: off): on a depthwise conv with a bias, the conv's call
     * takes the bias (cuda_conv2d_forward_bias / _backward_bias): our depthwise kernels add it
     * in their store and sum its gradient in the weight gradient's kernel; else 0. */
    int dw_bias;
    /* CUDA (fuse_ln_bias.c; --no-ln-bias: off): on a conv with a bias whose output only a layer
     * norm reads (ConvNeXt's stem), that norm's index, else -1; on the norm, the conv's index,
     * else -1. The conv writes its output without the bias; the norm's passes add it as they
     * read x (cuda_layernorm_forward_bias), and its backward sums the bias gradient. */
    int ln_bias, ln_bias_of;
    /* CUDA (fuse_residual_tail.c): a residual block's tail, conv/linear (bias) -> layer_scale
     * [-> stochastic_depth] -> add, in one pass each way (residual_tail.cu). On the add: tail_conv
     * = the conv's index, else -1; on the conv, layer scale and drop path: in_tail = the add's
     * index (the conv adds no bias, the others emit no kernel), else -1. */
    int tail_conv, in_tail;
    /* bn on CUDA channels-last: the per-channel sums finished by each channel tile's last
     * block (a retire counter) instead of launches of their own (lower.c) */
    int bn_retire;
    /* CUDA channels-last: a residual block's closing bn(s) applied inside the add's kernel
     * (bn_add_relu_nhwc.cu; lower.c). On the bn: bn_in_add, its statistics pass runs in place
     * but its apply does not, and its output is never written. On the add: add_bns, how many of
     * its two inputs are such bns (2: a projection block's main and downsample branches). */
    int bn_in_add, add_bns;
    /* CUDA channels-last, 16-bit (lower.c choose_relu_mask; --no-relu-mask: off): relu_mask on a
     * bn with a fused ReLU, or on an add with bns applied inside it (add_bns): its forward also
     * writes a ReLU bitmask (bit i of byte i/8 set where the ReLU passed element i; the tensor
     * mask_of in the plan), and the backward reads those bits instead of the ReLU's output.
     * add_bwd_fused on such an add: its backward is dReLU (the bits) + the add's gradient + each
     * applied bn's backward in two passes (bn_add_relu_backward_nhwc.cu): one for the per-channel
     * sums (retired, dgamma, dbeta), one for each bn's input gradient and the shortcut's
     * gradient; those bns then have no backward of their own (bn_bwd_in_add). */
    int relu_mask, add_bwd_fused, bn_bwd_in_add;
    /* CUDA channels-last BF16 (fuse_bn_fold.c; --no-bn-fold: off): on an identity block's add
     * with add_bwd_fused whose one bn reads a 1x1 stride-1 conv (conv3), bn_fold = that conv's
     * index, else -1: the add's backward is bn_fold_conv1x1_backward.cu, which writes the
     * shortcut's gradient, the bn's dgamma and dbeta, the conv's weight gradient and its input's
     * gradient from dz, the bits and the conv's input, never reading or writing the conv's
     * output or the bn's input gradient. On that conv, folded_in = the add's index (its backward
     * emits nothing), else -1. */
    int bn_fold, folded_in;
    /* CUDA channels-last (lower.c choose_bn_pool; --no-bn-pool: off): a bn with a fused ReLU and
     * a bitmask whose one reader is a 3x3 stride-2 pad-1 max pooling (the ResNet stem): on the
     * bn, bn_in_pool, its apply runs inside the pooling's kernel and its output is never
     * written (no tensor: the pooling reads the bn's input); on that pooling, pool_bn = the bn's
     * index (bn_relu_maxpool_nhwc.cu writes the pooled output, a byte argmax and the bn's bits),
     * else -1. The pooling then has no backward of its own: the bn's two passes gather dy from
     * its output gradient and argmax (cuda_batchnorm_backward_nhwc_pool), and the bn's output
     * has no gradient tensor (plan.c). */
    int bn_in_pool, pool_bn;
    /* CUDA channels-last BF16/FP16: cuDNN's fused conv engine for a conv whose one reader is a
     * training bn (fuse_conv_bn.c decides). On the conv: conv_bn, the engine (IR_CONV_BN_*), or
     * 0 with conv_bn_why saying why not (NULL where the conv feeds no such bn). On the bn:
     * bn_sums_in_conv, its statistics' sums come from that conv's epilogue (its own pass only
     * finalizes them). */
    int conv_bn, bn_sums_in_conv;
    const char *conv_bn_why;
    /* CUDA channels-last FP16 (fuse_conv_bn.c; --no-conv-sbr: off): a training bn with a fused
     * ReLU whose one reader is a conv running IR_CONV_BN_SBR. On the bn: bn_in_conv, its pass
     * finalizes the statistics into the per-channel scale and bias (in the activation type,
     * after the statistics in its saved tensor) and applies nothing: the conv's prologue
     * computes relu(x·scale + bias) of the bn's input, so its output is written only where
     * cuDNN refuses the graph (and recomputed for the conv's weight gradient); no bitmask, the
     * bn's backward recomputes the ReLU's condition from its input, scale and bias. On the
     * conv: sbr_why says why a conv that reads such a bn's output runs without the prologue
     * (NULL when it runs it or reads no such bn). */
    int bn_in_conv;
    const char *sbr_why;
    /* CUDA channels-last FP16 (fuse_conv_bn.c; --no-conv-dgrad-fuse: off): a conv running
     * IR_CONV_BN_SBR whose data gradient runs cuDNN's DgradDreluBNBwdWeight graph: dgrad_bn on
     * the conv, its data gradient passed through the bn's ReLU (recomputed from the bn's input
     * and statistics) and the bn's backward sums (dgamma, dbeta) from its epilogue;
     * bn_dgrad_in_conv on the bn, whose backward is then its input gradient's pass alone.
     * dgrad_why says why such a conv does not (NULL when it does or runs no prologue; in BF16,
     * set on each runtime-fusion conv reading a bn + ReLU it alone reads: no engine documents it). */
    int dgrad_bn, bn_dgrad_in_conv;
    const char *dgrad_why;
    /* CUDA channels-last FP16 (fuse_bn_finalize.c; --no-bn-finalize-graph: off): a bn whose
     * sums a conv's epilogue wrote (bn_sums_in_conv) finalizes them through cuDNN's BN finalize
     * graph (bn_fin_graph: mean, inv std, running statistics and, for bn_in_conv, the
     * prologue's scale and bias; runtime/cuda/ops/bn_finalize_graph.cu) instead of our kernel;
     * bn_fin_why says why not (NULL when it does or has no such sums). */
    int bn_fin_graph;
    const char *bn_fin_why;
    /* attention: its core on cuDNN's fused scaled-dot-product attention (choose_attention.c),
     * or 0 with attn_sdpa_why saying why not (CUDA only) */
    int attn_sdpa;
    const char *attn_sdpa_why;
    /* CPU: a residual block's closing bn + add (+ relu) in one op (ir_build.c). On the add:
     * bn_in is the value of a bn that runs inside it, act(bn(in) + other input), or 0; that
     * bn, the op right before the add, has into_add set and no stored output. mask_in_bn
     * (set by the plan where no other reader of the add's gradient runs first): the add's
     * ReLU mask is applied by that bn's backward, not by a pass of its own. */
    int bn_in, into_add, mask_in_bn;
    /* Training only: the op feeds auxiliary loss heads alone, never the main head's logits
     * (ir_build.c). The evaluation forward skips it; the training step runs it. */
    int train_only;
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

typedef enum { T_ACT, T_GRAD, T_SAVED, T_SCRATCH, T_MASK } ir_tensor_kind;   /* T_MASK: a ReLU bitmask */

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
    /* solver.loss beyond softmax CE on labels (set by lower): BCE, its target threshold, and
     * mixed targets (mixup/cutmix: the labels come as RT_TARGET_WORDS's 3 x batch) */
    int loss_bce, mixed_targets;
    /* 1: the loader hands over normalized float batches, not bytes (mixup, cutmix or random
     * erasing, which cannot be held in a byte); a CUDA trainer then skips its byte path */
    int input_float;
    double bce_threshold;
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
    int *mask_of;              /* per op: its ReLU bitmask's tensor (ir_op.relu_mask; none in a
                                * forward-only plan), -1 if none */
    int *alias;                /* per value: the value whose buffer it shares (flatten) */
    /* per op: no backward runs, since no reader sends its output a gradient (each path to a
     * loss passes a stop_gradient: Caffe's layers that need no backward); an op with
     * parameters zeroes their gradients instead. NULL in a forward-only plan. */
    int *dead;
    int *scratch_of;           /* per (op, input slot): scratch tensor for GRAD_SCRATCH, or -1 */
    int *work_of;              /* per op: its backward's workspace (a T_SCRATCH tensor; attention), or -1 */
    ir_grad_route *route;      /* per (op, input slot): how backward delivers that gradient */
    int share_add_grads;       /* set before ir_plan (CPU schedule): adds hand their gradient
                                * buffer on (GRAD_SHARED) */
    int forward_only;          /* a plan for the forward alone (ir_plan_forward_only) */
    int act_bytes;             /* bytes of an activation element: 4, or 2 (CUDA BF16/FP16);
                                * saved statistics and indices stay 4 */
    long arena_bytes, arena_naive_bytes;
    /* data parallelism (buckets.c); 0 buckets until ir_plan_buckets runs */
    int n_buckets;
    ir_bucket *buckets;
    int sync_bn;               /* batch norm statistics all-reduced over ranks */
    /* The loss heads (softmax_ce layers): heads[0] the main one, on the last op's output (value
     * n_ops), then the auxiliary ones in spec order. value: the logits the head reads (a view's
     * value; the plan and the emitters take its root); weight: its loss_weight. Each head's
     * loss runs at the loss step, after the forward, and writes its logits' gradient scaled
     * by its weight; the training loss is the weighted sum, top-1 and evaluation the main's. */
    int n_heads;
    struct { int value; double weight; const char *name; src_loc loc; } heads[NET_MAX_HEADS];
} ir_net;


long ir_value_elems(const ir_net *net, int value);   /* per batch */
int ir_value_readers(const ir_net *net, int v);      /* how many op inputs read value v */
/* Whether value v (a root: no view) holds the logits of a loss head, whose gradient the loss
 * writes at the loss step, before any backward op. */
static inline int ir_is_head_value(const ir_net *net, int v) {
    for (int h = 0; h < net->n_heads; h++)
        if (net->alias ? net->alias[net->heads[h].value] == v : net->heads[h].value == v) return 1;
    return 0;
}
/* Whether op i writes a ReLU bitmask in this plan (a planned mask tensor: not in a forward-only
 * plan, whose forward runs in evaluation alone). */
static inline int ir_has_mask(const ir_net *net, int i) { return net->mask_of && net->mask_of[i] >= 0; }
/* Plans memory again after lowering changed what the backward reads (lower.c: ReLU bitmasks). */
void ir_replan(ir_net *net);
/* Lays parameters out contiguously in reverse schedule order (the order backward finishes
 * their gradients, so gradient buckets are contiguous) and BN buffers in schedule order. */
void ir_layout_params(ir_net *net);
/* Appends the backward pass and plans memory: liveness over the fixed schedule
 * (forward ops, loss, backward ops in reverse) and first-fit offsets in one arena. */
void ir_plan(ir_net *net);
/* Plans net's memory again for its forward alone (the evaluation resolution's schedule, which
 * runs no backward): no gradients, and each tensor lives from its op to its last forward
 * reader, so the arena is a fraction of the training plan's. */
void ir_plan_forward_only(ir_net *net);
/* The most channels of one op whose CUDA backward adds per-channel sums through the
 * partial-sums scratch (batchnorm_sums.cuh: batch norm, layer norm, layer scale, a conv's or
 * linear's bias; twice an add's channels where its fused backward sums two bns), for the
 * device memory plan (rt_devmem_op_scratch); 0 if none. */
long ir_partial_sum_channels(const ir_net *net);
/* Groups the parameter tensors, in layout order, into buckets of at most bucket_mb MiB
 * (a tensor larger than the cap gets a bucket of its own). */
void ir_plan_buckets(ir_net *net, double bucket_mb);
/* Writes the bucket plan: one line per bucket with its range, bytes and layers. */
void ir_print_buckets(FILE *out, const ir_net *net, double bucket_mb);
/* The route of input slot k of op j. */
/* The runtime's constant for an activation op's act_fn (rt_ops.h's rt_activation, in its
 * order; ir_build.c asserts the order). */
static inline const char *ir_activation_const(const ir_op *op) {
    static const char *const names[] = { "RT_ACTIVATION_RELU6", "RT_ACTIVATION_SIGMOID",
                                         "RT_ACTIVATION_SILU", "RT_ACTIVATION_HARDSWISH",
                                         "RT_ACTIVATION_HARDSIGMOID" };
    return op->act_fn >= 0 && op->act_fn < 5 ? names[op->act_fn] : "RT_ACTIVATION_COUNT";
}
/* The op's name in generated comments: its kind's, or for an activation the spec keyword. */
static inline const char *ir_op_name(const ir_op *op) {
    static const char *const acts[] = { "relu6", "sigmoid", "silu", "hardswish", "hardsigmoid" };
    return op->kind == IR_ACTIVATION && op->act_fn >= 0 && op->act_fn < 5 ? acts[op->act_fn]
                                                                           : ir_ops[op->kind].name;
}
static inline ir_grad_route ir_route(const ir_net *net, int j, int k) { return net->route[j * IR_MAX_INPUTS + k]; }
/* Writes plan.txt: tensors, lifetimes, offsets, peak vs naive. */
void ir_print_plan(FILE *out, const ir_net *net);
void ir_net_free(ir_net *net);

#endif
