/* Batch normalization over (N, H, W) per channel with affine gamma/beta: training (batch
 * statistics, running-stat update with torch semantics), evaluation, and backward; an
 * optional ReLU is applied in the same pass (see the fused-activation convention), and the
 * statistics can be summed over processes (synchronized batch norm, rt_bn_sync). The
 * batchnorm_add ops also add a residual before the ReLU (a residual block's closing
 * bn + add + relu in one pass, so the normalized tensor is never stored).
 * Layout of the work: every pass sweeps the tensor sample by sample, in memory order. The
 * sums (statistics, gradient sums) give each thread a range of channels and carry a block of
 * them at once, reading a sample's block of planes as one run; the passes that write (the
 * normalized output, the input gradient) take each thread a range of whole planes. A channel
 * at a time, hopping c*hw apart from plane to plane, ran at half the speed: writes in runs of
 * one plane (3 KB at 28x28) were half as fast as a contiguous sweep (bench/bn_rate.c). */
#include <omp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_ops.h"
#include "rt_real.h"
#include "vec16.h"

/* ---- a channel's values 16 at a time (rvec, rsel: vec16.h) ----
 * A channel is n planes of hw values, c*hw apart. Its sums run in 16 float lanes over spans of
 * about SPAN values (exact enough there, and no conversion per value), then each span's lanes
 * are added to 16 double lanes (a whole batch in float loses too much), which are added up once
 * per channel. The order is fixed by n and hw alone, so results are reproducible and do not
 * depend on the thread count. A plane's last hw % 16 values are a partial vector. */
#define SPAN 4096
typedef double dvec __attribute__((vector_size(16 * sizeof(double))));

static inline rvec load16(const real_t *p) { rvec v; memcpy(&v, p, sizeof v); return v; }
static inline void store16(real_t *p, rvec v) { memcpy(p, &v, sizeof v); }
/* The first len (< 16) values at p, the other lanes `fill`: one masked load where AVX-512
 * has it (the float build), lane by lane elsewhere. */
#if defined(__AVX512F__) && !defined(RT_REAL_DOUBLE)
#include <immintrin.h>
static inline rvec load_part(const real_t *p, int len, real_t fill) {
    return (rvec)_mm512_mask_loadu_ps(_mm512_set1_ps(fill), (__mmask16)((1u << len) - 1), p);
}
static inline void store_part(real_t *p, rvec v, int len) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << len) - 1), (__m512)v);
}
#else
static inline rvec load_part(const real_t *p, int len, real_t fill) {
    rvec v = fill - (rvec){ 0 };
    for (int l = 0; l < len; l++) v[l] = p[l];
    return v;
}
static inline void store_part(real_t *p, rvec v, int len) {
    for (int l = 0; l < len; l++) p[l] = v[l];
}
#endif
static inline rvec relu16(rvec v) { return (rvec)((rsel)v & (v > 0)); }
/* v where mask_src > 0, else 0: the gradient through a fused ReLU. */
static inline rvec pass_where_positive(rvec v, rvec mask_src) {
    return (rvec)((rsel)v & (mask_src > 0));
}
static inline double lanes_total(const dvec *v) {
    double t = 0;
    for (int l = 0; l < 16; l++) t += (*v)[l];
    return t;
}

/* What a span kernel reads: one channel's values from base to base + len. */
typedef struct {
    const real_t *x, *dy;   /* dy only for the gradient sums */
    real_t mean;
    int relu;               /* the gradient sums: dy passes where x*scale + shift > 0 */
    real_t scale, shift;
    /* batchnorm_add_backward: dy passes where mask > 0 (the add's ReLU output), and the
     * masked dy is written back to dy_masked (dy itself: the residual's gradient too) */
    const real_t *mask;
    real_t *dy_masked;
} span_src;
/* Adds one span's contribution to the float lanes part[0..1]. Span kernels and block_reduce
 * are always inlined, so that the function pointer becomes a direct, inlined call. */
