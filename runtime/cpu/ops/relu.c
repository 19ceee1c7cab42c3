/* ReLU, elementwise; backward reads the forward output so the op can run in place. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(relu_forward)(real_t *out, const real_t *in, long n) {
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) out[i] = in[i] > 0 ? in[i] : 0;
}

void RT_FN(relu_backward)(real_t *din, const real_t *dout, const real_t *out, long n) {
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) din[i] = out[i] > 0 ? dout[i] : 0;
}
