/* Per-channel bias of conv and linear layers (linear: hw = 1): the forward add, and the
 * backward channel sums, optionally fused with the ReLU mask that follows the layer. */
#include "../cuda_common.cuh"

__global__ void bias_forward_kernel(float *out, const float *in, const float *bias, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = in[i] + bias[(i / hw) % c];
}

/* One block per channel; the sum's order depends only on the shape. */
__global__ void bias_backward_kernel(float *dbias, float *dmasked, const float *dout, const float *relu_out,
                                     int n, int c, long hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double acc = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        float g = dout[i];
        if (relu_out) {
            g = relu_out[i] > 0.0f ? g : 0.0f;
            dmasked[i] = g;
        }
        acc += g;
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[ch] = (float)acc;
}

void cuda_bias_forward(float *out, const float *in, const float *bias, int n, int c, long hw) {
    long total = (long)n * c * hw;
    bias_forward_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(out, in, bias, c, hw, total);
    CUDA_LAUNCHED();
}

void cuda_bias_backward(float *dbias, float *dmasked, const float *dout, const float *relu_out, int n, int c,
                        long hw) {
    bias_backward_kernel<<<c, 512, 0, rt_stream()>>>(dbias, dmasked, dout, relu_out, n, c, hw);
    CUDA_LAUNCHED();
}
