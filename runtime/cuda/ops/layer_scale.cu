/* Layer scale (ConvNeXt): out = in·gamma[c]; backward reduces dgamma per channel in a fixed
 * order before writing din, so din may alias dout. */
#include "../cuda_common.cuh"

template <typename T>
__global__ void layer_scale_kernel(T *out, const T *in, const float *gamma, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = rt_st<T>(rt_ld(in[i]) * gamma[(i / hw) % c]);
}

template <typename T>
__global__ void layer_scale_dgamma_kernel(float *dgamma, const T *dout, const T *in, int n, int c, long hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double acc = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        acc += rt_ld(dout[i]) * rt_ld(in[i]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dgamma[ch] = (float)acc;
}

void cuda_layer_scale_forward(void *out, const void *in, const float *gamma, int n, int c, int hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(layer_scale_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                           gamma, c, hw, total));
    CUDA_LAUNCHED();
}

void cuda_layer_scale_backward(void *din, float *dgamma, const void *dout, const void *in, const float *gamma, int n,
                               int c, int hw) {
    RT_ACT_DISPATCH(layer_scale_dgamma_kernel<T><<<c, 512, 0, rt_stream()>>>(dgamma, (const T *)dout, (const T *)in, n,
                                                                            c, hw));
    CUDA_LAUNCHED();
    if (din) cuda_layer_scale_forward(din, dout, gamma, n, c, hw);
}
