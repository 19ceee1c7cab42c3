/* FP32 <-> activation type conversions: the input batch into the first layer's type, the
 * logits back to FP32 for the host, weight gradients widened to the FP32 gradient buffer. */
#include "cuda_common.cuh"

template <typename D, typename S> __global__ void cast_kernel(D *dst, const S *src, long n) {
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
