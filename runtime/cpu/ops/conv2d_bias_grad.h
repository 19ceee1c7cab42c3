/* The bias gradient's sums that conv2d.c and conv2d_winograd.c share: a plane of the
 * output gradient, masked by a fused ReLU, summed over 16 float lanes (a single running sum
 * is one dependent add per value, which GCC may not reorder: that chain was 4% of a LeNet
 * step). The lanes are combined in a fixed order, so results stay reproducible. */
#ifndef RT_CONV2D_BIAS_GRAD_H
#define RT_CONV2D_BIAS_GRAD_H
#include <string.h>
#include "rt_real.h"
#include "vec16.h"

enum { BIAS_LANES = 16 };

static inline real_t bias_lanes_total(const real_t acc[BIAS_LANES]) {
    real_t t = 0;
    for (int l = 0; l < BIAS_LANES; l++) t += acc[l];
    return t;
}

/* Sum of d[i] where mask is NULL or mask[i] > 0, i < n: lane l of a 16-lane vector adds the
 * values at l of every whole chunk, the tail goes to lane i % 16, then the lanes in order.
 * Written with vectors rather than left to GCC's vectorizer, whose code for the scalar form,
 * inlined into conv2d_winograd_backward, made a trainer nondeterministic on an AMX Xeon
 * (bench/RESULTS.md, "Nondeterministic Winograd backward"). */
static inline real_t masked_plane_sum(const real_t *d, const real_t *mask, long n) {
    const rvec zero = { 0 };
    rvec acc = zero;
    long i = 0;
    for (; i + BIAS_LANES <= n; i += BIAS_LANES) {
        rvec v;
        memcpy(&v, d + i, sizeof v);
        if (mask) {
            rvec m;
            memcpy(&m, mask + i, sizeof m);
            v = (rvec)((rsel)v & (m > zero));
        }
        acc += v;
    }
    real_t lanes[BIAS_LANES];
    memcpy(lanes, &acc, sizeof lanes);
    for (; i < n; i++) lanes[i % BIAS_LANES] += !mask || mask[i] > 0 ? d[i] : 0;
    return bias_lanes_total(lanes);
}
#endif
