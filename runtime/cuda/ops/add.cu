/* Residual add, and dst += src (a gradient with several consumers). */
#include "../cuda_common.cuh"

__global__ void add_kernel(float *out, const float *a, const float *b, long n) {
    GRID_STRIDE(i, n) out[i] = a[i] + b[i];
}

void cuda_add_forward(float *out, const float *a, const float *b, long n) {
    add_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(out, a, b, n);
    CUDA_LAUNCHED();
}

void cuda_tensor_accumulate(float *dst, const float *src, long n) {
    add_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(dst, dst, src, n);
    CUDA_LAUNCHED();
}
