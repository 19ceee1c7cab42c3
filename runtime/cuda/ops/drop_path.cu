/* Stochastic depth: sample b of a residual branch kept iff rt_hash_uniform(seed, b) >= p,
 * then scaled by 1/(1-p); the same stateless mask as the CPU op. */
#include "../cuda_common.cuh"

__global__ void drop_path_kernel(float *y, const float *x, long per_sample, long total, float p,
                                 float keep_scale, uint64_t seed, int train) {
    GRID_STRIDE(i, total) {
        long b = i / per_sample;
        int keep = !train || p <= 0 || hash_uniform(seed, (uint64_t)b) >= (double)p;
        y[i] = x[i] * (keep ? keep_scale : 0.0f);
    }
}

static void apply_mask(float *y, const float *x, int n, long per_sample, float p, uint64_t seed, int train) {
    float keep_scale = (!train || p <= 0) ? 1.0f : (p < 1 ? 1 / (1 - p) : 0.0f);
    long total = (long)n * per_sample;
    drop_path_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(y, x, per_sample, total, p, keep_scale,
                                                                       seed, train);
    CUDA_LAUNCHED();
}

void cuda_drop_path_forward(float *out, const float *in, int n, long per_sample, float p, uint64_t seed,
                            int train) {
    apply_mask(out, in, n, per_sample, p, seed, train);
}

void cuda_drop_path_backward(float *din, const float *dout, int n, long per_sample, float p, uint64_t seed,
                             int train) {
    apply_mask(din, dout, n, per_sample, p, seed, train);
}
