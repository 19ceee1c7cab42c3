/* conv2d with a ReLU followed by max pooling as one op (see rt_ops.h): the 1-channel kernel's
 * fused path where it takes the shapes, the two ops through conv_out and conv_dout elsewhere. */
#include "rt_conv_c1.h"
#include "rt_core.h"
#include "rt_ops.h"
#include "rt_real.h"

#ifndef RT_REAL_DOUBLE   /* the double build (gradient checks) runs the two ops */
/* Whether the fused path runs: the compiler recorded the 1-channel kernel for the conv
 * (rt_conv_choice.h; its input gradient never wanted) and this host takes it (else the
 * record's next algorithm runs, and the two ops with it), with a ReLU and 2x2 stride-2
 * unpadded windows inside the conv's output (lower.c choose_conv_pool fused the pair on
 * those shapes; checked again as the kernel's precondition). */
static int fused_fits(const rt_conv_shape *cs, const rt_pool_shape *ps) {
    return cs->act == RT_ACT_RELU && ps->kh == 2 && ps->kw == 2 && ps->sh == 2 && ps->sw == 2 &&
           ps->ph == 0 && ps->pw == 0 && ps->n == cs->n && ps->c == cs->oc && ps->h == cs->oh &&
           ps->w == cs->ow && 2 * ps->oh <= ps->h && 2 * ps->ow <= ps->w && cs->algo == RT_CONV_C1 &&
           conv2d_c1_fits(cs);
}

/* 2 x the direct convolution's multiply-adds (as conv2d.c counts them for --benchmark). */
static double conv_flops(const rt_conv_shape *s) {
    return 2.0 * s->n * s->oc * (s->c / s->groups) * s->kh * s->kw * s->oh * s->ow;
}
#endif

void RT_FN(conv2d_relu_maxpool_forward)(real_t *pool_out, int32_t *argmax, real_t *conv_out,
                                        const real_t *in, const real_t *weight, const real_t *bias,
                                        real_t *work, const rt_conv_shape *cs,
                                        const rt_pool_shape *ps) {
#ifndef RT_REAL_DOUBLE
    if (fused_fits(cs, ps)) {
        double t0 = rt_op_stats_clock();
        conv2d_c1_forward_pooled(pool_out, argmax, in, weight, bias, work, cs, ps);
        if (t0) rt_op_stats_add(RT_OP_CONV_FWD, conv_flops(cs), rt_time_s() - t0);
        return;
    }
#endif
    RT_FN(conv2d_forward)(conv_out, in, weight, bias, work, cs);
    RT_FN(maxpool2d_forward)(pool_out, argmax, conv_out, ps);
}

void RT_FN(conv2d_relu_maxpool_backward)(real_t *dweight, real_t *dbias, const real_t *pool_dout,
                                         const real_t *pool_out, const int32_t *argmax,
                                         real_t *conv_dout, const real_t *conv_out,
                                         const real_t *in, const real_t *weight, real_t *work,
                                         const rt_conv_shape *cs, const rt_pool_shape *ps) {
#ifndef RT_REAL_DOUBLE
    if (fused_fits(cs, ps)) {
        double t0 = rt_op_stats_clock();
        conv2d_c1_backward_weights_pooled(dweight, dbias, pool_dout, pool_out, argmax, in, work, cs, ps);
        if (t0) rt_op_stats_conv_backward(conv_flops(cs), 0, t0, 0);
        return;
    }
#endif
    RT_FN(maxpool2d_backward)(conv_dout, pool_dout, argmax, ps);
    RT_FN(conv2d_backward)(NULL, dweight, dbias, conv_dout, conv_out, in, weight, work, cs);
}
