/* 2-D convolution through cuDNN (FP32, or BF16/FP16 storage with FP32 accumulation on tensor
 * cores): descriptors per layer, algorithms timed once at start-up (cudnnFind*AlgorithmEx on
 * the model's own buffers, after the memory check) and shared by layers of equal shape, one
 * shared workspace. In 16-bit modes cuDNN writes the weight gradient in the
 * activation type into the top of the workspace, and a cast widens it into the FP32 gradient
 * buffer the optimizer and the all-reduce read.
 * Layout: NCHW, or channels-last (NHWC, 16-bit modes only) where the whole net runs in it:
 * cuDNN's tensor-core kernels then need no internal transposes. In NHWC the weight is read
 * as [K][R][S][C] (rt_cuda_conv_weight_nhwc makes that copy of the [K][C][R][S] parameters)
 * and its gradient is transposed back to [K][C][R][S] as it is widened.
 * Depthwise shapes our own kernels take (conv2d_depthwise.cu) skip cuDNN: no search, their
 * channels-last weight copy is [R][S][C], and their workspace holds the weight gradient's
 * partial sums. TRAINC_CUDA_DEPTHWISE=cudnn gives them back to cuDNN. */
#include <stdlib.h>
#include <string.h>
#include "../cuda_libs.cuh"
#include "conv2d_depthwise.cuh"

struct rt_cuda_conv {
    rt_conv_shape s;
    int nhwc;            /* channels-last tensors and [K][R][S][C] weights */
    int selected, no_din;
    int forward_only;    /* selected without gradients (an evaluation schedule's): forward algorithm only */
    rt_cuda_act act;     /* element type of the descriptors */
    int depthwise;       /* our depthwise kernels (conv2d_depthwise.cu), not cuDNN */
    int dw_slices;       /* depthwise: blocks a channel's weight gradient is split over */
    size_t dw_bytes;     /* depthwise: workspace for the weight gradient's partial sums */
    size_t dw_scratch;   /* bytes of the 16-bit weight gradient at the workspace's top; 0 in FP32 */
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    /* The math type each algorithm was timed with: cuDNN picks tensor-core kernels by algorithm
     * and math type together, so each call sets its own (as PyTorch does). */
    cudnnMathType_t fwd_math, bwd_data_math, bwd_filter_math;
    size_t fused_bytes;  /* a fused graph's workspace for this conv (conv_bn_fprop.cu), 0 if none */
};

/* Every conv created, so that select can reuse the choice of an equal shape. */
static rt_cuda_conv **all_convs;
static int n_convs;
static void *workspace;
static size_t workspace_bytes;

static long weight_elems(const rt_conv_shape *s) { return (long)s->oc * (s->c / s->groups) * s->kh * s->kw; }

static rt_cuda_conv *conv_create(const rt_conv_shape *s, int nhwc) {
    rt_cuda_conv *c = (rt_cuda_conv *)rt_xcalloc(1, sizeof *c);
    c->s = *s;
    c->nhwc = nhwc;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->x));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&c->y));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&c->w));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&c->conv));
    rt_cuda_act act = c->act = rt_cuda_act_type();
    cudnnDataType_t dt = act == RT_ACT_BF16 ? CUDNN_DATA_BFLOAT16 : act == RT_ACT_F16 ? CUDNN_DATA_HALF
                                                                                      : CUDNN_DATA_FLOAT;
    long w_elems = weight_elems(s);
    c->depthwise = cuda_conv2d_depthwise_takes(s);
    c->dw_scratch = act == RT_ACT_F32 || c->depthwise ? 0 : ((size_t)w_elems * 2 + 255) / 256 * 256;
    if (nhwc && act == RT_ACT_F32)
        rt_die_hint("build with precision.compute BF16 or FP16, or without --layout nhwc",
                    "conv2d: the channels-last layout is for 16-bit activations only");
    cudnnTensorFormat_t f = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->x, f, dt, s->n, s->c, s->h, s->w));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(c->y, f, dt, s->n, s->oc, s->oh, s->ow));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(c->w, dt, f, s->oc, s->c / s->groups, s->kh, s->kw));
    /* Accumulation is FP32 in every mode. */
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(c->conv, s->ph, s->pw, s->sh, s->sw, s->dh, s->dw,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(c->conv, s->groups));
    /* FP32: plain FMA math, so results match the CPU to 1e-4; TF32, BF16, FP16: tensor cores. */
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, rt_cuda_math_mode() == RT_CUDA_FP32 ? CUDNN_FMA_MATH
                                                                                         : CUDNN_TENSOR_OP_MATH));
    int dims[4];
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(c->conv, c->x, c->w, &dims[0], &dims[1], &dims[2], &dims[3]));
    if (dims[0] != s->n || dims[1] != s->oc || dims[2] != s->oh || dims[3] != s->ow)
        rt_die("conv2d: cuDNN computes output %dx%dx%dx%d, the plan says %dx%dx%dx%d", dims[0], dims[1],
               dims[2], dims[3], s->n, s->oc, s->oh, s->ow);
    all_convs = (rt_cuda_conv **)realloc(all_convs, sizeof *all_convs * (size_t)(n_convs + 1));
    if (!all_convs) rt_die("out of host memory");
    all_convs[n_convs++] = c;
    return c;
}

