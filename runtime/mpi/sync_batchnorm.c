/* Synchronized batch norm (parallel.sync_bn): the per-channel sums behind the batch
 * statistics are summed over all ranks, so every rank normalizes with the mean and variance
 * of the global batch, as one process holding the whole batch would. The arithmetic is that
 * of runtime/cpu/ops/batchnorm.c (two passes in double), with one all-reduce after each
 * pass; with comm == NULL the results are the per-rank op's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_comm.h"
#include "rt_core.h"

/* Per-channel double sums; grown once, reused by every BN layer (calls are sequential). */
static double *sums_buffer(int ch) {
    static double *buf;
    static int cap;
    if (ch > cap) {
        free(buf);
        buf = rt_xcalloc((size_t)ch * 2, sizeof *buf);
        cap = ch;
    }
    return buf;
}

void sync_batchnorm_forward_train(rt_comm *c, float *out, float *save_mean, float *save_inv_std,
                                  float *running_mean, float *running_var, const float *in,
                                  const float *gamma, const float *beta, int n, int ch, int hw,
                                  float momentum, float eps) {
    double *sum = sums_buffer(ch), *sq = sum + ch;
    const double m = (double)n * hw * rt_comm_size(c);   /* samples in the global batch */
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < ch; k++) {
        double s = 0;
        for (int b = 0; b < n; b++) {
            const float *x = in + ((long)b * ch + k) * hw;
            for (int i = 0; i < hw; i++) s += x[i];
        }
        sum[k] = s;
    }
    rt_comm_sum(c, sum, ch, "the sync batch norm mean");
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < ch; k++) {
        double mean = sum[k] / m, s = 0;
        for (int b = 0; b < n; b++) {
            const float *x = in + ((long)b * ch + k) * hw;
            for (int i = 0; i < hw; i++) { double d = x[i] - mean; s += d * d; }
        }
        sq[k] = s;
    }
    rt_comm_sum(c, sq, ch, "the sync batch norm variance");
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < ch; k++) {
        double mean = sum[k] / m, var = sq[k] / m;   /* biased: what normalizes the batch */
        float inv_std = (float)(1.0 / sqrt(var + eps));
        save_mean[k] = (float)mean;
        save_inv_std[k] = inv_std;
        double unbiased = m > 1 ? sq[k] / (m - 1) : var;   /* torch's running estimate */
        running_mean[k] = (float)((1 - momentum) * running_mean[k] + momentum * mean);
        running_var[k] = (float)((1 - momentum) * running_var[k] + momentum * unbiased);
        float scale = gamma[k] * inv_std, shift = beta[k] - (float)mean * scale;
        for (int b = 0; b < n; b++) {
            const float *x = in + ((long)b * ch + k) * hw;
            float *y = out + ((long)b * ch + k) * hw;
            for (int i = 0; i < hw; i++) y[i] = x[i] * scale + shift;
        }
    }
}

void sync_batchnorm_backward(rt_comm *c, float *din, float *dgamma, float *dbeta, const float *dout,
                             const float *in, const float *gamma, const float *save_mean,
                             const float *save_inv_std, int n, int ch, int hw) {
    double *sums = sums_buffer(ch);   /* [k]: sum(dy), [ch + k]: sum(dy * xhat) */
    const double m = (double)n * hw * rt_comm_size(c);
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < ch; k++) {
        float mean = save_mean[k], inv_std = save_inv_std[k];
        double s_dy = 0, s_dy_xhat = 0;
        for (int b = 0; b < n; b++) {
            const float *x = in + ((long)b * ch + k) * hw;
            const float *dy = dout + ((long)b * ch + k) * hw;
            for (int i = 0; i < hw; i++) {
                s_dy += dy[i];
                s_dy_xhat += dy[i] * (x[i] - mean) * inv_std;
            }
        }
        /* This rank's share: the bucket all-reduce adds the other ranks'. */
        dgamma[k] = (float)s_dy_xhat;
        dbeta[k] = (float)s_dy;
        sums[k] = s_dy;
        sums[ch + k] = s_dy_xhat;
    }
    if (!din) return;
    rt_comm_sum(c, sums, 2 * ch, "the sync batch norm gradient sums");
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < ch; k++) {
        float inv_std = save_inv_std[k], mean = save_mean[k];
        float kk = gamma[k] * inv_std / (float)m;
        float s_dy = (float)sums[k], s_dy_xhat = (float)sums[ch + k];
        for (int b = 0; b < n; b++) {
            const float *x = in + ((long)b * ch + k) * hw;
            const float *dy = dout + ((long)b * ch + k) * hw;
            float *dx = din + ((long)b * ch + k) * hw;
            for (int i = 0; i < hw; i++) {
                float xhat = (x[i] - mean) * inv_std;
                dx[i] = kk * ((float)m * dy[i] - s_dy - xhat * s_dy_xhat);
            }
        }
    }
}
