/* The CUDA step's device work predicted from the lowered schedule (gpu_cost.h): each op's
 * kernels and library calls as the generated code (emit_cuda.c) and the runtime
 * (runtime/cuda/) launch them, with the bytes each moves. The byte counts follow the kernels'
 * code: an operand read once per element (elementwise and per-channel passes), per-channel
 * parameters and statistics (4 bytes a channel each), and the batch-norm partial sums (16
 * bytes per channel per row split, channel_tiles.cuh's split rule); a library call moves its
 * operands. tests/emu/traffic_emu_test.sh checks every figure against what the emulator
 * counts, kernel by kernel. What has no model yet is reported (out->modeled = 0), never
 * guessed. */
#include "gpu_cost.h"
#include "ir_nhwc.h"   /* ir_nhwc_linear_as_conv */
#include "rt_depthwise_plan.h"   /* which grouped convs our depthwise kernels take, their slices */
#include "rt_cuda.h"     /* RT_LN_BGRAD_MAX_C: the channels a layer norm sums its conv's bias gradient over */
#include "rt_devmem.h"   /* RT_DEVMEM_MAX_SPLITS: the partial sums' split cap */
#include "rt_env.h"

#include <stdlib.h>
#include <string.h>

static const gpu_device devices[] = {
    /* name, HBM bytes/s, dense 16-bit tensor FLOP/s, FP32 FLOP/s, launch in a graph, serial
     * round, library scale. The round is the H100 profile's (bench/RESULTS.md, 2026-11-24):
     * its "sum of partials" and "finish statistics" kernels, one thread a channel adding
     * 16,965 splits' partial pairs in turn over the step's 53 batch norms, took 4.1 and 3.1 ms,
     * 0.21 us a split on average; nvcc unrolls that loop four times (its PTX: eight loads a
     * pass, in flight together), so a round of loads in flight took 0.84 us, about a trip to
     * DRAM (the partials left L2 while the activations streamed through it). The H200 and
     * A100 are given the same, never measured. */
    { "h100", 3.35e12, 989e12, 67e12, 2e-6, 0.84e-6, 1.0 },        /* H100 SXM5 80 GB (NVIDIA's datasheet) */
    { "h200", 4.8e12, 989e12, 67e12, 2e-6, 0.84e-6, 1.0 },         /* H200 SXM 141 GB: H100's compute */
    { "a100", 2.039e12, 312e12, 19.5e12, 2e-6, 0.84e-6, 312.0 / 989.0 },   /* A100 SXM 80 GB */
};

const gpu_device *gpu_device_named(const char *name) {
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
        if (strcmp(devices[i].name, name) == 0) return &devices[i];
    return NULL;
}

static const struct {
    double tflops;
    const char *source;
} rates[GK_CLASSES] = {
    [GK_KERNEL] = { 0, "our kernels: bytes at the device's bandwidth" },
#define X(cls, tf, src) [GK_##cls] = { tf, src },
#include "gpu_rates.def"
#undef X
};

double gpu_class_rate(gpu_class c, const char **source) {
    if (source) *source = rates[c].source;
    return rates[c].tflops * 1e12;
}

const char *gpu_class_name(gpu_class c) {
    static const char *const names[GK_CLASSES] = { "kernel", "conv-fwd", "conv-dgrad", "conv-wgrad", "gemm", "bn-finalize" };
    return names[c];
}

double gpu_kernel_seconds(const gpu_kernel *k, const gpu_device *dev, int half) {
    double mem = (k->read + k->write) / dev->bandwidth;
    if (k->cls == GK_KERNEL) {
        double math = k->flops / dev->peak32;
        return dev->launch_s + (mem > math ? mem : math) + k->rounds * dev->round_s;
    }
    double math = k->flops / (gpu_class_rate(k->cls, NULL) * dev->lib_scale);
    (void)half;   /* FP16 at the BF16 rate: gpu_rates.def */
    return dev->launch_s + (mem > math ? mem : math);
}

typedef struct {
    const schedule *s;
    const ir_net *net;
    gpu_cost *out;
    int old, eb, nhwc;
    int unmodeled;   /* op passes without a model */
} walk;

static void add(walk *w, const char *name, int op, int bwd, gpu_class cls, double rd, double wr, double flops,
                int bn_sized) {
    gpu_cost *o = w->out;
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 256;
        o->k = realloc(o->k, sizeof *o->k * (size_t)o->cap);
        if (!o->k) abort();
    }
    gpu_kernel *k = &o->k[o->n++];
    *k = (gpu_kernel){ "", op, bwd, cls, rd, wr, flops, bn_sized, 0 };
    /* a generated kernel (emit_cuda_kernels.c) is named after its layer: fused_<ident>_<what> */
    if (op >= 0 && op < w->net->n_ops && (!strcmp(name, "bias") || !strcmp(name, "apply") ||
                                          !strcmp(name, "add_forward") || !strcmp(name, "add_backward") || !strcmp(name, "mask") ||
                                          !strcmp(name, "forward")))
        snprintf(k->name, sizeof k->name, "%s_%s_kernel", w->net->ops[op].ident,
                 !strcmp(name, "add_forward") ? "forward" : !strcmp(name, "add_backward") ? "backward" : name);
    else snprintf(k->name, sizeof k->name, "%s", name);
}

/* The first op without a model is named; the count of them all follows the walk. */
static void unmodeled(walk *w, int op, const char *what) {
    if (w->out->modeled)
        fprintf(stderr, "trainc: gpu-cost: no model yet for %s of layer \"%s\" (%s%s)\n", what, w->net->ops[op].name,
                ir_ops[w->net->ops[op].kind].name, w->nhwc ? ", channels-last" : "");
    w->out->modeled = 0;
    w->unmodeled++;
}

static double act(const walk *w, int value) { return (double)ir_value_elems(w->net, value) * w->eb; }
/* Op i's ReLU bitmask (ir_op.relu_mask): one bit an element, whole bytes; 0 without one. */
static double mask_bytes(const walk *w, int i) {
    return ir_has_mask(w->net, i) ? (double)((ir_value_elems(w->net, i + 1) + 7) / 8) : 0;
}
static double out_bytes(const walk *w, int op) { return act(w, op + 1); }
static long rows_of(const walk *w, const ir_op *op) { return (long)w->net->batch * op->h * op->w; }

/* channel_tiles.cuh nhwc_split_of: row splits of the per-channel partial sums. */
static int splits_of(long rows) {
    long want = (rows + 255) / 256;
    int splits = (int)(want < 1 ? 1 : want > RT_DEVMEM_MAX_SPLITS ? RT_DEVMEM_MAX_SPLITS : want);
    long per = (rows + splits - 1) / splits;
    return (int)((rows + per - 1) / per);
}

/* channel_planes.cuh bn_split_of: NCHW batch norm's splits of the samples, about 8192 values
 * of one channel per block. */
static int sample_splits_of(int n, long hw) {
    long m = (long)n * hw, want = (m + 8191) / 8192;
    int splits = (int)(want < 1 ? 1 : want > n ? n : want);
    int per = (n + splits - 1) / splits;
    return (n + per - 1) / per;
}