#define ALWAYS_INLINE static inline __attribute__((always_inline))
typedef void (*span_fn)(rvec part[2], const span_src *s, long base, int len);

static inline int span_at(int hw, int at) { return hw - at < SPAN ? hw - at : SPAN; }

static inline void flush_lanes(dvec total[2], rvec part[2]) {
    for (int k = 0; k < 2; k++) {
        total[k] += __builtin_convertvector(part[k], dvec);
        part[k] = (rvec){ 0 };
    }
}

/* A reduction's running state for one channel: the float lanes of the current span, the
 * double lanes of the finished ones, and how many values the current span holds. */
typedef struct {
    rvec part[2];
    dvec total[2];
    int in_part;
} lane_sums;

/* Channels a thread's sweep carries at once (their lane_sums: 12 KB, in L1). */
#define BLOCK 32

/* out0[ch], out1[ch] = the totals of what fn adds to part[0], part[1] for channels ch0 to
 * ch0 + cnt - 1, src[j] channel ch0 + j's. Each channel's spans are added in the same order
 * as one channel at a time would (sample by sample, fixed by n and hw alone), but the sweep
 * goes sample by sample through the block, so its reads run over a sample's cnt*hw
 * contiguous values rather than hopping c*hw apart plane by plane. Inlined with a constant fn,
 * so each caller gets its own loop. */
ALWAYS_INLINE void block_reduce(double *out0, double *out1, span_fn fn, const span_src *src, int n, int c,
                                int hw, int ch0, int cnt) {
    lane_sums st[BLOCK];
    memset(st, 0, sizeof st[0] * (size_t)cnt);
    for (int b = 0; b < n; b++)
        for (int j = 0; j < cnt; j++) {
            rvec part[2] = { st[j].part[0], st[j].part[1] };
            long base = ((long)b * c + ch0 + j) * hw;
            for (int at = 0; at < hw; at += SPAN) {
                int len = span_at(hw, at);
                fn(part, &src[j], base + at, len);
                if ((st[j].in_part += len) >= SPAN) {
                    flush_lanes(st[j].total, part);
                    st[j].in_part = 0;
                }
            }
            st[j].part[0] = part[0], st[j].part[1] = part[1];
        }
    for (int j = 0; j < cnt; j++) {
        flush_lanes(st[j].total, st[j].part);
        out0[ch0 + j] = lanes_total(&st[j].total[0]);
        if (out1) out1[ch0 + j] = lanes_total(&st[j].total[1]);
    }
}

/* The reducing passes over all channels, each thread sweeping its share of them: the sum,
 * the squared deviations around sum/m (forward), both of these block by block (the second
 * while the block is still in cache), the gradient sums (backward). */
enum reduce_pass { PASS_SUM, PASS_SQ_DEV, PASS_STATS, PASS_GRAD };
/* PASS_STATS: at most this many bytes of x in a block, so that the second pass finds it in
 * L2 (1 MB a core here). Taken where a block holds STATS_BLOCK_MIN channels or more: with
 * fewer, the sample-by-sample sweep has only short runs to read, and two whole sweeps over
 * the thread's channels were faster (bench/bn_rate.c at 28x28: 1.23-1.38 ms against 1.45-1.52
 * for one channel a block). */
#define STATS_BLOCK_BYTES (512 * 1024)
#define STATS_BLOCK_MIN 4
struct bn_bwd;
typedef struct {
    enum reduce_pass pass;
    const real_t *x;
    const double *sum;       /* PASS_SQ_DEV: each channel's sum, and m the count behind it */
    double m;
    const struct bn_bwd *g;  /* PASS_GRAD */
} pass_job;
static void reduce_channels(double *out0, double *out1, const pass_job *job, int n, int c, int hw);

/* This thread's share of c channels: a contiguous range, so its sweeps stay contiguous. */
static void thread_channels(int c, int *lo, int *hi) {
    int t = omp_get_thread_num(), threads = omp_get_num_threads();
    *lo = (int)((long)c * t / threads);
    *hi = (int)((long)c * (t + 1) / threads);
}

