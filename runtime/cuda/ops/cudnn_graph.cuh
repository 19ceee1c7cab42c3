/* The cuDNN graph (backend) API steps that the fused graphs (conv_bn_fprop.cu, conv_bn_wgrad.cu,
 * conv_bn_dgrad.cu, bn_finalize_graph.cu) and attention_sdpa.cu share: the first refusing step
 * remembered (G), a tensor descriptor, a pointwise operation, a convolution descriptor, an
 * operation graph with its plan (the first engine configuration the heuristics offer, mode A
 * then the fallback list, that finalizes within the workspace cap), the warning of a refused
 * graph, once per reason, and a plan run on its tensors. */
#ifndef RT_CUDA_CUDNN_GRAPH_CUH
#define RT_CUDA_CUDNN_GRAPH_CUH
#include <stddef.h>
#include "../cuda_libs.cuh"

typedef struct {
    cudnnStatus_t st;
    const char *step;   /* the first step cuDNN refused, or NULL */
} graph_err;

/* Runs call and keeps the first refusal (status and step) in *e, the caller's graph_err. */
#define G(step_, call)                                                              \
    do {                                                                            \
        cudnnStatus_t st_ = (call);                                                 \
        if (st_ != CUDNN_STATUS_SUCCESS && !e->step) e->st = st_, e->step = (step_); \
    } while (0)

/* A finalized 4-d tensor descriptor (16-byte aligned); is_virtual: an intermediate never in
 * memory; by_value: a scalar handed over in the variant pack's host memory. */
cudnnBackendDescriptor_t graph_tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                      const int64_t strides[4], bool is_virtual, bool by_value);
void graph_destroy_all(cudnnBackendDescriptor_t *d, int n);

/* After graph_plan: with a plan, the graph's n descriptors d join keep[*n_keep] (the plan may
 * not outlive them); without, they are destroyed and a step cuDNN refused is named in why. */
void graph_keep_or_explain(const graph_err *e, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t *d, int n,
                           cudnnBackendDescriptor_t *keep, int *n_keep, char *why, size_t why_cap);

/* conv2d.cu's hook: the shape of a conv's descriptors (nhwc, depthwise: its layout and kind). */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise);

/* One pointwise operation in FP32 math: y = mode(x, b) (b NULL: a unary mode) into *pw (the
 * mode) and *op (the operation). RELU_BWD takes the gradient as x, the forward's value as b
 * and writes its gradient to y (the frontend's DY, X, DX ports). */
void graph_pointwise(graph_err *e, cudnnBackendDescriptor_t *pw, cudnnBackendDescriptor_t *op, cudnnPointwiseMode_t mode,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y);
/* A 2-d cross-correlation with FP32 accumulation at the shape's paddings, strides and dilations. */
void graph_conv(graph_err *e, cudnnBackendDescriptor_t *conv, const rt_conv_shape *s);
/* Warns that `what` runs unfused for conv's shape and why, once per distinct reason and what
 * in the process (a net's convs of one shape refuse alike). */
void graph_warn_once(const char *what, const rt_cuda_conv *conv, const char *why);
/* True the first time this (what, why) pair is asked about in the process (graph_warn_once's
 * and attention's memory of what they have said). */
bool graph_first_time(const char *what, const char *why);

/* The operation graph of ops[0..n_ops) into *graph (NULL after a refused step), then its plan
 * (NULL if none): the first configuration that finalizes within cap bytes of workspace, its
 * workspace in *ws, and the 8 configurations and the heuristics it came from appended to
 * keep[*n_keep] (the plan may not outlive them). Without a plan and without a refused step,
 * why says why: a plan over the cap (what and cap_hint name them), or none finalized. */
cudnnBackendDescriptor_t graph_plan(graph_err *e, cudnnBackendDescriptor_t *graph, const cudnnBackendDescriptor_t *ops,
                                    int64_t n_ops, size_t cap, size_t *ws, cudnnBackendDescriptor_t *keep, int *n_keep,
                                    char *why, size_t why_cap, const char *what, const char *cap_hint);

/* Runs a finalized plan once on the stream of rt_cudnn(): graph tensor uids[i] at ptrs[i]
 * (a by-value scalar's host address), with the plan's workspace. */
void graph_execute(cudnnBackendDescriptor_t plan, int64_t n, const int64_t *uids, void *const *ptrs, void *workspace);
#endif
