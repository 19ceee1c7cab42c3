/* GELU, exact erf form (torch's default): x·Phi(x), and its derivative Phi(x) + x·phi(x). */
#include "../cuda_common.cuh"

#define INV_SQRT2 0.70710678118654752440f
#define INV_SQRT_2PI 0.39894228040143267794f

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gelu_forward_kernel(T *out, const T *in, long n) {
    GRID_STRIDE(i, n) {
        float x = rt_ld(in[i]);
        out[i] = rt_st<T>(0.5f * x * (1.0f + erff(x * INV_SQRT2)));
    }
}

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
gelu_backward_kernel(T *din, const T *dout, const T *in, long n) {
    GRID_STRIDE(i, n) {
        float x = rt_ld(in[i]);
        float cdf = 0.5f * (1.0f + erff(x * INV_SQRT2));
        float pdf = INV_SQRT_2PI * expf(-0.5f * x * x);
        din[i] = rt_st<T>(rt_ld(dout[i]) * (cdf + x * pdf));
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
