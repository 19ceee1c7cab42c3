/* What the Winograd driver (conv2d_winograd.c) needs of one kind of tile: the transforms of
 * kernels and of whole input, output and output-gradient planes. F(2x2,3x3) is in
 * conv2d_winograd_f2.c, F(4x4,3x3) and F(2x2,5x5) in conv2d_winograd_6x6.c; all are named
 * per precision.
 * Also the 16-lane vector helpers the plane transforms share. */
#ifndef RT_CONV2D_WINOGRAD_TILES_H
#define RT_CONV2D_WINOGRAD_TILES_H
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"
#include "vec16.h"

#define WINO_MAX_XI 36   /* transformed positions of the largest tiles, 6x6 */
#define WINO_MAX_KK 25   /* weights of the largest kernels, 5x5 */

/* The transforms of F(m x m, r x r). Planes are h x w with th x tw tiles of m x m outputs,
 * tile t = i * tw + j. The plane transforms take one channel of a block of `imgs` images:
 * image im's plane (and mask) at src + im * img_stride, its tiles at t + im * th * tw of the
 * transformed values v[xi * ld + t]. They may write up to 16 slots past the block's last
 * tile (ld leaves room) and use `scratch` (scratch_elems(imgs, th, tw) values) as they like. */
typedef struct {
    int m;    /* output tile side */
    int r;    /* kernel side; the convolution pads by (r - 1) / 2 */
    int xi;   /* transformed positions per tile, (m + r - 1)^2 */
    /* u[xi] = G g G^T of 16 r x r kernels g at once, one per lane: g[e] holds weight e
     * (row-major) of each */
    void (*kernel)(rvec *u, const rvec *g);
    /* dg[e] = G^T dU G of 16 kernels at once, du[xi] */
    void (*kernel_grad)(rvec *dg, const rvec *du);
    /* B^T d B of every tile (d: the m+r-1 square patch of the zero-padded plane),
     * the planes masked to where mask > 0 when `mask` is set */
    void (*input)(real_t *restrict v, long ld, const real_t *src, const real_t *mask,
                  long img_stride, int imgs, int h, int w, int th, int tw,
                  real_t *restrict scratch);
    /* A dy A^T of every m x m tile of output-gradient planes (zero past their edges), masked
     * like `input` */
    void (*output_grad)(real_t *restrict v, long ld, const real_t *src, const real_t *mask,
                        long img_stride, int imgs, int h, int w, int th, int tw,
                        real_t *restrict scratch);
    /* A^T m A of every tile, plus bias, through the fused activation, into the planes */
    void (*output)(real_t *dst, const real_t *restrict m, long ld, long img_stride, int imgs,
                   int h, int w, int th, int tw, real_t bias, rt_act act,
                   real_t *restrict scratch);
    /* The adjoint of `input`: B dv B^T of every tile, summed over the overlapping patches
     * into the planes (written, or added to them when `add`); NULL where the driver takes the
     * input gradient as the forward convolution of dy with flipped kernels instead */
    void (*input_adjoint)(real_t *dst, const real_t *restrict m, long ld, long img_stride,
                          int imgs, int h, int w, int th, int tw, int add,
                          real_t *restrict scratch);
    long (*scratch_elems)(int imgs, int th, int tw);
    /* `input` for 16 channels at once (planes ch_stride apart), one per lane, into the
     * transposed layout that the weight gradient's GEMMs take: vt[xi * xs + t * ldt + l] for
     * channel l of the 16 and tile t of the block; unmasked, planes of at most
     * WINO_TRANSPOSED_MAX_W columns. The same values, bit for bit, as `input` followed by a
     * transpose. NULL where the tiles have none. */
    void (*input_transposed)(real_t *restrict vt, long xs, long ldt, const real_t *src,
                             long ch_stride, long img_stride, int imgs, int h, int w, int th,
                             int tw);
    /* `output` for 16 output channels at once, one per lane, from the transposed GEMM output
     * mt[xi * xs + t * ldt + l] (channel l of the 16, tile t of the block) into the 16
     * planes (ch_stride apart), plus bias[l] (bias NULL: none); planes of at most
     * WINO_TRANSPOSED_MAX_W columns. The same values, bit for bit, as `output` on the
     * transposed GEMM output. NULL where the tiles have none. */
    void (*output_transposed)(real_t *dst, long ch_stride, long img_stride,
                              const real_t *restrict mt, long xs, long ldt, int imgs, int h,
                              int w, int th, int tw, const real_t *bias, rt_act act);
    /* `input_adjoint` for 16 channels at once, one per lane, from the transposed
     * dvt[xi * xs + t * ldt + l] into the 16 planes (ch_stride apart; written, or added to
     * them when `add`); planes of at most WINO_TRANSPOSED_MAX_W columns. The same values as
     * `input_adjoint` on the transposed dV. NULL where the tiles have none. */
    void (*adjoint_transposed)(real_t *dst, long ch_stride, long img_stride,
                               const real_t *restrict dvt, long xs, long ldt, int imgs, int h,
                               int w, int th, int tw, int add);
} wino_tiles;

