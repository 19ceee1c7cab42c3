/* The bias gradient's sums that conv2d.c and conv2d_winograd.c share: a plane of the
 * output gradient, masked by a fused ReLU, summed over 16 float lanes (a single running sum
 * is one dependent add per value, which GCC may not reorder: that chain was 4% of a LeNet
 * step). The lanes are combined in a fixed order, so results stay reproducible. */
#ifndef RT_CONV2D_BIAS_GRAD_H
#define RT_CONV2D_BIAS_GRAD_H
#include "rt_real.h"

enum { BIAS_LANES = 16 };

static inline real_t bias_lanes_total(const real_t acc[BIAS_LANES]) {
    real_t t = 0;
    for (int l = 0; l < BIAS_LANES; l++) t += acc[l];
    return t;
}

/* Sum of d[i] where mask is NULL or mask[i] > 0, i < n. */
static inline real_t masked_plane_sum(const real_t *d, const real_t *mask, long n) {
    real_t acc[BIAS_LANES] = { 0 };
    long i = 0;
    if (mask) {
        for (; i + BIAS_LANES <= n; i += BIAS_LANES)
            for (int l = 0; l < BIAS_LANES; l++) acc[l] += mask[i + l] > 0 ? d[i + l] : 0;
        for (; i < n; i++) acc[i % BIAS_LANES] += mask[i] > 0 ? d[i] : 0;
    } else {
        for (; i + BIAS_LANES <= n; i += BIAS_LANES)
            for (int l = 0; l < BIAS_LANES; l++) acc[l] += d[i + l];
        for (; i < n; i++) acc[i % BIAS_LANES] += d[i];
    }
    return bias_lanes_total(acc);
}
#endif
