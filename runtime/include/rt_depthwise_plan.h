/* The depthwise convolution plan, one copy for the CUDA runtime (conv2d_depthwise.cu runs it)
 * and the compiler (gpu_cost.c models it): which shapes our own kernels take instead of
 * cuDNN's grouped ones, their channel vectors, and how the weight gradient's partial sums are
 * split. Geometry only, so that the training and the evaluation schedules (other batch,
 * other resolution) agree; the TRAINC_CUDA_DEPTHWISE switch and the INT_MAX check stay with
 * the caller. Plain C, static inline: included by C and CUDA alike. */
#ifndef RT_DEPTHWISE_PLAN_H
#define RT_DEPTHWISE_PLAN_H
#include "rt_ops.h"   /* rt_conv_shape */

#include <stddef.h>

#define RT_DW_THREADS 256       /* threads of a block (RT_THREADS) */
#define RT_DW_WGRAD_STRIP 8     /* outputs of one row per thread, NCHW weight gradient */
#define RT_DW_VEC 8             /* channels per thread, channels-last, where C is a multiple */
#define RT_DW_PART_TAPS 3       /* taps of a row per thread, channels-last weight gradient */
#define RT_DW_TARGET_BLOCKS 1024   /* weight-gradient blocks to aim for (132 SMs, several each) */

/* 1 where our kernels can take the shape: groups == c == oc, stride 1, no dilation, a square
 * 3x3, 5x5 or 7x7 kernel, padding below the kernel size. */
static inline int rt_dw_fits(const rt_conv_shape *s) {
    int k = s->kh;
    return s->groups == s->c && s->oc == s->c && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1 &&
           s->kw == k && (k == 3 || k == 5 || k == 7) && s->ph < k && s->pw < k && s->ph >= 0 && s->pw >= 0;
}

/* Channels per thread in channels-last kernels: 16-byte vectors where C allows. */
static inline int rt_dw_vec(const rt_conv_shape *s) { return s->c % RT_DW_VEC == 0 ? RT_DW_VEC : 1; }

/* Parts a kernel row's taps are split into, channels-last weight gradient. */
static inline int rt_dw_parts(const rt_conv_shape *s) {
    int t = RT_DW_PART_TAPS < s->kw ? RT_DW_PART_TAPS : s->kw;
    return (s->kw + t - 1) / t;
}

/* Channel vectors a channels-last weight-gradient block takes: the tile that leaves the
 * fewest threads idle, counting both the threads beyond the last whole lane of jobs
 * (cvt * K * parts a lane) and the channels the last tile lacks; the largest such tile. */
static inline int rt_dw_nhwc_cvt(const rt_conv_shape *s) {
    int cvecs = s->c / rt_dw_vec(s), per_cv = s->kh * rt_dw_parts(s), best = 1;
    double best_use = 0;
    for (int cvt = 1; cvt <= cvecs && cvt * per_cv <= RT_DW_THREADS; cvt++) {
        int tiles = (cvecs + cvt - 1) / cvt, used = RT_DW_THREADS / (cvt * per_cv) * cvt * per_cv;
        double use = (double)used / RT_DW_THREADS * cvecs / ((double)tiles * cvt);
        if (use >= best_use) best_use = use, best = cvt;
    }
    return best;
}

/* Bytes of one slice of the weight gradient's partial sums: C x R x S floats, and C more for
 * the bias gradient's (room kept whether or not the conv has a bias, so that the plan does
 * not depend on it). */
static inline long rt_dw_slice_bytes(const rt_conv_shape *s) {
    return (long)s->c * (s->kh * s->kw + 1) * (long)sizeof(float);
}

/* The blocks each channel's weight-gradient sums are split over: about RT_DW_TARGET_BLOCKS
 * blocks, at least 16 pixels a thread, as many slices as fit in cap bytes, at least one. */
static inline int rt_dw_slices(const rt_conv_shape *s, int nhwc, size_t cap) {
    long tiles, work;
    if (nhwc) {
        int cvt = rt_dw_nhwc_cvt(s), lanes = RT_DW_THREADS / (cvt * s->kh * rt_dw_parts(s));
        tiles = (s->c / rt_dw_vec(s) + cvt - 1) / cvt;
        work = (long)s->n * s->oh * s->ow / (lanes * 16);
    } else {
        tiles = s->c;
        work = (long)s->n * s->oh * ((s->ow + RT_DW_WGRAD_STRIP - 1) / RT_DW_WGRAD_STRIP) /
               (RT_DW_THREADS / s->kh * 4);
    }
    long want = (RT_DW_TARGET_BLOCKS + tiles - 1) / tiles, fit = (long)(cap / (size_t)rt_dw_slice_bytes(s));
    if (want > work) want = work;
    if (want > fit) want = fit;
    return want < 1 ? 1 : (int)want;
}
#endif