#define WINO_TRANSPOSED_MAX_W 28

extern const wino_tiles RT_FN(wino_f2x2);
extern const wino_tiles RT_FN(wino_f4x4);
extern const wino_tiles RT_FN(wino_f2x2_5x5);

/* Tiles go through the transforms 16 at a time, as vectors of 16 lanes (rvec, rsel of
 * vec16.h), one tile per lane. */

/* Shuffle indices that interleave two vectors: lanes 0..7 (ZIP_LO) or 8..15 (ZIP_HI) of each. */
#define WINO_ZIP_LO { 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23 }
#define WINO_ZIP_HI { 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31 }

/* Unaligned loads and stores (macros: generic vectors are not passed to functions). */
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(rvec))
#define VSTORE(p, v) do { rvec v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)

/* Stores 16 tiles' values of `n` transformed positions: v[xi * ld + t], t = at .. at+15. */
static inline void wino_store_tiles(real_t *v, long ld, long at, const rvec *out, int n) {
    for (int xi = 0; xi < n; xi++) VSTORE(v + xi * ld + at, out[xi]);
}

/* v[k][l] <-> v[l][k]: the 16 x 16 square held in 16 vectors, transposed in registers (the
 * callers unroll around it with constant indices, so the rows stay in registers). */
static inline __attribute__((always_inline)) void wino_transpose16(rvec *v) {
    /* Level s swaps bit s of the row index with bit s of the lane: of rows i and i + s (bit
     * s of i clear), i keeps its lanes with bit s clear and takes the other row's lanes
     * j - s for the rest; i + s gets the remaining lanes. Four levels make the transpose. */
    static const rsel LO[4] = {
        { 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30 },
        { 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29 },
        { 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27 },
        { 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23 } };
    static const rsel HI[4] = {
        { 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31 },
        { 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31 },
        { 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31 },
        { 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31 } };
    #pragma GCC unroll 4
    for (int level = 0; level < 4; level++) {
        int d = 1 << level;
        #pragma GCC unroll 16
        for (int i = 0; i < 16; i++)
            if (!(i & d)) {
                rvec a = v[i], b = v[i + d];
                v[i] = __builtin_shuffle(a, b, LO[level]);
                v[i + d] = __builtin_shuffle(a, b, HI[level]);
            }
    }
}

/* The plane, masked to where mask > 0 when `mask` is set, shifted by `off` rows and columns
 * into `rows` zero-padded rows of `len`: pad[(y + off) * len + x + off] = plane[y][x]. Built
 * whole before the transforms read it with vector loads (which would wait on narrower stores
 * still in flight). In conv2d_winograd.c. */
void RT_FN(wino_pad_plane)(real_t *restrict pad, long len, long rows, int off,
                           const real_t *plane, const real_t *mask, int h, int w);

/* dst[0 .. n) = src[0 .. n), or += when `add`, for short rows, without a libc call. In
 * conv2d_winograd.c. */
void RT_FN(wino_copy_row)(real_t *restrict dst, const real_t *restrict src, int n, int add);

/* out[x] = o[x] + bias through the fused activation, x < w. In conv2d_winograd.c. */
void RT_FN(wino_bias_act_row)(real_t *restrict out, const real_t *restrict o, int w, real_t bias,
                              rt_act act);
#endif
