/* Strided convolutions (but the 3x3/2 pad-1 ones that conv2d_strided_winograd.h takes) as one
 * GEMM per kernel tap on the input's polyphase planes (conv2d_strided.c); called by conv2d.c's
 * dispatch. Named per precision, as both builds link into one test. */
#ifndef RT_CONV2D_STRIDED_H
#define RT_CONV2D_STRIDED_H
#include "rt_ops.h"
#include "rt_real.h"

/* The shapes this path takes (elsewhere im2col + one GEMM per image stays faster): a stride
 * above 1 along either axis, one group, kernel extents and strides up to 64, and
 * - more than one tap: a strided 1x1 kernel's im2col is just the subsampled input, which the
 *   generic path already multiplies as it lies (measured, this path ran it 10% slower);
 * - 16 channels or more: each tap's GEMM sums over the channels only (ResNet-50's 7x7/2 stem
 *   on 3 channels ran 2.5x slower);
 * - weights that stay in the per-core cache (256 Ki values, 1 MiB in float), read once per
 *   tap and image: ResNet-50's 3x3/2 on 256 and 512 channels ran 5-10% slower, on 128
 *   channels 10% faster. */
static inline int conv2d_strided_fits(const rt_conv_shape *s) {
    return (s->sh > 1 || s->sw > 1) && s->groups == 1 && s->kh * s->kw > 1 && s->kh <= 64 &&
           s->kw <= 64 && s->sh <= 64 && s->sw <= 64 && s->c >= 16 &&
           (long)s->oc * s->c * s->kh * s->kw <= (1L << 18);
}

/* Elements of the conv workspace it needs, for the thread count at the first call. */
long RT_FN(conv2d_strided_workspace_elems)(const rt_conv_shape *s);
void RT_FN(conv2d_strided_forward)(real_t *out, const real_t *in, const real_t *weight,
                                   const real_t *bias, real_t *work, const rt_conv_shape *s);
/* timing: add each thread's seconds in the input-gradient part to *data_s; returns the
 * number of threads that ran (the caller's divisor for *data_s). */
int RT_FN(conv2d_strided_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                   const real_t *dout, const real_t *act_out, const real_t *in,
                                   const real_t *weight, real_t *work, const rt_conv_shape *s,
                                   int timing, double *data_s);
#endif
