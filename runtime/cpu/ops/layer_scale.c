/* Layer scale (ConvNeXt): a learned per-channel multiplier, out = in * gamma[c]. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(layer_scale_forward)(real_t *out /*N,C,HW*/, const real_t *in,
                                const real_t *gamma /*C*/, int n, int c, int hw) {
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            long o = ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) out[o + p] = in[o + p] * gamma[ch];
        }
}

/* dgamma is computed before din is written, so din may alias dout. */
void RT_FN(layer_scale_backward)(real_t *din /*or NULL*/, real_t *dgamma /*C*/,
                                 const real_t *dout, const real_t *in, const real_t *gamma,
                                 int n, int c, int hw) {
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < c; ch++) {
        double acc = 0;
        for (int b = 0; b < n; b++) {
            long o = ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) acc += dout[o + p] * in[o + p];
        }
        dgamma[ch] = (real_t)acc;
    }
    if (!din) return;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            long o = ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) din[o + p] = dout[o + p] * gamma[ch];
        }
}
