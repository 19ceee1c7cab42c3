/* Space-to-depth on the device (space_to_depth.c: torchvision's Swin PatchMerging order), one
 * thread per output element; the backward is the inverse permutation, one thread per input. */
#include "../cuda_common.cuh"

/* The input index of output element e of [n, b*b*c, h/b, w/b]. */
__device__ static long source_of(long e, int c, int h, int w, int b) {
    int oh = h / b, ow = w / b, x = (int)(e % ow), y = (int)(e / ow % oh);
    long q = e / ((long)ow * oh);
    int ch = (int)(q % c), k = (int)(q / c % (b * b));
    long i = q / ((long)c * b * b);
    return ((i * c + ch) * h + b * y + k % b) * w + b * x + k / b;
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
space_to_depth_forward_kernel(T *out, const T *in, long total, int c, int h, int w, int b) {
    GRID_STRIDE(e, total) out[e] = in[source_of(e, c, h, w, b)];
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
space_to_depth_backward_kernel(T *din, const T *dout, long total, int c, int h, int w, int b) {
    GRID_STRIDE(e, total) din[source_of(e, c, h, w, b)] = dout[e];   /* a permutation: every din once */
}

void cuda_space_to_depth_forward(void *out, const void *in, int n, int c, int h, int w, int block) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(space_to_depth_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, total, c, h, w, block));
    CUDA_LAUNCHED();
}

void cuda_space_to_depth_backward(void *din, const void *dout, int n, int c, int h, int w, int block) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(space_to_depth_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, total, c, h, w, block));
    CUDA_LAUNCHED();
}