rt_cuda_conv *rt_cuda_conv_create(const rt_conv_shape *s) { return conv_create(s, 0); }
rt_cuda_conv *rt_cuda_conv_create_nhwc(const rt_conv_shape *s) { return conv_create(s, 1); }

const char *rt_cuda_conv_engine(const rt_cuda_conv *c) { return c->depthwise ? "depthwise" : "cudnn"; }

/* [K][C][R][S] -> [K][R][S][C] (c: input channels per group, rs: kernel positions). */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
kcrs_to_krsc_kernel(T *dst, const T *src, long total, int c, int rs) {
    GRID_STRIDE(i, total) {
        int ch = (int)(i % c);
        long t = i / c;
        dst[i] = src[(t / rs * c + ch) * rs + t % rs];
    }
}

/* [K][R][S][C] (activation type) -> [K][C][R][S] (FP32). */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
krsc_to_kcrs_kernel(float *dst, const T *src, long total, int c, int rs) {
    GRID_STRIDE(i, total) {
        int p = (int)(i % rs);
        long t = i / rs;
        dst[i] = rt_ld(src[(t / c * rs + p) * c + t % c]);
    }
}

void rt_cuda_conv_weight_nhwc(const rt_cuda_conv *c, void *dst, const void *src) {
    if (c->depthwise) {
        cuda_conv2d_depthwise_weight_nhwc(dst, src, &c->s);
        return;
    }
    long n = weight_elems(&c->s);
    RT_ACT_DISPATCH(kcrs_to_krsc_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(
        (T *)dst, (const T *)src, n, c->s.c / c->s.groups, c->s.kh * c->s.kw));
    CUDA_LAUNCHED();
}

static int deterministic_only(void) { return rt_env_bool(RT_ENV_TRAINC_CUDNN_DETERMINISTIC); }

enum { FWD, BWD_DATA, BWD_FILTER };

/* The workspace `algo` needs under `math`, or (size_t)-1 when cuDNN refuses it so. */
static size_t workspace_under(const rt_cuda_conv *c, int which, int algo, cudnnMathType_t math) {
    size_t bytes = 0;
    cudnnStatus_t st;
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, math));
    if (which == FWD)
        st = cudnnGetConvolutionForwardWorkspaceSize(rt_cudnn(), c->x, c->w, c->conv, c->y,
                                                     (cudnnConvolutionFwdAlgo_t)algo, &bytes);
    else if (which == BWD_DATA)
        st = cudnnGetConvolutionBackwardDataWorkspaceSize(rt_cudnn(), c->w, c->y, c->conv, c->x,
                                                          (cudnnConvolutionBwdDataAlgo_t)algo, &bytes);
    else
        st = cudnnGetConvolutionBackwardFilterWorkspaceSize(rt_cudnn(), c->x, c->y, c->conv, c->w,
                                                            (cudnnConvolutionBwdFilterAlgo_t)algo, &bytes);
    return st == CUDNN_STATUS_SUCCESS ? bytes : (size_t)-1;
}

