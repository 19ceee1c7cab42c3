/* ShuffleNet's channel shuffle on the device (channel_shuffle.c's permutation), one thread
 * per element; the gradient takes the inverse permutation. Channels-last the caller passes
 * N*H*W rows of C channels at one position. */
#include "../cuda_common.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
channel_shuffle_kernel(T *dst, const T *src, long total, int c, long hw, int groups, int inverse) {
    GRID_STRIDE(i, total) {
        long img = i / (c * hw), p = i % hw;
        int j = (int)(i / hw % c), from = j % groups * (c / groups) + j / groups;
        long other = (img * c + from) * hw + p;
        if (inverse) dst[other] = src[i];
        else dst[i] = src[other];
    }
}

void cuda_channel_shuffle_forward(void *out, const void *in, long n, int c, long hw, int groups) {
    long total = n * c * hw;
    RT_ACT_DISPATCH(channel_shuffle_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, total, c, hw, groups, 0));
    CUDA_LAUNCHED();
}

void cuda_channel_shuffle_backward(void *din, const void *dout, long n, int c, long hw, int groups) {
    long total = n * c * hw;
    RT_ACT_DISPATCH(channel_shuffle_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, total, c, hw, groups, 1));
    CUDA_LAUNCHED();
}