/* ---- forward: sum, sum of squared deviations, normalize ---- */

ALWAYS_INLINE void span_sum(rvec part[2], const span_src *s, long base, int len) {
    const real_t *x = s->x + base;
    rvec acc = part[0];
    int i = 0;
    for (; i + 16 <= len; i += 16) acc += load16(x + i);
    if (i < len) acc += load_part(x + i, len - i, 0);
    part[0] = acc;
}

/* Second pass around the mean: stable where E[x^2] - E[x]^2 is not. */
ALWAYS_INLINE void span_sq_dev(rvec part[2], const span_src *s, long base, int len) {
    const real_t *x = s->x + base;
    rvec acc = part[0], d;
    int i = 0;
    for (; i + 16 <= len; i += 16) { d = load16(x + i) - s->mean; acc += d * d; }
    if (i < len) { d = load_part(x + i, len - i, s->mean) - s->mean; acc += d * d; }
    part[0] = acc;
}

/* The normalization as y = x*scale + shift. The backward recomputes the fused ReLU's mask
 * with these same operations on the same saved values, so its mask is the forward's, bit
 * for bit (GCC under -std=c11 contracts no a*b + c into a fused multiply-add, here or there;
 * tests/unit/test_sync_bn.c checks that the two masks agree). */
static inline void affine_of(real_t *scale, real_t *shift, real_t gamma, real_t beta,
                             real_t mean, real_t inv_std) {
    *scale = gamma * inv_std;
    *shift = beta - mean * *scale;
}

/* The gradient reaching the normalization from dy at x: dy, or dy where the fused ReLU's
 * input x*scale + shift was positive (a select, not a branch). */
static inline rvec grad_at(rvec dy, rvec x, const span_src *s) {
    return s->relu ? pass_where_positive(dy, x * s->scale + s->shift) : dy;
}

/* y = x*scale + shift over one plane, plus the residual r where given (rounded after the
 * affine map, as a separate add would), then the fused activation. */
static void apply_affine(real_t *y, const real_t *x, const real_t *r, int hw, real_t scale, real_t shift,
                         rt_act act) {
    int i = 0;
    rvec v;
    for (; i + 16 <= hw; i += 16) {
        v = load16(x + i) * scale + shift;
        if (r) v += load16(r + i);
        store16(y + i, act == RT_ACT_RELU ? relu16(v) : v);
    }
    if (i < hw) {
        v = load_part(x + i, hw - i, 0) * scale + shift;
        if (r) v += load_part(r + i, hw - i, 0);
        store_part(y + i, act == RT_ACT_RELU ? relu16(v) : v, hw - i);
    }
}

/* y = x*scale[ch] + shift[ch] (+ residual) through the activation over the whole tensor, in
 * memory order: each thread a contiguous range of planes. */
static void apply_sweep(real_t *out, const real_t *in, const real_t *residual, const real_t *scale,
                        const real_t *shift, int n, int c, int hw, rt_act act) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            long base = ((long)b * c + ch) * hw;
            apply_affine(out + base, in + base, residual ? residual + base : NULL, hw, scale[ch], shift[ch],
                         act);
        }
}

typedef struct {
    real_t *out, *save_mean, *save_inv_std, *running_mean, *running_var;
    const real_t *in, *gamma, *beta;
    const real_t *residual;   /* added before the activation (batchnorm_add), or NULL */
    int n, c, hw;
    double m;               /* samples behind the statistics (all ranks' with sync) */
    real_t momentum, eps;
    rt_act act;
    real_t *scale, *shift;  /* [c] each: the normalization as an affine map, for the sweep */
} bn_fwd;

