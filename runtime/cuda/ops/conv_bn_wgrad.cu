/* The weight gradient of a conv that applies the previous bn in its prologue (fuse_conv_bn.c
 * IR_CONV_BN_SBR; rt_cuda.h rt_cuda_conv_bn_wgrad): cuDNN's ConvBNwgrad graph (cudnn-frontend's
 * "scale-bias-relu-wgrad" sample), X -> x·scale -> + bias -> ReLU -> convolution backward filter
 * with DY -> DW, so the prologue's output, which the forward never wrote, is recomputed inside
 * the weight gradient instead of by a pass of its own. FP16 data (X, DY, DW; the scale and bias
 * FP16 per channel, as the forward's prologue takes them), FP32 accumulation, NHWC packed, DW
 * KRSC: the 16-bit gradient goes where cudnnConvolutionBackwardFilter would put it (the conv's
 * scratch at the workspace's top) and conv2d.cu turns it into the FP32 KCRS gradient; the data
 * gradient is the conv's own (cuDNN's legacy call). Where cuDNN (or the device, or the
 * precision) refuses the graph, the prologue's output is recomputed into the bn's output
 * tensor (conv_bn_sbr.cu) and the conv's unfused backward reads it; the first refusal of each
 * kind is printed. */
#include <string.h>
#include "../cuda_libs.cuh"
#include "cudnn_graph.cuh"

/* conv2d.cu's hooks for the fused graphs */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise);
void *rt_cuda_conv_workspace_of(const rt_cuda_conv *c, size_t *bytes);
size_t rt_cuda_conv_add_workspace(rt_cuda_conv *c, size_t bytes);
void *rt_cuda_conv_dw_scratch(const rt_cuda_conv *c);
void cuda_conv2d_dweight_from_krsc(const rt_cuda_conv *c, float *dweight, const void *dw);
void cuda_conv2d_backward_data(const rt_cuda_conv *c, void *din, const void *dout, const void *weight);

/* The graph's tensors by unique id (the variant pack's order), and the prologue's virtual
 * intermediates: x·scale, + bias (FP32), the ReLU (FP16, as the MMA reads it). */
enum { UID_X = 1, UID_SCALE, UID_BIAS, UID_DY, UID_DW, N_UIDS = 5 };
enum { UID_T_MUL = 101, UID_T_ADD, UID_T_RELU };

struct rt_cuda_conv_bn_wgrad {
    rt_cuda_conv *conv;
    cudnnBackendDescriptor_t plan;   /* NULL: unfused */
    size_t ws;
    cudnnBackendDescriptor_t keep[40];   /* the graph's descriptors, the configurations, the heuristics */
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
    if (p.major < 8) return "compute capability below 8.0 (cuDNN's ConvBNwgrad engines need 8.0 or higher)";
    return NULL;
}

