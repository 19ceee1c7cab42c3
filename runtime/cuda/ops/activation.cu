/* The elementwise activation family (relu6, sigmoid, silu, hardswish, hardsigmoid) on the
 * device, computed in float whatever the storage type, as the CPU op (activation.c) defines
 * it: forward, and backward from the forward input with torch's sides at the kinks. */
#include "../cuda_common.cuh"

__device__ static inline float act_sigmoid(float x) {
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

__device__ static inline float act_clamp6(float x) { return fminf(fmaxf(x, 0.0f), 6.0f); }

__device__ static inline float act_value(float x, int fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6: return act_clamp6(x);
    case RT_ACTIVATION_SIGMOID: return act_sigmoid(x);
    case RT_ACTIVATION_SILU: return x * act_sigmoid(x);
    case RT_ACTIVATION_HARDSWISH: return x * act_clamp6(x + 3.0f) / 6.0f;
    default: return act_clamp6(x + 3.0f) / 6.0f;   /* hardsigmoid */
    }
}

__device__ static inline float act_slope(float x, int fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6: return x > 0.0f && x < 6.0f ? 1.0f : 0.0f;
    case RT_ACTIVATION_SIGMOID: { float s = act_sigmoid(x); return s * (1.0f - s); }
    case RT_ACTIVATION_SILU: { float s = act_sigmoid(x); return s * (1.0f + x * (1.0f - s)); }
    case RT_ACTIVATION_HARDSWISH: return x < -3.0f ? 0.0f : x <= 3.0f ? (2.0f * x + 3.0f) / 6.0f : 1.0f;
    default: return x > -3.0f && x < 3.0f ? 1.0f / 6.0f : 0.0f;   /* hardsigmoid */
    }
}

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
