/* A tensor times a per-channel gate (squeeze-and-excitation: x * sigmoid(fc(gap(x)))), or, with
 * hw = 1, times a tensor of its own shape. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(channel_mul_forward)(real_t *out, const real_t *x, const real_t *g, int n, int c, long hw) {
    long planes = (long)n * c;
    #pragma omp parallel for schedule(static) if (planes * hw > 16384)
    for (long q = 0; q < planes; q++) {
        real_t s = g[q];
        for (long p = 0; p < hw; p++) out[q * hw + p] = x[q * hw + p] * s;
    }
}

/* dg first, then dx: dx may be dout itself. */
void RT_FN(channel_mul_backward)(real_t *dx, real_t *dg, const real_t *dout, const real_t *x, const real_t *g,
                                 int n, int c, long hw) {
    long planes = (long)n * c;
    #pragma omp parallel for schedule(static) if (planes * hw > 16384)
    for (long q = 0; q < planes; q++) {
        const real_t *d = dout + q * hw, *xq = x + q * hw;
        if (dg) {
            real_t s = 0;
            for (long p = 0; p < hw; p++) s += d[p] * xq[p];
            dg[q] = s;
        }
        if (dx) {
            real_t s = g[q];
            for (long p = 0; p < hw; p++) dx[q * hw + p] = d[p] * s;
        }
    }
}
