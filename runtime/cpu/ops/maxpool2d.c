/* 2-D max pooling with padding; the forward saves the winning input index per output so
 * the backward is a scatter, with no second search. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"
#include "vec16.h"

/* The common 2x2 stride-2 unpadded window, 16 outputs at a time as vectors (GCC's generic
 * vectors, any -march and double): the two input rows' 32 values are split into even and
 * odd columns by shuffles, and the maxima picked with selects, with the scalar loop's tie
 * rule: the first maximum in row-major window order wins, and a NaN in front stays.
 * Measured: the scalar loop alone was 7% of a LeNet step. A row's last chunk of n < 16
 * outputs: where AVX-512 has masked loads and stores (the float build), the same vectors
 * with the lanes past n masked off. Elsewhere a chunk that runs past its row writes lanes of
 * the next row, which that row's own chunks overwrite afterwards, and a chunk that would
 * read past the tensor's end (`x_end`) or write past its plane's output takes the scalar
 * loop (on LeNet's 7-wide second pooling that was 4 rows of 7, and the overlapping stores
 * cost more: the masked chunks made that pooling 2.5x faster). (rvec, rsel: vec16.h) */
typedef int32_t pidx __attribute__((vector_size(16 * sizeof(int32_t))));

/* b where take_b, else a (a macro: generic vectors are not passed to functions) */
#define SELECT_V(take_b, a, b) ((rvec)(((rsel)(b) & (take_b)) | ((rsel)(a) & ~(take_b))))

#if defined(__AVX512F__) && !defined(RT_REAL_DOUBLE)
#include <immintrin.h>
#define POOL_MASKED 1
/* lanes 0..len-1 of a 16-lane mask (len clipped to 0..16) */
static inline __mmask16 lanes(int len) {
    return len >= 16 ? (__mmask16)0xffff : len <= 0 ? 0 : (__mmask16)((1u << len) - 1);
}
#endif

#ifndef POOL_MASKED
static void pool2x2_scalar(real_t *yo, int32_t *ao, const real_t *r0, const real_t *r1,
                           int top, int bottom, int from, int to) {
    for (int ox = from; ox < to; ox++) {
        real_t a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
        int right0 = b > a, right1 = d > c;
        real_t m0 = right0 ? b : a, m1 = right1 ? d : c;
        int lower = m1 > m0;
        yo[ox] = lower ? m1 : m0;
        ao[ox] = lower ? bottom + 2 * ox + right1 : top + 2 * ox + right0;
    }
}
#endif

/* n (1..16) outputs from yo, ao of the windows whose top-left inputs are r0[0], r0[2], ...
 * (flat index top) and r1[0], ... (bottom); n < 16 only where POOL_MASKED. */
static void pool2x2_chunk(real_t *yo, int32_t *ao, const real_t *r0, const real_t *r1,
                          int32_t top, int32_t bottom, int n) {
    static const rsel EVEN = { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 };
    static const rsel ODD = { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31 };
    static const pidx TWICE = { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 };
    rvec p0, p1, q0, q1;
#ifdef POOL_MASKED
    __mmask16 m0 = lanes(2 * n), m1 = lanes(2 * n - 16);
    p0 = (rvec)_mm512_maskz_loadu_ps(m0, r0); p1 = (rvec)_mm512_maskz_loadu_ps(m1, r0 + 16);
    q0 = (rvec)_mm512_maskz_loadu_ps(m0, r1); q1 = (rvec)_mm512_maskz_loadu_ps(m1, r1 + 16);
#else
    memcpy(&p0, r0, sizeof p0); memcpy(&p1, r0 + 16, sizeof p1);
    memcpy(&q0, r1, sizeof q0); memcpy(&q1, r1 + 16, sizeof q1);
#endif
    rvec a = __builtin_shuffle(p0, p1, EVEN), b = __builtin_shuffle(p0, p1, ODD);
    rvec c = __builtin_shuffle(q0, q1, EVEN), d = __builtin_shuffle(q0, q1, ODD);
    rsel right0 = b > a, right1 = d > c;
    rvec m0v = SELECT_V(right0, a, b), m1v = SELECT_V(right1, c, d);
    rsel lower = m1v > m0v;
    rvec out = SELECT_V(lower, m0v, m1v);
    /* masks are -1 where true: subtracting one adds the right column */
    pidx i0 = top + TWICE - __builtin_convertvector(right0, pidx);
    pidx i1 = bottom + TWICE - __builtin_convertvector(right1, pidx);
    pidx low = __builtin_convertvector(lower, pidx);
    pidx idx = (i1 & low) | (i0 & ~low);
#ifdef POOL_MASKED
    _mm512_mask_storeu_ps(yo, lanes(n), (__m512)out);
    _mm512_mask_storeu_epi32(ao, lanes(n), (__m512i)idx);
#else
    (void)n;
    memcpy(yo, &out, sizeof out);
    memcpy(ao, &idx, sizeof idx);
#endif
}

