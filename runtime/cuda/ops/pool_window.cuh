/* The output windows of a pooling layer that contain one input position: the gather form of
 * the pooling backward passes (no atomics, same summation order as the CPU's scatter). */
#ifndef RT_CUDA_POOL_WINDOW_CUH
#define RT_CUDA_POOL_WINDOW_CUH

/* Outputs o in [lo, hi] along one axis whose window [o*s - p, o*s - p + k - 1] holds i. */
__device__ static inline void pool_window_range(int i, int k, int s, int p, int out, int *lo, int *hi) {
    int a = i + p - k + 1;
    *lo = a <= 0 ? 0 : (a + s - 1) / s;
    *hi = (i + p) / s;
    if (*hi > out - 1) *hi = out - 1;
}
#endif
