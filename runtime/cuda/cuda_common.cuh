/* Shared by the CUDA runtime's .cu files: error checks that carry file and line, launch
 * geometry, block reductions in a fixed order, and the device twin of rt_hash_uniform. */
#ifndef RT_CUDA_COMMON_CUH
#define RT_CUDA_COMMON_CUH
#include <cuda_runtime.h>
#include <stdint.h>
#include "rt_core.h"
#include "rt_cuda.h"

#define CUDA_CHECK(call) rt_cuda_check_((call), #call, __FILE__, __LINE__)
void rt_cuda_check_(cudaError_t err, const char *what, const char *file, int line);
/* After a launch: reports a bad configuration at once (kernel faults surface at the next
 * synchronizing call, which also checks). */
#define CUDA_LAUNCHED() rt_cuda_check_(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

static inline cudaStream_t rt_stream(void) { return (cudaStream_t)rt_cuda_stream(); }

#define RT_THREADS 256
/* Grid for one thread per element, capped: kernels stride over the rest (grid-stride loop). */
static inline unsigned rt_blocks(long n) {
    long b = (n + RT_THREADS - 1) / RT_THREADS;
    if (b > 65535L * 8) b = 65535L * 8;
    return (unsigned)(b > 0 ? b : 1);
}
#define GRID_STRIDE(i, n) \
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < (n); i += (long)gridDim.x * blockDim.x)

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
