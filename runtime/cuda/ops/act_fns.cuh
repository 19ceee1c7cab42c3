/* The activations' values and slopes on the device, in float whatever the storage type: GELU
 * (exact erf form, torch's default) and the family relu6, sigmoid, silu, hardswish,
 * hardsigmoid, as the CPU ops (gelu.c, activation.c) define them, with torch's sides at the
 * kinks. One copy for the plain kernels (gelu.cu, activation.cu) and the bias + activation
 * kernel (bias_act.cu), so the fused and unfused paths compute alike. */
#ifndef RT_CUDA_ACT_FNS_CUH
#define RT_CUDA_ACT_FNS_CUH
#include "../cuda_common.cuh"

#define ACT_INV_SQRT2 0.70710678118654752440f
#define ACT_INV_SQRT_2PI 0.39894228040143267794f

__device__ static inline float gelu_value(float x) { return 0.5f * x * (1.0f + erff(x * ACT_INV_SQRT2)); }

__device__ static inline float gelu_slope(float x) {
    float cdf = 0.5f * (1.0f + erff(x * ACT_INV_SQRT2));
    float pdf = ACT_INV_SQRT_2PI * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

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
#endif
