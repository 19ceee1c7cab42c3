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

#endif
