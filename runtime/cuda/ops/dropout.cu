/* Inverted dropout with the CPU's stateless mask (element i kept iff
 * rt_hash_uniform(seed, i) >= p), so GPU and CPU drop the same elements. */
#include "../cuda_common.cuh"

__global__ void dropout_kernel(float *y, const float *x, long n, float p, float scale, uint64_t seed) {
    GRID_STRIDE(i, n) y[i] = hash_uniform(seed, (uint64_t)i) >= (double)p ? x[i] * scale : 0.0f;
}

static void apply_mask(float *y, const float *x, long n, float p, uint64_t seed, int train) {
    if (!train || p <= 0) {
        if (y != x) rt_cuda_copy_d2d(y, x, (size_t)n * sizeof(float));
        return;
    }
    float scale = p < 1 ? 1 / (1 - p) : 0;
    dropout_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(y, x, n, p, scale, seed);
    CUDA_LAUNCHED();
}

void cuda_dropout_forward(float *out, const float *in, long n, float p, uint64_t seed, int train) {
    apply_mask(out, in, n, p, seed, train);
}

void cuda_dropout_backward(float *din, const float *dout, long n, float p, uint64_t seed, int train) {
    apply_mask(din, dout, n, p, seed, train);
}
