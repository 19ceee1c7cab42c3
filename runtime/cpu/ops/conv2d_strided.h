/* Strided convolutions (but the 3x3/2 pad-1 ones that conv2d_strided_winograd.h takes) as one
 * GEMM per kernel tap on the input's polyphase planes (conv2d_strided.c); called by conv2d.c's
 * dispatch. Named per precision, as both builds link into one test. */
#ifndef RT_CONV2D_STRIDED_H
#define RT_CONV2D_STRIDED_H
#include "rt_conv_choice.h"
#include "rt_ops.h"
#include "rt_real.h"

/* conv2d_strided_fits, the shapes it takes: rt_conv_choice.h. */

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