/* Batch norm's kernel names: NCHW (batchnorm.cu), channels-last vectorized
 * (batchnorm_nhwc_vec.cu) or the old channels-last ones (batchnorm_nhwc.cu, TRAINC_CUDA_BN=old);
 * the partial sums' splits; the sums' kernels (warp per channel, or the old thread per channel). */
typedef struct {
    const char *stats, *grads, *input_grad, *finish, *sum;
    int splits;
} bn_kernels;

static bn_kernels bn_kernels_of(const walk *w, const ir_op *op) {
    bn_kernels k;
    if (!w->nhwc) {
        k = (bn_kernels){ "bn_partial_stats_kernel", "bn_partial_grads_kernel", "bn_input_grad_kernel", 0, 0,
                          sample_splits_of(w->net->batch, (long)op->h * op->w) };
    } else if (w->old) {
        k = (bn_kernels){ "nhwc_partial_stats_kernel", "nhwc_partial_grads_kernel", "nhwc_input_grad_kernel", 0, 0,
                          splits_of(rows_of(w, op)) };
    } else {
        k = (bn_kernels){ "vec_partial_stats_kernel", "vec_partial_grads_kernel", "vec_input_grad_kernel", 0, 0,
                          splits_of(rows_of(w, op)) };
    }
    k.finish = w->old ? "bn_finish_stats_kernel" : "bn_finish_stats_warp_kernel";
    k.sum = w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel";
    return k;
}

/* batchnorm_nhwc_vec.cu vec_tiles_of: channel tiles of up to 32 vectors of 4 channels (when 4
 * divides C). */
static int vec_tile_lanes(int c) {   /* a tile's threads across the channels (lx) */
    int cv = c % 4 == 0 ? c / 4 : c, lx = 1;
    while (lx < cv && lx < 32) lx *= 2;
    return lx;
}
static int vec_tiles_of(int c) {
    int cv = c % 4 == 0 ? c / 4 : c, lx = vec_tile_lanes(c);
    return (cv + lx - 1) / lx;
}

/* The serial part of adding `splits` partial pairs per channel, in rounds of loads in flight
 * together (gpu_kernel.rounds; the bytes are counted apart): the old kernels' thread a channel
 * walks the splits in turn, four a round (batchnorm_sums.cu bn_sum_partials_kernel,
 * bn_finish_stats_kernel: nvcc unrolls the loop four times); a warp a channel
 * (warp_channel_sums: 32 lanes, four groups of 32 splits in flight) takes a round per 128
 * splits. A retiring kernel (bn_vec_tiles.cuh vec_tile_retires) adds its sums after the rest
 * of its grid: the last group's block adds the group's 32 splits for each of the tile's
 * channels, its 8 warps four channels a round, then the tile's last block adds the groups'
 * sums, a thread a channel, a group a round. */
static double sums_rounds(const walk *w, int splits) { return w->old ? (splits + 3) / 4 : (splits + 127) / 128; }
static double retire_rounds(int c, int splits) {
    int width = vec_tile_lanes(c) * (c % 4 == 0 ? 4 : 1);
    if (width > c) width = c;
    return (double)((width + 31) / 32) + (splits + 31) / 32;
}
/* A retiring launch's counters (bn_vec_tiles.cuh vec_tile_retires): a tile's, and one a group
 * of 32 splits in each tile, each read and written once. */
static double retire_counter_bytes(int c, int splits) { return 4.0 * vec_tiles_of(c) * (1 + (splits + 31) / 32); }
/* The rounds of the launch just added. */
static void last_rounds(walk *w, double rounds) { w->out->k[w->out->n - 1].rounds = rounds; }

/* Input rows (or columns) of length n that some window of k at stride st, padded by pad, covers
 * for `out` outputs: what a pooling forward reads (windows past the padding, or strides longer
 * than the window, leave some unread). */
static long covered(int n, int k, int st, int pad, int out) {
    long count = 0, reach = 0;   /* windows are ordered: count each row once */
    for (int o = 0; o < out; o++) {
        long lo = (long)o * st - pad, hi = lo + k;
        if (lo < reach) lo = reach;
        if (lo < 0) lo = 0;
        if (hi > n) hi = n;
        if (hi > lo) count += hi - lo, reach = hi;
    }
    return count;
}

/* Dropout (emit_cuda_kernels.c gen_dropout): the generated mask kernel reads the tensor and the
 * step's seed word, and writes its result. With p = 0 it is a device copy or nothing, as the
 * memory plan places the two tensors: not modeled. */
static void dropout_pass(walk *w, int i, int bwd) {
    const ir_op *op = &w->net->ops[i];
    double y = out_bytes(w, i);
    if (op->p > 0) add(w, "mask", i, bwd, GK_KERNEL, y + 8, y, 0, 0);
    else unmodeled(w, i, bwd ? "the backward (p = 0: a copy or nothing)" : "the forward (p = 0: a copy or nothing)");
}

/* MACs of a conv or linear over the batch (the forward's; each gradient does as many). */
static double macs(const walk *w, const ir_op *op) {
    if (op->kind == IR_LINEAR) return (double)w->net->batch * op->c * ((double)op->in_c * op->in_h * op->in_w);
    return (double)w->net->batch * op->c * op->h * op->w * ((double)op->in_c / op->groups) * op->kh * op->kw;
}

/* The runtime's shape of a conv op (the generated rt_conv_shape), at the step's batch. */
static rt_conv_shape conv_shape_of(const walk *w, const ir_op *op) {
    rt_conv_shape s = { .n = w->net->batch, .c = op->in_c, .h = op->in_h, .w = op->in_w, .oc = op->c, .kh = op->kh,
                        .kw = op->kw, .sh = op->sh, .sw = op->sw, .ph = op->ph, .pw = op->pw, .dh = op->dh,
                        .dw = op->dw, .groups = op->groups, .oh = op->h, .ow = op->w };
    return s;
}

/* A grouped conv our depthwise kernels take (conv2d_depthwise.cu, by rt_depthwise_plan.h's
 * geometry, unless TRAINC_CUDA_DEPTHWISE=cudnn); else cuDNN's grouped conv. */
static int own_depthwise(const walk *w, const ir_op *op) {
    rt_conv_shape s = conv_shape_of(w, op);
    return op->kind == IR_CONV && op->groups > 1 && !rt_env_is(RT_ENV_TRAINC_CUDA_DEPTHWISE, "cudnn") && rt_dw_fits(&s);
}

/* The depthwise weight gradient's partial-sum slices, as the trainer plans them within its
 * workspace cap (TRAINC_CUDNN_WORKSPACE_MB, read here as the trainer reads it). */
static int depthwise_slices(const walk *w, const ir_op *op) {
    rt_conv_shape s = conv_shape_of(w, op);
    size_t cap = ((size_t)rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB) << 20) & ~(size_t)255;
    return rt_dw_slices(&s, w->nhwc, cap);
}

