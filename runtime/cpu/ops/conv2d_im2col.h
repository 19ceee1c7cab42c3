/* What conv2d.c and conv2d_im2col.c share: the shape predicates that pick an im2col path
 * and the im2col/col2im pair (named per precision, as both builds link into one test). */
#ifndef RT_CONV2D_IM2COL_H
#define RT_CONV2D_IM2COL_H
#include "rt_ops.h"
#include "rt_real.h"

/* 1x1 stride-1 pad-0 convolutions are a GEMM on the input as it lies: no im2col. */
static inline int is_pointwise(const rt_conv_shape *s) {
    return s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->ph == 0 && s->pw == 0;
}

/* Stride-1 "same" convolutions (output as large as the input, e.g. 3x3 pad 1, 5x5 pad 2):
 * the im2col rows of one (channel, kernel column) are vertical shifts of a single
 * horizontally shifted, vertically zero-padded plane, so each row is one long copy instead of
 * oh short ones. */
static inline int is_same_stride1(const rt_conv_shape *s) {
    return !is_pointwise(s) && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1 &&
           s->oh == s->h && s->ow == s->w;
}
static inline long shift_elems(const rt_conv_shape *s) {
    return is_same_stride1(s) ? (long)(s->h + s->kh - 1) * s->w : 0;
}

/* col[(ci*KH+ki)*KW+kj][oy*OW+ox] = in[ci][oy*sh-ph+ki*dh][ox*sw-pw+kj*dw], 0 outside, for the
 * cg channels of one image and group; `shifted` is scratch of shift_elems(s) elements. */
void RT_FN(conv2d_im2col)(real_t *col, real_t *shifted, const real_t *in, int cg,
                          const rt_conv_shape *s);
/* Adjoint of conv2d_im2col: din += scatter of dcol. */
void RT_FN(conv2d_col2im_add)(real_t *din, real_t *shifted, const real_t *dcol, int cg,
                              const rt_conv_shape *s);
#endif
