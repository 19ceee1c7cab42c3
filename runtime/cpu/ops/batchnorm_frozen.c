/* Batch normalization with frozen statistics (Caffe's use_global_stats: true): training
 * normalizes with the running mean and variance, exactly as evaluation does
 * (batchnorm_forward_eval), and never updates them; the backward treats them as constants,
 * so it is a per-channel affine map's: din = dout·gamma/sqrt(var + eps). */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(batchnorm_backward_frozen)(real_t *din /*N,C,HW or NULL*/, real_t *dgamma /*C*/, real_t *dbeta /*C*/,
                                      const real_t *dout, const real_t *act_out /*or NULL*/, const real_t *in,
                                      const real_t *gamma, const real_t *running_mean,
                                      const real_t *running_var, int n, int c, int hw, real_t eps) {
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        real_t inv_std = 1 / rt_sqrt(running_var[ch] + eps), k = gamma[ch] * inv_std;
        double s_dy = 0, s_dy_xhat = 0;
        for (int b = 0; b < n; b++) {
            long base = ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) {
                long i = base + p;
                real_t g = act_out && act_out[i] <= 0 ? 0 : dout[i];   /* the fused ReLU's mask */
                s_dy += g;
                s_dy_xhat += g * (in[i] - running_mean[ch]) * inv_std;
                if (din) din[i] = g * k;
            }
        }
        dgamma[ch] = (real_t)s_dy_xhat;
        dbeta[ch] = (real_t)s_dy;
    }
}
