/* conv2d of a 1-channel input as a direct AVX-512 kernel (see rt_conv_c1.h). Each image is
 * first written as its zero-padded rows, each row K times, copy kj shifted left by kj columns,
 * in lines of `pitch` (a multiple of 16) floats: the taps (ki, kj) of 16 output pixels of row
 * y are then aligned loads at lines[(y * K + ki * K + kj) * pitch + x], one pointer stepping
 * by pitch (an unaligned load per tap split cache lines and held the kernels at a third of
 * the FMA rate; K * K separate offsets ran out of registers). Images run in
 * parallel on the OpenMP threads, each with its own slice of the workspace; the backward's
 * per-thread weight and bias sums add up in thread order, so a result does not depend on
 * timing. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rt_conv_c1.h"
#include "rt_core.h"
#include "rt_env.h"
#include "rt_slots.h"
#include "rt_gemm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The workspace: the weights as the forward uses them (rounded to BF16 under compute BF16),
 * then one slice per thread: the shifted lines, as BF16 pairs, its dweight and dbias sums,
 * then one image's output (or output gradient) for the fused pooling (conv2d_relu_maxpool). */
typedef struct {
    int k, pitch, rows, bf16;
    long weights; /* floats before the first slice */
    long lines;   /* floats of the shifted lines, slack included (a multiple of 16) */
    long blines;  /* floats that hold the lines as BF16 pairs (the BF16 backward's) */
    long dw;      /* floats of dweight */
    long plane;   /* floats of one image's output, from the slice's start */
    long slice;   /* floats of one thread's slice, 16 of them to align its start */
} c1_geometry;

static c1_geometry geometry_of(const rt_conv_shape *s) {
    c1_geometry g;
    g.k = s->kw;
    g.pitch = (s->ow + 31) / 32 * 32;   /* whole 32-pixel chunks: the BF16 backward's pairs */
    g.rows = s->oh + s->kh - 1;
    g.lines = (long)g.rows * g.k * g.pitch + 16;   /* the last line's second vector may run past it */
    g.dw = (long)s->oc * s->kh * s->kw;
    g.blines = (long)g.rows * g.k * g.pitch / 2;
    g.plane = g.lines + g.blines + g.dw + s->oc;
    g.slice = 16 + g.plane + (long)s->oc * s->oh * s->ow;
    g.weights = (g.dw + 15) / 16 * 16;
    g.bf16 = rt_gemm_compute() == RT_COMPUTE_BF16;
    return g;
}

/* Thread t's slice, its start 64-byte aligned (the lines are read with aligned loads). */
static float *slice_of(float *work, int t, const c1_geometry *g) {
    uintptr_t at = (uintptr_t)(work + g->weights + t * g->slice);
    return (float *)((at + 63) & ~(uintptr_t)63);
}

static int image_threads(const rt_conv_shape *s) {
    int t = omp_get_max_threads();
    return s->n >= t ? t : s->n > 0 ? s->n : 1;
}

int conv2d_c1_fits(const rt_conv_shape *s) {
    if (s->c != 1 || s->groups != 1 || s->sh != 1 || s->sw != 1 || s->dh != 1 || s->dw != 1 ||
        s->kh != s->kw || (s->kw != 3 && s->kw != 5) ||
        s->oh != s->h + 2 * s->ph - s->kh + 1 || s->ow != s->w + 2 * s->pw - s->kw + 1 ||
        s->oh < 1 || s->ow < 1 || !__builtin_cpu_supports("avx512f"))
        return 0;
    return !rt_env_is(RT_ENV_TRAINC_CONV_C1, "off");   /* "off": im2col / oneDNN (A/B runs) */
}

long conv2d_c1_workspace_elems(const rt_conv_shape *s) {
    c1_geometry g = geometry_of(s);
    int threads = image_threads(s), slots = rt_slots();   /* forward: threads; backward: slots */
    return g.weights + (threads > slots ? threads : slots) * g.slice;
}

/* x rounded to the nearest BF16 (ties to even), as FP32; NaNs stay NaNs. Under compute BF16
 * the kernels multiply such values: each product is exact in FP32, as in vdpbf16ps. */
