/* The library handles of the CUDA context (cuDNN, cuBLASLt) and their error checks; only
 * the .cu files that call those libraries include this. */
#ifndef RT_CUDA_LIBS_CUH
#define RT_CUDA_LIBS_CUH
#include <cublasLt.h>
#include <cudnn.h>
#include "cuda_common.cuh"

#define CUDNN_CHECK(call) rt_cudnn_check_((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) rt_cublas_check_((call), #call, __FILE__, __LINE__)
void rt_cudnn_check_(cudnnStatus_t st, const char *what, const char *file, int line);
void rt_cublas_check_(cublasStatus_t st, const char *what, const char *file, int line);

cudnnHandle_t rt_cudnn(void);
cublasLtHandle_t rt_cublaslt(void);
/* cuBLASLt's workspace: a fixed device buffer owned by the context. */
void *rt_cublaslt_workspace(size_t *bytes);
/* The heuristics' first algorithm for D = op(A) op(B) (C laid out as D) within the context's
 * workspace, on operands aligned to `align` bytes (cuBLASLt assumes 256 unless told: a kernel
 * picked for that faults or refuses on less). A host-side query that launches no GPU work.
 * 0 if cuBLASLt offers none. */
int rt_cublaslt_algo(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                     cublasLtMatrixLayout_t d, uint32_t align, cublasLtMatmulAlgo_t *algo);

#endif
