/* Inverted dropout with a stateless mask: element i is kept iff
 * rt_hash_uniform(seed, first + i) >= p, so the backward recomputes the mask instead of
 * storing it. `first` is the index of in[0] in the whole global batch, so a sample draws
 * the same mask on whichever rank trains it. */
#include "rt_ops.h"
#include "rt_real.h"

/* Shared by forward and backward so the two can never disagree about the mask. */
static void apply_mask(real_t *y, const real_t *x, long n, real_t p, uint64_t seed, long first,
                       int train) {
    if (!train || p <= 0) {
        if (y != x) for (long i = 0; i < n; i++) y[i] = x[i];
        return;
    }
    real_t scale = p < 1 ? 1 / (1 - p) : 0;   /* p = 1 drops everything */
    #pragma omp parallel for schedule(static) if (n > 16384)
    for (long i = 0; i < n; i++)
        y[i] = rt_hash_uniform(seed, (uint64_t)(first + i)) >= (double)p ? x[i] * scale : 0;
}

void RT_FN(dropout_forward)(real_t *out, const real_t *in, long n, real_t p, uint64_t seed,
                            long first, int train) {
    apply_mask(out, in, n, p, seed, first, train);
}

void RT_FN(dropout_backward)(real_t *din, const real_t *dout, long n, real_t p, uint64_t seed,
                             long first, int train) {
    apply_mask(din, dout, n, p, seed, first, train);
}