__attribute__((target("avx512f")))
static inline __m512 round_bf16(__m512 x) {
    __m512i u = _mm512_castps_si512(x);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    u = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    __m512 r = _mm512_castsi512_ps(_mm512_and_si512(u, _mm512_set1_epi32((int)0xffff0000u)));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

/* n floats (a multiple of 16) rounded to BF16 in place. */
__attribute__((target("avx512f")))
static void round_all_bf16(float *x, long n) {
    for (long i = 0; i < n; i += 16) _mm512_storeu_ps(x + i, round_bf16(_mm512_loadu_ps(x + i)));
}

/* One image's h x w plane as the shifted, zero-padded lines (every element written):
 * lines[(r * K + kj) * pitch + q] = in[r - ph][q + kj - pw], 0 outside the input. */
static void shifted_lines(float *lines, const float *in, const rt_conv_shape *s, const c1_geometry *g) {
    memset(lines, 0, sizeof(float) * g->lines);
    for (int kj = 0; kj < g->k; kj++) {
        int ix0 = kj - s->pw > 0 ? kj - s->pw : 0;                       /* first input column */
        int ix1 = g->pitch + kj - s->pw < s->w ? g->pitch + kj - s->pw : s->w;   /* past the last */
        if (ix1 <= ix0) continue;
        float *line = lines + (long)(s->ph * g->k + kj) * g->pitch + (ix0 - kj + s->pw);
        for (int iy = 0; iy < s->h; iy++)
            memcpy(line + (long)iy * g->k * g->pitch, in + (long)iy * s->w + ix0, sizeof(float) * (ix1 - ix0));
    }
    if (g->bf16) round_all_bf16(lines, g->lines);
}

/* Lanes of the 16 pixels from x0 that lie in a row of ow. */
static inline __mmask16 row_mask(int x0, int ow) {
    int left = ow - x0;
    return left >= 16 ? (__mmask16)0xffff : left <= 0 ? 0 : (__mmask16)((1u << left) - 1);
}

/* OB output channels from oc0 of one image: 2 x 16 pixels of a row at a time, the OB x 2
 * accumulators in registers, each tap two aligned loads and OB broadcast weights. */
__attribute__((target("avx512f"), always_inline))
static inline void forward_block(float *out, const float *lines, const float *w, const float *bias,
                                 int relu, int oc0, const rt_conv_shape *s, const c1_geometry *g,
                                 const int OB, const int K) {
    long out_plane = (long)s->oh * s->ow;
    for (int y = 0; y < s->oh; y++)
        for (int x0 = 0; x0 < s->ow; x0 += 32) {
            __m512 acc[8][2];   /* OB <= 8 used */
            #pragma GCC unroll 8   /* every loop over acc unrolled: it lives in registers */
            for (int o = 0; o < OB; o++)
                acc[o][0] = acc[o][1] = _mm512_set1_ps(bias ? bias[oc0 + o] : 0.0f);
            const float *p = lines + (long)y * K * g->pitch + x0, *wt = w + (long)oc0 * K * K;
            for (int t = 0; t < K * K; t++, p += g->pitch) {   /* tap t = ki * K + kj */
                __m512 v0 = _mm512_load_ps(p), v1 = _mm512_load_ps(p + 16);
                #pragma GCC unroll 8
                for (int o = 0; o < OB; o++) {
                    __m512 wv = _mm512_set1_ps(wt[(long)o * K * K + t]);
                    acc[o][0] = _mm512_fmadd_ps(wv, v0, acc[o][0]);
                    acc[o][1] = _mm512_fmadd_ps(wv, v1, acc[o][1]);
                }
            }
            __mmask16 m0 = row_mask(x0, s->ow), m1 = row_mask(x0 + 16, s->ow);
            #pragma GCC unroll 8
            for (int o = 0; o < OB; o++) {
                float *dst = out + (oc0 + o) * out_plane + (long)y * s->ow + x0;
                if (relu) {
                    acc[o][0] = _mm512_max_ps(acc[o][0], _mm512_setzero_ps());
                    acc[o][1] = _mm512_max_ps(acc[o][1], _mm512_setzero_ps());
                }
                _mm512_mask_storeu_ps(dst, m0, acc[o][0]);
                if (m1) _mm512_mask_storeu_ps(dst + 16, m1, acc[o][1]);
            }
        }
}

__attribute__((target("avx512f"), always_inline))
static inline void forward_image(float *out, const float *lines, const float *w, const float *bias,
                                 int relu, const rt_conv_shape *s, const c1_geometry *g, const int K) {
    int oc = 0;
    for (; oc + 8 <= s->oc; oc += 8) forward_block(out, lines, w, bias, relu, oc, s, g, 8, K);
    for (; oc < s->oc; oc++) forward_block(out, lines, w, bias, relu, oc, s, g, 1, K);
}

/* The forward; where ps is given, each image's output goes to its thread's plane and is pooled
 * from there into pool_out and argmax (out unused). */
__attribute__((target("avx512f")))
static void forward_images(float *out, float *pool_out, int32_t *argmax, const float *in,
                           const float *weight, const float *bias, float *work,
                           const rt_conv_shape *s, const rt_pool_shape *ps) {
    c1_geometry g = geometry_of(s);
    long in_img = (long)s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    int relu = s->act == RT_ACT_RELU;
    if (g.bf16) {   /* the weights rounded once, shared by the threads */
        memset(work, 0, sizeof(float) * g.weights);
        memcpy(work, weight, sizeof(float) * g.dw);
        round_all_bf16(work, g.weights);
        weight = work;
    }
    #pragma omp parallel for schedule(static) num_threads(image_threads(s))
    for (int b = 0; b < s->n; b++) {
        float *lines = slice_of(work, omp_get_thread_num(), &g);
        shifted_lines(lines, in + b * in_img, s, &g);
        float *o = ps ? lines + g.plane : out + b * out_img;
        if (g.k == 3) forward_image(o, lines, weight, bias, relu, s, &g, 3);   /* K a constant: */
        else forward_image(o, lines, weight, bias, relu, s, &g, 5);            /* loops unroll */
        if (ps) {
            long at = (long)b * s->oc * ps->oh * ps->ow;
            maxpool2d_forward_planes(pool_out + at, argmax + at, o, s->oc, ps);
        }
    }
}

void conv2d_c1_forward(float *out, const float *in, const float *weight, const float *bias,
                       float *work, const rt_conv_shape *s) {
    forward_images(out, NULL, NULL, in, weight, bias, work, s, NULL);
}

void conv2d_c1_forward_pooled(float *pool_out, int32_t *argmax, const float *in, const float *weight,
                              const float *bias, float *work, const rt_conv_shape *s,
                              const rt_pool_shape *ps) {
    forward_images(NULL, pool_out, argmax, in, weight, bias, work, s, ps);
}

/* 16 floats of dout from at (pixels x0.. of a row of ow), 0 past the row and, where act_out is
 * given, where the ReLU did not pass (act_out <= 0). Both are loaded before either is used:
 * a load of dout masked by act_out waited for act_out's load (both stream from memory), and
 * took 30% longer. */
__attribute__((target("avx512f"), always_inline))
static inline __m512 masked_dout16(const float *dout, const float *act_out, long at, int x0, int ow) {
    __mmask16 m = row_mask(x0, ow);
    __m512 d = _mm512_maskz_loadu_ps(m, dout + at);
    if (!act_out) return d;
    __m512 y = _mm512_maskz_loadu_ps(m, act_out + at);
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(y, _mm512_setzero_ps(), _CMP_GT_OQ), d);
}

