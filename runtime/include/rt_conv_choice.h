/* The CPU conv's algorithm, chosen once by the compiler (compiler/lower/lower.c calls
 * rt_conv_choose and emits what it recorded in rt_conv_shape) and only followed by
 * runtime/cpu/ops/conv2d.c. The choice depends on the shape and the spec's compute precision,
 * never on the machine that builds. Two kernels need something of the host that runs the
 * trainer, so for them the record names what runs instead (the rule, fixed at build time):
 *   RT_CONV_C1        the 1-channel AVX-512 kernel: where the CPU has AVX-512F and
 *                     TRAINC_CONV_C1 is not off, and only for a backward without an input
 *                     gradient (the kernel computes none); else `alt`;
 *   RT_CONV_DNNL_BF16 oneDNN's BF16 primitives: where libdnnl's convolution API loads, the CPU
 *                     has avx512_bf16, oneDNN creates the shape's primitives and
 *                     TRAINC_CONV_BF16 is not gemm; else the next of alt, fallback;
 *   RT_CONV_STRIDED_WINOGRAD: unless TRAINC_CONV_STRIDED_WINOGRAD is off (A/B runs); else
 *                     fallback.
 * Every other algorithm runs as recorded, on every CPU (Zen 4, Zen 5, Intel), so the trainer's
 * results differ between hosts only where one of those rules does. */
#ifndef RT_CONV_CHOICE_H
#define RT_CONV_CHOICE_H
#include "rt_ops.h"

/* RT_CONV_STRIDED's shapes (elsewhere im2col + one GEMM per image stays faster): a stride
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

/* RT_CONV_STRIDED_WINOGRAD's shapes: 3x3, stride 2, pad 1, no dilation, one group, 16
 * channels or more (fewer leave most of the stacked GEMMs' K to padding), c * oc up to
 * 128 * 128 (the transformed kernels and their gradient take 256 c * oc values each), and
 * outputs that the 7x7 tiles cover with little overhang: 64 positions a tile on 4c stacked
 * channels come to at most 6c multiply-adds per output, against 9c direct (14x14 and 7x7:
 * 5.2c; 8x8 would take 16c, and smaller planes, where most of a tile is padding, also round
 * the most: the ResNet on 8x8 inputs of tests/emu/emu_test.sh left the GPU run's loss by
 * 9e-4 in 4 steps). */
enum { WS2_LANES = 16 };   /* channels per vector in the tile transforms */
static inline int conv2d_strided_winograd_fits(const rt_conv_shape *s) {
    long tiles = (long)((s->oh + 6) / 7) * ((s->ow + 6) / 7);
    return s->kh == 3 && s->kw == 3 && s->sh == 2 && s->sw == 2 && s->ph == 1 && s->pw == 1 &&
           s->dh == 1 && s->dw == 1 && s->groups == 1 && s->c >= 16 &&
           (long)s->c * s->oc <= 128L * 128 && 256 * tiles <= 6L * s->oh * s->ow;
}

/* RT_CONV_C1's shapes: 1 input channel, stride 1, no dilation, a square 3x3 or 5x5 kernel,
 * "valid"-or-"same" geometry (the output as the padded input allows). */
static inline int conv2d_c1_shape_fits(const rt_conv_shape *s) {
    return s->c == 1 && s->groups == 1 && s->sh == 1 && s->sw == 1 && s->dh == 1 && s->dw == 1 &&
           s->kh == s->kw && (s->kw == 3 || s->kw == 5) && s->oh == s->h + 2 * s->ph - s->kh + 1 &&
           s->ow == s->w + 2 * s->pw - s->kw + 1 && s->oh >= 1 && s->ow >= 1;
}

/* RT_CONV_DNNL_BF16's shapes: compute BF16, one group, no dilation. */
static inline int conv2d_dnnl_bf16_shape_fits(const rt_conv_shape *s, int bf16) {
    return bf16 && s->groups == 1 && s->dh == 1 && s->dw == 1;
}

/* Sets s->algo, s->alt and s->fallback. On entry s->algo is the Winograd family lowering
 * wants where the shape fits (RT_CONV_WINOGRAD(_F4) or RT_CONV_IM2COL: lower.c asks for it
 * only with 8 input channels or more). bf16: the spec computes in BF16 (precision.compute),
 * where F(4x4,3x3) and F(2x2,5x5) lose too much, their transforms amplifying the inputs'
 * BF16 rounding (tests/unit/test_grad_bf16.c measured 8% and 5.5% of the output's range,
 * against under 2% for F(2x2,3x3) and im2col), so they run as F(2x2,3x3) and im2col, and the
 * strided Winograd's 8x8 transforms are not used for the same reason. */
static inline void rt_conv_choose(rt_conv_shape *s, int bf16) {
    rt_conv_algo base = RT_CONV_IM2COL;
    rt_conv_algo wino = s->algo == RT_CONV_WINOGRAD || s->algo == RT_CONV_WINOGRAD_F4 ? s->algo : RT_CONV_IM2COL;
    if (bf16 && wino != RT_CONV_IM2COL) wino = s->kh == 3 ? RT_CONV_WINOGRAD : RT_CONV_IM2COL;
    rt_conv_shape w = *s;
    w.algo = wino;
    if ((wino == RT_CONV_WINOGRAD || wino == RT_CONV_WINOGRAD_F4) && rt_conv_winograd_fits(&w)) base = wino;
    else if (conv2d_strided_fits(s)) base = RT_CONV_STRIDED;
    rt_conv_algo chain[3];
    int n = 0;
    if (conv2d_c1_shape_fits(s)) chain[n++] = RT_CONV_C1;
    if (conv2d_dnnl_bf16_shape_fits(s, bf16)) chain[n++] = RT_CONV_DNNL_BF16;
    if (!bf16 && conv2d_strided_winograd_fits(s)) chain[n++] = RT_CONV_STRIDED_WINOGRAD;
    chain[n++] = base;
    s->algo = chain[0];
    s->alt = chain[n > 1 ? 1 : 0];
    s->fallback = chain[n - 1];
}

/* A copy of s as the compiler records it (rt_conv_choose): for the tests' hand-made shapes. */
static inline rt_conv_shape rt_conv_chosen(rt_conv_shape s, int bf16) {
    rt_conv_choose(&s, bf16);
    return s;
}
#endif