/* The fastest successful result within the cap (cuDNN sorts results by time), and the math
 * type to run it with. FP32 runs every algorithm under CUDNN_FMA_MATH, so it stays exact (no
 * TF32): the legacy search tags its results DEFAULT or TENSOR_OP whatever math type was asked
 * (OneFlow#3460, cumo#501), so the tag is not trusted; an FP32 conv takes the fastest
 * algorithm cuDNN accepts under FMA math (its workspace query succeeds, within the cap).
 * Every choice's workspace is queried under the math type it runs with, so that it fits the
 * workspace the memory check counted at the cap whatever the tag said. */
#define PICK(results, count, cap, which, out_algo, out_math)                                 \
    do {                                                                                      \
        int found_ = 0, fp32_ = rt_cuda_math_mode() == RT_CUDA_FP32;                          \
        for (int i_ = 0; i_ < (count) && !found_; i_++) {                                     \
            if ((results)[i_].status != CUDNN_STATUS_SUCCESS || (results)[i_].memory > (cap)) \
                continue;                                                                     \
            if (deterministic_only() && (results)[i_].determinism != CUDNN_DETERMINISTIC)     \
                continue;                                                                     \
            cudnnMathType_t m_ = fp32_ ? CUDNN_FMA_MATH : (results)[i_].mathType;            \
            if (workspace_under(c, (which), (int)(results)[i_].algo, m_) > (cap))             \
                continue;                                                                     \
            (out_algo) = (results)[i_].algo;                                                  \
            (out_math) = m_;                                                                  \
            found_ = 1;                                                                       \
        }                                                                                     \
        if (!found_)                                                                          \
            rt_die_hint("raise the workspace cap (TRAINC_CUDNN_WORKSPACE_MB), unset "         \
                        "TRAINC_CUDNN_DETERMINISTIC, or (FP32) compute in TF32",              \
                        "cuDNN offers no usable algorithm for a %dx%d conv (%d->%d channels)", \
                        c->s.kh, c->s.kw, c->s.c, c->s.oc);                                  \
    } while (0)

/* Equal geometry and type; whether backward adds into din does not change the algorithms. */
static int same_shape(const rt_cuda_conv *a, const rt_cuda_conv *b) {
    rt_conv_shape sa = a->s, sb = b->s;
    sa.din_add = sb.din_add = 0;
    return memcmp(&sa, &sb, sizeof sa) == 0 && a->act == b->act && a->nhwc == b->nhwc;
}

static size_t conv_workspace(const rt_cuda_conv *c) {
    size_t f = 0, d = 0, w = 0;   /* each under the math type its call will run with */
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->fwd_math));
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(rt_cudnn(), c->x, c->w, c->conv, c->y, c->fwd, &f));
    if (c->forward_only) return f;
    if (!c->no_din) {
        CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->bwd_data_math));
        CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(rt_cudnn(), c->w, c->y, c->conv, c->x,
                                                                 c->bwd_data, &d));
    }
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->bwd_filter_math));
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(rt_cudnn(), c->x, c->y, c->conv, c->w,
                                                               c->bwd_filter, &w));
    size_t m = f > d ? f : d;
    return m > w ? m : w;
}

/* The workspace a conv needs: cuDNN's part rounded up to 256 bytes, then the 16-bit weight
 * gradient (a multiple of 256), so that part starts 256-byte aligned wherever the workspace's
 * end lies (cuDNN's output and rt_cuda_from_act want aligned pointers). */
static size_t selected_bytes(const rt_cuda_conv *c) {
    if (c->depthwise) return (c->dw_bytes + 255) & ~(size_t)255;
    size_t own = conv_workspace(c);
    if (c->fused_bytes > own) own = c->fused_bytes;
    return ((own + 255) & ~(size_t)255) + c->dw_scratch;
}

/* For the fused graphs of conv_bn_fprop.cu: the conv's shape and descriptors' facts, its
 * share of the shared workspace, and the graph's own need added to what it selects. */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise) {
    *nhwc = c->nhwc, *depthwise = c->depthwise;
    return &c->s;
}
void *rt_cuda_conv_workspace_of(const rt_cuda_conv *c, size_t *bytes) {
    *bytes = workspace_bytes - c->dw_scratch;
    return workspace;
}
/* The whole shared workspace, for the graphs that are not a conv's (attention_sdpa.cu), and
 * what those need of it: agreeing on rank 0's conv algorithms never shrinks it below that. */
