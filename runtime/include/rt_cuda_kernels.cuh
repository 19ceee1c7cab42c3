/* Device-side helpers shared by libtrainrt_cuda and the fused kernels trainc generates per
 * net (kernels.cu): launch geometry, activation element types (FP32 / BF16 / FP16 storage,
 * FP32 arithmetic in registers); the mask hashes come from rt_hash.h, shared with the CPU.
 * CUDA C++. */
#ifndef RT_CUDA_KERNELS_CUH
#define RT_CUDA_KERNELS_CUH
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include "rt_cuda.h"
#include "rt_hash.h"   /* rt_hash_uniform, rt_hash_u64: the CPU masks, on the device */

/* Block sizes, also every kernel's __launch_bounds__ (tests/cuda/launch_bounds_test.sh):
 * RT_THREADS for element-wise grids, RT_CHANNEL_THREADS for one block per channel reductions. */
#define RT_THREADS 256
#define RT_CHANNEL_THREADS 512
/* Grid for one thread per element, capped: kernels stride over the rest (grid-stride loop). */
static inline unsigned rt_blocks(long n) {
    long b = (n + RT_THREADS - 1) / RT_THREADS;
    if (b > 65535L * 8) b = 65535L * 8;
    return (unsigned)(b > 0 ? b : 1);
}
#define GRID_STRIDE(i, n) \
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

static inline cudaStream_t rt_stream(void) { return (cudaStream_t)rt_cuda_stream(); }

/* Activation storage -> FP32 (rt_ld) and FP32 -> storage, rounding to nearest (rt_st<T>). */
__device__ __forceinline__ float rt_ld(float v) { return v; }
__device__ __forceinline__ float rt_ld(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float rt_ld(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T rt_st(float v);
template <> __device__ __forceinline__ float rt_st<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 rt_st<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __device__ __forceinline__ __half rt_st<__half>(float v) { return __float2half(v); }

/* Four consecutive elements at index 4q as one 16-byte (FP32) or 8-byte (16-bit) access;
 * the caller guarantees the alignment (arena offsets are 64-byte aligned). */
template <typename T> __device__ __forceinline__ void rt_load4(const T *p, long q, float a[4]) {
    if constexpr (sizeof(T) == 4) {
        const float4 v = reinterpret_cast<const float4 *>(p)[q];
        a[0] = v.x, a[1] = v.y, a[2] = v.z, a[3] = v.w;
    } else {
        const uint2 u = reinterpret_cast<const uint2 *>(p)[q];
        const T *h = reinterpret_cast<const T *>(&u);
        for (int j = 0; j < 4; j++) a[j] = rt_ld(h[j]);
    }
}
template <typename T> __device__ __forceinline__ void rt_store4(T *p, long q, const float a[4]) {
    if constexpr (sizeof(T) == 4) {
        reinterpret_cast<float4 *>(p)[q] = make_float4(a[0], a[1], a[2], a[3]);
    } else {
        uint2 u;
        T *h = reinterpret_cast<T *>(&u);
        for (int j = 0; j < 4; j++) h[j] = rt_st<T>(a[j]);
        reinterpret_cast<uint2 *>(p)[q] = u;
    }
}

#endif
