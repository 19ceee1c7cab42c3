/* Lowering: one call turns a checked spec and a backend into the fully decided schedule that
 * `build` emits and every `show` view reports: ops in order with their fusions, a gradient
 * route per op input, tensors and arena offsets, parameter layout, gradient buckets and
 * sync-BN. Nothing downstream decides again. */
#ifndef TRAINC_LOWER_H
#define TRAINC_LOWER_H
#include "ir.h"
#include "sema.h"

typedef enum { BACKEND_CPU = 0, BACKEND_CUDA } build_backend;
typedef struct {
    build_backend backend;
    int fuse;   /* CUDA: fuse elementwise chains (0: one kernel per op, to test the fused ones) */
    int nhwc;   /* CUDA: channels-last activations (--layout nhwc) */
    int no_bn_retire;   /* CUDA channels-last: batch norm's sums in launches of their own (--no-bn-retire) */
    int no_bn_add;      /* CUDA channels-last: a block's closing bn apply, add and ReLU in passes of their own (--no-bn-add) */
    int no_relu_mask;   /* CUDA channels-last: no ReLU bitmasks; the backward reads ReLU outputs, and a block's
                         * closing add and its bns have backward passes of their own (--no-relu-mask) */
    int no_conv_genstats;   /* CUDA channels-last BF16/FP16: no cuDNN conv + genstats engine (--no-conv-genstats) */
    int no_conv_sbr;        /* CUDA channels-last FP16: no previous bn's scale-bias-ReLU in a conv's prologue;
                             * the bn applies itself (--no-conv-sbr) */
    int no_conv_dgrad_fuse; /* CUDA channels-last FP16: a prologue conv's data gradient without the previous bn's
                             * dReLU and backward sums in its epilogue (--no-conv-dgrad-fuse) */
    int no_bn_finalize_graph; /* CUDA channels-last FP16: a bn's genstats sums finalized by our kernel, not cuDNN's
                               * BN finalize graph (--no-bn-finalize-graph) */
    int no_bn_pool;         /* CUDA channels-last: a bn + ReLU and the max pooling after it in passes of their own (--no-bn-pool) */
    int no_residual_tail;   /* CUDA: a residual tail's bias, layer scale, drop path and add apart (--no-residual-tail) */
    int no_cudnn_attention; /* CUDA BF16/FP16: attention's core on the runtime's kernels, not cuDNN's SDPA (--no-cudnn-attention) */
    int no_bias_act_grad;   /* CUDA: a bias + activation's backward and the bias gradient in two passes (--no-bias-act-grad) */
    int no_graph_autotune;  /* CUDA: each cuDNN graph takes the heuristics' first engine, untimed (--no-graph-autotune) */
    int no_dw_bias;         /* CUDA: a depthwise conv's bias in passes of its own (--no-dw-bias) */
    int no_ln_bias;         /* CUDA: a conv's bias in passes of its own, not in its layer norm's (--no-ln-bias) */
    int no_bn_fold;         /* CUDA channels-last BF16: an identity block's bn backward not folded through its 1x1 conv3 (--no-bn-fold) */
} build_options;

/* CUDA: how many of the heuristics' engine configurations each cuDNN graph times at start-up
 * (runtime/cuda/ops/cudnn_graph_tune.cu), the fastest kept. */
enum { GRAPH_AUTOTUNE_CANDIDATES = 4 };

/* precision.compute as the CUDA runtime names it (rt_cuda_math in rt_cuda.h). */
typedef enum { CUDA_FP32 = 0, CUDA_TF32, CUDA_BF16, CUDA_FP16 } cuda_precision;
typedef enum { LOSS_SCALE_NONE = 0, LOSS_SCALE_STATIC, LOSS_SCALE_DYNAMIC } loss_scaling;

typedef struct {
    ir_net net;                /* the decided ops, routes, tensors, offsets, buckets, sync_bn */
    build_options opt;
    cuda_precision precision;  /* CPU: FP32 */
    loss_scaling loss_scale;
    double init_scale;
    double bucket_mb;          /* the cap the buckets were planned with */
    int graph_candidates;      /* CUDA: the cuDNN graphs' engines timed among this many at start-up (0: the
                                * heuristics' first; --no-graph-autotune) */
} schedule;

