/* Layer scale (ConvNeXt): out = in·gamma[c]; backward reduces dgamma per channel in a fixed
 * order before writing din, so din may alias dout. */
#include "../cuda_common.cuh"

__global__ void layer_scale_kernel(float *out, const float *in, const float *gamma, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = in[i] * gamma[(i / hw) % c];
}

__global__ void layer_scale_dgamma_kernel(float *dgamma, const float *dout, const float *in, int n, int c, long hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double acc = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        acc += dout[i] * in[i];
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dgamma[ch] = (float)acc;
}

void cuda_layer_scale_forward(float *out, const float *in, const float *gamma, int n, int c, int hw) {
    long total = (long)n * c * hw;
    layer_scale_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(out, in, gamma, c, hw, total);
    CUDA_LAUNCHED();
}

void cuda_layer_scale_backward(float *din, float *dgamma, const float *dout, const float *in, const float *gamma,
                               int n, int c, int hw) {
    layer_scale_dgamma_kernel<<<c, 512, 0, rt_stream()>>>(dgamma, dout, in, n, c, hw);
    CUDA_LAUNCHED();
    if (din) cuda_layer_scale_forward(din, dout, gamma, n, c, hw);
}
