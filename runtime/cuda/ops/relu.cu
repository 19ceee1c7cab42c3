/* ReLU; the backward reads the forward output (out > 0 iff in > 0), so it may run in place. */
#include "../cuda_common.cuh"

__global__ void relu_forward_kernel(float *out, const float *in, long n) {
    GRID_STRIDE(i, n) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

__global__ void relu_backward_kernel(float *din, const float *dout, const float *out, long n) {
    GRID_STRIDE(i, n) din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

void cuda_relu_forward(float *out, const float *in, long n) {
    relu_forward_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(out, in, n);
    CUDA_LAUNCHED();
}

void cuda_relu_backward(float *din, const float *dout, const float *out, long n) {
    relu_backward_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(din, dout, out, n);
    CUDA_LAUNCHED();
}