static void pool2x2_plane(real_t *y, int32_t *am, const real_t *x, const real_t *x_end,
                          const rt_pool_shape *s) {
    long out_n = (long)s->oh * s->ow;
    for (int oy = 0; oy < s->oh; oy++) {
        const real_t *r0 = x + (long)(2 * oy) * s->w, *r1 = r0 + s->w;
        real_t *yo = y + (long)oy * s->ow;
        int32_t *ao = am + (long)oy * s->ow, top = 2 * oy * s->w, bottom = top + s->w;
        for (int ox0 = 0; ox0 < s->ow; ox0 += 16) {
            int n = s->ow - ox0 < 16 ? s->ow - ox0 : 16;
#ifndef POOL_MASKED
            int fits = (long)oy * s->ow + ox0 + 16 <= out_n;
            if (r1 + 2 * ox0 + 32 > x_end || (n < 16 && !fits)) {
                pool2x2_scalar(yo, ao, r0, r1, top, bottom, ox0, ox0 + n);
                continue;
            }
#else
            (void)x_end, (void)out_n;
#endif
            pool2x2_chunk(yo + ox0, ao + ox0, r0 + 2 * ox0, r1 + 2 * ox0, top + 2 * ox0,
                          bottom + 2 * ox0, n);
        }
    }
}

/* The 2x2 stride-2 unpadded window whose every window lies inside the input (ceil mode can add
 * a last window that runs past it: the general loop clips it). */
static int pool_is_2x2(const rt_pool_shape *s) {
    return s->kh == 2 && s->kw == 2 && s->sh == 2 && s->sw == 2 && s->ph == 0 && s->pw == 0 &&
           2 * s->oh <= s->h && 2 * s->ow <= s->w;
}

/* One plane; x_end: the end of the input tensor (the 2x2 chunks may read past their plane). */
static void pool_plane(real_t *y, int32_t *am, const real_t *x, const real_t *x_end,
                       const rt_pool_shape *s) {
    if (pool_is_2x2(s)) {
        pool2x2_plane(y, am, x, x_end, s);
        return;
    }
    for (int oy = 0; oy < s->oh; oy++)
        for (int ox = 0; ox < s->ow; ox++) {
            int best = -1;
            real_t bv = 0;
            for (int ki = 0; ki < s->kh; ki++) {
                int iy = oy * s->sh - s->ph + ki;
                if (iy < 0 || iy >= s->h) continue;
                for (int kj = 0; kj < s->kw; kj++) {
                    int ix = ox * s->sw - s->pw + kj;
                    if (ix < 0 || ix >= s->w) continue;
                    real_t v = x[iy * s->w + ix];
                    if (best < 0 || v > bv) { bv = v; best = iy * s->w + ix; }
                }
            }
            /* torch requires pad <= kernel/2, so every window sees an input */
            y[oy * s->ow + ox] = bv;
            am[oy * s->ow + ox] = best;
        }
}

void RT_FN(maxpool2d_forward)(real_t *out /*N,C,OH,OW*/, int32_t *argmax /*N,C,OH,OW*/,
                              const real_t *in /*N,C,H,W*/, const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    const real_t *in_end = in + planes * s->h * s->w;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++)
        pool_plane(out + pl * s->oh * s->ow, argmax + pl * s->oh * s->ow, in + pl * s->h * s->w,
                   in_end, s);
}

