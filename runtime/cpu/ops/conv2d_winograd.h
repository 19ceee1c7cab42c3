/* The Winograd convolution (F(2x2,3x3), F(4x4,3x3), F(2x2,5x5)) that conv2d.c hands the
 * shapes rt_conv_winograd_fits() to when the compiler chose it (rt_conv_shape.algo); named per
 * precision like the other ops. */
#ifndef RT_CONV2D_WINOGRAD_H
#define RT_CONV2D_WINOGRAD_H
#include "rt_ops.h"
#include "rt_real.h"

long RT_FN(conv2d_winograd_workspace_elems)(const rt_conv_shape *s);
void RT_FN(conv2d_winograd_forward)(real_t *out, const real_t *in, const real_t *weight,
                                    const real_t *bias, real_t *work, const rt_conv_shape *s);
void RT_FN(conv2d_winograd_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                     const real_t *dout, const real_t *act_out, const real_t *in,
                                     const real_t *weight, real_t *work, const rt_conv_shape *s,
                                     int timing, double *data_s);
#endif