/* Taps of a depthwise kernel row (k taps, padding pad) that meet the input (in long) for some
 * output (out of them, stride 1): the direct kernel reads no others. All of them unless the
 * input is smaller than the kernel. */
static long dw_taps(int k, int pad, int in, int out) {
    long lo = pad - (out - 1), hi = pad + in - 1;
    if (lo < 0) lo = 0;
    if (hi > k - 1) hi = k - 1;
    return hi >= lo ? hi - lo + 1 : 0;
}

/* Bytes of activation-type weights the direct kernel reads: forward, or the input gradient
 * (the same kernel over dy, padding k-1-p, input and output swapped). It skips the kernel rows
 * that meet no input row, but reads every tap of a row it keeps (its strip of outputs along
 * a row needs them). */
static double dw_weight_bytes(const walk *w, const ir_op *op, int dgrad) {
    long th = dgrad ? dw_taps(op->kh, op->kh - 1 - op->ph, op->h, op->in_h) : dw_taps(op->kh, op->ph, op->in_h, op->h);
    return (double)op->c * th * op->kw * w->eb;
}

static int runs_conv(const walk *w, const ir_op *op) {
    int c, h, wd;
    return op->kind == IR_CONV || (w->nhwc && ir_nhwc_linear_as_conv(w->net, op, &c, &h, &wd));
}

/* Per-channel ops over rows of channels (channels-last, or one position a sample): layer
 * norm, layer scale and bias reduce their gradients in channel tiles into partial sums, which
 * one launch adds up (channel_tiles.cuh, batchnorm_sums.cu). */
static int rows_layout(const walk *w, const ir_op *op) { return w->nhwc || (long)op->h * op->w == 1; }
/* The step's seed word a residual tail's kernel reads (8 bytes) when its drop path drops any. */
static double tail_seed(const ir_net *net, const ir_op *a) {
    const ir_op *t = &net->ops[a->in[residual_tail_slot(net, a)] - 1];
    return t->kind == IR_STOCHASTIC_DEPTH && t->p > 0 ? 8 : 0;
}

static void partial_sums(walk *w, const char *kernel, int j, double rd, int vectors) {
    const ir_op *op = &w->net->ops[j];
    int sp = splits_of((long)w->net->batch * op->h * op->w);
    add(w, kernel, j, 1, GK_KERNEL, rd, 16.0 * op->c * sp, 0, 0);
    add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", j, 1, GK_KERNEL, 16.0 * op->c * sp,
        16.0 * op->c + 4.0 * vectors * op->c, 0, 0);
    last_rounds(w, sums_rounds(w, sp));
}

/* Layer norm over the channels of each position (layernorm.cu): the forward saves each
 * position's mean and 1/std (8 bytes); the backward reads them back with x and dy. With its
 * producer conv's bias (fuse_ln_bias.c) every pass reads that FP32 bias too (xb), and the
 * backward sums its gradient: channels-last, the input gradient's launch leaves din's
 * channel sums as partials (bias.cu's layout) that one launch adds up; NCHW (or more channels
 * than its shared memory holds, RT_LN_BGRAD_MAX_C), bias.cu's pass over din. */
static void layernorm_pass(walk *w, int i, int bwd, int din) {
    const ir_op *op = &w->net->ops[i];
    double x = act(w, op->in[0]), y = out_bytes(w, i), c4 = 4.0 * op->c;
    double stats = 8.0 * w->net->batch * op->h * op->w;
    int rows = rows_layout(w, op), cb = op->ln_bias_of >= 0;
    double xb = cb ? c4 : 0;
    if (!bwd) {
        add(w, rows ? "ln_rows_forward_kernel" : "ln_forward_kernel", i, 0, GK_KERNEL, x + xb + 2 * c4, y + stats, 0, 0);
        return;
    }
    if (rows) partial_sums(w, "ln_rows_partial_kernel", i, y + x + xb + stats, 2);
    else add(w, "ln_param_grad_kernel", i, 1, GK_KERNEL, y + x + xb + stats, 2 * c4, 0, 0);
    if (!din) return;
    if (cb && rows && op->c <= RT_LN_BGRAD_MAX_C) {
        int sp = splits_of((long)w->net->batch * op->h * op->w);
        add(w, "ln_rows_input_grad_bgrad_kernel", i, 1, GK_KERNEL, y + x + xb + c4 + stats, x + 16.0 * op->c * sp, 0, 0);
        add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", i, 1, GK_KERNEL, 16.0 * op->c * sp,
            16.0 * op->c + c4, 0, 0);
        last_rounds(w, sums_rounds(w, sp));
        return;
    }
    add(w, rows ? "ln_rows_input_grad_kernel" : "ln_input_grad_kernel", i, 1, GK_KERNEL, y + x + xb + c4 + stats, x, 0, 0);
    if (cb && rows) partial_sums(w, "bias_rows_partial_kernel", i, x, 1);
    else if (cb) add(w, w->old ? "bias_backward_kernel" : "bias_backward_planes_kernel", i, 1, GK_KERNEL, x, c4, 0, 0);
}

/* Layer scale (layer_scale.cu; the forward generated, emit_cuda_kernels.c): the gradient of
 * gamma from dy and x, then din = dy * gamma. */
static void layer_scale_grads(walk *w, int j, int din) {
    const ir_op *op = &w->net->ops[j];
    double x = act(w, op->in[0]), dy = out_bytes(w, j), c4 = 4.0 * op->c;
    if (rows_layout(w, op)) partial_sums(w, "layer_scale_rows_partial_kernel", j, dy + x, 1);
    else add(w, "layer_scale_dgamma_kernel", j, 1, GK_KERNEL, dy + x, c4, 0, 0);
    if (din) add(w, "layer_scale_kernel", j, 1, GK_KERNEL, dy + c4, x, 0, 0);
}

/* Attention (attention.cu, window_attention.cu, attention_sdpa.cu): the projections one output
 * a thread over FP32 weights, the core's FP32 projections qkv [N, T, 3C], heads' outputs o
 * [N, T, C] and log-sum-exp [N, heads, T]; windowed, its bias table and (backward) the score
 * gradients of every window; on cuDNN's SDPA, the 16-bit copies cast_kernel makes and the
 * library call that reads and writes them. FLOPs: 2 per multiply-add, the core's from the
 * pairs of tokens it scores. */