void RT_FN(maxpool2d_forward_planes)(real_t *out, int32_t *argmax, const real_t *in, long planes,
                                     const rt_pool_shape *s) {
    for (long pl = 0; pl < planes; pl++)
        pool_plane(out + pl * s->oh * s->ow, argmax + pl * s->oh * s->ow, in + pl * s->h * s->w,
                   in + planes * s->h * s->w, s);
}

#ifdef POOL_MASKED
/* unpool_plane for 2x2 windows with `out` as a gather: each input written once, 16 windows (32
 * inputs of a row) at a time, their gradients (0 where out <= 0) and argmaxes duplicated into
 * the pairs of lanes of their inputs and kept where the argmax is the input's index. Measured on
 * the fused op's plane (in cache): the zeroing and scatter with its branch on `out` took 2% of a
 * LeNet step. dy + 0 keeps the scatter's bits: 0 + (-0) is +0. */
static void unpool2x2_plane_masked(real_t *dx, const real_t *dy, const int32_t *am,
                                   const real_t *out, const rt_pool_shape *s) {
    static const rsel LOW = { 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7 };
    static const rsel HIGH = { 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15 };
    static const pidx LANE = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    for (int oy = 0; oy < s->oh; oy++)
        for (int ox0 = 0; ox0 < s->ow; ox0 += 16) {
            int n = s->ow - ox0 < 16 ? s->ow - ox0 : 16;
            long o = (long)oy * s->ow + ox0;
            __mmask16 m = lanes(n);
            rvec y = (rvec)_mm512_maskz_loadu_ps(m, out + o);
            rvec g = (rvec)_mm512_maskz_loadu_ps(m, dy + o) + 0;
            g = (rvec)((rsel)g & (y > 0));
            pidx a = (pidx)_mm512_maskz_loadu_epi32(m, am + o);
            rvec g0 = __builtin_shuffle(g, LOW), g1 = __builtin_shuffle(g, HIGH);
            pidx a0 = __builtin_shuffle(a, LOW), a1 = __builtin_shuffle(a, HIGH);
            for (int r = 2 * oy; r < 2 * oy + 2; r++) {
                int32_t at = r * s->w + 2 * ox0;
                rsel e0 = a0 == at + LANE, e1 = a1 == at + 16 + LANE;
                real_t *dst = dx + at;
                _mm512_mask_storeu_ps(dst, lanes(2 * n), (__m512)((rsel)g0 & e0));
                _mm512_mask_storeu_ps(dst + 16, lanes(2 * n - 16), (__m512)((rsel)g1 & e1));
            }
        }
    for (int oy = 0; oy < s->oh; oy++)   /* the column no window covers (odd w) */
        for (int r = 2 * oy; r < 2 * oy + 2; r++)
            for (int x = 2 * s->ow; x < s->w; x++) dx[(long)r * s->w + x] = 0;
    for (long i = (long)(2 * s->oh) * s->w; i < (long)s->h * s->w; i++) dx[i] = 0;   /* odd h */
}
#endif

/* One plane's input gradient; where `out` is given, only the windows whose output is > 0. */
static void unpool_plane(real_t *dx, const real_t *dy, const int32_t *am, const real_t *out,
                         const rt_pool_shape *s) {
#ifdef POOL_MASKED
    if (out && pool_is_2x2(s)) {
        unpool2x2_plane_masked(dx, dy, am, out, s);
        return;
    }
#endif
    memset(dx, 0, sizeof(real_t) * s->h * s->w);
    for (int o = 0; o < s->oh * s->ow; o++)   /* windows overlap when stride < kernel */
        if (am[o] >= 0 && (!out || out[o] > 0)) dx[am[o]] += dy[o];
}

void RT_FN(maxpool2d_backward)(real_t *din /*N,C,H,W*/, const real_t *dout,
                               const int32_t *argmax, const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++)
        unpool_plane(din + pl * s->h * s->w, dout + pl * s->oh * s->ow, argmax + pl * s->oh * s->ow,
                     NULL, s);
}

void RT_FN(maxpool2d_backward_planes_relu)(real_t *din, const real_t *dout, const real_t *out,
                                           const int32_t *argmax, long planes,
                                           const rt_pool_shape *s) {
    for (long pl = 0; pl < planes; pl++) {
        long o = pl * s->oh * s->ow;
        unpool_plane(din + pl * s->h * s->w, dout + o, argmax + o, out + o, s);
    }
}
