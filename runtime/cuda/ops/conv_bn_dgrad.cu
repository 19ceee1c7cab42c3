/* The data gradient of a conv that applies the previous bn in its prologue (fuse_conv_bn.c
 * IR_CONV_BN_SBR with conv_dgrad_bn; rt_cuda.h rt_cuda_conv_bn_dgrad), fused with that bn's
 * backward sums: cuDNN's DgradDreluBNBwdWeight graph (cudnn-frontend's "Dgrad Drelu DBNweight
 * Graph" sample, samples/cpp/convolution/dgrads.cpp; cuDNN 9.8 or later, compute capability
 * 8.x and 9.0): DY, W -> convolution backward data -> (virtual FP32) -> RELU_BWD against the bn's
 * output recomputed from its input, ((X - mean)·inv_std)·gamma + beta (SUB, MUL, MUL, ADD in
 * FP32) -> the bn's output gradient (FP16, written) -> BN_BWD_WEIGHTS with X, mean, inv_std,
 * gamma -> dgamma = sum dy·xhat and dbeta = sum dy per channel (FP32, written to the bn's
 * parameter gradients) and the three equivalent-scale coefficients (FP32, into batch norm's
 * channel-totals scratch, unread: the dx pass here computes from dgamma and dbeta itself). So the bn's backward needs only its dx pass
 * (cuda_batchnorm_backward_nhwc_dgrad): the pass over dy and x for the sums is gone, and the
 * ReLU's condition is applied once, inside the convolution's epilogue. Where cuDNN (or the
 * device, or the precision) refuses the graph, the conv's own data gradient runs and the bn's
 * backward is cuda_batchnorm_backward_nhwc_sbr's (sums and dx, the ReLU recomputed from the FP16
 * scale and bias); the first refusal of each kind is printed. */
#include <string.h>
#include "../cuda_libs.cuh"
#include "batchnorm_sums.cuh"
#include "cudnn_graph.cuh"

/* conv2d.cu's hooks for the fused graphs */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise);
void *rt_cuda_conv_workspace_of(const rt_cuda_conv *c, size_t *bytes);
size_t rt_cuda_conv_add_workspace(rt_cuda_conv *c, size_t bytes);
void cuda_conv2d_backward_data(const rt_cuda_conv *c, void *din, const void *dout, const void *weight);

/* The graph's tensors by unique id (the variant pack's order), and its virtual intermediates:
 * the data gradient, x - mean, ·inv_std, ·gamma, + beta (all FP32). */
enum { UID_DY = 1, UID_W, UID_X, UID_MEAN, UID_INVSTD, UID_GAMMA, UID_BETA, UID_DX, UID_DGAMMA, UID_DBETA, UID_EQ_DY,
       UID_EQ_X, UID_EQ_BIAS, N_UIDS = 13 };
enum { UID_T_DGRAD = 101, UID_T_SUB, UID_T_NORM, UID_T_SCALE, UID_T_BN };

struct rt_cuda_conv_bn_dgrad {
    rt_cuda_conv *conv;
    cudnnBackendDescriptor_t plan;   /* NULL: unfused */
    size_t ws;
    cudnnBackendDescriptor_t keep[48];
    int n_keep;
    char why[200];
};

static cudnnBackendDescriptor_t tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                       const int64_t strides[4], bool is_virtual = false) {
    return graph_tensor(e, uid, dt, dims, strides, is_virtual, false);
}

static const char *device_refusal(void) {
    int dev = 0;
    cudaDeviceProp p;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return "the device's compute capability is unknown";
    if (p.major < 8) return "compute capability below 8.0 (cuDNN's DgradDreluBNBwdWeight engine needs Ampere or Hopper)";
    if (p.major > 9) return "compute capability above 9.0 (cuDNN's DgradDreluBNBwdWeight engine needs Ampere or Hopper)";
    if (cudnnGetVersion() < 90800) return "cuDNN older than 9.8 (DgradDreluBNBwdWeight needs 9.8 or later)";
    return NULL;
}