/* Statistics from the channel's sums, running-stat update, the channel's affine map. */
static void channel_finish(const bn_fwd *f, int ch, double sum, double sq) {
    double mean = sum / f->m, var = sq / f->m;   /* biased: what normalizes the batch */
    real_t inv_std = (real_t)(1.0 / sqrt(var + f->eps));
    f->save_mean[ch] = (real_t)mean;
    f->save_inv_std[ch] = inv_std;
    double unbiased = f->m > 1 ? sq / (f->m - 1) : var;   /* torch's running estimate */
    f->running_mean[ch] = (real_t)((1 - f->momentum) * f->running_mean[ch] + f->momentum * mean);
    f->running_var[ch] = (real_t)((1 - f->momentum) * f->running_var[ch] + f->momentum * unbiased);
    affine_of(&f->scale[ch], &f->shift[ch], f->gamma[ch], f->beta[ch], (real_t)mean, inv_std);
}

static void forward_train(const bn_fwd *fp, const rt_bn_sync *sync) {
    bn_fwd f = *fp;
    const real_t *in = f.in;
    int n = f.n, c = f.c, hw = f.hw;
    double *sum = rt_xcalloc((size_t)c * 2, sizeof *sum), *sq = sum + c;
    real_t *affine = rt_xcalloc((size_t)c * 2, sizeof *affine);
    f.scale = affine, f.shift = affine + c;
    /* two passes (two-pass variance: stable where E[x^2] - E[x]^2 is not); with sync, the
     * sums of all ranks between them */
    if (!sync && STATS_BLOCK_BYTES / ((long)n * hw * (long)sizeof(real_t)) >= STATS_BLOCK_MIN)
        reduce_channels(sum, sq, &(pass_job){ PASS_STATS, in, NULL, f.m, NULL }, n, c, hw);
    else {
        reduce_channels(sum, NULL, &(pass_job){ PASS_SUM, in, NULL, 0, NULL }, n, c, hw);
        if (sync) sync->sum(sync->ctx, sum, c, "the sync batch norm mean");
        reduce_channels(sq, NULL, &(pass_job){ PASS_SQ_DEV, in, sum, f.m, NULL }, n, c, hw);
        if (sync) sync->sum(sync->ctx, sq, c, "the sync batch norm variance");
    }
    for (int ch = 0; ch < c; ch++) channel_finish(&f, ch, sum[ch], sq[ch]);
    apply_sweep(f.out, in, f.residual, f.scale, f.shift, n, c, hw, f.act);
    free(sum);
    free(affine);
}

void RT_FN(batchnorm_forward_train_sync)(real_t *out, real_t *save_mean, real_t *save_inv_std,
                                         real_t *running_mean, real_t *running_var,
                                         const real_t *in, const real_t *gamma,
                                         const real_t *beta, int n, int c, int hw,
                                         real_t momentum, real_t eps, rt_act act,
                                         const rt_bn_sync *sync) {
    forward_train(&(bn_fwd){ out, save_mean, save_inv_std, running_mean, running_var, in, gamma, beta, NULL,
                             n, c, hw, (double)n * hw * (sync ? sync->ranks : 1), momentum, eps, act, NULL, NULL },
                  sync);
}

void RT_FN(batchnorm_add_forward_train)(real_t *out, real_t *save_mean, real_t *save_inv_std,
                                        real_t *running_mean, real_t *running_var, const real_t *in,
                                        const real_t *residual, const real_t *gamma, const real_t *beta,
                                        int n, int c, int hw, real_t momentum, real_t eps, rt_act act) {
    forward_train(&(bn_fwd){ out, save_mean, save_inv_std, running_mean, running_var, in, gamma, beta,
                             residual, n, c, hw, (double)n * hw, momentum, eps, act, NULL, NULL },
                  NULL);
}

void RT_FN(batchnorm_forward_train)(real_t *out /*N,C,HW*/, real_t *save_mean /*C*/,
                                    real_t *save_inv_std /*C*/, real_t *running_mean /*C*/,
                                    real_t *running_var /*C*/, const real_t *in /*N,C,HW*/,
                                    const real_t *gamma /*C*/, const real_t *beta /*C*/,
                                    int n, int c, int hw, real_t momentum, real_t eps,
                                    rt_act act) {
    RT_FN(batchnorm_forward_train_sync)(out, save_mean, save_inv_std, running_mean, running_var,
                                        in, gamma, beta, n, c, hw, momentum, eps, act, NULL);
}