static size_t graphs_need;
void *rt_cuda_shared_workspace(size_t *bytes) {
    *bytes = workspace_bytes;
    return workspace;
}
void rt_cuda_workspace_need(size_t bytes) {
    if (bytes > graphs_need) graphs_need = bytes;
}
size_t rt_cuda_conv_add_workspace(rt_cuda_conv *c, size_t bytes) {
    if (bytes > c->fused_bytes) c->fused_bytes = bytes;
    return selected_bytes(c);
}

size_t rt_cuda_conv_workspace_bound(size_t cap) {
    size_t scratch = 0;
    for (int i = 0; i < n_convs; i++)
        if (all_convs[i]->dw_scratch > scratch) scratch = all_convs[i]->dw_scratch;
    return n_convs ? (cap & ~(size_t)255) + scratch : 0;
}

/* The search times every algorithm on the buffers it is given and leaves arbitrary values
 * in its outputs (y, dx, dw) and in the workspace; x, w and dy are only read. The caller
 * hands it buffers whose contents are recomputed before use (see rt_cuda.h), so nothing
 * the run keeps is overwritten; the 16-bit weight gradient goes where backward puts it, at
 * the workspace's top, above the cap given to cuDNN. cuDNN allocates nothing of its own
 * here: every byte was counted by the start-up memory check. Without dout (an evaluation
 * schedule's conv, which has no gradients) only the forward algorithm is searched. */
size_t rt_cuda_conv_select(rt_cuda_conv *c, size_t cap, void *out, const void *in, const void *weight,
                           const void *dout, void *din, float *dweight) {
    int forward_only = dout == NULL, no_din = din == NULL;
    if (forward_only && (din || dweight))
        rt_die("conv2d: internal: a forward-only search (no output gradient) was given gradient buffers");
    c->no_din = no_din, c->forward_only = forward_only;
    if (c->depthwise) {   /* nothing to search; the backward's partial sums within the cap */
        c->dw_bytes = forward_only ? 0 : cuda_conv2d_depthwise_workspace(&c->s, c->nhwc, cap & ~(size_t)255,
                                                                         &c->dw_slices);
        c->selected = 1;
        return selected_bytes(c);
    }
    for (int i = 0; i < n_convs; i++) {
        const rt_cuda_conv *o = all_convs[i];
        if (o != c && o->selected && same_shape(o, c) && o->no_din <= no_din && o->forward_only <= forward_only) {
            c->fwd = o->fwd, c->bwd_data = o->bwd_data, c->bwd_filter = o->bwd_filter;
            c->fwd_math = o->fwd_math, c->bwd_data_math = o->bwd_data_math, c->bwd_filter_math = o->bwd_filter_math;
            c->selected = 1;
            return selected_bytes(c);
        }
    }
    cap &= ~(size_t)255;
    if (!workspace || cap + c->dw_scratch > workspace_bytes)
        rt_die("conv2d: internal: the algorithm search needs a workspace of %zu bytes set first (it has %zu)",
               cap + c->dw_scratch, workspace_bytes);
    void *dw = c->dw_scratch ? (void *)((char *)workspace + workspace_bytes - c->dw_scratch) : (void *)dweight;
    enum { MAXR = 16 };
    int got = 0;
    cudnnConvolutionFwdAlgoPerf_t fr[MAXR];
    CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(rt_cudnn(), c->x, in, c->w, weight, c->conv, c->y, out, MAXR,
                                                       &got, fr, workspace, cap));
    PICK(fr, got, cap, FWD, c->fwd, c->fwd_math);
    if (forward_only) {
        c->selected = 1;
        return selected_bytes(c);
    }
    if (!no_din) {
        cudnnConvolutionBwdDataAlgoPerf_t dr[MAXR];
        CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(rt_cudnn(), c->w, weight, c->y, dout, c->conv, c->x,
                                                                din, MAXR, &got, dr, workspace, cap));
        PICK(dr, got, cap, BWD_DATA, c->bwd_data, c->bwd_data_math);
    }
    cudnnConvolutionBwdFilterAlgoPerf_t wr[MAXR];
    CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(rt_cudnn(), c->x, in, c->y, dout, c->conv, c->w, dw,
                                                              MAXR, &got, wr, workspace, cap));
    PICK(wr, got, cap, BWD_FILTER, c->bwd_filter, c->bwd_filter_math);
    c->selected = 1;
    return selected_bytes(c);
}

