/* Device-side helpers shared by libtrainrt_cuda and the fused kernels trainc generates per
 * net (kernels.cu): launch geometry and the bit-exact twin of rt_hash_uniform. CUDA C++. */
#ifndef RT_CUDA_KERNELS_CUH
#define RT_CUDA_KERNELS_CUH
#include <cuda_runtime.h>
#include <stdint.h>
#include "rt_cuda.h"

#define RT_THREADS 256
/* Grid for one thread per element, capped: kernels stride over the rest (grid-stride loop). */
static inline unsigned rt_blocks(long n) {
    long b = (n + RT_THREADS - 1) / RT_THREADS;
    if (b > 65535L * 8) b = 65535L * 8;
    return (unsigned)(b > 0 ? b : 1);
}
#define GRID_STRIDE(i, n) \
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

static inline cudaStream_t rt_stream(void) { return (cudaStream_t)rt_cuda_stream(); }

/* Bit-exact twin of rt_hash_uniform (rt_ops.h): dropout masks equal the CPU's. */
__device__ static inline double hash_uniform(uint64_t seed, uint64_t index) {
    uint64_t z = seed ^ (index * 0xD1B54A32D192ED03ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

#endif