void RT_FN(batchnorm_add_forward_eval)(real_t *out, const real_t *in, const real_t *residual,
                                       const real_t *gamma, const real_t *beta,
                                       const real_t *running_mean, const real_t *running_var, int n,
                                       int c, int hw, real_t eps, rt_act act) {
    real_t *scale = rt_xcalloc((size_t)c * 2, sizeof *scale), *shift = scale + c;
    for (int ch = 0; ch < c; ch++) {
        scale[ch] = gamma[ch] / rt_sqrt(running_var[ch] + eps);
        shift[ch] = beta[ch] - running_mean[ch] * scale[ch];
    }
    apply_sweep(out, in, residual, scale, shift, n, c, hw, act);
    free(scale);
}

void RT_FN(batchnorm_forward_eval)(real_t *out, const real_t *in, const real_t *gamma,
                                   const real_t *beta, const real_t *running_mean,
                                   const real_t *running_var, int n, int c, int hw, real_t eps,
                                   rt_act act) {
    RT_FN(batchnorm_add_forward_eval)(out, in, NULL, gamma, beta, running_mean, running_var, n, c, hw,
                                      eps, act);
}

/* ---- backward: din = gamma*inv_std/M * (M*dout - sum(dout) - xhat*sum(dout*xhat)); xhat is
 * recomputed from in and the saved statistics rather than stored ---- */

typedef struct bn_bwd {
    real_t *din, *dgamma, *dbeta;
    const real_t *dout, *in, *gamma, *beta, *save_mean, *save_inv_std;
    int n, c, hw;
    double m;
    rt_act act;
    const real_t *mask;   /* batchnorm_add_backward: the add's ReLU output, or NULL */
} bn_bwd;

/* What the backward's passes over channel ch read, the fused ReLU's mask included. */
static span_src grad_src(const bn_bwd *g, int ch) {
    /* the masked gradient goes back into dout, which the residual's gradient shares */
    span_src s = { g->in, g->dout, g->save_mean[ch], g->act == RT_ACT_RELU, 0, 0, g->mask,
                   (real_t *)g->dout };
    affine_of(&s.scale, &s.shift, g->gamma[ch], g->beta[ch], g->save_mean[ch],
              g->save_inv_std[ch]);
    return s;
}

/* sum(d) and sum(d * (x - mean)) over one span, d the gradient at the normalization's output
 * (grad_at, or dy masked by the add's ReLU output, then stored: the lines are in cache, and the
 * input gradient's sweep reads d without the mask); the ReLU, add-mask and plain cases each
 * get their own loop. */
ALWAYS_INLINE void span_grad(rvec part[2], const span_src *s, long base, int len) {
    const real_t *x = s->x + base, *dy = s->dy + base;
    rvec sd = part[0], sx = part[1], d, xv;
    int i = 0;
    if (s->mask) {
        const real_t *mask = s->mask + base;
        real_t *dyw = s->dy_masked + base;
        for (; i + 16 <= len; i += 16) {
            d = pass_where_positive(load16(dy + i), load16(mask + i));
            store16(dyw + i, d);
            sd += d;
            sx += d * (load16(x + i) - s->mean);
        }
        if (i < len) {
            d = pass_where_positive(load_part(dy + i, len - i, 0), load_part(mask + i, len - i, 0));
            store_part(dyw + i, d, len - i);
            sd += d;
            sx += d * (load_part(x + i, len - i, s->mean) - s->mean);
        }
        part[0] = sd;
        part[1] = sx;
        return;
    }
    if (s->relu)
        for (; i + 16 <= len; i += 16) {
            xv = load16(x + i);
            d = pass_where_positive(load16(dy + i), xv * s->scale + s->shift);
            sd += d;
            sx += d * (xv - s->mean);
        }
    else
        for (; i + 16 <= len; i += 16) {
            d = load16(dy + i);
            sd += d;
            sx += d * (load16(x + i) - s->mean);
        }
    if (i < len) {   /* dy is 0 past the end, and so is d */
        xv = load_part(x + i, len - i, s->mean);
        d = grad_at(load_part(dy + i, len - i, 0), xv, s);
        sd += d;
        sx += d * (xv - s->mean);
    }
    part[0] = sd;
    part[1] = sx;
}