size_t rt_cuda_conv_agree(rt_comm *comm) {
    enum { FIELDS = 6 };
    int *choice = (int *)rt_xcalloc((size_t)(n_convs ? n_convs : 1) * FIELDS, sizeof(int));
    for (int i = 0; i < n_convs; i++) {
        const rt_cuda_conv *c = all_convs[i];
        int *f = choice + FIELDS * i;
        f[0] = c->fwd, f[1] = c->bwd_data, f[2] = c->bwd_filter;
        f[3] = c->fwd_math, f[4] = c->bwd_data_math, f[5] = c->bwd_filter_math;
    }
    rt_comm_bcast(comm, choice, sizeof(int) * FIELDS * (size_t)n_convs, "rank 0's cuDNN algorithms");
    size_t work = 0;
    for (int i = 0; i < n_convs; i++) {
        rt_cuda_conv *c = all_convs[i];
        if (!c->selected) continue;
        const int *f = choice + FIELDS * i;
        c->fwd = (cudnnConvolutionFwdAlgo_t)f[0], c->bwd_data = (cudnnConvolutionBwdDataAlgo_t)f[1];
        c->bwd_filter = (cudnnConvolutionBwdFilterAlgo_t)f[2];
        c->fwd_math = (cudnnMathType_t)f[3], c->bwd_data_math = (cudnnMathType_t)f[4];
        c->bwd_filter_math = (cudnnMathType_t)f[5];
        size_t w = selected_bytes(c);
        if (w > work) work = w;
    }
    free(choice);
    return work > graphs_need ? work : graphs_need;
}

void rt_cuda_conv_set_workspace(void *work, size_t bytes) {
    workspace = work;
    workspace_bytes = bytes & ~(size_t)255;   /* the largest selected_bytes(): a multiple of 256 already */
}

void cuda_conv2d_forward(const rt_cuda_conv *c, void *out, const void *in, const void *weight) {
    const float one = 1.0f, zero = 0.0f;
    /* an algorithm nobody chose (cuDNN's 0) would run untimed, and differ from rank 0's */
    if (!c->selected) rt_die("conv2d: internal: a layer runs before its algorithm search (rt_cuda_conv_select)");
    if (c->depthwise) {
        cuda_conv2d_depthwise_forward(out, in, weight, NULL, &c->s, c->nhwc);
        return;
    }
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->fwd_math));
    CUDNN_CHECK(cudnnConvolutionForward(rt_cudnn(), &one, c->x, in, c->w, weight, c->conv, c->fwd, workspace,
                                        workspace_bytes - c->dw_scratch, &zero, c->y, out));
}

/* The bias's rows as bias.cu takes them: NCHW planes, or channels-last rows of channels. */
static void bias_rows(const rt_cuda_conv *c, int *n, long *hw) {
    long ohw = (long)c->s.oh * c->s.ow;
    if (c->nhwc) *n = (int)(c->s.n * ohw), *hw = 1;
    else *n = c->s.n, *hw = ohw;
}

void cuda_conv2d_forward_bias(const rt_cuda_conv *c, void *out, const void *in, const void *weight,
                              const float *bias) {
    if (!c->selected) rt_die("conv2d: internal: a layer runs before its algorithm search (rt_cuda_conv_select)");
    if (c->depthwise) {   /* added before the store rounds: no pass of its own */
        cuda_conv2d_depthwise_forward(out, in, weight, bias, &c->s, c->nhwc);
        return;
    }
    int n;
    long hw;
    cuda_conv2d_forward(c, out, in, weight);   /* cuDNN (TRAINC_CUDA_DEPTHWISE=cudnn): then a bias pass */
    bias_rows(c, &n, &hw);
    cuda_bias_forward(out, out, bias, n, c->s.oc, hw);
}

