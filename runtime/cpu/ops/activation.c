/* The elementwise activation family (relu6, sigmoid, silu, hardswish, hardsigmoid), as torch
 * defines them, forward and backward from the forward input. */
#include "rt_ops.h"
#include "rt_real.h"

/* 1/(1+e^-x) without overflow: e^-x is formed only for x >= 0, e^x only for x < 0. */
static inline real_t sigmoid(real_t x) {
    if (x >= 0) return 1 / (1 + rt_exp(-x));
    real_t e = rt_exp(x);
    return e / (1 + e);
}

static inline real_t clamp6(real_t x) { return x < 0 ? 0 : x > 6 ? 6 : x; }

static inline real_t act(real_t x, rt_activation fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6: return clamp6(x);
    case RT_ACTIVATION_SIGMOID: return sigmoid(x);
    case RT_ACTIVATION_SILU: return x * sigmoid(x);
    case RT_ACTIVATION_HARDSWISH: return x * clamp6(x + 3) / 6;
    case RT_ACTIVATION_HARDSIGMOID: return clamp6(x + 3) / 6;
    case RT_ACTIVATION_COUNT: break;
    }
    return 0;
}

/* d act / dx at x. The kinks take torch's sides: relu6 passes on (0, 6) open, hardsigmoid on
 * (-3, 3) open, hardswish is 0 below -3, (2x+3)/6 on [-3, 3], 1 above. */
static inline real_t slope(real_t x, rt_activation fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6: return x > 0 && x < 6 ? 1 : 0;
    case RT_ACTIVATION_SIGMOID: { real_t s = sigmoid(x); return s * (1 - s); }
    case RT_ACTIVATION_SILU: { real_t s = sigmoid(x); return s * (1 + x * (1 - s)); }
    case RT_ACTIVATION_HARDSWISH: return x < -3 ? 0 : x <= 3 ? (2 * x + 3) / 6 : 1;
    case RT_ACTIVATION_HARDSIGMOID: return x > -3 && x < 3 ? (real_t)1 / 6 : 0;
    case RT_ACTIVATION_COUNT: break;
    }
    return 0;
}

void RT_FN(activation_forward)(real_t *out, const real_t *in, long n, rt_activation fn) {
    #pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++) out[i] = act(in[i], fn);
}

void RT_FN(activation_backward)(real_t *din, const real_t *dout, const real_t *in, long n,
                                rt_activation fn) {
    #pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++) din[i] = dout[i] * slope(in[i], fn);
}
