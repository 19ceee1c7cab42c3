/* A tensor times a per-channel gate (squeeze-and-excitation), or elementwise times a tensor
 * of its shape (hw = 1), on the device: the CPU op's definition (channel_mul.c), in NCHW or,
 * for a gate, channels-last. The gate's gradient sums each plane over one block (block_sum,
 * a fixed tree: results repeat). */
#include "../cuda_common.cuh"

/* Index of the gate value of element i: the image and channel of i in either layout. */
__device__ static inline long gate_index(long i, int c, long hw, int nhwc) {
    return nhwc ? i / (hw * c) * c + i % c : i / hw;
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_mul_kernel(T *out, const T *x, const T *g, long total, int c, long hw, int nhwc) {
    GRID_STRIDE(i, total) out[i] = rt_st<T>(rt_ld(x[i]) * rt_ld(g[gate_index(i, c, hw, nhwc)]));
}

/* dg[q] = sum over the plane q (image, channel) of dout * x: one block per plane. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_mul_dgate_kernel(T *dg, const T *dout, const T *x, int c, long hw, int nhwc) {
    long q = blockIdx.x, img = q / c, ch = q % c;
    double s = 0;
    for (long p = threadIdx.x; p < hw; p += blockDim.x) {
        long i = nhwc ? (img * hw + p) * c + ch : q * hw + p;
        s += (double)rt_ld(dout[i]) * rt_ld(x[i]);
    }
    s = block_sum(s);
    if (threadIdx.x == 0) dg[q] = rt_st<T>((float)s);
}

/* The elementwise case: both gradients in one pass. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_mul_elementwise_backward_kernel(T *dx, T *dg, const T *dout, const T *x, const T *g, long total) {
    GRID_STRIDE(i, total) {
        float d = rt_ld(dout[i]);
        if (dg) dg[i] = rt_st<T>(d * rt_ld(x[i]));
        if (dx) dx[i] = rt_st<T>(d * rt_ld(g[i]));
    }
}

void cuda_channel_mul_forward(void *out, const void *x, const void *g, int n, int c, long hw, int nhwc) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(channel_mul_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)x, (const T *)g, total, c, hw, nhwc));
    CUDA_LAUNCHED();
}

/* dg before dx: dx may be dout itself. */
void cuda_channel_mul_backward(void *dx, void *dg, const void *dout, const void *x, const void *g, int n, int c,
                               long hw, int nhwc) {
    long total = (long)n * c * hw;
    if (hw == 1) {
        RT_ACT_DISPATCH(channel_mul_elementwise_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)dx, (T *)dg, (const T *)dout, (const T *)x, (const T *)g, total));
        CUDA_LAUNCHED();
        return;
    }
    if (dg) {
        RT_ACT_DISPATCH(channel_mul_dgate_kernel<T><<<(unsigned)((long)n * c), RT_THREADS, 0, rt_stream()>>>(
            (T *)dg, (const T *)dout, (const T *)x, c, hw, nhwc));
        CUDA_LAUNCHED();
    }
    if (dx) cuda_channel_mul_forward(dx, dout, g, n, c, hw, nhwc);
}