static void attention_pass(walk *w, int i, int bwd, int din) {
    const ir_op *op = &w->net->ops[i];
    double n = w->net->batch, c = op->c, t = (double)op->h * op->w, heads = op->heads, eb = w->eb;
    double x = n * c * t * eb, qkv = n * t * 3 * c * 4, o = n * t * c * 4, lse = n * heads * t * 4;
    double w_in = 3 * c * c * 4 + 3 * c * 4, w_out = c * c * 4 + c * 4;
    double keys = op->window ? (double)op->window * op->window : t;   /* the tokens a query scores */
    double table = op->window ? (2.0 * op->window - 1) * (2.0 * op->window - 1) * heads * 4 : 0;
    double scores = n * t * heads * keys * 4;   /* windowed: every window's score gradients */
    double core = 2 * n * t * keys * c;   /* one product of a query with its keys (or of P with V) */
    if (!bwd) {
        add(w, "attn_in_proj", i, 0, GK_KERNEL, x + w_in, qkv, 2 * n * t * 3 * c * c, 0);
        if (op->attn_sdpa) {
            add(w, "cast_kernel", i, 0, GK_KERNEL, qkv, qkv / 4 * eb, 0, 0);
            add(w, "cudnnBackendExecute", i, 0, GK_GEMM, qkv / 4 * eb, o / 4 * eb + lse, 2 * core, 0);
            add(w, "cast_kernel", i, 0, GK_KERNEL, o / 4 * eb, o, 0, 0);
        } else {
            add(w, op->window ? "win_core_forward" : "attn_core_forward", i, 0, GK_KERNEL, qkv + table, o + lse, 2 * core, 0);
        }
        add(w, "attn_out_proj", i, 0, GK_KERNEL, o + w_out, x, 2 * n * t * c * c, 0);
        return;
    }
    add(w, "attn_dout_proj", i, 1, GK_KERNEL, x + c * c * 4, o, 2 * n * t * c * c, 0);
    add(w, "attn_dw_out", i, 1, GK_KERNEL, x + o, w_out, 2 * n * t * c * c, 0);
    if (op->attn_sdpa) {
        add(w, "cast_kernel", i, 1, GK_KERNEL, o, o / 4 * eb, 0, 0);
        add(w, "cudnnBackendExecute", i, 1, GK_GEMM, (qkv + 2 * o) / 4 * eb + lse, qkv / 4 * eb, 5 * core, 0);
        add(w, "cast_kernel", i, 1, GK_KERNEL, qkv / 4 * eb, qkv, 0, 0);
    } else if (op->window) {
        add(w, "win_core_dq", i, 1, GK_KERNEL, qkv + 2 * o + lse + table, o + scores, 3 * core, 0);
        /* dK, dV: Q and K (not V: the score gradients are read), dO */
        add(w, "win_core_dkv", i, 1, GK_KERNEL, qkv * 2 / 3 + o + lse + table + scores, 2 * o, 3 * core, 0);
        add(w, "win_dtable", i, 1, GK_KERNEL, scores, table, 0, 0);
    } else {
        add(w, "attn_core_dq", i, 1, GK_KERNEL, qkv + 2 * o + lse, o, 3 * core, 0);
        add(w, "attn_core_dkv", i, 1, GK_KERNEL, qkv + 2 * o + lse, 2 * o, 4 * core, 0);
    }
    add(w, "attn_dw_in", i, 1, GK_KERNEL, qkv + x, w_in, 2 * n * t * 3 * c * c, 0);
    if (din) add(w, "attn_dx", i, 1, GK_KERNEL, qkv + 3 * c * c * 4, x, 2 * n * t * 3 * c * c, 0);
}

