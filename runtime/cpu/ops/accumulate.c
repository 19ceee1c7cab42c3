/* dst += src: sums the gradients of a tensor that feeds several consumers. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(tensor_accumulate)(real_t *dst, const real_t *src, long n) {
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (long i = 0; i < n; i++) dst[i] += src[i];
}