/* Lowers res for opt at per-rank batch `batch` (<= 0: the spec's train.batch_per_rank, or 1
 * for a spec without one). Returns 0, or 1 after printing one error that names spec_path. */
int lower(schedule *s, const sema_result *res, const build_options *opt, int batch, const char *spec_path);
void schedule_free(schedule *s);
/* CUDA channels-last: which convs run cuDNN's fused conv + batch-norm-statistics engine, and
 * which of them apply the previous bn in their prologue (fuse_conv_bn.c; sets ir_op.conv_bn,
 * conv_bn_why, sbr_why, bn_sums_in_conv, bn_in_conv). Returns whether any bn applies inside
 * a conv (its saved tensor grows: plan again). */
int choose_conv_bn(schedule *s, int sync_bn);
/* CUDA channels-last FP16: which bns finalize their genstats sums through cuDNN's BN finalize
 * graph (fuse_bn_finalize.c; sets ir_op.bn_fin_graph, bn_fin_why). After choose_conv_bn. */
void choose_bn_finalize(schedule *s);
/* CUDA: which residual tails (conv bias, layer scale, drop path, add) run as one kernel each
 * way (fuse_residual_tail.c; sets ir_op.tail_conv and in_tail), and the input slot of such
 * an add that the chain feeds. */
void choose_residual_tail(ir_net *net);
int residual_tail_slot(const ir_net *net, const ir_op *a);
/* CUDA: which bias + activation backward passes also sum their conv's bias gradient
 * (fuse_bias_act_grad.c; sets ir_op.act_bgrad). */
void choose_bias_act_grad(ir_net *net);
/* CUDA: which depthwise convs add their bias and sum its gradient in their own kernels
 * (fuse_dw_bias.c; sets ir_op.dw_bias). */
void choose_dw_bias(ir_net *net);
/* CUDA: which convs' bias the layer norm that alone reads their output adds, and whose
 * gradient that norm's backward sums (fuse_ln_bias.c; sets ir_op.ln_bias, ln_bias_of). */
void choose_ln_bias(ir_net *net);
/* CUDA channels-last BF16: which identity blocks' closing bn backward folds through their 1x1
 * stride-1 conv3 (fuse_bn_fold.c; sets ir_op.bn_fold, folded_in). After choose_relu_mask and
 * its plan; returns whether any (the conv's input gradient is written earlier: plan again). */
int choose_bn_fold(schedule *s);
/* The bytes of the scratch its largest fold needs (rt_devmem_bn_fold_bytes), 0 without one:
 * the trainer sizes it at start-up and its memory check counts it. */
size_t ir_bn_fold_scratch_bytes(const ir_net *net);
/* CUDA: which attention layers run cuDNN's fused scaled-dot-product attention
 * (choose_attention.c; sets ir_op.attn_sdpa, attn_sdpa_why); returns how many (their saved
 * values and work grow: plan again). */
int choose_attention(schedule *s);
/* The engine's name for show (IR_CONV_BN_*). */
const char *ir_conv_bn_name(int engine);
/* CPU: each conv's algorithm (ir_op.conv_algo, conv_alt, conv_fallback; choose_conv_algo.c),
 * from its shape and whether the spec computes in BF16. */
void choose_conv_algos(ir_net *net, int bf16);
/* The CPU conv algorithms (ir_conv_algo): the runtime's constant (rt_conv_algo) for the
 * emitter, and what it is in words for show; ir_conv_host_rule: for one that needs something
 * of the host, the condition under which it runs (NULL for the others). */
const char *ir_conv_algo_const(ir_conv_algo a);
const char *ir_conv_algo_text(const ir_op *op, ir_conv_algo a);
const char *ir_conv_host_rule(ir_conv_algo a);
/* Errors for the ops and options the CUDA backend lacks (cuda_refusals.c); returns their count. */
int cuda_refuse_unsupported(const ir_net *net, const char *spec_path, int nhwc);

#endif