static void forward(walk *w, int i) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[i];
    double x = act(w, op->in[0]), y = out_bytes(w, i), c4 = 4.0 * op->c;
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR: {
        double wb = (double)op->w_count * w->eb;
        /* depthwise: our direct kernel reads the input and the activation-type weights once,
         * and the FP32 bias it adds in its store (fuse_dw_bias.c) */
        if (own_depthwise(w, op))
            add(w, w->nhwc ? "dw_nhwc_direct_kernel" : "dw_nchw_direct_kernel", i, 0, GK_KERNEL,
                x + dw_weight_bytes(w, op, 0) + (op->dw_bias ? c4 : 0), y, 2 * macs(w, op), 0);
        /* conv + genstats (fuse_conv_bn.c): the conv's operands and the next bn's two FP32 sums
         * per channel (gpu_rates.def: never measured, so the unfused conv's rate) */
        /* with the previous bn's scale-bias-ReLU prologue: that bn's input instead of its output
         * (the same size) and its scale and bias, in the activation type */
        else if (op->conv_bn == IR_CONV_BN_SBR)
            add(w, "cudnnBackendExecute", i, 0, GK_CONV_FWD, act(w, net->ops[op->in[0] - 1].in[0]) + wb + 2.0 * op->in_c * w->eb,
                y + 2 * c4, 2 * macs(w, op), 0);
        else if (op->conv_bn) add(w, "cudnnBackendExecute", i, 0, GK_CONV_FWD, x + wb, y + 2 * c4, 2 * macs(w, op), 0);
        else if (runs_conv(w, op)) add(w, "cudnnConvolutionForward", i, 0, GK_CONV_FWD, x + wb, y, 2 * macs(w, op), 0);
        else add(w, "cublasLtMatmul", i, 0, GK_GEMM, x + wb, y, 2 * macs(w, op), 0);
        /* else the activation, the residual tail or the depthwise kernel adds it; a conv that
         * takes its bias but runs on cuDNN (TRAINC_CUDA_DEPTHWISE=cudnn): bias.cu's pass */
        if (op->dw_bias && !own_depthwise(w, op)) add(w, "bias_forward_kernel", i, 0, GK_KERNEL, y + c4, y, 0, 0);
        else if (op->b_off >= 0 && op->bias_act < 0 && op->in_tail < 0 && !op->dw_bias && op->ln_bias < 0)
            add(w, "bias", i, 0, GK_KERNEL, y + c4, y, 0, 0);   /* else the norm adds it (fuse_ln_bias.c) */
        break;
    }
    case IR_BN: {
        if (op->bn_frozen) { unmodeled(w, i, "the frozen forward"); break; }
        /* per-channel sums of x - running mean into partials; their sums make the statistics
         * (save mean, inv std) and update the running ones; then the generated apply */
        bn_kernels bk = bn_kernels_of(w, op);
        int sp = bk.splits;
        double sb = 2.0 * op->c * w->eb;   /* a prologue's scale and bias (bn_in_conv) */
        if (op->bn_fin_graph) {   /* bn_finalize_graph.cu: cuDNN's BN finalize, one call (fuse_bn_finalize.c) */
            /* the sums, gamma, beta and running stats in; mean, inv std, running stats and the
             * equivalent scale and bias (activation type) out; then the bn's apply, if its own */
            add(w, "cudnnBackendExecute", i, 0, GK_BN_FINALIZE, 6 * c4, 4 * c4 + sb, 0, 0);
            if (op->bn_in_conv) break;
        } else if (op->bn_in_conv && op->bn_sums_in_conv) {   /* conv_bn_sbr.cu: finalize + scale and bias in one launch */
            add(w, "finalize_scale_bias_kernel", i, 0, GK_KERNEL, 6 * c4, 4 * c4 + sb, 0, 0);
            break;
        } else if (op->bn_sums_in_conv) {   /* its conv wrote the sums: they and the running stats in, four vectors out */
            add(w, "bn_finalize_sums_kernel", i, 0, GK_KERNEL, 4 * c4, 4 * c4, 0, 0);
        } else if (op->bn_retire && !w->old) {   /* the tiles' last blocks finish: one launch */
            double counters = retire_counter_bytes(op->c, sp);
            add(w, "vec_stats_retire_kernel", i, 0, GK_KERNEL, x + 2 * c4 + 16.0 * op->c * sp + counters,
                16.0 * op->c * sp + 4 * c4 + counters, 3.0 * x / w->eb, 1);
            last_rounds(w, retire_rounds(op->c, sp));
        } else {
            add(w, bk.stats, i, 0, GK_KERNEL, x + c4, 16.0 * op->c * sp, 3.0 * x / w->eb, 1);
            add(w, bk.finish, i, 0, GK_KERNEL, 16.0 * op->c * sp + 2 * c4, 4 * c4, 0, 0);
            last_rounds(w, sums_rounds(w, sp));
        }
        /* applied in the next conv's prologue: its scale and bias from gamma, beta, mean, inv std */
        if (op->bn_in_conv) {
            add(w, "bn_scale_bias_kernel", i, 0, GK_KERNEL, 4 * c4, sb, 0, 0);
            break;
        }
        /* the generated apply; with a ReLU bitmask, one bit an element more (ir_op.relu_mask) */
        if (!op->bn_in_add && !op->bn_in_pool)   /* else applied by the add's or the pooling's kernel */
            add(w, "apply", i, 0, GK_KERNEL, x + 4 * c4, y + mask_bytes(w, i), 2.0 * x / w->eb, 1);
        break;
    }
    case IR_ADD: {
        if (op->add_bns) {   /* bn_add_relu_nhwc.cu: each bn's input and its 4 per-channel vectors */
            double rd = 0, f = 0;
            for (int k = 0; k < op->n_in; k++) {
                const ir_op *in = op->in[k] > 0 ? &net->ops[op->in[k] - 1] : NULL;
                if (in && in->bn_in_add) rd += act(w, in->in[0]) + 4 * c4, f += 2.0 * y / w->eb;
                else rd += act(w, op->in[k]);
            }
            add(w, ir_has_mask(net, i) ? "bn_add_relu_bits_nhwc_kernel" : "bn_add_relu_nhwc_kernel", i, 0, GK_KERNEL, rd,
                y + mask_bytes(w, i), f + (op->act ? 2.0 : 1.0) * y / w->eb, 1);
            break;
        }
        if (op->tail_conv >= 0) {   /* residual_tail.cu: the conv's output, the shortcut, bias, gamma */
            add(w, "residual_tail_forward_kernel", i, 0, GK_KERNEL, 2 * y + 2 * c4 + tail_seed(net, op), y, 0, 0);
            break;
        }
        double rd = 0;
        for (int k = 0; k < op->n_in; k++) rd += act(w, op->in[k]);
        add(w, "add_forward", i, 0, GK_KERNEL, rd, y, 0, 1);
        break;
    }
    case IR_MAXPOOL:
        if (op->pool_bn >= 0) {   /* bn_relu_maxpool_nhwc.cu: the bn's input and 4 vectors in; out, the byte argmax, the bn's bits */
            add(w, "bn_relu_maxpool_nhwc_kernel", i, 0, GK_KERNEL, x + 4 * c4, y + y / w->eb + mask_bytes(w, op->pool_bn),
                2.0 * x / w->eb, 1);
            break;
        }
        /* the output and each output's argmax (int32); TRAINC_CUDA_POOL=old: maxpool2d.cu's */
        add(w, !w->nhwc ? "maxpool_forward_kernel" : w->old ? "maxpool_forward_nhwc_kernel" : "maxpool_forward_nhwc_vec_kernel", i, 0, GK_KERNEL, x,
            y + 4.0 * (y / w->eb), 0, 0);
        break;
    case IR_GAP:
        add(w, w->nhwc ? "gap_forward_nhwc_kernel" : "gap_forward_kernel", i, 0, GK_KERNEL, x, y, 0, 0);
        break;
    case IR_RELU: add(w, "relu_forward_kernel", i, 0, GK_KERNEL, x, y, 0, 0); break;
    case IR_AVGPOOL: {   /* avgpool2d.cu / avgpool2d_nhwc.cu: the inputs some window covers */
        double rd = (double)net->batch * op->c * covered(op->in_h, op->kh, op->sh, op->ph, op->h) *
                    covered(op->in_w, op->kw, op->sw, op->pw, op->w) * w->eb;
        add(w, w->nhwc ? "avgpool_forward_nhwc_kernel" : "avgpool_forward_kernel", i, 0, GK_KERNEL, rd, y, 0, 0);
        break;
    }
    case IR_DROPOUT: dropout_pass(w, i, 0); break;
    case IR_LN: layernorm_pass(w, i, 0, 0); break;
    case IR_GELU: case IR_ACTIVATION:   /* bias_act.cu with the producer's bias (4 bytes a channel), or alone */
        if (op->act_bias_of >= 0) add(w, "bias_act_forward_kernel", i, 0, GK_KERNEL, x + c4, y, 0, 0);
        else add(w, op->kind == IR_GELU ? "gelu_forward_kernel" : "activation_forward_kernel", i, 0, GK_KERNEL, x, y, 0, 0);
        break;
    case IR_LAYER_SCALE:
        if (op->in_tail < 0) add(w, "forward", i, 0, GK_KERNEL, x + c4, y, 0, 0);
        break;
    case IR_STOCHASTIC_DEPTH:   /* drop_path.cu: the step's seed word (8 bytes), each sample kept or not */
        if (op->in_tail < 0) add(w, "drop_path_kernel", i, 0, GK_KERNEL, x + 8, y, 0, 0);
        break;
    case IR_FLATTEN: case IR_OP_COUNT: break;
    case IR_ATTENTION: attention_pass(w, i, 0, 0); break;
    case IR_LRN: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE:
    case IR_LEARNED: case IR_SPACE_TO_DEPTH: case IR_STOP_GRADIENT:
        unmodeled(w, i, "the forward");
        break;
    }
}

static void loss(walk *w) {
    const ir_net *net = w->net;
    if (net->loss_bce || net->mixed_targets) {
        fprintf(stderr, "trainc: gpu-cost: no model yet for this loss (BCE or mixed targets)\n");
        w->out->modeled = 0;
        return;
    }
    double logits = act(w, net->n_ops), n = net->batch;
    /* logits and labels (int32) in, and with loss scaling (FP16) the scale (a float); the
     * logits' gradient and each sample's loss (double) out; every loss head the same (all
     * read net.classes values), each but a main head of weight 1 weighed into the step's
     * loss by loss_add_kernel (emit_cuda.c) */
    double scale = w->s->loss_scale != LOSS_SCALE_NONE ? 4 : 0;
    for (int h = 0; h < (net->n_heads ? net->n_heads : 1); h++) {
        add(w, "xent_rows_kernel", -1, 0, GK_KERNEL, logits + 4 * n + scale, logits + 8 * n, 0, 0);
        add(w, "xent_mean_kernel", -1, 0, GK_KERNEL, 8 * n, 8, 0, 0);
        if (h > 0 || (net->n_heads && net->heads[0].weight != 1.0))
            add(w, "loss_add_kernel", -1, 0, GK_KERNEL, 16, 8, 0, 0);
    }
}

