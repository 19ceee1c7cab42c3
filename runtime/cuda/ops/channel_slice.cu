/* Channels [start, start+count) of a tensor on the device (channel_slice.c), one thread per
 * element; the gradient writes every input channel, zero outside the slice. Channels-last the
 * caller passes N*H*W rows of C channels at one position. */
#include "../cuda_common.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_slice_forward_kernel(T *out, const T *in, long total, int c, long hw, int start, int count) {
    GRID_STRIDE(i, total) {
        long img = i / (count * hw), p = i % hw;
        int j = (int)(i / hw % count);
        out[i] = in[(img * c + start + j) * hw + p];
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_slice_backward_kernel(T *din, const T *dout, long total, int c, long hw, int start, int count) {
    GRID_STRIDE(i, total) {
        long img = i / (c * hw), p = i % hw;
        int j = (int)(i / hw % c) - start;
        din[i] = j >= 0 && j < count ? dout[(img * count + j) * hw + p] : rt_st<T>(0.0f);
    }
}

void cuda_channel_slice_forward(void *out, const void *in, long n, int c, long hw, int start, int count) {
    long total = n * count * hw;
    RT_ACT_DISPATCH(channel_slice_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, total, c, hw, start, count));
    CUDA_LAUNCHED();
}

void cuda_channel_slice_backward(void *din, const void *dout, long n, int c, long hw, int start, int count) {
    long total = n * c * hw;
    RT_ACT_DISPATCH(channel_slice_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, total, c, hw, start, count));
    CUDA_LAUNCHED();
}
