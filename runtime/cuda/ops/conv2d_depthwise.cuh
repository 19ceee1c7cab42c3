/* Depthwise convolution kernels of our own (conv2d_depthwise.cu), which conv2d.cu routes
 * depthwise shapes to instead of cuDNN's grouped direct kernels. */
#ifndef RT_CUDA_CONV2D_DEPTHWISE_CUH
#define RT_CUDA_CONV2D_DEPTHWISE_CUH
#include "../cuda_common.cuh"

/* 1 where our kernels take the shape: groups == c == oc, stride 1, no dilation, a square
 * 3x3, 5x5 or 7x7 kernel, padding below the kernel size; and TRAINC_CUDA_DEPTHWISE is not
 * "cudnn" (read once: the switch that gives these shapes back to cuDNN for an A/B run).
 * Dies, with a hint, on such a conv whose tensors exceed INT_MAX elements. */
int cuda_conv2d_depthwise_takes(const rt_conv_shape *s);
/* Bytes of workspace the backward needs (the weight gradient's per-block partial sums),
 * within cap; *slices: the blocks each channel's sums are split over (pass it back). */
size_t cuda_conv2d_depthwise_workspace(const rt_conv_shape *s, int nhwc, size_t cap, int *slices);
/* The channels-last weight: [C][R][S] -> [R][S][C], so that neighbouring channels' taps
 * are neighbours in memory (the [K][R][S][C] copy of a depthwise conv is [C][R][S]). */
void cuda_conv2d_depthwise_weight_nhwc(void *dst, const void *src, const rt_conv_shape *s);
/* weight: [C][R][S] (NCHW) or [R][S][C] (nhwc), the activation type; bias (FP32 [C], or
 * NULL) added before the store rounds. */
void cuda_conv2d_depthwise_forward(void *out, const void *in, const void *weight, const float *bias /*or NULL*/,
                                   const rt_conv_shape *s, int nhwc);
/* din (added to where s->din_add) from dout; dweight ([C][R][S] FP32, overwritten) from dout
 * and in, through partials (slices x C x R x S floats of the workspace); dbias (FP32 [C],
 * overwritten, or NULL): dout's channel sums, from the weight gradient's kernel, through the
 * slices x C floats after them (rt_dw_slice_bytes counts both). */
void cuda_conv2d_depthwise_backward(void *din /*or NULL*/, float *dweight, float *dbias /*or NULL*/,
                                    const void *dout, const void *in, const void *weight, const rt_conv_shape *s,
                                    int nhwc, float *partials, int slices);
#endif
