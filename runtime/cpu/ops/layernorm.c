/* Layer normalization over the channel dim of NCHW, per (sample, pixel): ConvNeXt's
 * channels_first LayerNorm; with hw = 1 it is the usual LayerNorm over the last dim of [N,C]. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(layernorm_forward)(real_t *out /*N,C,HW*/, real_t *save_mean /*N,HW*/,
                              real_t *save_rstd /*N,HW*/, const real_t *in /*N,C,HW*/,
                              const real_t *gamma /*C*/, const real_t *beta /*C*/,
                              int n, int c, int hw, real_t eps) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int p = 0; p < hw; p++) {
            /* channels are hw apart: strided, but each pixel stays within one thread */
            const real_t *x = in + (long)b * c * hw + p;
            real_t *y = out + (long)b * c * hw + p;
            double sum = 0, sq = 0;
            for (int ch = 0; ch < c; ch++) sum += x[(long)ch * hw];
            double mean = sum / c;
            for (int ch = 0; ch < c; ch++) { double d = x[(long)ch * hw] - mean; sq += d * d; }
            real_t rstd = (real_t)(1.0 / sqrt(sq / c + eps));
            save_mean[(long)b * hw + p] = (real_t)mean;
            save_rstd[(long)b * hw + p] = rstd;
            for (int ch = 0; ch < c; ch++)
                y[(long)ch * hw] = (x[(long)ch * hw] - (real_t)mean) * rstd * gamma[ch] + beta[ch];
        }
}

/* With g = dout*gamma: din = rstd/C * (C*g - sum(g) - xhat*sum(g*xhat)) per pixel. */
void RT_FN(layernorm_backward)(real_t *din /*N,C,HW or NULL*/, real_t *dgamma /*C*/,
                               real_t *dbeta /*C*/, const real_t *dout, const real_t *in,
                               const real_t *gamma, const real_t *save_mean,
                               const real_t *save_rstd, int n, int c, int hw) {
    /* parameter gradients: one thread per channel so each sum has a fixed order */
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        double dg = 0, db = 0;
        for (int b = 0; b < n; b++) {
            const real_t *x = in + ((long)b * c + ch) * hw;
            const real_t *dy = dout + ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) {
                real_t xhat = (x[p] - save_mean[(long)b * hw + p]) * save_rstd[(long)b * hw + p];
                dg += dy[p] * xhat;
                db += dy[p];
            }
        }
        dgamma[ch] = (real_t)dg;
        dbeta[ch] = (real_t)db;
    }
    if (!din) return;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int p = 0; p < hw; p++) {
            const real_t *x = in + (long)b * c * hw + p;
            const real_t *dy = dout + (long)b * c * hw + p;
            real_t *dx = din + (long)b * c * hw + p;
            real_t mean = save_mean[(long)b * hw + p], rstd = save_rstd[(long)b * hw + p];
            double sg = 0, sgx = 0;
            for (int ch = 0; ch < c; ch++) {
                real_t g = dy[(long)ch * hw] * gamma[ch];
                sg += g;
                sgx += g * (x[(long)ch * hw] - mean) * rstd;
            }
            for (int ch = 0; ch < c; ch++) {
                real_t g = dy[(long)ch * hw] * gamma[ch];
                real_t xhat = (x[(long)ch * hw] - mean) * rstd;
                dx[(long)ch * hw] = rstd / c * ((real_t)c * g - (real_t)sg - xhat * (real_t)sgx);
            }
        }
}
