/* Batch normalization over (N, H, W) per channel with affine gamma/beta: training (batch
 * statistics, running-stat update with torch semantics), evaluation, and backward; an
 * optional ReLU is applied in the same pass (see the fused-activation convention). */
#include <stddef.h>
#include "rt_ops.h"
#include "rt_real.h"

/* y = x*scale + shift, then the fused activation; two loops so each one vectorizes. */
static void apply_affine(real_t *y, const real_t *x, int hw, real_t scale, real_t shift, rt_act act) {
    if (act == RT_ACT_RELU)
        for (int i = 0; i < hw; i++) { real_t v = x[i] * scale + shift; y[i] = v > 0 ? v : 0; }
    else
        for (int i = 0; i < hw; i++) y[i] = x[i] * scale + shift;
}

/* Channel sums are taken in double (a whole batch loses too much in float) over LANES
 * independent partial sums: a single running double sum is one dependent add per element and
 * cannot vectorize; lanes can, and their fixed combination order keeps results reproducible. */
#define LANES 8

/* sum of x[i] and of (x[i] - mean)^2 over one plane, added to acc */
static void plane_sum(double acc[LANES], const real_t *x, int hw) {
    int i = 0;
    for (; i + LANES <= hw; i += LANES)
        for (int l = 0; l < LANES; l++) acc[l] += x[i + l];
    for (; i < hw; i++) acc[i % LANES] += x[i];
}
static void plane_sq_dev(double acc[LANES], const real_t *x, int hw, double mean) {
    int i = 0;
    for (; i + LANES <= hw; i += LANES)
        for (int l = 0; l < LANES; l++) { double d = x[i + l] - mean; acc[l] += d * d; }
    for (; i < hw; i++) { double d = x[i] - mean; acc[i % LANES] += d * d; }
}
static double lanes_total(const double acc[LANES]) {
    double t = 0;
    for (int l = 0; l < LANES; l++) t += acc[l];
    return t;
}

/* The gradient reaching the normalization: dout, or dout masked by the fused ReLU. */
static inline real_t masked(const real_t *dy, const real_t *act_out, long i) {
    return act_out && act_out[i] <= 0 ? 0 : dy[i];
}

void RT_FN(batchnorm_forward_train)(real_t *out /*N,C,HW*/, real_t *save_mean /*C*/,
                                    real_t *save_inv_std /*C*/, real_t *running_mean /*C*/,
                                    real_t *running_var /*C*/, const real_t *in /*N,C,HW*/,
                                    const real_t *gamma /*C*/, const real_t *beta /*C*/,
                                    int n, int c, int hw, real_t momentum, real_t eps,
                                    rt_act act) {
    long m = (long)n * hw;
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        /* Two passes (mean, then squared deviations): stable where E[x^2]-E[x]^2 is not. */
        double acc[LANES] = { 0 }, acc_sq[LANES] = { 0 };
        for (int b = 0; b < n; b++) plane_sum(acc, in + ((long)b * c + ch) * hw, hw);
        double mean = lanes_total(acc) / m;
        for (int b = 0; b < n; b++) plane_sq_dev(acc_sq, in + ((long)b * c + ch) * hw, hw, mean);
        double sq = lanes_total(acc_sq);
        double var = sq / m;   /* biased: what normalizes the batch */
        real_t inv_std = (real_t)(1.0 / sqrt(var + eps));
        save_mean[ch] = (real_t)mean;
        save_inv_std[ch] = inv_std;
        /* torch keeps the unbiased variance in the running estimate */
        double unbiased = m > 1 ? sq / (m - 1) : var;
        running_mean[ch] = (real_t)((1 - momentum) * running_mean[ch] + momentum * mean);
        running_var[ch] = (real_t)((1 - momentum) * running_var[ch] + momentum * unbiased);
        real_t scale = gamma[ch] * inv_std, shift = beta[ch] - (real_t)mean * scale;
        for (int b = 0; b < n; b++) {
            const real_t *x = in + ((long)b * c + ch) * hw;
            real_t *y = out + ((long)b * c + ch) * hw;
            apply_affine(y, x, hw, scale, shift, act);
        }
    }
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
            const real_t *x = in + ((long)b * c + ch) * hw;
            real_t *y = out + ((long)b * c + ch) * hw;
            apply_affine(y, x, hw, scale, shift, act);
        }
}

/* din = gamma*inv_std/M * (M*dout - sum(dout) - xhat*sum(dout*xhat)); xhat is recomputed
 * from in and the saved statistics rather than stored. */
void RT_FN(batchnorm_backward)(real_t *din /*N,C,HW or NULL*/, real_t *dgamma /*C*/,
                               real_t *dbeta /*C*/, const real_t *dout,
                               const real_t *act_out /*N,C,HW or NULL*/, const real_t *in,
                               const real_t *gamma, const real_t *save_mean,
                               const real_t *save_inv_std, int n, int c, int hw) {
    long m = (long)n * hw;
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        real_t mean = save_mean[ch], inv_std = save_inv_std[ch];
        double acc_dy[LANES] = { 0 }, acc_dy_xhat[LANES] = { 0 };
        for (int b = 0; b < n; b++) {
            long base = ((long)b * c + ch) * hw;
            const real_t *x = in + base, *dy = dout + base, *ao = act_out ? act_out + base : NULL;
            for (int i = 0; i < hw; i++) {
                real_t g = masked(dy, ao, i);
                acc_dy[i % LANES] += g;
                acc_dy_xhat[i % LANES] += g * (x[i] - mean) * inv_std;
            }
        }
        double sum_dy = lanes_total(acc_dy), sum_dy_xhat = lanes_total(acc_dy_xhat);
        dgamma[ch] = (real_t)sum_dy_xhat;
        dbeta[ch] = (real_t)sum_dy;
        if (!din) continue;
        real_t k = gamma[ch] * inv_std / m;
        real_t s_dy = (real_t)sum_dy, s_dy_xhat = (real_t)sum_dy_xhat;
        for (int b = 0; b < n; b++) {
            const real_t *x = in + ((long)b * c + ch) * hw;
            long base = ((long)b * c + ch) * hw;
            const real_t *dy = dout + base, *ao = act_out ? act_out + base : NULL;
            real_t *dx = din + base;
            for (int i = 0; i < hw; i++) {
                real_t xhat = (x[i] - mean) * inv_std;
                dx[i] = k * ((real_t)m * masked(dy, ao, i) - s_dy - xhat * s_dy_xhat);
            }
        }
    }
}
