/* Residual add: out = a + b, optionally through a fused ReLU; its backward hands dout to both
 * inputs unchanged. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(add_forward)(real_t *out, const real_t *a, const real_t *b, long n) {
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* out = a + b through the fused activation in one pass (a residual block's closing ReLU);
 * its backward is the activation's (relu_backward with out as the mask), then add_backward. */
void RT_FN(add_act_forward)(real_t *out, const real_t *a, const real_t *b, long n, rt_act act) {
    if (act != RT_ACT_RELU) {
        RT_FN(add_forward)(out, a, b, n);
        return;
    }
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) { real_t v = a[i] + b[i]; out[i] = v > 0 ? v : 0; }
}

void RT_FN(add_backward)(real_t *da, real_t *db, const real_t *dout, long n) {
    if (da && da != dout) memcpy(da, dout, sizeof(real_t) * n);
    if (db && db != dout) memcpy(db, dout, sizeof(real_t) * n);
}