/* An output channel's sums over one image added into its dweight and dbias (db NULL: none). */
__attribute__((target("avx512f"), always_inline))
static inline void add_channel_sums(float *dw, float *db, int oc, const __m512 *acc, __m512 sum,
                                    const int K) {
    #pragma GCC unroll 25
    for (int t = 0; t < K * K; t++) dw[oc * K * K + t] += _mm512_reduce_add_ps(acc[t]);
    if (db) db[oc] += _mm512_reduce_add_ps(sum);
}

/* One image's weight gradient, added into dw, and bias gradient, into db if given: per output
 * channel, its K x K accumulators in registers over the image, each 16 pixels of dout read
 * once (masked by the ReLU where act_out is given, and to the row), each tap an aligned load. */
__attribute__((target("avx512f"), always_inline))
static inline void weights_image(float *dw, float *db, const float *dout, const float *act_out,
                                 const float *lines, const rt_conv_shape *s, const c1_geometry *g,
                                 const int K) {
    long ohw = (long)s->oh * s->ow;
    for (int oc = 0; oc < s->oc; oc++) {
        __m512 acc[25], sum = _mm512_setzero_ps();   /* K * K <= 25 used */
        #pragma GCC unroll 25   /* every loop over acc unrolled: it lives in registers */
        for (int t = 0; t < K * K; t++) acc[t] = _mm512_setzero_ps();
        for (int y = 0; y < s->oh; y++)
            for (int x0 = 0; x0 < s->ow; x0 += 16) {
                __m512 d = masked_dout16(dout, act_out, oc * ohw + (long)y * s->ow + x0, x0, s->ow);
                sum = _mm512_add_ps(sum, d);   /* the bias gradient from the unrounded dout */
                if (g->bf16) d = round_bf16(d);
                const float *p = lines + (long)y * K * g->pitch + x0;
                #pragma GCC unroll 25
                for (int t = 0; t < K * K; t++, p += g->pitch)   /* tap t = ki * K + kj */
                    acc[t] = _mm512_fmadd_ps(d, _mm512_load_ps(p), acc[t]);
            }
        add_channel_sums(dw, db, oc, acc, sum, K);
    }
}

