/* Conv + batch-norm statistics through cuDNN's graph (backend) API (rt_cuda.h rt_cuda_conv_bn):
 * an operation graph of a convolution forward (X, W -> Y, FP32 accumulation) and a genstats
 * node (Y -> per-channel SUM and SQSUM, FP32), X, W and Y in the activation type. cuDNN runs it
 * in FP16 with its ConvBNfprop engines (NHWC packed, KRSC weights, channels a multiple of 8,
 * 1x1 / 3x3 kernels, compute capability 8.0 or higher but 8.9) and in BF16 with its generic
 * runtime-fusion engine (support surface 70: a GenStats node in the epilogue, BF16 input, FP32
 * compute, NHWC packed; compiled at start-up; compiler/lower/fuse_conv_bn.c has the sources).
 * There GenStats reads FP16 or FP32 only, so in BF16 the conv's output is a virtual FP32
 * tensor that the genstats reads and an identity node rounds to the BF16 Y in memory (the
 * sums are of the unrounded output); its scale-bias-ReLU prologue is FP16 only, so BF16 takes
 * no prologue here. The batch norm that reads Y then only finalizes the sums, one small
 * launch, instead of a pass over Y. Tensors are described as cuDNN's graph API wants them:
 * dimensions in N,C,H,W order and NHWC strides. The plan is finalized once at start-up
 * (rt_cuda_conv_bn_select); where nothing accepts the graph the conv runs unfused
 * (cuda_conv2d_forward) and the statistics take their own pass (batchnorm_nhwc_vec.cu), and the
 * first refusal of each kind is printed. The sums live in the batch-norm channel-sums scratch
 * (batchnorm_sums.cu), which only the backward uses otherwise: the conv writes them and the
 * bn's finalize, the next launch on the stream, reads them. */
#include <stdlib.h>
#include <string.h>
#include "../cuda_libs.cuh"
#include "batchnorm_sums.cuh"
#include "cudnn_graph.cuh"

/* conv2d.cu's hooks for the fused graphs */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise);
void *rt_cuda_conv_workspace_of(const rt_cuda_conv *c, size_t *bytes);
size_t rt_cuda_conv_add_workspace(rt_cuda_conv *c, size_t bytes);

/* The graph's tensors by unique id (the variant pack's order). */
enum { UID_X = 1, UID_W, UID_Y, UID_SUM, UID_SQSUM, UID_SCALE, UID_BIAS, N_UIDS = 7 };
/* The prologue's intermediates (virtual: never in memory): x·scale, + bias, ReLU. */
enum { UID_T_MUL = 101, UID_T_ADD, UID_T_RELU };
/* BF16's conv output in FP32 (virtual), which the genstats reads and the identity rounds into Y */
enum { UID_T_Y = 111 };

struct rt_cuda_conv_bn {
    rt_cuda_conv *conv;
    int sbr;                         /* the prologue: relu(x·scale + bias) of the previous bn */
    cudnnBackendDescriptor_t plan;   /* NULL: unfused */
    size_t ws;                       /* the plan's workspace */
    /* the graph's descriptors and the plan's engine configuration, kept while the plan lives
     * (the documentation does not promise a plan outlives them) */
    cudnnBackendDescriptor_t keep[40];   /* the graph's (N_DESC), the configurations (8), the heuristics */
    int n_keep;
    char why[200];                   /* why unfused */
};

/* A finalized backend descriptor or NULL; on failure *why says which step and status. */
/* (a tensor of the graph: cudnn_graph.cuh's, none passed by value) */
static cudnnBackendDescriptor_t tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                       const int64_t strides[4], bool is_virtual = false) {
    return graph_tensor(e, uid, dt, dims, strides, is_virtual, false);
}

/* The documented compute capabilities: ConvBNfprop's (FP16), 8.0 or higher but 8.9; the
 * runtime-fusion engine's (BF16) start at 7.0 and cuDNN judges the rest. */
static const char *device_refusal(cudnnDataType_t dt) {
    int dev = 0;
    cudaDeviceProp p;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return "the device's compute capability is unknown";
    if (dt == CUDNN_DATA_BFLOAT16)
        return p.major < 7 ? "compute capability below 7.0 (cuDNN's runtime-fusion engines need 7.0 or higher)" : NULL;
    if (p.major < 8) return "compute capability below 8.0 (cuDNN's ConvBNfprop engines need 8.0 or higher)";
    if (p.major == 8 && p.minor == 9) return "compute capability 8.9 (cuDNN has no ConvBNfprop engine for it)";
    return NULL;
}

/* The conv -> genstats graph of f's conv, and its plan: the first engine configuration the
 * heuristics offer (mode A, then the fallback list) that finalizes within cap. */
