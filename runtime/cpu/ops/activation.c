/* The elementwise activation family (relu6, sigmoid, silu, hardswish, hardsigmoid), as torch
 * defines them, forward and backward from the forward input. Each function has loops of its
 * own, free of calls, so they vectorize; in float the sigmoid's e^-x is computed eight at a
 * time inline (a library expf call per element kept the sigmoid and SiLU loops scalar: a
 * third of an EfficientNet-like net's training step on the CPU). */
#include <stdint.h>
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

#ifdef RT_REAL_DOUBLE
static inline real_t sigmoid(real_t x) { return 1 / (1 + exp(-x)); }   /* exp(800): inf, giving 0 */

/* s[i] = sigmoid(x[i]) for i < n. */
static void sigmoid_run(real_t *s, const real_t *x, long n) {
    for (long i = 0; i < n; i++) s[i] = sigmoid(x[i]);
}
#else
/* Eight floats at once in GCC's vector extension (the target's widest vectors, or pairs of
 * narrower ones): e^x by x = n ln2 + r, |r| <= ln2/2 (ln2 split in two for exactness), e^r by
 * its Taylor polynomial to degree 6 (relative error below 2e-7), 2^n built in the exponent
 * bits. x is clamped to [-87, 88], where 2^n stays a normal float: e^-87 is 1.6e-38 for 0
 * and e^88 1.7e38 for infinity, which 1/(1 + e^-x) turns into 0 and 1 all the same. */
typedef float f8 __attribute__((vector_size(32)));
typedef int32_t i8 __attribute__((vector_size(32)));

/* mask ? a : b, lane by lane (a macro: a function returning a vector type would change the
 * ABI where the target has no AVX, which GCC warns about) */
#define F8_SELECT(mask, a, b) ((f8)(((i8)(a) & (mask)) | ((i8)(b) & ~(mask))))

static inline void f8_sigmoid(f8 *v) {
    const f8 zero = { 0 };
    f8 t = zero - *v;   /* e^-x */
    t = F8_SELECT(t < -87.0f, zero - 87.0f, t);
    t = F8_SELECT(t > 88.0f, zero + 88.0f, t);
    /* round t·log2 e to the nearest integer by the 1.5·2^23 shift: its low bits are n */
    const float shift = 12582912.0f;
    f8 big = t * 1.44269504088896341f + shift, n = big - shift;
    f8 r = t - n * 0.693145751953125f;
    r = r - n * 1.428606765330187e-6f;
    f8 p = zero + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    i8 ni = (i8)big - (i8)(zero + shift);
    f8 scale = (f8)((ni + 127) << 23);
    *v = 1.0f / (1.0f + p * scale);
}

static inline float sigmoid(float x) { return 1 / (1 + expf(-x)); }

/* s[i] = sigmoid(x[i]) for i < n: eight at a time, the rest by expf. */
static void sigmoid_run(float *s, const float *x, long n) {
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        f8 v;
        __builtin_memcpy(&v, x + i, sizeof v);
        f8_sigmoid(&v);
        __builtin_memcpy(s + i, &v, sizeof v);
    }
    for (; i < n; i++) s[i] = sigmoid(x[i]);
}
#endif

/* Chunks of the tensor per thread; each computes the sigmoids of a chunk into a buffer on
 * its stack, then the function of them. */
#define ACT_CHUNK 1024
#define FOR_CHUNKS(n, body)                                                               \
    _Pragma("omp parallel for schedule(static) if (n > 16384)")                           \
    for (long c0 = 0; c0 < n; c0 += ACT_CHUNK) {                                          \
        long len = n - c0 < ACT_CHUNK ? n - c0 : ACT_CHUNK;                               \
        real_t s[ACT_CHUNK];                                                              \
        body                                                                              \
    }

static inline real_t clamp6(real_t x) { return x < 0 ? 0 : x > 6 ? 6 : x; }

void RT_FN(activation_forward)(real_t *out, const real_t *in, long n, rt_activation fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++) out[i] = clamp6(in[i]);
        break;
    case RT_ACTIVATION_SIGMOID:
        FOR_CHUNKS(n, {
            (void)s;
            sigmoid_run(out + c0, in + c0, len);
        })
        break;
    case RT_ACTIVATION_SILU:
        FOR_CHUNKS(n, {
            sigmoid_run(s, in + c0, len);
            for (long i = 0; i < len; i++) out[c0 + i] = in[c0 + i] * s[i];
        })
        break;
    case RT_ACTIVATION_HARDSWISH:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++) out[i] = in[i] * clamp6(in[i] + 3) / 6;
        break;
    case RT_ACTIVATION_HARDSIGMOID:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++) out[i] = clamp6(in[i] + 3) / 6;
        break;
    case RT_ACTIVATION_COUNT: break;
    }
}

/* d act / dx at x. The kinks take torch's sides: relu6 passes on (0, 6) open, hardsigmoid on
 * (-3, 3) open, hardswish is 0 below -3, (2x+3)/6 on [-3, 3], 1 above. */
void RT_FN(activation_backward)(real_t *din, const real_t *dout, const real_t *in, long n,
                                rt_activation fn) {
    switch (fn) {
    case RT_ACTIVATION_RELU6:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++) din[i] = in[i] > 0 && in[i] < 6 ? dout[i] : 0;
        break;
    case RT_ACTIVATION_SIGMOID:
        FOR_CHUNKS(n, {
            sigmoid_run(s, in + c0, len);
            for (long i = 0; i < len; i++) din[c0 + i] = dout[c0 + i] * s[i] * (1 - s[i]);
        })
        break;
    case RT_ACTIVATION_SILU:
        FOR_CHUNKS(n, {
            sigmoid_run(s, in + c0, len);
            for (long i = 0; i < len; i++) din[c0 + i] = dout[c0 + i] * s[i] * (1 + in[c0 + i] * (1 - s[i]));
        })
        break;
    case RT_ACTIVATION_HARDSWISH:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++)
            din[i] = in[i] < -3 ? 0 : in[i] <= 3 ? dout[i] * (2 * in[i] + 3) / 6 : dout[i];
        break;
    case RT_ACTIVATION_HARDSIGMOID:
        #pragma omp parallel for simd schedule(static) if (n > 16384)
        for (long i = 0; i < n; i++) din[i] = in[i] > -3 && in[i] < 3 ? dout[i] / 6 : 0;
        break;
    case RT_ACTIVATION_COUNT: break;
    }
}
