/* Layer scale (ConvNeXt): out = in·gamma[c]; backward reduces dgamma per channel in a fixed
 * order before writing din, so din may alias dout. Channels-last rows (hw = 1) reduce in
 * channel tiles, a warp reading neighbouring channels (channel_tiles.cuh). */
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
layer_scale_kernel(T *out, const T *in, const float *gamma, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = rt_st<T>(rt_ld(in[i]) * gamma[(i / hw) % c]);
}

template <typename T>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
layer_scale_dgamma_kernel(float *dgamma, const T *dout, const T *in, int n, int c, long hw) {
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

/* hw = 1: this block's rows of 32 neighbouring channels, sum dout·in into part's second slot. */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
layer_scale_rows_partial_kernel(double *part, const T *dout, const T *in, long rows, long per, int c) {
    double acc = 0;
    nhwc_for_each(rows, per, c, [&](long i) { acc += rt_ld(dout[i]) * rt_ld(in[i]); });
    nhwc_tile_sums(0.0, acc, part, c);
}

void cuda_layer_scale_forward(void *out, const void *in, const float *gamma, int n, int c, int hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(layer_scale_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                           gamma, c, hw, total));
    CUDA_LAUNCHED();
}

void cuda_layer_scale_backward(void *din, float *dgamma, const void *dout, const void *in, const float *gamma, int n,
                               int c, int hw) {
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(layer_scale_rows_partial_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (const T *)dout, (const T *)in, n, sp.per, c));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(dgamma, NULL, part, sp.splits, c, &m, 0);
    } else {
        RT_ACT_DISPATCH(layer_scale_dgamma_kernel<T><<<c, RT_CHANNEL_THREADS, 0, rt_stream()>>>(
            dgamma, (const T *)dout, (const T *)in, n, c, hw));
        CUDA_LAUNCHED();
    }
    if (din) cuda_layer_scale_forward(din, dout, gamma, n, c, hw);
}
