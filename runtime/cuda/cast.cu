/* Conversions: the input batch's bytes normalized into the first layer's type, FP32 <->
 * activation type (the 16-bit weight copy, the logits back to FP32 for the host). */
#include "cuda_common.cuh"

template <typename D, typename S> __global__ void __launch_bounds__(RT_THREADS)
cast_kernel(D *dst, const S *src, long n) {
    GRID_STRIDE(i, n) dst[i] = rt_st<D>(rt_ld(src[i]));
}

void rt_cuda_to_act(void *dst, const float *src, long n) {
    RT_ACT_DISPATCH(cast_kernel<T, float><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)dst, src, n));
    CUDA_LAUNCHED();
}

void rt_cuda_from_act(float *dst, const void *src, long n) {
    RT_ACT_DISPATCH(cast_kernel<float, T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(dst, (const T *)src, n));
    CUDA_LAUNCHED();
}

/* lut: [channels][256] on the device, the loader's rt_normalize_lut, so a byte becomes the
 * float the CPU trainer sees (then rounded to the activation type). */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
normalize_kernel(T *dst, const uint8_t *src, const float *lut, long n,
                 int channels, long hw) {
    GRID_STRIDE(i, n) dst[i] = rt_st<T>(lut[(i / hw) % channels * 256 + src[i]]);
}

void rt_cuda_normalize_input(void *dst, const uint8_t *src, const float *lut, long n, int channels, long hw) {
    RT_ACT_DISPATCH(normalize_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)dst, src, lut, n,
                                                                                    channels, hw));
    CUDA_LAUNCHED();
}

/* Channels-last output: element (b, p, ch) at (b * hw + p) * channels + ch, read from the
 * loader's [b, channels, hw] bytes. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
normalize_nhwc_kernel(T *dst, const uint8_t *src, const float *lut, long n,
                      int channels, long hw) {
    GRID_STRIDE(i, n) {
        int ch = (int)(i % channels);
        long pos = i / channels, b = pos / hw;
        dst[i] = rt_st<T>(lut[ch * 256 + src[(b * channels + ch) * hw + pos % hw]]);
    }
}

void rt_cuda_normalize_input_nhwc(void *dst, const uint8_t *src, const float *lut, long n, int channels, long hw) {
    RT_ACT_DISPATCH(normalize_nhwc_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)dst, src, lut, n,
                                                                                         channels, hw));
    CUDA_LAUNCHED();
}
