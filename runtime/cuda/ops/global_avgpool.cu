/* Global average pooling [N,C,H,W] -> [N,C]: one warp per plane, and its backward broadcast;
 * channels-last [N,H,W,C] -> [N,C]: one thread per (n, c), neighbours reading neighbours. */
#include "../cuda_common.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gap_forward_kernel(T *out, const T *in, long planes, int hw) {
    long warps = (long)gridDim.x * blockDim.x / 32;
    int lane = threadIdx.x & 31;
    /* Whole warps take whole planes, so the shuffle below always has all 32 lanes. */
    for (long pl = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; pl < planes; pl += warps) {
        const T *x = in + pl * hw;
        float acc = 0.0f;
        for (int i = lane; i < hw; i += 32) acc += rt_ld(x[i]);
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) out[pl] = rt_st<T>(acc / hw);
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gap_backward_kernel(T *din, const T *dout, long total, int hw) {
    GRID_STRIDE(i, total) din[i] = rt_st<T>(rt_ld(dout[i / hw]) / hw);
}

void cuda_global_avgpool_forward(void *out, const void *in, int n, int c, int hw) {
    long planes = (long)n * c;
    RT_ACT_DISPATCH(gap_forward_kernel<T><<<rt_blocks(planes * 32), RT_THREADS, 0, rt_stream()>>>((T *)out,
                                                                                                 (const T *)in, planes, hw));
    CUDA_LAUNCHED();
}

void cuda_global_avgpool_backward(void *din, const void *dout, int n, int c, int hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(gap_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)din, (const T *)dout,
                                                                                            total, hw));
    CUDA_LAUNCHED();
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gap_forward_nhwc_kernel(T *out, const T *in, long nc, int c, int hw) {
    GRID_STRIDE(o, nc) {
        const T *x = in + o / c * hw * c + o % c;
        float acc = 0.0f;
        for (int p = 0; p < hw; p++) acc += rt_ld(x[(long)p * c]);
        out[o] = rt_st<T>(acc / hw);
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gap_backward_nhwc_kernel(T *din, const T *dout, long total, int c, int hw) {
    GRID_STRIDE(i, total) din[i] = rt_st<T>(rt_ld(dout[i / ((long)hw * c) * c + i % c]) / hw);
}

void cuda_global_avgpool_forward_nhwc(void *out, const void *in, int n, int c, int hw) {
    long nc = (long)n * c;
    RT_ACT_DISPATCH(gap_forward_nhwc_kernel<T><<<rt_blocks(nc), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                             nc, c, hw));
    CUDA_LAUNCHED();
}

void cuda_global_avgpool_backward_nhwc(void *din, const void *dout, int n, int c, int hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(gap_backward_nhwc_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, total, c, hw));
    CUDA_LAUNCHED();
}
