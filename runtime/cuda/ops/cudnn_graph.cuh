/* The cuDNN graph (backend) API steps that conv_bn_fprop.cu and attention_sdpa.cu share: the
 * first refusing step remembered (G), a tensor descriptor, and an operation graph with its
 * plan: the first engine configuration the heuristics offer (mode A, then the fallback list)
 * that finalizes within the workspace cap. */
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

/* The operation graph of ops[0..n_ops) into *graph (NULL after a refused step), then its plan
 * (NULL if none): the first configuration that finalizes within cap bytes of workspace, its
 * workspace in *ws, and the 8 configurations and the heuristics it came from appended to
 * keep[*n_keep] (the plan may not outlive them). Without a plan and without a refused step,
 * why says why: a plan over the cap (what and cap_hint name them), or none finalized. */
cudnnBackendDescriptor_t graph_plan(graph_err *e, cudnnBackendDescriptor_t *graph, const cudnnBackendDescriptor_t *ops,
                                    int64_t n_ops, size_t cap, size_t *ws, cudnnBackendDescriptor_t *keep, int *n_keep,
                                    char *why, size_t why_cap, const char *what, const char *cap_hint);
#endif
