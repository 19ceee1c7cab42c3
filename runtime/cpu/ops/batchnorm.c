/* Batch normalization over (N, H, W) per channel with affine gamma/beta: training (batch
 * statistics, running-stat update with torch semantics), evaluation, and backward; an
 * optional ReLU is applied in the same pass (see the fused-activation convention), and the
 * statistics can be summed over processes (synchronized batch norm, rt_bn_sync). */
#include <stddef.h>
#include <stdlib.h>
#include "rt_core.h"
#include "rt_ops.h"
#include "rt_real.h"

/* Channel sums: spans of at most SPAN values (a plane, or part of a large one) over
 * PLANE_LANES float partial sums, which vectorize without conversions and are exact enough
 * there, then the spans in double (a whole batch in float loses too much). A single running
 * sum would be one dependent add per value; the fixed combination order keeps results
 * reproducible. */
#define PLANE_LANES 16
#define SPAN 4096
/* The length of the span at `at` of a plane of hw values. */
static inline int span_at(int hw, int at) { return hw - at < SPAN ? hw - at : SPAN; }

static real_t lanes_total(const real_t acc[PLANE_LANES]) {
    real_t t = 0;
    for (int l = 0; l < PLANE_LANES; l++) t += acc[l];
    return t;
}

/* The gradient reaching the normalization: dout, or dout masked by the fused ReLU. */
static inline real_t masked(const real_t *dy, const real_t *act_out, long i) {
    return act_out && act_out[i] <= 0 ? 0 : dy[i];
}

/* ---- forward, one channel at a time: sum, sum of squared deviations, normalize ---- */

static real_t plane_sum(const real_t *x, int hw) {   /* hw <= SPAN */
    real_t acc[PLANE_LANES] = { 0 };
    int i = 0;
    for (; i + PLANE_LANES <= hw; i += PLANE_LANES)
        for (int l = 0; l < PLANE_LANES; l++) acc[l] += x[i + l];
    for (; i < hw; i++) acc[i % PLANE_LANES] += x[i];
    return lanes_total(acc);
}

static real_t plane_sq_dev(const real_t *x, int hw, real_t mean) {
    real_t acc[PLANE_LANES] = { 0 };
    int i = 0;
    for (; i + PLANE_LANES <= hw; i += PLANE_LANES)
        for (int l = 0; l < PLANE_LANES; l++) { real_t d = x[i + l] - mean; acc[l] += d * d; }
    for (; i < hw; i++) { real_t d = x[i] - mean; acc[i % PLANE_LANES] += d * d; }
    return lanes_total(acc);
}

static double channel_sum(const real_t *in, int n, int c, int hw, int ch) {
    double total = 0;
    for (int b = 0; b < n; b++)
        for (int at = 0; at < hw; at += SPAN)
            total += plane_sum(in + ((long)b * c + ch) * hw + at, span_at(hw, at));
    return total;
}

/* Second pass around the mean: stable where E[x^2] - E[x]^2 is not. */
static double channel_sq_dev(const real_t *in, int n, int c, int hw, int ch, double mean) {
    double total = 0;
    for (int b = 0; b < n; b++)
        for (int at = 0; at < hw; at += SPAN)
            total += plane_sq_dev(in + ((long)b * c + ch) * hw + at, span_at(hw, at), (real_t)mean);
    return total;
}

/* y = x*scale + shift, then the fused activation; two loops so each one vectorizes. */
static void apply_affine(real_t *y, const real_t *x, int hw, real_t scale, real_t shift, rt_act act) {
    if (act == RT_ACT_RELU)
        for (int i = 0; i < hw; i++) { real_t v = x[i] * scale + shift; y[i] = v > 0 ? v : 0; }
    else
        for (int i = 0; i < hw; i++) y[i] = x[i] * scale + shift;
}

typedef struct {
    real_t *out, *save_mean, *save_inv_std, *running_mean, *running_var;
    const real_t *in, *gamma, *beta;
    int n, c, hw;
    double m;               /* samples behind the statistics (all ranks' with sync) */
    real_t momentum, eps;
    rt_act act;
} bn_fwd;

