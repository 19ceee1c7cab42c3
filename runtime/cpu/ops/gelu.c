/* GELU in the exact erf form, x * Phi(x), matching torch's default (approximate='none'). */
#include "rt_ops.h"
#include "rt_real.h"

#define INV_SQRT2     0.70710678118654752440
#define INV_SQRT_2PI  0.39894228040143267794

void RT_FN(gelu_forward)(real_t *out, const real_t *in, long n) {
    #pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++) {
        real_t x = in[i];
        out[i] = (real_t)0.5 * x * (1 + rt_erf(x * (real_t)INV_SQRT2));
    }
}

/* d/dx x*Phi(x) = Phi(x) + x*phi(x). */
void RT_FN(gelu_backward)(real_t *din, const real_t *dout, const real_t *in, long n) {
    #pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++) {
        real_t x = in[i];
        real_t cdf = (real_t)0.5 * (1 + rt_erf(x * (real_t)INV_SQRT2));
        real_t pdf = (real_t)INV_SQRT_2PI * rt_exp((real_t)-0.5 * x * x);
        din[i] = dout[i] * (cdf + x * pdf);
    }
}