/* The span source of channel ch for a pass. */
static span_src pass_src(const pass_job *job, int ch) {
    switch (job->pass) {
    case PASS_SUM:
    case PASS_STATS: return (span_src){ .x = job->x };
    case PASS_SQ_DEV: return (span_src){ .x = job->x, .mean = (real_t)(job->sum[ch] / job->m) };
    default: return grad_src(job->g, ch);
    }
}

static void reduce_channels(double *out0, double *out1, const pass_job *job, int n, int c, int hw) {
    #pragma omp parallel
    {
        int lo, hi;
        thread_channels(c, &lo, &hi);
        span_src src[BLOCK];
        long block = job->pass == PASS_STATS ? STATS_BLOCK_BYTES / ((long)n * hw * (long)sizeof(real_t)) : BLOCK;
        block = block < 1 ? 1 : block > BLOCK ? BLOCK : block;
        for (int ch0 = lo; ch0 < hi; ch0 += (int)block) {
            int cnt = hi - ch0 < block ? hi - ch0 : (int)block;
            for (int j = 0; j < cnt; j++) src[j] = pass_src(job, ch0 + j);
            switch (job->pass) {   /* each pass its own inlined sweep */
            case PASS_SUM: block_reduce(out0, out1, span_sum, src, n, c, hw, ch0, cnt); break;
            case PASS_SQ_DEV: block_reduce(out0, out1, span_sq_dev, src, n, c, hw, ch0, cnt); break;
            case PASS_STATS:   /* out0: the sums, out1: the squared deviations */
                block_reduce(out0, NULL, span_sum, src, n, c, hw, ch0, cnt);
                for (int j = 0; j < cnt; j++) src[j].mean = (real_t)(out0[ch0 + j] / job->m);
                block_reduce(out1, NULL, span_sq_dev, src, n, c, hw, ch0, cnt);
                break;
            case PASS_GRAD: block_reduce(out0, out1, span_grad, src, n, c, hw, ch0, cnt); break;
            }
        }
    }
}

/* din = k * (m*d - sum_d - xhat * sum_d_xhat) over the plane at base, xhat * sum_d_xhat folded
 * into (x - mean) * t; d is dy through the fused ReLU (the add's mask was applied to dy by the
 * sums' pass). */
static void plane_din(real_t *dx, long base, int hw, const span_src *s, real_t k, real_t m, real_t s_dy,
                      real_t t) {
    const real_t *x = s->x + base, *dy = s->dy + base;
    int i = 0;
    rvec d, xv;
    dx += base;
    if (s->relu)
        for (; i + 16 <= hw; i += 16) {
            xv = load16(x + i);
            d = pass_where_positive(load16(dy + i), xv * s->scale + s->shift);
            store16(dx + i, k * (m * d - s_dy - (xv - s->mean) * t));
        }
    else
        for (; i + 16 <= hw; i += 16) {
            d = load16(dy + i);
            store16(dx + i, k * (m * d - s_dy - (load16(x + i) - s->mean) * t));
        }
    if (i < hw) {
        xv = load_part(x + i, hw - i, s->mean);
        d = grad_at(load_part(dy + i, hw - i, 0), xv, s);
        store_part(dx + i, k * (m * d - s_dy - (xv - s->mean) * t), hw - i);
    }
}

/* The input gradient over the whole tensor in memory order, from each channel's sums:
 * sums[ch] of d, sums[c + ch] of d * xhat. */