/* The graph (the sample's, node for node) and its plan within cap. */
static void build(rt_cuda_conv_bn_dgrad *f, size_t cap) {
    int nhwc, depthwise;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &depthwise);
    if (rt_cuda_act_type() != RT_ACT_F16) {
        snprintf(f->why, sizeof f->why, "%s activations: cuDNN's DgradDreluBNBwdWeight engine takes FP16 only",
                 rt_cuda_act_type() == RT_ACT_BF16 ? "BF16" : "FP32");
        return;
    }
    if (!nhwc || depthwise || s->groups != 1) {
        snprintf(f->why, sizeof f->why, "not a channels-last dense conv");
        return;
    }
    const char *dev = device_refusal();
    if (dev) {
        snprintf(f->why, sizeof f->why, "%s", dev);
        return;
    }
    enum { DY, W, X, MEAN, INVSTD, GAMMA, BETA, DX, DGAMMA, DBETA, EQ_DY, EQ_X, EQ_BIAS, T_DGRAD, T_SUB, T_NORM, T_SCALE,
           T_BN, PW0, OP0 = PW0 + 5, CONV = OP0 + 5, DGRAD, BNW, GRAPH, N_DESC };
    cudnnBackendDescriptor_t d[N_DESC] = { 0 };
    graph_err err = {}, *e = &err;   /* (no refusal yet) */
    int64_t n = s->n, c = s->c, h = s->h, w = s->w, k = s->oc, r = s->kh, q = s->kw, oh = s->oh, ow = s->ow;
    int64_t xd[4] = { n, c, h, w }, xs[4] = { h * w * c, 1, w * c, c };
    int64_t wd[4] = { k, c, r, q }, wst[4] = { r * q * c, 1, q * c, c };
    int64_t yd[4] = { n, k, oh, ow }, ys[4] = { oh * ow * k, 1, ow * k, k };
    int64_t cd[4] = { 1, c, 1, 1 }, cs[4] = { c, 1, c, c };
    d[DY] = tensor(e, UID_DY, CUDNN_DATA_HALF, yd, ys);
    d[W] = tensor(e, UID_W, CUDNN_DATA_HALF, wd, wst);
    d[X] = tensor(e, UID_X, CUDNN_DATA_HALF, xd, xs);
    d[DX] = tensor(e, UID_DX, CUDNN_DATA_HALF, xd, xs);
    static const int64_t per_channel[] = { UID_MEAN, UID_INVSTD, UID_GAMMA, UID_BETA, UID_DGAMMA, UID_DBETA, UID_EQ_DY,
                                           UID_EQ_X, UID_EQ_BIAS };
    static const int slot[] = { MEAN, INVSTD, GAMMA, BETA, DGAMMA, DBETA, EQ_DY, EQ_X, EQ_BIAS };
    for (int i = 0; i < 9; i++) d[slot[i]] = tensor(e, per_channel[i], CUDNN_DATA_FLOAT, cd, cs);
    d[T_DGRAD] = tensor(e, UID_T_DGRAD, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_SUB] = tensor(e, UID_T_SUB, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_NORM] = tensor(e, UID_T_NORM, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_SCALE] = tensor(e, UID_T_SCALE, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_BN] = tensor(e, UID_T_BN, CUDNN_DATA_FLOAT, xd, xs, true);
    graph_conv(e, &d[CONV], s);
    if (!e->step) {
        float alpha = 1.0f, beta = 0.0f;
        G("dgrad op create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, &d[DGRAD]));
        G("dgrad op dx", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[T_DGRAD]));
        G("dgrad op w", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[W]));
        G("dgrad op dy", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[DY]));
        G("dgrad op desc", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[CONV]));
        G("dgrad op alpha", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
        G("dgrad op beta", cudnnBackendSetAttribute(d[DGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
        G("dgrad op finalize", cudnnBackendFinalize(d[DGRAD]));
    }
    graph_pointwise(e, &d[PW0], &d[OP0], CUDNN_POINTWISE_SUB, d[X], d[MEAN], d[T_SUB]);
    graph_pointwise(e, &d[PW0 + 1], &d[OP0 + 1], CUDNN_POINTWISE_MUL, d[T_SUB], d[INVSTD], d[T_NORM]);
    graph_pointwise(e, &d[PW0 + 2], &d[OP0 + 2], CUDNN_POINTWISE_MUL, d[T_NORM], d[GAMMA], d[T_SCALE]);
    graph_pointwise(e, &d[PW0 + 3], &d[OP0 + 3], CUDNN_POINTWISE_ADD, d[T_SCALE], d[BETA], d[T_BN]);
    graph_pointwise(e, &d[PW0 + 4], &d[OP0 + 4], CUDNN_POINTWISE_RELU_BWD, d[T_DGRAD], d[T_BN], d[DX]);
    if (!e->step) {
        cudnnDataType_t prec = CUDNN_DATA_FLOAT;
        static const cudnnBackendAttributeName_t names[10] = {
            CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC,
            CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC,
            CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC,
            CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC,
            CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS };
        const int which[10] = { X, DX, MEAN, INVSTD, GAMMA, DGAMMA, DBETA, EQ_DY, EQ_X, EQ_BIAS };
        G("bn bwd weights create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR, &d[BNW]));
        G("bn bwd weights precision", cudnnBackendSetAttribute(d[BNW], CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
        for (int i = 0; i < 10; i++)
            G("bn bwd weights tensor", cudnnBackendSetAttribute(d[BNW], names[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[which[i]]));
        G("bn bwd weights finalize", cudnnBackendFinalize(d[BNW]));
    }
    cudnnBackendDescriptor_t ops[7] = { d[DGRAD], d[OP0], d[OP0 + 1], d[OP0 + 2], d[OP0 + 3], d[OP0 + 4], d[BNW] };
    f->plan = graph_plan(e, &d[GRAPH], ops, 7, cap, &f->ws, f->keep, &f->n_keep, f->why, sizeof f->why,
                         "dgrad -> dReLU -> dBN weights", "TRAINC_CUDNN_WORKSPACE_MB");
    static_assert(N_DESC + 8 + 1 <= (int)(sizeof f->keep / sizeof f->keep[0]), "room for every kept descriptor");
    graph_keep_or_explain(e, f->plan, d, N_DESC, f->keep, &f->n_keep, f->why, sizeof f->why);
}

rt_cuda_conv_bn_dgrad *rt_cuda_conv_bn_dgrad_create(rt_cuda_conv *conv) {
    rt_cuda_conv_bn_dgrad *f = (rt_cuda_conv_bn_dgrad *)rt_xcalloc(1, sizeof *f);
    f->conv = conv;
    return f;
}

size_t rt_cuda_conv_bn_dgrad_select(rt_cuda_conv_bn_dgrad *f, size_t cap) {
    if (!f->plan && !f->why[0]) {
        build(f, cap & ~(size_t)255);
        if (!f->plan) graph_warn_once("data gradient + dReLU + bn backward sums", f->conv, f->why);
    }
    return rt_cuda_conv_add_workspace(f->conv, f->plan ? f->ws : 0);
}

int rt_cuda_conv_bn_dgrad_fused(const rt_cuda_conv_bn_dgrad *f, const char **why) {
    if (why) *why = f->plan ? NULL : f->why[0] ? f->why : "not selected";
    return f->plan != NULL;
}

void cuda_conv_bn_dgrad(const rt_cuda_conv_bn_dgrad *f, void *din, float *dgamma, float *dbeta, const void *dout,
                        const void *weight, const void *in, const float *gamma, const float *beta, const float *save_mean,
                        const float *save_inv_std) {
    if (!f->plan) {   /* the conv's own data gradient; the bn's backward sums it (cuda_batchnorm_backward_nhwc_dgrad) */
        cuda_conv2d_backward_data(f->conv, din, dout, weight);
        return;
    }
    int nhwc, dw;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &dw);
    size_t ws_bytes;
    void *ws = rt_cuda_conv_workspace_of(f->conv, &ws_bytes);
    if (f->ws > ws_bytes) rt_die("conv_bn: internal: the fused dgrad needs %zu bytes of workspace, %zu are set", f->ws, ws_bytes);
    int64_t uids[N_UIDS] = { UID_DY, UID_W, UID_X, UID_MEAN, UID_INVSTD, UID_GAMMA, UID_BETA, UID_DX, UID_DGAMMA, UID_DBETA,
                             UID_EQ_DY, UID_EQ_X, UID_EQ_BIAS };
    /* the three equivalent-scale outputs ([3][c] FP32, unread) go to batch norm's channel-totals
     * scratch ([c][2] doubles), which no other work uses across this call */
    float *eq = (float *)bn_channel_totals(s->c);
    void *ptrs[N_UIDS] = { (void *)dout, (void *)weight, (void *)in, (void *)save_mean, (void *)save_inv_std, (void *)gamma,
                           (void *)beta, din, dgamma, dbeta, eq, eq + s->c, eq + 2 * (size_t)s->c };
    graph_execute(f->plan, N_UIDS, uids, ptrs, ws);
}

/* dx = gamma·inv_std·(dy - dbeta/m - xhat·dgamma/m), xhat = (x - mean)·inv_std, over rows of c
 * channels: dy already the ReLU's gradient (the graph's output), dgamma and dbeta its sums. */
__global__ void __launch_bounds__(RT_THREADS) bn_dx_kernel(__half *din, const unsigned short *dy, const unsigned short *x, const float *gamma,
                             const float *dgamma, const float *dbeta, const float *mean, const float *inv_std, long total,
                             int c, float inv_m) {
    GRID_STRIDE(i, total) {
        int ch = (int)(i % c);
        float is = inv_std[ch], xh = (__half2float(__ushort_as_half(x[i])) - mean[ch]) * is;
        float g = __half2float(__ushort_as_half(dy[i])) - dbeta[ch] * inv_m - xh * dgamma[ch] * inv_m;
        din[i] = __float2half(gamma[ch] * is * g);
    }
}

void cuda_batchnorm_backward_nhwc_dgrad(const rt_cuda_conv_bn_dgrad *f, void *din, float *dgamma, float *dbeta,
                                        const void *dout, const void *scale_bias, const void *in, const float *gamma,
                                        const float *save_mean, const float *save_inv_std, int n, int c, int hw) {
    if (!f->plan) {
        cuda_batchnorm_backward_nhwc_sbr(din, dgamma, dbeta, dout, scale_bias, in, gamma, save_mean, save_inv_std, n, c, hw);
        return;
    }
    if (!din) return;   /* the sums are the graph's */
    long total = (long)n * hw * c;
    bn_dx_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (__half *)din, (const unsigned short *)dout, (const unsigned short *)in, gamma, dgamma, dbeta, save_mean, save_inv_std, total, c,
        1.0f / ((float)n * hw));
    CUDA_LAUNCHED();
}
