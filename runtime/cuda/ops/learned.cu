/* A learned tensor on the device (learned.c): copied to every image; its gradient the sum
 * over the images, one value a thread in a fixed order. */
#include "../cuda_common.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
learned_forward_kernel(T *out, const float *w, long total, long count) {
    GRID_STRIDE(e, total) out[e] = rt_st<T>(w[e % count]);
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
learned_backward_kernel(float *dw, const T *dout, int n, long count) {
    GRID_STRIDE(k, count) {
        double s = 0;
        for (int i = 0; i < n; i++) s += rt_ld(dout[(long)i * count + k]);
        dw[k] = (float)s;
    }
}

void cuda_learned_forward(void *out, const float *w, int n, long count) {
    long total = (long)n * count;
    RT_ACT_DISPATCH(learned_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, w, total, count));
    CUDA_LAUNCHED();
}

void cuda_learned_backward(float *dw, const void *dout, int n, long count) {
    RT_ACT_DISPATCH(learned_backward_kernel<T><<<rt_blocks(count), RT_THREADS, 0, rt_stream()>>>(dw, (const T *)dout, n, count));
    CUDA_LAUNCHED();
}
