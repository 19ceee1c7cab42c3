/* GELU, exact erf form (torch's default): x·Phi(x), and its derivative Phi(x) + x·phi(x). */
#include "../cuda_common.cuh"

#define INV_SQRT2 0.70710678118654752440f
#define INV_SQRT_2PI 0.39894228040143267794f

__global__ void gelu_forward_kernel(float *out, const float *in, long n) {
    GRID_STRIDE(i, n) {
        float x = in[i];
        out[i] = 0.5f * x * (1.0f + erff(x * INV_SQRT2));
    }
}

__global__ void gelu_backward_kernel(float *din, const float *dout, const float *in, long n) {
    GRID_STRIDE(i, n) {
        float x = in[i];
        float cdf = 0.5f * (1.0f + erff(x * INV_SQRT2));
        float pdf = INV_SQRT_2PI * expf(-0.5f * x * x);
        din[i] = dout[i] * (cdf + x * pdf);
    }
}

void cuda_gelu_forward(float *out, const float *in, long n) {
    gelu_forward_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(out, in, n);
    CUDA_LAUNCHED();
}

void cuda_gelu_backward(float *din, const float *dout, const float *in, long n) {
    gelu_backward_kernel<<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(din, dout, in, n);
    CUDA_LAUNCHED();
}