/* bn_add_relu_backward_nhwc.cu for add j (ir_op.add_bwd_fused): the sums' pass reads dz, the
 * bits and each bn's input, and per bn its mean and inv_std, leaves and (in its groups' and
 * tiles' last blocks) reads back its partials, and writes its totals, dgamma and dbeta, with
 * the retire counters (retire_counter_bytes); the gradients' pass reads the same tensors and per bn gamma, mean,
 * inv_std and the totals, and writes each bn's input gradient, or the identity shortcut's
 * gradient (read too where it is added to). */
static void bn_add_backward(walk *w, int j) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[j];
    double dz = out_bytes(w, j), c4 = 4.0 * op->c, tensors = dz + mask_bytes(w, j);
    double counters = retire_counter_bytes(op->c, splits_of(rows_of(w, op))), sums = 16.0 * op->c * splits_of(rows_of(w, op));
    double rd1 = counters, wr1 = counters, rd2 = 0, wr2 = 0, flops = 0;
    int bns = 0;
    for (int k = 0; k < op->n_in; k++) {
        int v = op->in[k];
        ir_grad_route r = ir_route(net, j, k);
        if (v > 0 && net->ops[v - 1].bn_bwd_in_add) {   /* a bn: its input x, its input's gradient */
            double x = act(w, net->ops[v - 1].in[0]);
            tensors += x;
            rd1 += 2 * c4 + sums, wr1 += sums + 16.0 * op->c + 2 * c4;
            bns++;
            rd2 += 7 * c4, wr2 += x;
            flops += 10.0 * x / w->eb;
        } else if (r == GRAD_WRITE || r == GRAD_ADD) {   /* the identity shortcut's gradient */
            wr2 += act(w, v);
            if (r == GRAD_ADD) rd2 += act(w, v);
        }
    }
    add(w, "bn_add_bwd_sums_kernel", j, 1, GK_KERNEL, tensors + rd1, wr1, 0.4 * flops, 1);
    last_rounds(w, bns * retire_rounds(op->c, splits_of(rows_of(w, op))));   /* each bn's totals in turn */
    add(w, "bn_add_bwd_dx_kernel", j, 1, GK_KERNEL, tensors + rd2, wr2, 0.6 * flops, 1);
}

/* bn_fold_conv1x1_backward.cu for add j folded through conv3 (ir_op.bn_fold, fuse_bn_fold.c):
 * the pass over dz and the bits writes g and (retired) its channel sums; the pass over h its
 * channel sums; cuBLASLt's G = h g^T and H = h h^T (h read once: the same operand twice); the
 * per-channel kernel reads G, W and the statistics and writes dgamma, dbeta, u, dW's first
 * terms, diag(a) W (16-bit) and diag(e) W; dW -= (e W) H (dW read as C); M = W^T (e W); the
 * correction kernel writes -M and W^T u (16-bit); dh = (a W)^T g, then dh += -M h + W^T u (dh
 * read as C, the bias read). */
static void bn_fold_backward(walk *w, int j) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[j], *c = &net->ops[op->bn_fold];
    double ci = c->in_c, co = c->c, rows = (double)rows_of(w, op), eb = w->eb;
    double h = act(w, c->in[0]), g = out_bytes(w, j);
    int sp = splits_of(rows_of(w, op));
    double cto = retire_counter_bytes(c->c, sp), cti = retire_counter_bytes(c->in_c, sp);
    add(w, "fold_sums_kernel", j, 1, GK_KERNEL, g + mask_bytes(w, j) + 16.0 * co * sp + cto,
        g + 16.0 * co * sp + 4.0 * co + cto, g / eb, 1);
    last_rounds(w, retire_rounds(c->c, sp));
    add(w, "fold_sums_kernel", j, 1, GK_KERNEL, h + 16.0 * ci * sp + cti, 16.0 * ci * sp + 4.0 * ci + cti, h / eb, 0);
    last_rounds(w, retire_rounds(c->in_c, sp));
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, h + g, 4.0 * ci * co, 2.0 * rows * ci * co, 0);
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, h, 4.0 * ci * ci, 2.0 * rows * ci * ci, 0);
    add(w, "fold_channel_kernel", j, 1, GK_KERNEL, 8.0 * ci * co + 4.0 * ci + 16.0 * co,
        12.0 * co + (8.0 + eb) * ci * co, 6.0 * ci * co, 0);
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, 4.0 * ci * ci + 8.0 * ci * co, 4.0 * ci * co, 2.0 * ci * ci * co, 0);
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, 8.0 * ci * co, 4.0 * ci * ci, 2.0 * ci * ci * co, 0);
    add(w, "fold_correction_kernel", j, 1, GK_KERNEL, 4.0 * ci * ci + 4.0 * ci * co + 4.0 * co, eb * ci * ci + eb * ci,
        2.0 * ci * co, 0);
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, eb * ci * co + g, h, 2.0 * rows * ci * co, 0);
    add(w, "cublasLtMatmul", j, 1, GK_GEMM, eb * ci * ci + 2 * h + eb * ci, h, 2.0 * rows * ci * ci, 0);
}

/* A residual tail's backward (residual_tail.cu), one kernel: the add's output gradient and the
 * conv's output, bias and gamma in; the conv's output gradient and the shortcut's (read too
 * where it adds) out; the two parameter gradients as NCHW planes' sums, or channels-last
 * partials and their sum. */
static void residual_tail_backward(walk *w, int j) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[j];
    double dy = out_bytes(w, j), c4 = 4.0 * op->c;
    int k = residual_tail_slot(net, op);
    ir_grad_route r = ir_route(net, j, 1 - k);
    double rd = 2 * dy + 2 * c4 + tail_seed(net, op) + (r == GRAD_ADD ? dy : 0), wr = dy + (r != GRAD_NONE ? dy : 0);
    if (rows_layout(w, op)) {
        int sp = splits_of((long)net->batch * op->h * op->w);
        add(w, "residual_tail_rows_kernel", j, 1, GK_KERNEL, rd, wr + 16.0 * op->c * sp, 0, 0);
        add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", j, 1, GK_KERNEL, 16.0 * op->c * sp,
            16.0 * op->c + 2 * c4, 0, 0);
        last_rounds(w, sums_rounds(w, sp));
    } else {
        add(w, "residual_tail_backward_kernel", j, 1, GK_KERNEL, rd, wr + 2 * c4, 0, 0);
    }
}

/* Whether conv or linear p's bias gradient is summed by its bias + activation's backward
 * (fuse_bias_act_grad.c, bias_act_bgrad.cu), which takes the two passes where the old bias
 * kernels run (TRAINC_CUDA_BIAS=old on NCHW planes). */
