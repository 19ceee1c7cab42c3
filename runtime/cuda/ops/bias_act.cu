/* A conv's or linear's bias and the activation after it in one pass (lower.c choose_bias_act:
 * GELU or the family relu6, sigmoid, silu, hardswish, hardsigmoid): out = act(in + bias[c]),
 * where in is the conv's output as the library wrote it, kept without the bias for the
 * backward; din = dout * act'(in + bias[c]), the conv's bias gradient then summed from din as
 * before. Against a bias pass followed by the activation's pass this saves one read and one
 * write of the tensor in the forward (and in 16-bit, the bias-added values are not rounded to
 * the storage type between the two). Channels: (i / hw) % c, rows of channels being hw = 1;
 * 32-bit index arithmetic where the tensor allows it. */
#include "act_fns.cuh"

#include <limits.h>

/* act(x): GELU for fn < 0, else the family member rt_activation fn. */
__device__ static inline float bias_act_value(float x, int fn) { return fn < 0 ? gelu_value(x) : act_value(x, fn); }
__device__ static inline float bias_act_slope(float x, int fn) { return fn < 0 ? gelu_slope(x) : act_slope(x, fn); }

template <typename T, typename I> __global__ void __launch_bounds__(RT_THREADS)
bias_act_forward_kernel(T *out, const T *in, const float *bias, I c, I hw, I n, int fn) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x)
        out[i] = rt_st<T>(bias_act_value(rt_ld(in[i]) + bias[i / hw % c], fn));
}

template <typename T, typename I> __global__ void __launch_bounds__(RT_THREADS)
bias_act_backward_kernel(T *din, const T *dout, const T *in, const float *bias, I c, I hw, I n, int fn) {
    for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x)
        din[i] = rt_st<T>(rt_ld(dout[i]) * bias_act_slope(rt_ld(in[i]) + bias[i / hw % c], fn));
}

void cuda_bias_act_forward(void *out, const void *in, const float *bias, int n, int c, long hw, int fn) {
    long total = (long)n * c * hw;
    if (total <= UINT_MAX)
        RT_ACT_DISPATCH(bias_act_forward_kernel<T, unsigned><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)out, (const T *)in, bias, (unsigned)c, (unsigned)hw, (unsigned)total, fn));
    else
        RT_ACT_DISPATCH(bias_act_forward_kernel<T, long><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)out, (const T *)in, bias, (long)c, hw, total, fn));
    CUDA_LAUNCHED();
}

void cuda_bias_act_backward(void *din, const void *dout, const void *in, const float *bias, int n, int c, long hw,
                            int fn) {
    long total = (long)n * c * hw;
    if (total <= UINT_MAX)
        RT_ACT_DISPATCH(bias_act_backward_kernel<T, unsigned><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)din, (const T *)dout, (const T *)in, bias, (unsigned)c, (unsigned)hw, (unsigned)total, fn));
    else
        RT_ACT_DISPATCH(bias_act_backward_kernel<T, long><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)din, (const T *)dout, (const T *)in, bias, (long)c, hw, total, fn));
    CUDA_LAUNCHED();
}
