/* Inverted dropout with the CPU's stateless mask (element i kept iff
 * rt_hash_uniform(seed, first + i) >= p, first the index of this rank's element 0 in the
 * global batch), so GPU and CPU, and any world size, drop the same elements. The seed is
 * derived on the device from the step's seed (rt_cuda.h). */
#include "../cuda_common.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
dropout_kernel(T *y, const T *x, long n, float p, float scale, const uint64_t *step_seed,
               uint64_t salt, long first) {
    uint64_t seed = rt_hash_u64(*step_seed, salt, 0);
    GRID_STRIDE(i, n)
        y[i] = rt_st<T>(rt_hash_uniform(seed, (uint64_t)(first + i)) >= (double)p ? rt_ld(x[i]) * scale : 0.0f);
}

static void apply_mask(void *y, const void *x, long n, float p, const uint64_t *step_seed, uint64_t salt, long first,
                       int train) {
    if (!train || p <= 0) {
        if (y != x) rt_cuda_copy_d2d(y, x, (size_t)n * rt_cuda_act_bytes());
        return;
    }
    float scale = p < 1 ? 1 / (1 - p) : 0;
    RT_ACT_DISPATCH(dropout_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)y, (const T *)x, n, p, scale,
                                                                                   step_seed, salt, first));
    CUDA_LAUNCHED();
}

void cuda_dropout_forward(void *out, const void *in, long n, float p, const uint64_t *step_seed, uint64_t salt,
                          long first, int train) {
    apply_mask(out, in, n, p, step_seed, salt, first, train);
}

void cuda_dropout_backward(void *din, const void *dout, long n, float p, const uint64_t *step_seed, uint64_t salt,
                           long first, int train) {
    apply_mask(din, dout, n, p, step_seed, salt, first, train);
}
