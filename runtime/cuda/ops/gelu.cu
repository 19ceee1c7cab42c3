/* GELU, exact erf form (torch's default): x·Phi(x), and its derivative Phi(x) + x·phi(x)
 * (act_fns.cuh). */
#include "act_fns.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gelu_forward_kernel(T *out, const T *in, long n) {
    GRID_STRIDE(i, n) {
        out[i] = rt_st<T>(gelu_value(rt_ld(in[i])));
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gelu_backward_kernel(T *din, const T *dout, const T *in, long n) {
    GRID_STRIDE(i, n) {
        din[i] = rt_st<T>(rt_ld(dout[i]) * gelu_slope(rt_ld(in[i])));
    }
}

void cuda_gelu_forward(void *out, const void *in, long n) {
    RT_ACT_DISPATCH(gelu_forward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in, n));
    CUDA_LAUNCHED();
}

void cuda_gelu_backward(void *din, const void *dout, const void *in, long n) {
    RT_ACT_DISPATCH(gelu_backward_kernel<T><<<rt_blocks(n), RT_THREADS, 0, rt_stream()>>>((T *)din, (const T *)dout,
                                                                                         (const T *)in, n));
    CUDA_LAUNCHED();
}