#if __GNUC__ >= 12 && !defined(__clang__)
#define C1_DPBF16 1
/* The lines as BF16, each 32-pixel chunk as vcvtne2ps2bf16 pairs them (lane i: pixels 2i and
 * 2i + 1 of its first 16, lanes 8..15 of its second): the pairing the output gradient gets. */
__attribute__((target("avx512f,avx512bf16")))
static void lines_to_bf16(uint16_t *bl, const float *lines, const c1_geometry *g) {
    for (long i = 0; i < (long)g->rows * g->k * g->pitch; i += 32)
        _mm512_store_si512(bl + i, (__m512i)_mm512_cvtne2ps_pbh(_mm512_load_ps(lines + i + 16),
                                                                 _mm512_load_ps(lines + i)));
}

/* weights_image under compute BF16 with vdpbf16ps: 32 pixels (16 pairs) a tap and instruction,
 * twice weights_image's rate; the same products (the lines are BF16 values already, dout is
 * rounded to nearest even as round_bf16 does) and the same bias sums. */
__attribute__((target("avx512f,avx512bf16"), always_inline))
static inline void weights_image_bf16(float *dw, float *db, const float *dout, const float *act_out,
                                      const uint16_t *bl, const rt_conv_shape *s, const c1_geometry *g,
                                      const int K) {
    long ohw = (long)s->oh * s->ow;
    for (int oc = 0; oc < s->oc; oc++) {
        __m512 acc[25], sum = _mm512_setzero_ps();   /* K * K <= 25 used */
        #pragma GCC unroll 25   /* every loop over acc unrolled: it lives in registers */
        for (int t = 0; t < K * K; t++) acc[t] = _mm512_setzero_ps();
        for (int y = 0; y < s->oh; y++)
            for (int x0 = 0; x0 < s->ow; x0 += 32) {
                long at = oc * ohw + (long)y * s->ow + x0;
                __m512 d0 = masked_dout16(dout, act_out, at, x0, s->ow);
                __m512 d1 = masked_dout16(dout, act_out, at + 16, x0 + 16, s->ow);
                sum = _mm512_add_ps(_mm512_add_ps(sum, d0), d1);   /* the bias gradient, unrounded */
                __m512bh d = _mm512_cvtne2ps_pbh(d1, d0);
                const uint16_t *p = bl + (long)y * K * g->pitch + x0;
                #pragma GCC unroll 25
                for (int t = 0; t < K * K; t++, p += g->pitch)   /* tap t = ki * K + kj */
                    acc[t] = _mm512_dpbf16_ps(acc[t], d, (__m512bh)_mm512_load_si512(p));
            }
        add_channel_sums(dw, db, oc, acc, sum, K);
    }
}

/* One image under compute BF16: its lines as BF16 pairs, then weights_image_bf16 with K as a
 * constant. */
__attribute__((target("avx512f,avx512bf16")))
static void weights_image_dpbf16(float *dw, float *db, const float *dout, const float *act_out,
                                 uint16_t *bl, const float *lines, const rt_conv_shape *s,
                                 const c1_geometry *g) {
    lines_to_bf16(bl, lines, g);
    if (g->k == 3) weights_image_bf16(dw, db, dout, act_out, bl, s, g, 3);
    else weights_image_bf16(dw, db, dout, act_out, bl, s, g, 5);
}
#endif

/* The backward-weights; where ps is given, each image's output gradient is first expanded from
 * the pooled one (pool_dout, masked where pool_out <= 0) into its thread's plane. */
