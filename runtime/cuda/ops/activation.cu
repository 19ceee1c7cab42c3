/* The elementwise activation family (relu6, sigmoid, silu, hardswish, hardsigmoid) on the
 * device, computed in float whatever the storage type, as the CPU op (activation.c) defines
 * it: forward, and backward from the forward input with torch's sides at the kinks
 * (act_fns.cuh). */
#include "act_fns.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
activation_forward_kernel(T *out, const T *in, long n, int fn) {
    GRID_STRIDE(i, n) out[i] = rt_st<T>(act_value(rt_ld(in[i]), fn));
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
activation_backward_kernel(T *din, const T *dout, const T *in, long n, int fn) {
    GRID_STRIDE(i, n) din[i] = rt_st<T>(rt_ld(dout[i]) * act_slope(rt_ld(in[i]), fn));
}

void cuda_activation_forward(void *out, const void *in, long n, rt_activation fn) {
    RT_ACT_DISPATCH(activation_forward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, n, (int)fn));
    CUDA_LAUNCHED();
}

void cuda_activation_backward(void *din, const void *dout, const void *in, long n, rt_activation fn) {
    RT_ACT_DISPATCH(activation_backward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)in, n, (int)fn));
    CUDA_LAUNCHED();
}