/* Statistics from the channel's sums, running-stat update, normalized output. */
static void channel_finish(const bn_fwd *f, int ch, double sum, double sq) {
    double mean = sum / f->m, var = sq / f->m;   /* biased: what normalizes the batch */
    real_t inv_std = (real_t)(1.0 / sqrt(var + f->eps));
    f->save_mean[ch] = (real_t)mean;
    f->save_inv_std[ch] = inv_std;
    double unbiased = f->m > 1 ? sq / (f->m - 1) : var;   /* torch's running estimate */
    f->running_mean[ch] = (real_t)((1 - f->momentum) * f->running_mean[ch] + f->momentum * mean);
    f->running_var[ch] = (real_t)((1 - f->momentum) * f->running_var[ch] + f->momentum * unbiased);
    real_t scale = f->gamma[ch] * inv_std, shift = f->beta[ch] - (real_t)mean * scale;
    for (int b = 0; b < f->n; b++) {
        long base = ((long)b * f->c + ch) * f->hw;
        apply_affine(f->out + base, f->in + base, f->hw, scale, shift, f->act);
    }
}

void RT_FN(batchnorm_forward_train_sync)(real_t *out, real_t *save_mean, real_t *save_inv_std,
                                         real_t *running_mean, real_t *running_var,
                                         const real_t *in, const real_t *gamma,
                                         const real_t *beta, int n, int c, int hw,
                                         real_t momentum, real_t eps, rt_act act,
                                         const rt_bn_sync *sync) {
    bn_fwd f = { out, save_mean, save_inv_std, running_mean, running_var, in, gamma, beta,
                 n, c, hw, (double)n * hw * (sync ? sync->ranks : 1), momentum, eps, act };
    if (!sync) {   /* each channel's three passes back to back, while its data is in cache */
        #pragma omp parallel for schedule(static)
        for (int ch = 0; ch < c; ch++) {
            double sum = channel_sum(in, n, c, hw, ch);
            channel_finish(&f, ch, sum, channel_sq_dev(in, n, c, hw, ch, sum / f.m));
        }
        return;
    }
    /* Synchronized: the same passes, with the sums of all channels all-reduced in between. */
    double *sum = rt_xcalloc((size_t)c * 2, sizeof *sum), *sq = sum + c;
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) sum[ch] = channel_sum(in, n, c, hw, ch);
    sync->sum(sync->ctx, sum, c, "the sync batch norm mean");
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) sq[ch] = channel_sq_dev(in, n, c, hw, ch, sum[ch] / f.m);
    sync->sum(sync->ctx, sq, c, "the sync batch norm variance");
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) channel_finish(&f, ch, sum[ch], sq[ch]);
    free(sum);
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

void RT_FN(batchnorm_forward_eval)(real_t *out, const real_t *in, const real_t *gamma,
                                   const real_t *beta, const real_t *running_mean,
                                   const real_t *running_var, int n, int c, int hw, real_t eps,
                                   rt_act act) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            real_t scale = gamma[ch] / rt_sqrt(running_var[ch] + eps);
            real_t shift = beta[ch] - running_mean[ch] * scale;
            long base = ((long)b * c + ch) * hw;
            apply_affine(out + base, in + base, hw, scale, shift, act);
        }
}

/* ---- backward: din = gamma*inv_std/M * (M*dout - sum(dout) - xhat*sum(dout*xhat)); xhat is
 * recomputed from in and the saved statistics rather than stored ---- */

typedef struct {
    real_t *din, *dgamma, *dbeta;
    const real_t *dout, *act_out, *in, *gamma, *save_mean, *save_inv_std;
    int n, c, hw;
    double m;
} bn_bwd;

/* sum(d) and sum(d * xhat) over one plane, d = dy (ao NULL) or dy masked where ao <= 0, added
 * to acc[0..1] (float lanes within the plane, as for the forward's sums). The mask is a
 * select, not a branch, and each case has its own loop. */
static void plane_grad_sums(double acc[2], const real_t *x, const real_t *dy, const real_t *ao,
                            int hw, real_t mean, real_t inv_std) {
    real_t sd[PLANE_LANES] = { 0 }, sx[PLANE_LANES] = { 0 };
    int i = 0;
    if (ao) {
        for (; i + PLANE_LANES <= hw; i += PLANE_LANES)
            for (int l = 0; l < PLANE_LANES; l++) {
                real_t d = ao[i + l] > 0 ? dy[i + l] : 0;
                sd[l] += d;
                sx[l] += d * ((x[i + l] - mean) * inv_std);
            }
    } else {
        for (; i + PLANE_LANES <= hw; i += PLANE_LANES)
            for (int l = 0; l < PLANE_LANES; l++) {
                real_t d = dy[i + l];
                sd[l] += d;
                sx[l] += d * ((x[i + l] - mean) * inv_std);
            }
    }
    for (; i < hw; i++) {
        real_t d = masked(dy, ao, i);
        sd[i % PLANE_LANES] += d;
        sx[i % PLANE_LANES] += d * ((x[i] - mean) * inv_std);
    }
    for (int l = 0; l < PLANE_LANES; l++) acc[0] += sd[l], acc[1] += sx[l];
}

