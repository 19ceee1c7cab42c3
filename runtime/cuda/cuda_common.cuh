/* Shared by the CUDA runtime's .cu files: error checks that carry file and line and block
 * reductions in a fixed order, and the activation-type dispatch (launch geometry, element
 * conversions and the device hash: rt_cuda_kernels.cuh). */
#ifndef RT_CUDA_COMMON_CUH
#define RT_CUDA_COMMON_CUH
#include <cuda_runtime.h>
#include <stdint.h>
extern "C" {
#include "rt_core.h"
}
#include "rt_env.h"
#include "rt_cuda.h"
#include "rt_cuda_kernels.cuh"

#define CUDA_CHECK(call) rt_cuda_check_((call), #call, __FILE__, __LINE__)
void rt_cuda_check_(cudaError_t err, const char *what, const char *file, int line);
/* After a launch: reports a bad configuration at once (kernel faults surface at the next
 * synchronizing call, which also checks). */
#define CUDA_LAUNCHED() rt_cuda_launched(__FILE__, __LINE__)

/* A device scratch buffer that grows to the largest size asked for. It grows only outside a
 * graph capture (a graph's first, uncaptured run sizes it; growing inside one dies naming
 * `what`), and an outgrown buffer is never freed: a captured graph may still use it. */
typedef struct {
    void *p;
    size_t bytes;
} rt_cuda_scratch;
void *rt_cuda_scratch_get(rt_cuda_scratch *s, size_t bytes, const char *what);

/* 1 when the environment variable id (an ENUM new|old) is "old": the op then runs its previous
 * kernels (A/B timing on a GPU). Read once: *cached starts at -1 and keeps the answer. */
int rt_cuda_env_old(rt_env_id id, int *cached);

/* Runs the statements with T bound to the context's activation element type (rt_cuda.h):
 * every op is compiled for FP32, BF16 and FP16 and its launcher picks one at run time. */
#define RT_ACT_DISPATCH(...)                                                    \
    do {                                                                        \
        switch (rt_cuda_act_type()) {                                           \
        case RT_ACT_BF16: { typedef __nv_bfloat16 T; __VA_ARGS__; } break;     \
        case RT_ACT_F16: { typedef __half T; __VA_ARGS__; } break;             \
        default: { typedef float T; __VA_ARGS__; } break;                      \
        }                                                                       \
    } while (0)

/* Sum over the block, the same tree for a given blockDim (so results repeat); every thread
 * gets the total. blockDim.x must be a multiple of 32, at most 1024. */
__device__ static inline double block_sum(double v) {
    __shared__ double warp_part[32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    __syncthreads();   /* warp_part may still be read by a previous call */
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    double t = 0;
    for (int w = 0; w < nwarps; w++) t += warp_part[w];
    return t;
}

#endif
