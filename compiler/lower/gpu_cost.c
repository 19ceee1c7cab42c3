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
#include "rt_devmem.h"   /* RT_DEVMEM_MAX_SPLITS: the partial sums' split cap */

#include <stdlib.h>
#include <string.h>

static const gpu_device devices[] = {
    /* name, HBM bytes/s, dense 16-bit tensor FLOP/s, FP32 FLOP/s, launch in a graph, library scale */
    { "h100", 3.35e12, 989e12, 67e12, 2e-6, 1.0 },        /* H100 SXM5 80 GB (NVIDIA's datasheet) */
    { "h200", 4.8e12, 989e12, 67e12, 2e-6, 1.0 },         /* H200 SXM 141 GB: H100's compute */
    { "a100", 2.039e12, 312e12, 19.5e12, 2e-6, 312.0 / 989.0 },   /* A100 SXM 80 GB */
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
    static const char *const names[GK_CLASSES] = { "kernel", "conv-fwd", "conv-dgrad", "conv-wgrad", "gemm" };
    return names[c];
}

double gpu_kernel_seconds(const gpu_kernel *k, const gpu_device *dev, int half) {
    double mem = (k->read + k->write) / dev->bandwidth;
    if (k->cls == GK_KERNEL) {
        double math = k->flops / dev->peak32;
        return dev->launch_s + (mem > math ? mem : math);
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
    *k = (gpu_kernel){ "", op, bwd, cls, rd, wr, flops, bn_sized };
    /* a generated kernel (emit_cuda_kernels.c) is named after its layer: fused_<ident>_<what> */
    if (op >= 0 && op < w->net->n_ops && (!strcmp(name, "bias") || !strcmp(name, "apply") ||
                                          !strcmp(name, "add_forward") || !strcmp(name, "add_backward")))
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
 * divides C; the retire counters are one per tile). */
static int vec_tiles_of(int c) {
    int v = c % 4 == 0 ? 4 : 1, cv = c / v, lx = 1;
    while (lx < cv && lx < 32) lx *= 2;
    return (cv + lx - 1) / lx;
}

/* MACs of a conv or linear over the batch (the forward's; each gradient does as many). */
static double macs(const walk *w, const ir_op *op) {
    if (op->kind == IR_LINEAR) return (double)w->net->batch * op->c * ((double)op->in_c * op->in_h * op->in_w);
    return (double)w->net->batch * op->c * op->h * op->w * ((double)op->in_c / op->groups) * op->kh * op->kw;
}

static int runs_conv(const walk *w, const ir_op *op) {
    return op->kind == IR_CONV || (w->nhwc && op->in_h * op->in_w > 1);
}

static void forward(walk *w, int i) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[i];
    double x = act(w, op->in[0]), y = out_bytes(w, i), c4 = 4.0 * op->c;
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR: {
        double wb = (double)op->w_count * w->eb;
        /* grouped convs: the runtime's own depthwise kernels (conv2d_depthwise.cu) or cuDNN's
         * grouped ones, chosen at run time by geometry */
        if (op->kind == IR_CONV && op->groups > 1) { unmodeled(w, i, "the grouped (depthwise) forward"); break; }
        if (runs_conv(w, op)) add(w, "cudnnConvolutionForward", i, 0, GK_CONV_FWD, x + wb, y, 2 * macs(w, op), 0);
        else add(w, "cublasLtMatmul", i, 0, GK_GEMM, x + wb, y, 2 * macs(w, op), 0);
        if (op->b_off >= 0) add(w, "bias", i, 0, GK_KERNEL, y + c4, y, 0, 0);
        break;
    }
    case IR_BN: {
        if (op->bn_frozen) { unmodeled(w, i, "the frozen forward"); break; }
        /* per-channel sums of x - running mean into partials; their sums make the statistics
         * (save mean, inv std) and update the running ones; then the generated apply */
        bn_kernels bk = bn_kernels_of(w, op);
        int sp = bk.splits;
        if (op->bn_retire && !w->old) {   /* the tiles' last blocks finish: one launch */
            double counters = 4.0 * vec_tiles_of(op->c);
            add(w, "vec_stats_retire_kernel", i, 0, GK_KERNEL, x + 2 * c4 + 16.0 * op->c * sp + counters,
                16.0 * op->c * sp + 4 * c4 + counters, 3.0 * x / w->eb, 1);
        } else {
            add(w, bk.stats, i, 0, GK_KERNEL, x + c4, 16.0 * op->c * sp, 3.0 * x / w->eb, 1);
            add(w, bk.finish, i, 0, GK_KERNEL, 16.0 * op->c * sp + 2 * c4, 4 * c4, 0, 0);
        }
        if (!op->bn_in_add) add(w, "apply", i, 0, GK_KERNEL, x + 4 * c4, y, 2.0 * x / w->eb, 1);
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
            add(w, "bn_add_relu_nhwc_kernel", i, 0, GK_KERNEL, rd, y, f + (op->act ? 2.0 : 1.0) * y / w->eb, 1);
            break;
        }
        double rd = 0;
        for (int k = 0; k < op->n_in; k++) rd += act(w, op->in[k]);
        add(w, "add_forward", i, 0, GK_KERNEL, rd, y, 0, 1);
        break;
    }
    case IR_MAXPOOL:
        /* the output and each output's argmax (int32); TRAINC_CUDA_POOL=old: maxpool2d.cu's */
        add(w, !w->nhwc ? "maxpool_forward_kernel" : w->old ? "maxpool_forward_nhwc_kernel" : "maxpool_forward_nhwc_vec_kernel", i, 0, GK_KERNEL, x,
            y + 4.0 * (y / w->eb), 0, 0);
        break;
    case IR_GAP:
        add(w, w->nhwc ? "gap_forward_nhwc_kernel" : "gap_forward_kernel", i, 0, GK_KERNEL, x, y, 0, 0);
        break;
    case IR_RELU: add(w, "relu_forward_kernel", i, 0, GK_KERNEL, x, y, 0, 0); break;
    case IR_FLATTEN: case IR_OP_COUNT: break;
    case IR_LN: case IR_GELU: case IR_AVGPOOL: case IR_DROPOUT: case IR_LRN: case IR_CONCAT: case IR_LAYER_SCALE:
    case IR_STOCHASTIC_DEPTH: case IR_ACTIVATION: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE:
    case IR_LEARNED: case IR_ATTENTION: case IR_SPACE_TO_DEPTH:
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
    /* logits and labels (int32) in; the logits' gradient and each sample's loss (double) out */
    add(w, "xent_rows_kernel", -1, 0, GK_KERNEL, logits + 4 * n, logits + 8 * n, 0, 0);
    add(w, "xent_mean_kernel", -1, 0, GK_KERNEL, 8 * n, 8, 0, 0);
}