/* For conv_bn_wgrad.cu's fused weight gradient (a graph that writes the 16-bit KRSC gradient
 * where cudnnConvolutionBackwardFilter would): that buffer at the workspace's top (NULL where
 * the layer has none), its conversion into the FP32 KCRS gradient, and the data gradient
 * alone, as cuda_conv2d_backward runs them. */
void *rt_cuda_conv_dw_scratch(const rt_cuda_conv *c) {
    return c->dw_scratch ? (void *)((char *)workspace + workspace_bytes - c->dw_scratch) : NULL;
}
void cuda_conv2d_dweight_from_krsc(const rt_cuda_conv *c, float *dweight, const void *dw) {
    long nw = weight_elems(&c->s);
    RT_ACT_DISPATCH(krsc_to_kcrs_kernel<T><<<rt_blocks(nw), RT_THREADS, 0, rt_stream()>>>(
        dweight, (const T *)dw, nw, c->s.c / c->s.groups, c->s.kh * c->s.kw));
    CUDA_LAUNCHED();
}
static void backward_data(const rt_cuda_conv *c, void *din, const void *dout, const void *weight);
void cuda_conv2d_backward_data(const rt_cuda_conv *c, void *din, const void *dout, const void *weight) {
    if (c->forward_only || c->depthwise || !c->nhwc) rt_die("conv2d: internal: a data gradient alone of a layer without one");
    backward_data(c, din, dout, weight);
}

void cuda_conv2d_backward(const rt_cuda_conv *c, void *din, float *dweight, const void *dout, const void *in,
                          const void *weight) {
    cuda_conv2d_backward_bias(c, din, dweight, NULL, dout, in, weight);
}

void cuda_conv2d_backward_bias(const rt_cuda_conv *c, void *din, float *dweight, float *dbias, const void *dout,
                               const void *in, const void *weight) {
    const float one = 1.0f, zero = 0.0f;
    if (c->forward_only) rt_die("conv2d: backward of a layer selected for its forward only");
    if (c->depthwise) {
        if (din && c->no_din) rt_die("conv2d: backward asked for din of a layer selected without it");
        if (c->dw_bytes > workspace_bytes)
            rt_die("conv2d: internal: a depthwise backward needs %zu bytes of workspace, %zu are set", c->dw_bytes,
                   workspace_bytes);
        cuda_conv2d_depthwise_backward(din, dweight, dbias, dout, in, weight, &c->s, c->nhwc, (float *)workspace,
                                       c->dw_slices);
        return;
    }
    if (dbias) {
        int n;
        long hw;
        bias_rows(c, &n, &hw);
        cuda_bias_backward(dbias, NULL, dout, NULL, n, c->s.oc, hw);
    }
    size_t ws = workspace_bytes - c->dw_scratch;
    void *dw = c->dw_scratch ? (void *)((char *)workspace + ws) : (void *)dweight;
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->bwd_filter_math));
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(rt_cudnn(), &one, c->x, in, c->y, dout, c->conv, c->bwd_filter,
                                               workspace, ws, &zero, c->w, dw));
    long nw = weight_elems(&c->s);
    if (c->nhwc) cuda_conv2d_dweight_from_krsc(c, dweight, dw);
    else if (c->dw_scratch) rt_cuda_from_act(dweight, dw, nw);
    if (din) backward_data(c, din, dout, weight);
}

static void backward_data(const rt_cuda_conv *c, void *din, const void *dout, const void *weight) {
    const float one = 1.0f, zero = 0.0f;
    size_t ws = workspace_bytes - c->dw_scratch;
    if (c->no_din) rt_die("conv2d: backward asked for din of a layer selected without it");
    /* din_add: din already holds another consumer's gradient; cuDNN adds to it (beta = 1),
     * which saves a scratch tensor and an accumulate kernel's pass over both. */
    CUDNN_CHECK(cudnnSetConvolutionMathType(c->conv, c->bwd_data_math));
    CUDNN_CHECK(cudnnConvolutionBackwardData(rt_cudnn(), &one, c->w, weight, c->y, dout, c->conv, c->bwd_data,
                                             workspace, ws, c->s.din_add ? &one : &zero, c->x, din));
}