/* sum(dy) and sum(dy * xhat) of one channel, dy masked by a fused ReLU. */
static void channel_grad_sums(const bn_bwd *g, int ch, double *s_dy, double *s_dy_xhat) {
    double acc[2] = { 0, 0 };
    for (int b = 0; b < g->n; b++)
        for (int at = 0; at < g->hw; at += SPAN) {
            long base = ((long)b * g->c + ch) * g->hw + at;
            plane_grad_sums(acc, g->in + base, g->dout + base,
                            g->act_out ? g->act_out + base : NULL,
                            span_at(g->hw, at), g->save_mean[ch],
                            g->save_inv_std[ch]);
        }
    *s_dy = acc[0];
    *s_dy_xhat = acc[1];
}

static void channel_din(const bn_bwd *g, int ch, double sum_dy, double sum_dy_xhat) {
    real_t mean = g->save_mean[ch], inv_std = g->save_inv_std[ch];
    real_t k = g->gamma[ch] * inv_std / (real_t)g->m, m = (real_t)g->m;
    real_t s_dy = (real_t)sum_dy, s_dy_xhat = (real_t)sum_dy_xhat;
    for (int b = 0; b < g->n; b++) {
        long base = ((long)b * g->c + ch) * g->hw;
        const real_t *x = g->in + base, *dy = g->dout + base;
        const real_t *ao = g->act_out ? g->act_out + base : NULL;
        real_t *dx = g->din + base;
        if (ao)
            for (int i = 0; i < g->hw; i++) {
                real_t xhat = (x[i] - mean) * inv_std, d = ao[i] > 0 ? dy[i] : 0;
                dx[i] = k * (m * d - s_dy - xhat * s_dy_xhat);
            }
        else
            for (int i = 0; i < g->hw; i++) {
                real_t xhat = (x[i] - mean) * inv_std;
                dx[i] = k * (m * dy[i] - s_dy - xhat * s_dy_xhat);
            }
    }
}

void RT_FN(batchnorm_backward_sync)(real_t *din, real_t *dgamma, real_t *dbeta,
                                    const real_t *dout, const real_t *act_out, const real_t *in,
                                    const real_t *gamma, const real_t *save_mean,
                                    const real_t *save_inv_std, int n, int c, int hw,
                                    const rt_bn_sync *sync) {
    bn_bwd g = { din, dgamma, dbeta, dout, act_out, in, gamma, save_mean, save_inv_std, n, c, hw,
                 (double)n * hw * (sync ? sync->ranks : 1) };
    if (!sync) {
        #pragma omp parallel for schedule(static)
        for (int ch = 0; ch < c; ch++) {
            double s_dy, s_dy_xhat;
            channel_grad_sums(&g, ch, &s_dy, &s_dy_xhat);
            dgamma[ch] = (real_t)s_dy_xhat;
            dbeta[ch] = (real_t)s_dy;
            if (din) channel_din(&g, ch, s_dy, s_dy_xhat);
        }
        return;
    }
    /* dgamma and dbeta stay this rank's share (the gradient all-reduce adds the others');
     * din needs the global sums. */
    double *sums = rt_xcalloc((size_t)c * 2, sizeof *sums);   /* [ch]: dy, [c + ch]: dy*xhat */
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        channel_grad_sums(&g, ch, &sums[ch], &sums[c + ch]);
        dgamma[ch] = (real_t)sums[c + ch];
        dbeta[ch] = (real_t)sums[ch];
    }
    if (din) {
        sync->sum(sync->ctx, sums, 2 * c, "the sync batch norm gradient sums");
        #pragma omp parallel for schedule(static)
        for (int ch = 0; ch < c; ch++) channel_din(&g, ch, sums[ch], sums[c + ch]);
    }
    free(sums);
}

void RT_FN(batchnorm_backward)(real_t *din /*N,C,HW or NULL*/, real_t *dgamma /*C*/,
                               real_t *dbeta /*C*/, const real_t *dout,
                               const real_t *act_out /*N,C,HW or NULL*/, const real_t *in,
                               const real_t *gamma, const real_t *save_mean,
                               const real_t *save_inv_std, int n, int c, int hw) {
    RT_FN(batchnorm_backward_sync)(din, dgamma, dbeta, dout, act_out, in, gamma, save_mean,
                                   save_inv_std, n, c, hw, NULL);
}