static void backward(walk *w, int j) {
    const ir_net *net = w->net;
    const ir_op *op = &net->ops[j];
    if (op->kind == IR_FLATTEN) return;
    if (!(ir_route(net, j, 0) != GRAD_NONE || op->w_off >= 0 || op->kind == IR_ADD || op->kind == IR_CONCAT)) return;
    for (int k = 0; k < op->n_in; k++)
        if (ir_route(net, j, k) == GRAD_SCRATCH) unmodeled(w, j, "a scratch gradient's accumulation");
    double x = act(w, op->in[0]), dy = out_bytes(w, j), c4 = 4.0 * op->c;
    int din = ir_route(net, j, 0) != GRAD_NONE && ir_route(net, j, 0) != GRAD_SHARED;
    int din_add = ir_route(net, j, 0) == GRAD_ADD;
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR: {
        double wb = (double)op->w_count * w->eb, f = 2 * macs(w, op);
        if (op->kind == IR_CONV && op->groups > 1) { unmodeled(w, j, "the grouped (depthwise) backward"); break; }
        /* the bias gradient (bias.cu): with a fused ReLU, dy masked in place on the way */
        if (op->b_off >= 0) {
            double mask = op->act ? dy : 0;
            if (w->nhwc || op->h * op->w == 1) {   /* rows of channels: partial sums, then their sum */
                int sp = splits_of((long)net->batch * op->h * op->w);
                add(w, "bias_rows_partial_kernel", j, 1, GK_KERNEL, dy + mask, mask + 16.0 * op->c * sp, 0, 0);
                add(w, w->old ? "bn_sum_partials_kernel" : "bn_sum_partials_warp_kernel", j, 1, GK_KERNEL,
                    16.0 * op->c * sp, 16.0 * op->c + c4, 0, 0);
            } else {                               /* NCHW planes: one block per channel */
                add(w, w->old ? "bias_backward_kernel" : "bias_backward_planes_kernel", j, 1, GK_KERNEL, dy + mask,
                    mask + c4, 0, 0);
            }
        }
        if (runs_conv(w, op)) {
            /* channels-last: cuDNN writes the 16-bit KRSC gradient, which one kernel turns into
             * FP32 KCRS; NCHW 16-bit: into the workspace, then widened (rt_cuda_from_act);
             * FP32: straight into the gradient */
            add(w, "cudnnConvolutionBackwardFilter", j, 1, GK_CONV_WGRAD, x + dy, wb, f, 0);
            if (w->nhwc) add(w, "krsc_to_kcrs_kernel", j, 1, GK_KERNEL, wb, 4.0 * op->w_count, 0, 0);
            else if (w->eb == 2) add(w, "cast_kernel", j, 1, GK_KERNEL, wb, 4.0 * op->w_count, 0, 0);
            if (din) add(w, "cudnnConvolutionBackwardData", j, 1, GK_CONV_DGRAD, dy + wb + (din_add ? x : 0), x, f, 0);
        } else {
            add(w, "cublasLtMatmul", j, 1, GK_GEMM, dy + x, 4.0 * op->w_count, f, 0);
            if (din) add(w, "cublasLtMatmul", j, 1, GK_GEMM, wb + dy + (din_add ? x : 0), x, f, 0);
        }
        break;
    }
    case IR_BN: {
        if (op->bn_frozen || din_add) { unmodeled(w, j, "the backward"); break; }
        bn_kernels bk = bn_kernels_of(w, op);
        int sp = bk.splits;
        double tensors = dy + (op->act ? dy : 0) + x;   /* dy, the ReLU's output (its mask), x */
        if (op->bn_retire && !w->old) {
            double counters = 4.0 * vec_tiles_of(op->c);
            add(w, "vec_grads_retire_kernel", j, 1, GK_KERNEL, tensors + 2 * c4 + 16.0 * op->c * sp + counters,
                16.0 * op->c * sp + 16.0 * op->c + 2 * c4 + counters, 4.0 * x / w->eb, 1);
        } else {
            add(w, bk.grads, j, 1, GK_KERNEL, tensors + 2 * c4, 16.0 * op->c * sp, 4.0 * x / w->eb, 1);
            add(w, bk.sum, j, 1, GK_KERNEL, 16.0 * op->c * sp, 16.0 * op->c + 2 * c4, 0, 0);
        }
        if (din) add(w, bk.input_grad, j, 1, GK_KERNEL, tensors + 7 * c4, x, 6.0 * x / w->eb, 1);
        break;
    }
    case IR_ADD: {
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
    case IR_FLATTEN: case IR_OP_COUNT: break;
    case IR_LN: case IR_GELU: case IR_AVGPOOL: case IR_DROPOUT: case IR_LRN: case IR_CONCAT: case IR_LAYER_SCALE:
    case IR_STOCHASTIC_DEPTH: case IR_ACTIVATION: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE:
    case IR_LEARNED: case IR_ATTENTION: case IR_SPACE_TO_DEPTH:
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
