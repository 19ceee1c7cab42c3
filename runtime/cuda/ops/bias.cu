/* Per-channel bias of conv and linear layers (linear: hw = 1): the forward add, and the
 * backward channel sums, optionally fused with the ReLU mask that follows the layer. */
#include "../cuda_common.cuh"

template <typename T>
__global__ void bias_forward_kernel(T *out, const T *in, const float *bias, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = rt_st<T>(rt_ld(in[i]) + bias[(i / hw) % c]);
}

/* One block per channel; the sum's order depends only on the shape. */
template <typename T>
__global__ void bias_backward_kernel(float *dbias, T *dmasked, const T *dout, const T *relu_out, int n, int c, long hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double acc = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        float g = rt_ld(dout[i]);
        if (relu_out) {
            g = rt_ld(relu_out[i]) > 0.0f ? g : 0.0f;
            dmasked[i] = rt_st<T>(g);
        }
        acc += g;
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[ch] = (float)acc;
}

void cuda_bias_forward(void *out, const void *in, const float *bias, int n, int c, long hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(bias_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                            bias, c, hw, total));
    CUDA_LAUNCHED();
}

void cuda_bias_backward(float *dbias, void *dmasked, const void *dout, const void *relu_out, int n, int c, long hw) {
    RT_ACT_DISPATCH(bias_backward_kernel<T><<<c, 512, 0, rt_stream()>>>(dbias, (T *)dmasked, (const T *)dout,
                                                                       (const T *)relu_out, n, c, hw));
    CUDA_LAUNCHED();
}
