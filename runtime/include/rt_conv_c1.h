/* conv2d of a 1-channel input (LeNet's conv1, the ResNet stem): a direct AVX-512 kernel
 * (runtime/cpu/conv2d_c1.c) instead of im2col + GEMM, whose K = kh*kw (25, 9) is too short
 * for a GEMM to run well, or oneDNN's BF16 primitive with its layout conversions. Forward with
 * bias and ReLU fused; backward-weights with the ReLU mask and the bias gradient fused.
 * Under compute BF16 it multiplies the input, weights and output gradient rounded to BF16,
 * with FP32 sums: backward-weights on vdpbf16ps, the forward on FP32 FMAs of the rounded
 * values (the same products; cheap on so few multiply-adds). The input gradient is not
 * computed here: a 1-channel input is the net's data (din NULL); a backward that wants one
 * runs conv2d.c's other paths. Called only by conv2d.c's dispatch, never for the double build. */
#ifndef RT_CONV_C1_H
#define RT_CONV_C1_H
#include "rt_ops.h"

/* Whether this kernel takes the shape: 1 input channel, stride 1, no dilation, a 3x3 or 5x5
 * kernel, a CPU with AVX-512F (TRAINC_CONV_C1=off turns it off, for A/B runs). */
int conv2d_c1_fits(const rt_conv_shape *s);
/* floats of the conv workspace it needs (on the thread count at the call). */
long conv2d_c1_workspace_elems(const rt_conv_shape *s);
void conv2d_c1_forward(float *out, const float *in, const float *weight, const float *bias,
                       float *work, const rt_conv_shape *s);
/* dweight and dbias (NULL: none) from dout, masked where act_out <= 0 if s->act is ReLU. */
void conv2d_c1_backward_weights(float *dweight, float *dbias, const float *dout,
                                const float *act_out, const float *in, float *work,
                                const rt_conv_shape *s);
/* The same with a 2x2 stride-2 max pooling of the (ReLU'd) output fused in: the forward pools
 * each image's output from its thread's plane of the workspace into pool_out and argmax; the
 * backward expands pool_dout into such a plane where argmax points and pool_out > 0 (the
 * ReLU's mask), which is what maxpool2d_backward and act_out would have given, and goes on as
 * conv2d_c1_backward_weights. (conv2d_relu_maxpool in rt_ops.h) */
void conv2d_c1_forward_pooled(float *pool_out, int32_t *argmax, const float *in, const float *weight,
                              const float *bias, float *work, const rt_conv_shape *s,
                              const rt_pool_shape *ps);
void conv2d_c1_backward_weights_pooled(float *dweight, float *dbias, const float *pool_dout,
                                       const float *pool_out, const int32_t *argmax,
                                       const float *in, float *work, const rt_conv_shape *s,
                                       const rt_pool_shape *ps);
#endif