/* X -> MUL scale -> ADD bias -> RELU -> wgrad(DY) -> DW, and its plan within cap. */
static void build(rt_cuda_conv_bn_wgrad *f, size_t cap) {
    int nhwc, depthwise;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &depthwise);
    const char *dev = device_refusal();
    if (rt_cuda_act_type() != RT_ACT_F16) {
        snprintf(f->why, sizeof f->why, "%s activations: cuDNN's ConvBNwgrad engines take FP16 only",
                 rt_cuda_act_type() == RT_ACT_BF16 ? "BF16" : "FP32");
        return;
    }
    if (!nhwc || depthwise || s->groups != 1 || !rt_cuda_conv_dw_scratch(f->conv)) {
        snprintf(f->why, sizeof f->why, "not a channels-last dense conv");
        return;
    }
    if (dev) {
        snprintf(f->why, sizeof f->why, "%s", dev);
        return;
    }
    enum { X, SCALE, BIAS, DY, DW, T_MUL, T_ADD, T_RELU, PW_MUL, PW_ADD, PW_RELU, OP_MUL, OP_ADD, OP_RELU, CONV, WGRAD,
           GRAPH, N_DESC };
    cudnnBackendDescriptor_t d[N_DESC] = { 0 };
    graph_err err = {}, *e = &err;   /* (no refusal yet) */
    int64_t n = s->n, c = s->c, h = s->h, w = s->w, k = s->oc, r = s->kh, q = s->kw, oh = s->oh, ow = s->ow;
    int64_t xd[4] = { n, c, h, w }, xs[4] = { h * w * c, 1, w * c, c };
    int64_t wd[4] = { k, c, r, q }, ws[4] = { r * q * c, 1, q * c, c };
    int64_t yd[4] = { n, k, oh, ow }, ys[4] = { oh * ow * k, 1, ow * k, k };
    int64_t cd[4] = { 1, c, 1, 1 }, cs[4] = { c, 1, c, c };
    d[X] = tensor(e, UID_X, CUDNN_DATA_HALF, xd, xs);
    d[SCALE] = tensor(e, UID_SCALE, CUDNN_DATA_HALF, cd, cs);
    d[BIAS] = tensor(e, UID_BIAS, CUDNN_DATA_HALF, cd, cs);
    d[DY] = tensor(e, UID_DY, CUDNN_DATA_HALF, yd, ys);
    d[DW] = tensor(e, UID_DW, CUDNN_DATA_HALF, wd, ws);
    d[T_MUL] = tensor(e, UID_T_MUL, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_ADD] = tensor(e, UID_T_ADD, CUDNN_DATA_FLOAT, xd, xs, true);
    d[T_RELU] = tensor(e, UID_T_RELU, CUDNN_DATA_HALF, xd, xs, true);
    static const cudnnPointwiseMode_t modes[3] = { CUDNN_POINTWISE_MUL, CUDNN_POINTWISE_ADD, CUDNN_POINTWISE_RELU_FWD };
    int in[3] = { X, T_MUL, T_ADD }, b[3] = { SCALE, BIAS, -1 }, out[3] = { T_MUL, T_ADD, T_RELU };
    for (int i = 0; i < 3; i++)
        graph_pointwise(e, &d[PW_MUL + i], &d[OP_MUL + i], modes[i], d[in[i]], b[i] >= 0 ? d[b[i]] : NULL, d[out[i]]);
    graph_conv(e, &d[CONV], s);
    if (!e->step) {
        float alpha = 1.0f, beta = 0.0f;
        G("wgrad op create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, &d[WGRAD]));
        G("wgrad op x", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[T_RELU]));
        G("wgrad op dy", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[DY]));
        G("wgrad op dw", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[DW]));
        G("wgrad op desc", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[CONV]));
        G("wgrad op alpha", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
        G("wgrad op beta", cudnnBackendSetAttribute(d[WGRAD], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
        G("wgrad op finalize", cudnnBackendFinalize(d[WGRAD]));
    }
    cudnnBackendDescriptor_t ops[4] = { d[OP_MUL], d[OP_ADD], d[OP_RELU], d[WGRAD] };
    f->plan = graph_plan(e, &d[GRAPH], ops, 4, cap, &f->ws, f->keep, &f->n_keep, f->why, sizeof f->why,
                         "scale-bias-ReLU -> wgrad", "TRAINC_CUDNN_WORKSPACE_MB");
    static_assert(N_DESC + 8 + 1 <= (int)(sizeof f->keep / sizeof f->keep[0]), "room for every kept descriptor");
    graph_keep_or_explain(e, f->plan, d, N_DESC, f->keep, &f->n_keep, f->why, sizeof f->why);
}

rt_cuda_conv_bn_wgrad *rt_cuda_conv_bn_wgrad_create(rt_cuda_conv *conv) {
    rt_cuda_conv_bn_wgrad *f = (rt_cuda_conv_bn_wgrad *)rt_xcalloc(1, sizeof *f);
    f->conv = conv;
    return f;
}

size_t rt_cuda_conv_bn_wgrad_select(rt_cuda_conv_bn_wgrad *f, size_t cap) {
    if (!f->plan && !f->why[0]) {
        build(f, cap & ~(size_t)255);
        if (!f->plan) graph_warn_once("scale-bias-ReLU + weight gradient", f->conv, f->why);
    }
    return rt_cuda_conv_add_workspace(f->conv, f->plan ? f->ws : 0);
}

int rt_cuda_conv_bn_wgrad_fused(const rt_cuda_conv_bn_wgrad *f, const char **why) {
    if (why) *why = f->plan ? NULL : f->why[0] ? f->why : "not selected";
    return f->plan != NULL;
}

void cuda_conv_bn_backward_sbr(const rt_cuda_conv_bn_wgrad *f, void *din, float *dweight, const void *dout,
                               const void *in, void *normalized, const void *weight, const void *scale_bias) {
    int nhwc, dw;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(f->conv, &nhwc, &dw);
    if (!f->plan) {   /* the prologue's output recomputed, then the conv's own backward */
        cuda_bn_scale_bias_relu(normalized, in, scale_bias, (long)s->n * s->h * s->w, s->c);
        cuda_conv2d_backward(f->conv, din, dweight, dout, normalized, weight);
        return;
    }
    size_t ws_bytes;
    void *ws = rt_cuda_conv_workspace_of(f->conv, &ws_bytes), *dw16 = rt_cuda_conv_dw_scratch(f->conv);
    if (f->ws > ws_bytes) rt_die("conv_bn: internal: the fused wgrad needs %zu bytes of workspace, %zu are set", f->ws, ws_bytes);
    int64_t uids[N_UIDS] = { UID_X, UID_SCALE, UID_BIAS, UID_DY, UID_DW };
    void *ptrs[N_UIDS] = { (void *)in, (void *)scale_bias, (char *)scale_bias + 2 * (size_t)s->c, (void *)dout, dw16 };
    graph_execute(f->plan, N_UIDS, uids, ptrs, ws);
    cuda_conv2d_dweight_from_krsc(f->conv, dweight, dw16);
    if (din) cuda_conv2d_backward_data(f->conv, din, dout, weight);
}