static void din_sweep(const bn_bwd *g, const double *sums) {
    int n = g->n, c = g->c, hw = g->hw;
    /* each channel's terms once, not once a plane (16384 planes at 7x7) */
    typedef struct { span_src s; real_t k, s_dy, t; } din_terms;
    din_terms *terms = rt_xcalloc((size_t)c, sizeof *terms);
    for (int ch = 0; ch < c; ch++) {
        real_t inv_std = g->save_inv_std[ch];
        terms[ch] = (din_terms){ grad_src(g, ch), g->gamma[ch] * inv_std / (real_t)g->m, (real_t)sums[ch],
                                 inv_std * (real_t)sums[c + ch] };
    }
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            const din_terms *d = &terms[ch];
            plane_din(g->din, ((long)b * c + ch) * hw, hw, &d->s, d->k, (real_t)g->m, d->s_dy, d->t);
        }
    free(terms);
}

static void backward(const bn_bwd *gp, const rt_bn_sync *sync) {
    bn_bwd g = *gp;
    real_t *dgamma = g.dgamma, *dbeta = g.dbeta;
    int c = g.c;
    /* dgamma and dbeta stay this rank's share (the gradient all-reduce adds the others');
     * din needs the global sums. */
    double *sums = rt_xcalloc((size_t)c * 2, sizeof *sums);   /* [ch]: dy, [c + ch]: dy*xhat */
    reduce_channels(sums, sums + c, &(pass_job){ PASS_GRAD, NULL, NULL, 0, &g }, g.n, c, g.hw);
    for (int ch = 0; ch < c; ch++) {
        sums[c + ch] *= g.save_inv_std[ch];   /* sum(d * (x - mean)) -> sum(d * xhat) */
        dgamma[ch] = (real_t)sums[c + ch];
        dbeta[ch] = (real_t)sums[ch];
    }
    if (g.din && sync) sync->sum(sync->ctx, sums, 2 * c, "the sync batch norm gradient sums");
    if (g.din) din_sweep(&g, sums);
    free(sums);
}

void RT_FN(batchnorm_backward_sync)(real_t *din, real_t *dgamma, real_t *dbeta,
                                    const real_t *dout, const real_t *in, const real_t *gamma,
                                    const real_t *beta, const real_t *save_mean,
                                    const real_t *save_inv_std, int n, int c, int hw, rt_act act,
                                    const rt_bn_sync *sync) {
    bn_bwd g = { din, dgamma, dbeta, dout, in, gamma, beta, save_mean, save_inv_std, n, c, hw,
                 (double)n * hw * (sync ? sync->ranks : 1), act, NULL };
    backward(&g, sync);
}

void RT_FN(batchnorm_backward)(real_t *din /*N,C,HW or NULL*/, real_t *dgamma /*C*/,
                               real_t *dbeta /*C*/, const real_t *dout /*N,C,HW*/,
                               const real_t *in /*N,C,HW*/, const real_t *gamma /*C*/,
                               const real_t *beta /*C*/, const real_t *save_mean /*C*/,
                               const real_t *save_inv_std /*C*/, int n, int c, int hw,
                               rt_act act) {
    RT_FN(batchnorm_backward_sync)(din, dgamma, dbeta, dout, in, gamma, beta, save_mean,
                                   save_inv_std, n, c, hw, act, NULL);
}

void RT_FN(batchnorm_add_backward)(real_t *din, real_t *dgamma, real_t *dbeta, real_t *dout,
                                   const real_t *act_out, const real_t *in, const real_t *gamma,
                                   const real_t *beta, const real_t *save_mean,
                                   const real_t *save_inv_std, int n, int c, int hw) {
    backward(&(bn_bwd){ din, dgamma, dbeta, dout, in, gamma, beta, save_mean, save_inv_std, n, c, hw,
                        (double)n * hw, RT_ACT_NONE, act_out },
             NULL);
}
