/* The 3x3 stride-2 pad-1 convolution (ResNet's downsampling 3x3) as a stride-1 2x2 convolution
 * of the input's four phase planes, run by Winograd F(7x7,2x2) (conv2d_strided_winograd.c,
 * transforms in conv2d_strided_winograd_f7.c); called by conv2d.c's dispatch. Named per
 * precision like the other ops. */
#ifndef RT_CONV2D_STRIDED_WINOGRAD_H
#define RT_CONV2D_STRIDED_WINOGRAD_H
#include "rt_conv_choice.h"
#include "rt_ops.h"
#include "rt_real.h"

/* conv2d_strided_winograd_fits, the shapes it takes: rt_conv_choice.h. */

long RT_FN(conv2d_strided_winograd_workspace_elems)(const rt_conv_shape *s);
void RT_FN(conv2d_strided_winograd_forward)(real_t *out, const real_t *in, const real_t *weight,
                                            const real_t *bias, real_t *work,
                                            const rt_conv_shape *s);
/* timing: add each thread's seconds in the input-gradient part to *data_s; returns the
 * number of threads that ran (the caller's divisor for *data_s). */
int RT_FN(conv2d_strided_winograd_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                            const real_t *dout, const real_t *act_out,
                                            const real_t *in, const real_t *weight, real_t *work,
                                            const rt_conv_shape *s, int timing, double *data_s);

/* The tile transforms (conv2d_strided_winograd_f7.c), WS2_LANES channels at once, each
 * channel's values contiguous lane by lane; xi = 8 u + v is a transformed position.
 * input_tile:         v[xi * vs] = (B^T d B)[xi], d[u][v] at src + u * rs + v * cs (8 x 8)
 * input_adjoint_tile: dd[(8 u + v) * LANES] = (B dV B^T)[u][v], dV[xi] at dv + xi * vs
 * output_tile:        out[(7 i + j) * LANES] = (A^T m A)[i][j], m[xi] at m + xi * ms
 * output_grad_tile:   m[xi * ms] = (A dy A^T)[xi], dy[i][j] at dy + (7 i + j) * LANES
 * kernel:             u[xi * us + l] = (G g G^T)[xi] of the 2x2 kernels g[a][b] at
 *                     g + (2 a + b) * gs + l, l < n (a multiple of 16)
 * kernel_grad:        dg[(2 a + b) * gs + l] = (G^T dU G)[a][b], dU[xi] at du + xi * us + l */
void RT_FN(ws2_input_tile)(real_t *v, long vs, const real_t *src, long rs, long cs);
void RT_FN(ws2_input_adjoint_tile)(real_t *dd, const real_t *dv, long vs);
void RT_FN(ws2_output_tile)(real_t *out, const real_t *m, long ms);
void RT_FN(ws2_output_grad_tile)(real_t *m, long ms, const real_t *dy);
void RT_FN(ws2_kernel)(real_t *u, long us, const real_t *g, long gs, int n);
void RT_FN(ws2_kernel_grad)(real_t *dg, long gs, const real_t *du, long us, int n);
#endif
