/* Residual add: out = a + b; its backward hands dout to both inputs unchanged. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(add_forward)(real_t *out, const real_t *a, const real_t *b, long n) {
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void RT_FN(add_backward)(real_t *da, real_t *db, const real_t *dout, long n) {
    if (da && da != dout) memcpy(da, dout, sizeof(real_t) * n);
    if (db && db != dout) memcpy(db, dout, sizeof(real_t) * n);
}
