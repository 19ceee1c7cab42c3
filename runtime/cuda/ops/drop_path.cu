/* Stochastic depth: sample b of a residual branch kept iff rt_hash_uniform(seed,
 * first_sample + b) >= p (first_sample: this rank's sample 0 in the global batch), then
 * scaled by 1/(1-p); the same stateless mask as the CPU op. The seed is derived on the
 * device from the step's seed (rt_cuda.h), so a replayed CUDA graph draws a new mask. */
#include "../cuda_common.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
drop_path_kernel(T *y, const T *x, long per_sample, long total, float p, float keep_scale,
                 const uint64_t *step_seed, uint64_t salt, long first_sample, int train) {
    uint64_t seed = train ? rt_hash_u64(*step_seed, salt, 0) : 0;
    GRID_STRIDE(i, total) {
        long b = i / per_sample;
        int keep = !train || p <= 0 || rt_hash_uniform(seed, (uint64_t)(first_sample + b)) >= (double)p;
        y[i] = rt_st<T>(rt_ld(x[i]) * (keep ? keep_scale : 0.0f));
    }
}

static void apply_mask(void *y, const void *x, int n, long per_sample, float p, const uint64_t *step_seed,
                       uint64_t salt, long first_sample, int train) {
    float keep_scale = (!train || p <= 0) ? 1.0f : (p < 1 ? 1 / (1 - p) : 0.0f);
    long total = (long)n * per_sample;
    RT_ACT_DISPATCH(drop_path_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)y, (const T *)x, per_sample, total, p, keep_scale, step_seed, salt, first_sample, train));
    CUDA_LAUNCHED();
}

void cuda_drop_path_forward(void *out, const void *in, int n, long per_sample, float p, const uint64_t *step_seed,
                            uint64_t salt, long first_sample, int train) {
    apply_mask(out, in, n, per_sample, p, step_seed, salt, first_sample, train);
}

void cuda_drop_path_backward(void *din, const void *dout, int n, long per_sample, float p, const uint64_t *step_seed,
                             uint64_t salt, long first_sample, int train) {
    apply_mask(din, dout, n, per_sample, p, step_seed, salt, first_sample, train);
}
