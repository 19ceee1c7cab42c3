/* Stochastic depth (drop path): a whole sample of a residual branch is kept iff
 * rt_hash_uniform(seed, first + sample) >= p and then scaled by 1/(1-p); stateless like
 * dropout. `first` is the index of sample 0 in the global batch (rank r: r x its batch). */
#include "rt_ops.h"
#include "rt_real.h"

static void apply_mask(real_t *y, const real_t *x, int n, long per_sample, real_t p,
                       uint64_t seed, long first, int train) {
    real_t keep_scale = (!train || p <= 0) ? 1 : (p < 1 ? 1 / (1 - p) : 0);
    #pragma omp parallel for schedule(static) if ((long)n * per_sample > 16384)
    for (int b = 0; b < n; b++) {
        int keep = !train || p <= 0 || rt_hash_uniform(seed, (uint64_t)(first + b)) >= (double)p;
        real_t sc = keep ? keep_scale : 0;
        const real_t *xs = x + (long)b * per_sample;
        real_t *ys = y + (long)b * per_sample;
        for (long i = 0; i < per_sample; i++) ys[i] = xs[i] * sc;
    }
}

void RT_FN(drop_path_forward)(real_t *out /*N,per_sample*/, const real_t *in, int n,
                              long per_sample, real_t p, uint64_t seed, long first, int train) {
    apply_mask(out, in, n, per_sample, p, seed, first, train);
}

void RT_FN(drop_path_backward)(real_t *din, const real_t *dout, int n, long per_sample,
                               real_t p, uint64_t seed, long first, int train) {
    apply_mask(din, dout, n, per_sample, p, seed, first, train);
}