static void build(rt_cuda_conv_bn *f, size_t cap) {
    int nhwc, depthwise;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &depthwise);
    /* the activation type: FP16 (ConvBNfprop) or BF16 (runtime fusion) */
    if (rt_cuda_act_type() != RT_ACT_F16 && rt_cuda_act_type() != RT_ACT_BF16) {
        snprintf(f->why, sizeof f->why, "FP32 activations: cuDNN's conv + genstats engines take FP16 or BF16");
        return;
    }
    cudnnDataType_t dt = rt_cuda_act_type() == RT_ACT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    if (f->sbr && dt == CUDNN_DATA_BFLOAT16) {
        snprintf(f->why, sizeof f->why, "BF16: no cuDNN engine documents a scale-bias-ReLU prologue with genstats "
                                        "(runtime fusion's surface 70 takes it in FP16 only; 80 and 90 have no genstats)");
        return;
    }
    const char *dev = device_refusal(dt);
    if (!nhwc || depthwise || s->groups != 1) {
        snprintf(f->why, sizeof f->why, "not a channels-last dense conv");
        return;
    }
    if (dev) {
        snprintf(f->why, sizeof f->why, "%s", dev);
        return;
    }
    enum { X, W, Y, SUM, SQ, CONV, FWD, STATS, GRAPH, HEUR, SCALE, BIAS, T_MUL, T_ADD, T_RELU, PW_MUL, PW_ADD, PW_RELU,
           OP_MUL, OP_ADD, OP_RELU, T_Y, PW_CAST, OP_CAST, N_DESC };
    cudnnBackendDescriptor_t d[N_DESC] = { 0 };
    graph_err err = {}, *e = &err;   /* (no refusal yet) */
    int64_t n = s->n, c = s->c, h = s->h, w = s->w, k = s->oc, r = s->kh, q = s->kw, oh = s->oh, ow = s->ow;
    int64_t xd[4] = { n, c, h, w }, xs[4] = { h * w * c, 1, w * c, c };
    int64_t wd[4] = { k, c, r, q }, ws[4] = { r * q * c, 1, q * c, c };
    int64_t yd[4] = { n, k, oh, ow }, ys[4] = { oh * ow * k, 1, ow * k, k };
    int64_t sd[4] = { 1, k, 1, 1 }, ss[4] = { k, 1, k, k };
    d[X] = tensor(e, UID_X, dt, xd, xs);
    d[W] = tensor(e, UID_W, dt, wd, ws);
    d[Y] = tensor(e, UID_Y, dt, yd, ys);
    d[SUM] = tensor(e, UID_SUM, CUDNN_DATA_FLOAT, sd, ss);
    d[SQ] = tensor(e, UID_SQSUM, CUDNN_DATA_FLOAT, sd, ss);
    const bool cast = dt == CUDNN_DATA_BFLOAT16;   /* conv -> FP32 (virtual) -> genstats, and -> identity -> Y */
    if (cast && !e->step) {
        cudnnPointwiseMode_t mode = CUDNN_POINTWISE_IDENTITY;
        cudnnDataType_t prec = CUDNN_DATA_FLOAT;
        d[T_Y] = tensor(e, UID_T_Y, CUDNN_DATA_FLOAT, yd, ys, true);
        G("cast create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &d[PW_CAST]));
        G("cast mode", cudnnBackendSetAttribute(d[PW_CAST], CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
        G("cast precision", cudnnBackendSetAttribute(d[PW_CAST], CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
        G("cast finalize", cudnnBackendFinalize(d[PW_CAST]));
        G("cast op create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &d[OP_CAST]));
        G("cast op desc", cudnnBackendSetAttribute(d[OP_CAST], CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[PW_CAST]));
        G("cast op x", cudnnBackendSetAttribute(d[OP_CAST], CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[T_Y]));
        G("cast op y", cudnnBackendSetAttribute(d[OP_CAST], CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[Y]));
        G("cast op finalize", cudnnBackendFinalize(d[OP_CAST]));
    }
    const int conv_y = cast ? T_Y : Y;   /* the conv's output, which the genstats reads */
    if (f->sbr) {   /* x -> x·scale -> + bias -> ReLU -> the conv's input (FP32 intermediates) */
        int64_t cd[4] = { 1, c, 1, 1 }, cs[4] = { c, 1, c, c };
        d[SCALE] = tensor(e, UID_SCALE, CUDNN_DATA_HALF, cd, cs);
        d[BIAS] = tensor(e, UID_BIAS, CUDNN_DATA_HALF, cd, cs);
        d[T_MUL] = tensor(e, UID_T_MUL, CUDNN_DATA_FLOAT, xd, xs, true);
        d[T_ADD] = tensor(e, UID_T_ADD, CUDNN_DATA_FLOAT, xd, xs, true);
        d[T_RELU] = tensor(e, UID_T_RELU, CUDNN_DATA_HALF, xd, xs, true);
        static const cudnnPointwiseMode_t modes[3] = { CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_RELU_FWD };
        int in[3] = { X, T_MUL, T_ADD }, b[3] = { SCALE, BIAS, -1 }, out[3] = { T_MUL, T_ADD, T_RELU };
        for (int i = 0; i < 3; i++)
            graph_pointwise(e, &d[PW_MUL + i], &d[OP_MUL + i], modes[i], d[in[i]], b[i] >= 0 ? d[b[i]] : NULL, d[out[i]]);
    }
    graph_conv(e, &d[CONV], s);
    if (!e->step) {
        float alpha = 1.0f, beta = 0.0f;
        G("conv op create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &d[FWD]));
        G("conv op x", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                &d[f->sbr ? T_RELU : X]));
        G("conv op w", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[W]));
        G("conv op y", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[conv_y]));
        G("conv op desc", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[CONV]));
        G("conv op alpha", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
        G("conv op beta", cudnnBackendSetAttribute(d[FWD], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
        G("conv op finalize", cudnnBackendFinalize(d[FWD]));
    }
    if (!e->step) {
        cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
        cudnnDataType_t prec = CUDNN_DATA_FLOAT;
        G("genstats create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, &d[STATS]));
        G("genstats mode", cudnnBackendSetAttribute(d[STATS], CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, 1, &mode));
        G("genstats precision", cudnnBackendSetAttribute(d[STATS], CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
        G("genstats x", cudnnBackendSetAttribute(d[STATS], CUDNN_ATTR_OPERATION_GENSTATS_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[conv_y]));
        G("genstats sum", cudnnBackendSetAttribute(d[STATS], CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[SUM]));
        G("genstats sqsum", cudnnBackendSetAttribute(d[STATS], CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[SQ]));
        G("genstats finalize", cudnnBackendFinalize(d[STATS]));
    }
    cudnnBackendDescriptor_t ops[5] = { d[FWD], d[STATS], d[OP_MUL], d[OP_ADD], d[OP_RELU] };
    int n_ops = f->sbr ? 5 : 2;
    if (cast) ops[n_ops++] = d[OP_CAST];   /* (BF16 takes no prologue: room for it) */
    f->plan = graph_plan(e, &d[GRAPH], ops, n_ops, cap, &f->ws, f->keep, &f->n_keep, f->why, sizeof f->why,
                         "conv -> genstats", "TRAINC_CUDNN_WORKSPACE_MB");
    static_assert(N_DESC + 8 + 1 <= (int)(sizeof f->keep / sizeof f->keep[0]), "room for every kept descriptor");
    graph_keep_or_explain(e, f->plan, d, N_DESC, f->keep, &f->n_keep, f->why, sizeof f->why);
}

rt_cuda_conv_bn *rt_cuda_conv_bn_create(rt_cuda_conv *conv) {
    rt_cuda_conv_bn *f = (rt_cuda_conv_bn *)rt_xcalloc(1, sizeof *f);
    f->conv = conv;
    return f;
}

rt_cuda_conv_bn *rt_cuda_conv_bn_create_sbr(rt_cuda_conv *conv) {
    rt_cuda_conv_bn *f = rt_cuda_conv_bn_create(conv);
    f->sbr = 1;
    return f;
}

size_t rt_cuda_conv_bn_select(rt_cuda_conv_bn *f, size_t cap) {
    if (!f->plan && !f->why[0]) {
        build(f, cap & ~(size_t)255);
        if (!f->plan) graph_warn_once("conv + batch-norm statistics", f->conv, f->why);
    }
    return rt_cuda_conv_add_workspace(f->conv, f->plan ? f->ws : 0);
}

int rt_cuda_conv_bn_fused(const rt_cuda_conv_bn *f, const char **why) {
    if (why) *why = f->plan ? NULL : f->why[0] ? f->why : "not selected";
    return f->plan != NULL;
}

/* The sums' room: [0, c) the sums, [c, 2c) the sums of squares, in FP32. */
static float *sums_of(int c) { return (float *)bn_channel_totals(c); }

/* The conv's input from the previous bn's raw input: relu(x·scale + bias), per channel, in
 * the activation type (the unfused prologue). */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
sbr_apply_kernel(T *out, const T *in, const T *scale_bias, long total, int c) {
    GRID_STRIDE(i, total) {
        int ch = (int)(i % c);
        float v = rt_ld(in[i]) * rt_ld(scale_bias[ch]) + rt_ld(scale_bias[c + ch]);
        out[i] = rt_st<T>(v > 0.0f ? v : 0.0f);
    }
}

/* scale = gamma·inv_std and bias = beta - mean·scale, per channel, as the prologue reads them. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
bn_scale_bias_kernel(T *sb, const float *gamma, const float *beta, const float *mean, const float *inv_std, int c) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    float k = gamma[ch] * inv_std[ch];
    sb[ch] = rt_st<T>(k);
    sb[c + ch] = rt_st<T>(beta[ch] - mean[ch] * k);
}

void cuda_bn_scale_bias(void *scale_bias, const float *gamma, const float *beta, const float *mean,
                        const float *inv_std, int c) {
    RT_ACT_DISPATCH(bn_scale_bias_kernel<T><<<(c + RT_THREADS - 1) / RT_THREADS, RT_THREADS, 0, rt_stream()>>>(
        (T *)scale_bias, gamma, beta, mean, inv_std, c));
    CUDA_LAUNCHED();
}

static void execute(const rt_cuda_conv_bn *f, void *out, const void *in, const void *weight, const void *scale_bias);

void cuda_conv_bn_forward_sbr(const rt_cuda_conv_bn *f, void *out, const void *in, void *normalized, const void *weight,
                              const void *scale_bias, int training) {
    if (!f->sbr) rt_die("conv_bn: internal: a prologue asked of a plan created without it");
    if (training && f->plan) {
        execute(f, out, in, weight, scale_bias);
        return;
    }
    int nhwc, dw;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &dw);
    long total = (long)s->n * s->c * s->h * s->w;
    RT_ACT_DISPATCH(sbr_apply_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)normalized, (const T *)in, (const T *)scale_bias, total, s->c));
    CUDA_LAUNCHED();
    cuda_conv2d_forward(f->conv, out, normalized, weight);
}

void cuda_conv_bn_forward(const rt_cuda_conv_bn *f, void *out, const void *in, const void *weight, int training) {
    if (f->sbr) rt_die("conv_bn: internal: a plan with a prologue run without its scale and bias");
    if (!training || !f->plan) {
        cuda_conv2d_forward(f->conv, out, in, weight);
        return;
    }
    execute(f, out, in, weight, NULL);
}

static void execute(const rt_cuda_conv_bn *f, void *out, const void *in, const void *weight, const void *scale_bias) {
    int nhwc, dw;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &dw);
    float *sums = sums_of(s->oc);
    size_t ws_bytes;
    void *ws = rt_cuda_conv_workspace_of(f->conv, &ws_bytes);
    if (f->ws > ws_bytes) rt_die("conv_bn: internal: the fused plan needs %zu bytes of workspace, %zu are set", f->ws, ws_bytes);
    int64_t uids[N_UIDS] = { UID_X, UID_W, UID_Y, UID_SUM, UID_SQSUM, UID_SCALE, UID_BIAS };
    void *ptrs[N_UIDS] = { (void *)in, (void *)weight, out, sums, sums + s->oc, (void *)scale_bias,
                           scale_bias ? (char *)scale_bias + 2 * (size_t)s->c : NULL };
    int64_t n_uids = f->sbr ? 7 : 5;
    graph_execute(f->plan, n_uids, uids, ptrs, ws);
}

/* Per channel: the statistics from the raw sums over m values, through batch norm's own
 * finish (the sums shifted by the running mean it expects: the same formulas and running
 * update as every other statistics pass). */
__global__ void __launch_bounds__(RT_THREADS)
bn_finalize_sums_kernel(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                        const float *sums, int c, long m, float momentum, float eps) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    double k = running_mean[ch], s = sums[ch], sq = sums[c + ch];
    finish_channel_stats(save_mean, save_inv_std, running_mean, running_var, ch, s - m * k, sq - 2 * k * s + m * k * k, m,
                         momentum, eps);
}

void cuda_conv_bn_stats(const rt_cuda_conv_bn *f, float *save_mean, float *save_inv_std, float *running_mean,
                        float *running_var, const void *out, int n, int c, int hw, float momentum, float eps,
                        int retire) {
    if (!f->plan) {
        if (retire)
            cuda_batchnorm_stats_train_nhwc_retire(save_mean, save_inv_std, running_mean, running_var, out, n, c, hw,
                                                   momentum, eps, 0);
        else
            cuda_batchnorm_stats_train_nhwc(save_mean, save_inv_std, running_mean, running_var, out, n, c, hw, momentum,
                                            eps, 0);
        return;
    }
    bn_finalize_sums_kernel<<<(c + RT_THREADS - 1) / RT_THREADS, RT_THREADS, 0, rt_stream()>>>(
        save_mean, save_inv_std, running_mean, running_var, sums_of(c), c, (long)n * hw, momentum, eps);
    CUDA_LAUNCHED();
}
