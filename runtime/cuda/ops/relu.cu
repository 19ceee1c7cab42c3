/* ReLU; the backward reads the forward output (out > 0 iff in > 0), so it may run in place. */
#include "../cuda_common.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
relu_forward_kernel(T *out, const T *in, long n) {
    GRID_STRIDE(i, n) {
        float x = rt_ld(in[i]);
        out[i] = rt_st<T>(x > 0.0f ? x : 0.0f);
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
relu_backward_kernel(T *din, const T *dout, const T *out, long n) {
    GRID_STRIDE(i, n) din[i] = rt_st<T>(rt_ld(out[i]) > 0.0f ? rt_ld(dout[i]) : 0.0f);
}

void cuda_relu_forward(void *out, const void *in, long n) {
    RT_ACT_DISPATCH(relu_forward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in, n));
    CUDA_LAUNCHED();
}

void cuda_relu_backward(void *din, const void *dout, const void *out, long n) {
    RT_ACT_DISPATCH(relu_backward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)din, (const T *)dout,
                                                                                         (const T *)out, n));
    CUDA_LAUNCHED();
}