static int bias_summed_by_act(const walk *w, const ir_op *p) {
    if (p->b_off < 0 || p->bias_act < 0 || !w->net->ops[p->bias_act].act_bgrad) return 0;
    return !w->old || w->nhwc || p->h * p->w == 1;
}

static void backward(walk *w, int j) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[j];
    if (op->kind == IR_FLATTEN || op->kind == IR_STOP_GRADIENT || (net->dead && net->dead[j])) return;
    if (!(ir_route(net, j, 0) != GRAD_NONE || op->w_off >= 0 || op->kind == IR_ADD || op->kind == IR_CONCAT)) return;
    for (int k = 0; k < op->n_in; k++)
        if (ir_route(net, j, k) == GRAD_SCRATCH) unmodeled(w, j, "a scratch gradient's accumulation");
    double x = act(w, op->in[0]), dy = out_bytes(w, j), c4 = 4.0 * op->c;
    int din = ir_route(net, j, 0) != GRAD_NONE && ir_route(net, j, 0) != GRAD_SHARED;
    int din_add = ir_route(net, j, 0) == GRAD_ADD;
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR: {
        if (op->kind == IR_CONV && op->folded_in >= 0) break;   /* in its add's backward (bn_fold_backward) */
        double wb = (double)op->w_count * w->eb, f = 2 * macs(w, op);
        /* the bias gradient (bias.cu): with a fused ReLU, dy masked in place on the way; a
         * residual tail's kernel sums it, or the depthwise weight gradient's (fuse_dw_bias.c) */
        int dw_bias = op->dw_bias && own_depthwise(w, op);
        if (op->b_off >= 0 && op->in_tail < 0 && !bias_summed_by_act(w, op) && !dw_bias && op->ln_bias < 0) {
            double mask = op->act ? dy : 0;
            if (w->nhwc || op->h * op->w == 1) {   /* rows of channels: partial sums, then their sum */
                int sp = splits_of((long)net->batch * op->h * op->w);
                add(w, "bias_rows_partial_kernel", j, 1, GK_KERNEL, dy + mask, mask + 16.0 * op->c * sp, 0, 0);
                add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", j, 1, GK_KERNEL,
                    16.0 * op->c * sp, 16.0 * op->c + c4, 0, 0);
                last_rounds(w, sums_rounds(w, sp));
            } else {                               /* NCHW planes: one block per channel */
                add(w, w->old ? "bias_backward_kernel" : "bias_backward_planes_kernel", j, 1, GK_KERNEL, dy + mask,
                    mask + c4, 0, 0);
            }
        }
        if (own_depthwise(w, op)) {
            /* per-block partial sums of the weight gradient (FP32) in the workspace, added up
             * over the slices into the FP32 gradient; then the input gradient, the direct kernel
             * over dy (added to the gradient already there where another reader put one) */
            /* with the bias: one more partial per channel and slice, dy's channel sums, added
             * up by the same launch into the bias gradient */
            double part = (double)depthwise_slices(w, op) * 4.0 * (op->w_count + (dw_bias ? op->c : 0));
            add(w, w->nhwc ? "dw_nhwc_wgrad_kernel" : "dw_nchw_wgrad_kernel", j, 1, GK_KERNEL, x + dy, part, f, 0);
            add(w, "dw_sum_slices_kernel", j, 1, GK_KERNEL, part, 4.0 * op->w_count + (dw_bias ? c4 : 0), 0, 0);
            /* conv2d_depthwise.cu: 8 lanes of slices a sum, four loads each in flight */
            last_rounds(w, (depthwise_slices(w, op) + 31) / 32);
            if (din)
                add(w, w->nhwc ? "dw_nhwc_direct_kernel" : "dw_nchw_direct_kernel", j, 1, GK_KERNEL,
                    dy + dw_weight_bytes(w, op, 1) + (din_add ? x : 0), x, f, 0);
        } else if (runs_conv(w, op)) {
            /* channels-last: cuDNN writes the 16-bit KRSC gradient, which one kernel turns into
             * FP32 KCRS; NCHW 16-bit: into the workspace, then widened (rt_cuda_from_act);
             * FP32: straight into the gradient. With the previous bn's prologue (ConvBNwgrad,
             * conv_bn_wgrad.cu; gpu_rates.def: never measured, so the unfused wgrad's rate): that
             * bn's input (the same size as its output) and its scale and bias instead. */
            if (op->conv_bn == IR_CONV_BN_SBR)
                add(w, "cudnnBackendExecute", j, 1, GK_CONV_WGRAD, act(w, net->ops[op->in[0] - 1].in[0]) + dy + 2.0 * op->in_c * w->eb,
                    wb, f, 0);
            else add(w, "cudnnConvolutionBackwardFilter", j, 1, GK_CONV_WGRAD, x + dy, wb, f, 0);
            if (w->nhwc) add(w, "krsc_to_kcrs_kernel", j, 1, GK_KERNEL, wb, 4.0 * op->w_count, 0, 0);
            else if (w->eb == 2) add(w, "cast_kernel", j, 1, GK_KERNEL, wb, 4.0 * op->w_count, 0, 0);
            /* DgradDreluBNBwdWeight (conv_bn_dgrad.cu; gpu_rates.def: never measured, so the
             * unfused dgrad's rate): the bn's input for the ReLU's recompute, its four FP32
             * per-channel operands in, its five FP32 per-channel outputs */
            if (op->dgrad_bn)
                add(w, "cudnnBackendExecute", j, 1, GK_CONV_DGRAD, dy + wb + act(w, net->ops[op->in[0] - 1].in[0]) + 16.0 * op->in_c,
                    x + 20.0 * op->in_c, f, 0);
            else if (din) add(w, "cudnnConvolutionBackwardData", j, 1, GK_CONV_DGRAD, dy + wb + (din_add ? x : 0), x, f, 0);
        } else {
            add(w, "cublasLtMatmul", j, 1, GK_GEMM, dy + x, 4.0 * op->w_count, f, 0);
            if (din) add(w, "cublasLtMatmul", j, 1, GK_GEMM, wb + dy + (din_add ? x : 0), x, f, 0);
        }
        break;
    }
    case IR_BN: {
        if (op->bn_bwd_in_add) break;   /* in its add's backward (bn_add_backward) */
        if (op->bn_frozen || din_add) { unmodeled(w, j, "the backward"); break; }
        if (op->bn_dgrad_in_conv) {   /* the sums came from the conv's data gradient: dx alone (conv_bn_dgrad.cu) */
            if (din) add(w, "bn_dx_kernel", j, 1, GK_KERNEL, dy + x + 5 * c4, x, 6.0 * x / w->eb, 1);
            break;
        }
        bn_kernels bk = bn_kernels_of(w, op);
        int sp = bk.splits;
        /* dy, the ReLU's output or its bits, x; applied in a conv's prologue (bn_in_conv): the
         * ReLU recomputed from x and the prologue's scale and bias */
        double sb = op->bn_in_conv ? 2.0 * op->c * w->eb : 0;
        double tensors = dy + (ir_has_mask(net, j) ? mask_bytes(w, j) : op->act && !op->bn_in_conv ? dy : 0) + x + sb;
        /* applied inside the max pooling after it (bn_in_pool): each pass gathers dy from the
         * pooling's gradient and byte argmax (every pooled element wins somewhere, so both are
         * read whole) instead of reading the bn's output gradient */
        if (op->bn_in_pool) tensors += out_bytes(w, j + 1) + out_bytes(w, j + 1) / w->eb - dy;
        if (op->bn_in_conv) bk.input_grad = "vec_input_grad_kernel";
        if (ir_has_mask(net, j))   /* the bits go through the vectorized kernels alone */
            bk.input_grad = "vec_input_grad_kernel";
        if (op->bn_retire && (!w->old || ir_has_mask(net, j) || op->bn_in_conv)) {   /* (no old kernels for those) */
            double counters = retire_counter_bytes(op->c, sp);
            add(w, "vec_grads_retire_kernel", j, 1, GK_KERNEL, tensors + 2 * c4 + 16.0 * op->c * sp + counters,
                16.0 * op->c * sp + 16.0 * op->c + 2 * c4 + counters, 4.0 * x / w->eb, 1);
            last_rounds(w, retire_rounds(op->c, sp));
        } else {
            add(w, bk.grads, j, 1, GK_KERNEL, tensors + 2 * c4, 16.0 * op->c * sp, 4.0 * x / w->eb, 1);
            add(w, bk.sum, j, 1, GK_KERNEL, 16.0 * op->c * sp, 16.0 * op->c + 2 * c4, 0, 0);
            last_rounds(w, sums_rounds(w, sp));
        }
        if (din) add(w, bk.input_grad, j, 1, GK_KERNEL, tensors + 7 * c4, x, 6.0 * x / w->eb, 1);
        break;
    }
    case IR_ADD: {
        if (op->bn_fold >= 0) {
            bn_fold_backward(w, j);
            break;
        }
        if (op->add_bwd_fused) {
            bn_add_backward(w, j);
            break;
        }
        if (op->tail_conv >= 0) {
            residual_tail_backward(w, j);
            break;
        }
        double rd = dy + (op->act ? dy : 0), wr = 0;
        for (int k = 0; k < op->n_in; k++) {
            ir_grad_route r = ir_route(net, j, k);
            if (r == GRAD_WRITE) wr += act(w, op->in[k]);
            else if (r == GRAD_ADD) wr += act(w, op->in[k]), rd += act(w, op->in[k]);
        }
        add(w, "add_backward", j, 1, GK_KERNEL, rd, wr, 0, 1);
        break;
    }
    case IR_MAXPOOL:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        add(w, !w->nhwc ? "maxpool_backward_kernel" : w->old ? "maxpool_backward_nhwc_kernel" : "maxpool_backward_nhwc_vec_kernel", j, 1, GK_KERNEL,
            dy + 4.0 * (dy / w->eb), x, 0, 0);
        break;
    case IR_GAP:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        add(w, w->nhwc ? "gap_backward_nhwc_kernel" : "gap_backward_kernel", j, 1, GK_KERNEL, dy, x, 0, 0);
        break;
    case IR_RELU:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        add(w, "relu_backward_kernel", j, 1, GK_KERNEL, 2 * dy, x, 0, 0);
        break;
    case IR_AVGPOOL:   /* every output's gradient, gathered per input (zero where no window is) */
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        add(w, w->nhwc ? "avgpool_backward_nhwc_kernel" : "avgpool_backward_kernel", j, 1, GK_KERNEL, dy, x, 0, 0);
        break;
    case IR_DROPOUT:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        if (din) dropout_pass(w, j, 1);
        break;
    case IR_LN:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        layernorm_pass(w, j, 1, din);
        break;
    case IR_GELU: case IR_ACTIVATION:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        if (op->act_bias_of >= 0 && bias_summed_by_act(w, &net->ops[op->act_bias_of])) {
            /* bias_act_bgrad.cu: din written once and summed as bias.cu sums it (rows of
             * channels: partials, then their sum; NCHW planes: one block per channel) */
            if (w->nhwc || op->h * op->w == 1) {
                int sp = splits_of((long)net->batch * op->h * op->w);
                add(w, "bias_act_bgrad_rows_kernel", j, 1, GK_KERNEL, dy + x + c4, x + 16.0 * op->c * sp, 0, 0);
                add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", j, 1, GK_KERNEL,
                    16.0 * op->c * sp, 16.0 * op->c + c4, 0, 0);
                last_rounds(w, sums_rounds(w, sp));
            } else {
                add(w, "bias_act_bgrad_planes_kernel", j, 1, GK_KERNEL, dy + x + c4, x + c4, 0, 0);
            }
        } else if (op->act_bias_of >= 0) add(w, "bias_act_backward_kernel", j, 1, GK_KERNEL, dy + x + c4, x, 0, 0);
        else add(w, op->kind == IR_GELU ? "gelu_backward_kernel" : "activation_backward_kernel", j, 1, GK_KERNEL, dy + x, x, 0, 0);
        break;
    case IR_LAYER_SCALE:
        if (op->in_tail >= 0) break;   /* in its residual tail's backward */
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        layer_scale_grads(w, j, din);
        break;
    case IR_STOCHASTIC_DEPTH:
        if (op->in_tail >= 0) break;
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        if (din) add(w, "drop_path_kernel", j, 1, GK_KERNEL, dy + 8, x, 0, 0);
        break;
    case IR_FLATTEN: case IR_STOP_GRADIENT: case IR_OP_COUNT: break;
    case IR_ATTENTION:
        if (din_add) { unmodeled(w, j, "the backward"); break; }
        attention_pass(w, j, 1, din);
        break;
    case IR_LRN: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE:
    case IR_LEARNED: case IR_SPACE_TO_DEPTH:
        unmodeled(w, j, "the backward");
        break;
    }
}

void gpu_cost_of(const schedule *s, int old_kernels, gpu_cost *out) {
    memset(out, 0, sizeof *out);
    out->modeled = 1;
    walk w = { s, &s->net, out, old_kernels, s->net.act_bytes, s->opt.nhwc, 0 };
    if (!s->opt.fuse) {
        fprintf(stderr, "trainc: gpu-cost: no model yet for the unfused schedule (--no-fuse)\n");
        out->modeled = 0;
    }
    for (int i = 0; i < s->net.n_ops; i++) forward(&w, i);
    loss(&w);
    for (int j = s->net.n_ops - 1; j >= 0; j--) backward(&w, j);
    /* 16-bit logits widened for the host (model_host.cu train_step_device) */
    if (w.eb == 2) add(&w, "cast_kernel", s->net.n_ops, 1, GK_KERNEL, act(&w, s->net.n_ops), 2.0 * act(&w, s->net.n_ops), 0, 0);
    if (w.unmodeled > 1) fprintf(stderr, "trainc: gpu-cost: %d op passes in all have no model yet\n", w.unmodeled);
}

void gpu_cost_free(gpu_cost *c) {
    free(c->k);
    memset(c, 0, sizeof *c);
}