__attribute__((target("avx512f")))
static void backward_weights_images(float *dweight, float *dbias, const float *dout,
                                    const float *act_out, const float *pool_dout,
                                    const float *pool_out, const int32_t *argmax, const float *in,
                                    float *work, const rt_conv_shape *s, const rt_pool_shape *ps) {
    c1_geometry g = geometry_of(s);
    long in_img = (long)s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    long sums = g.dw + s->oc, sums_at = g.lines + g.blines;   /* in each slice: dweight, dbias */
    const float *mask = s->act == RT_ACT_RELU ? act_out : NULL;
    int slots = rt_slots();   /* a partial per slot, summed in slot order (rt_slots.h) */
    #pragma omp parallel num_threads(rt_slot_threads())
    {
        #pragma omp for schedule(static)
        for (int k = 0; k < slots; k++) {
            float *lines = slice_of(work, k, &g);
            float *dw = lines + sums_at, *db = dw + g.dw;
            memset(dw, 0, sizeof(float) * sums);
            for (int b = rt_slot_begin(s->n, k, slots); b < rt_slot_begin(s->n, k + 1, slots); b++) {
                shifted_lines(lines, in + b * in_img, s, &g);
                const float *dy, *y;
                if (ps) {   /* the ReLU's mask is in the pooled output */
                    long at = (long)b * s->oc * ps->oh * ps->ow;
                    maxpool2d_backward_planes_relu(lines + g.plane, pool_dout + at, pool_out + at,
                                                   argmax + at, s->oc, ps);
                    dy = lines + g.plane, y = NULL;
                } else {
                    dy = dout + b * out_img, y = mask ? mask + b * out_img : NULL;
                }
#ifdef C1_DPBF16
                if (g.bf16 && rt_cpu_has_avx512_bf16()) {
                    weights_image_dpbf16(dw, dbias ? db : NULL, dy, y, (uint16_t *)(lines + g.lines), lines, s, &g);
                    continue;
                }
#endif
                if (g.k == 3) weights_image(dw, dbias ? db : NULL, dy, y, lines, s, &g, 3);
                else weights_image(dw, dbias ? db : NULL, dy, y, lines, s, &g, 5);
            }
        }
        /* implicit barrier: every slot's sums are complete */
        #pragma omp for schedule(static)
        for (long i = 0; i < (dbias ? sums : g.dw); i++) {
            float acc = 0;
            for (int t = 0; t < slots; t++) acc += slice_of(work, t, &g)[sums_at + i];
            if (i < g.dw) dweight[i] = acc;
            else dbias[i - g.dw] = acc;
        }
    }
}

void conv2d_c1_backward_weights(float *dweight, float *dbias, const float *dout,
                                const float *act_out, const float *in, float *work,
                                const rt_conv_shape *s) {
    backward_weights_images(dweight, dbias, dout, act_out, NULL, NULL, NULL, in, work, s, NULL);
}

void conv2d_c1_backward_weights_pooled(float *dweight, float *dbias, const float *pool_dout,
                                       const float *pool_out, const int32_t *argmax,
                                       const float *in, float *work, const rt_conv_shape *s,
                                       const rt_pool_shape *ps) {
    backward_weights_images(dweight, dbias, NULL, NULL, pool_dout, pool_out, argmax, in, work, s, ps);
}

#else
int conv2d_c1_fits(const rt_conv_shape *s) { (void)s; return 0; }
long conv2d_c1_workspace_elems(const rt_conv_shape *s) { (void)s; return 0; }
void conv2d_c1_forward(float *out, const float *in, const float *weight, const float *bias,
                       float *work, const rt_conv_shape *s) {
    rt_die("conv2d of a 1-channel input: the AVX-512 kernel is not built into this runtime");
}
void conv2d_c1_backward_weights(float *dweight, float *dbias, const float *dout,
                                const float *act_out, const float *in, float *work,
                                const rt_conv_shape *s) {
    rt_die("conv2d of a 1-channel input: the AVX-512 kernel is not built into this runtime");
}
void conv2d_c1_forward_pooled(float *pool_out, int32_t *argmax, const float *in, const float *weight,
                              const float *bias, float *work, const rt_conv_shape *s,
                              const rt_pool_shape *ps) {
    rt_die("conv2d of a 1-channel input: the AVX-512 kernel is not built into this runtime");
}
void conv2d_c1_backward_weights_pooled(float *dweight, float *dbias, const float *pool_dout,
                                       const float *pool_out, const int32_t *argmax,
                                       const float *in, float *work, const rt_conv_shape *s,
                                       const rt_pool_shape *ps) {
    rt_die("conv2d of a 1-channel input: the AVX-512 kernel is not built into this runtime");
}
#endif
