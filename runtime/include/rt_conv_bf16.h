/* conv2d under precision.compute BF16 on oneDNN's convolution primitives (BF16 inputs, FP32
 * accumulation; runtime/cpu/conv2d_dnnl_bf16.c): the float NCHW tensors of the ops API are
 * converted to oneDNN's blocked BF16 layouts on the way in and back to NCHW on the way out,
 * with bias, ReLU, its mask and the bias gradient fused into those passes. Called only by
 * conv2d.c's dispatch, from one thread at a time (the trainer's), never for the double build. */
#ifndef RT_CONV_BF16_H
#define RT_CONV_BF16_H
#include "rt_ops.h"

/* Whether this path takes the shape: compute BF16, oneDNN's primitives loaded, one group and
 * no dilation (the rest keeps im2col + BF16 GEMM). */
int conv2d_dnnl_bf16_fits(const rt_conv_shape *s);
/* floats of the shared conv workspace it needs; creates the shape's primitives (once). */
long conv2d_dnnl_bf16_workspace_elems(const rt_conv_shape *s);
void conv2d_dnnl_bf16_forward(float *out, const float *in, const float *weight, const float *bias,
                              float *work, const rt_conv_shape *s);
/* data_s: the threads' mean seconds in the input-gradient part, for --benchmark's split. */
void conv2d_dnnl_bf16_backward(float *din, float *dweight, float *dbias, const float *dout,
                               const float *act_out, const float *in, const float *weight,
                               float *work, const rt_conv_shape *s, double *data_s);
#endif
