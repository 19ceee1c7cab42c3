/* Winograd F(2x2,3x3) tile transforms (Lavin & Gray, 2016) for conv2d_winograd.c: 4x4
 * transformed tiles of 2x2 outputs, 2.25x fewer multiply-adds than im2col + GEMM.
 *   forward         y = A^T [ (G g G^T) . (B^T d B) ] A            (. = elementwise)
 *   weight gradient dU = sum over tiles (A dy A^T) . (B^T d B),  dg = G^T dU G
 * Tiles of a row are taken 16 at a time, the stride-2 layout picked apart with shuffles;
 * planes at most 7 tiles wide put two tile rows in one vector. */
#include "conv2d_winograd_tiles.h"

#define XI 16   /* 4x4 transformed positions */

/* Padded rows: long enough for every 16-tile chunk's loads (two 16-value vectors from
 * column 2*j0, two more from 2*j0 + 2). */
static long row_len(int tw) { return 32L * ((tw + 15) / 16) + 16; }

/* The zero-padded plane (see wino_pad_plane): 2*th + 4 rows of row_len. */
static long f2_scratch_elems(int imgs, int th, int tw) { (void)imgs; return (2L * th + 4) * row_len(tw); }

/* u[xi] = (G g G^T)[xi] for 16 3x3 kernels g[e], one per lane. */
static void kernel_transform(rvec *u, const rvec *k) {
    rvec t[4][3];
    for (int c = 0; c < 3; c++) {   /* G g: G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1] */
        t[0][c] = k[c];
        t[1][c] = (real_t)0.5 * (k[c] + k[3 + c] + k[6 + c]);
        t[2][c] = (real_t)0.5 * (k[c] - k[3 + c] + k[6 + c]);
        t[3][c] = k[6 + c];
    }
    for (int r = 0; r < 4; r++) {   /* (G g) G^T */
        u[4 * r + 0] = t[r][0];
        u[4 * r + 1] = (real_t)0.5 * (t[r][0] + t[r][1] + t[r][2]);
        u[4 * r + 2] = (real_t)0.5 * (t[r][0] - t[r][1] + t[r][2]);
        u[4 * r + 3] = t[r][2];
    }
}

/* dg[e] = G^T dU G for 16 kernels, du[xi]. */
static void kernel_grad_transform(rvec *dg, const rvec *du) {
    rvec t[3][4];
    for (int c = 0; c < 4; c++) {   /* G^T = [1 .5 .5 0; 0 .5 -.5 0; 0 .5 .5 1] */
        rvec u0 = du[c], u1 = du[4 + c], u2 = du[8 + c], u3 = du[12 + c];
        t[0][c] = u0 + (real_t)0.5 * (u1 + u2);
        t[1][c] = (real_t)0.5 * (u1 - u2);
        t[2][c] = (real_t)0.5 * (u1 + u2) + u3;
    }
    for (int r = 0; r < 3; r++) {
        dg[3 * r + 0] = t[r][0] + (real_t)0.5 * (t[r][1] + t[r][2]);
        dg[3 * r + 1] = (real_t)0.5 * (t[r][1] - t[r][2]);
        dg[3 * r + 2] = (real_t)0.5 * (t[r][1] + t[r][2]) + t[r][3];
    }
}

static const rsel EVEN = { 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30 };
static const rsel ODD = { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31 };
static const rsel ZIP_LO = WINO_ZIP_LO;
static const rsel ZIP_HI = WINO_ZIP_HI;

/* Planes at most PAIR_TW tiles wide go through the transforms two tile rows per vector
 * (lanes 0 .. tw-1 row i, tw .. 2tw-1 row i+1), so 14x14 and 7x7 maps do not leave most
 * lanes idle. pair_select(tw, off) picks, from two 16-value vectors, element 2l + off of the
 * first for lane l < tw and element 2(l - tw) + off of the second for tw <= l < 2tw. */
#define PAIR_TW 7
static void pair_select(rsel *m, int tw, int off) {
    for (int l = 0; l < 16; l++)
        (*m)[l] = l < tw ? 2 * l + off : l < 2 * tw ? 16 + 2 * (l - tw) + off : 0;
}

/* The 1-D transforms, on vectors: B^T x (4 -> 4), A^T x (4 -> 2), A x (2 -> 4). */
#define BT4(o, x0, x1, x2, x3) \
    do { (o)[0] = (x0) - (x2); (o)[1] = (x1) + (x2); (o)[2] = (x2) - (x1); (o)[3] = (x1) - (x3); } while (0)

#define store16(v, ld, at, out) wino_store_tiles((v), (ld), (at), (out), XI)

/* B^T d B for every tile of one plane: v[xi * ld + t], t = i * tw + j; the patch of tile
 * (i, j) is rows 2i .. 2i+3, columns 2j .. 2j+3 of the padded plane.
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]. */
static void input_transform_plane(real_t *restrict v, long ld, const real_t *plane,
                                  const real_t *mask, int h, int w, int th, int tw,
                                  real_t *restrict scratch) {
    long len = row_len(tw);
    RT_FN(wino_pad_plane)(scratch, len, 2L * th + 4, 1, plane, mask, h, w);
    rvec out[16];
    if (tw <= PAIR_TW) {   /* tile rows i and i+1: padded rows 2i .. 2i+5, columns 0 .. 15 */
        rsel sel[4];
        for (int s = 0; s < 4; s++) pair_select(&sel[s], tw, s);
        for (int i = 0; i < th; i += 2) {
            rvec p[6], ea[4], eb[4];
            for (int k = 0; k < 6; k++) VLOAD(p[k], scratch + (2 * i + k) * len);
            BT4(ea, p[0], p[1], p[2], p[3]);   /* B^T d down the columns, row i */
            BT4(eb, p[2], p[3], p[4], p[5]);   /* and row i+1 */
            for (int q = 0; q < 4; q++) {      /* row q of B^T d, times B */
                rvec x0 = __builtin_shuffle(ea[q], eb[q], sel[0]);
                rvec x1 = __builtin_shuffle(ea[q], eb[q], sel[1]);
                rvec x2 = __builtin_shuffle(ea[q], eb[q], sel[2]);
                rvec x3 = __builtin_shuffle(ea[q], eb[q], sel[3]);
                BT4(out + 4 * q, x0, x1, x2, x3);
            }
            store16(v, ld, (long)i * tw, out);
        }
        return;
    }
    for (int i = 0; i < th; i++)
        for (int j0 = 0; j0 < tw; j0 += 16) {
            /* rows 2i .. 2i+3 at columns 2j0 .. 2j0+31 (lo, hi) and 2j0+2 .. 2j0+33 (lo2, hi2) */
            rvec lo[4], hi[4], lo2[4], hi2[4];
            for (int r = 0; r < 4; r++) {
                const real_t *p = scratch + (2 * i + r) * len + 2 * j0;
                VLOAD(lo[r], p); VLOAD(hi[r], p + 16); VLOAD(lo2[r], p + 2); VLOAD(hi2[r], p + 18);
            }
            rvec el[4], eh[4], el2[4], eh2[4];   /* B^T d down the columns */
            BT4(el, lo[0], lo[1], lo[2], lo[3]);
            BT4(eh, hi[0], hi[1], hi[2], hi[3]);
            BT4(el2, lo2[0], lo2[1], lo2[2], lo2[3]);
            BT4(eh2, hi2[0], hi2[1], hi2[2], hi2[3]);
            for (int q = 0; q < 4; q++) {   /* row q of B^T d, times B: tile j reads 2j .. 2j+3 */
                rvec a = __builtin_shuffle(el[q], eh[q], EVEN), b = __builtin_shuffle(el[q], eh[q], ODD);
                rvec c = __builtin_shuffle(el2[q], eh2[q], EVEN), d = __builtin_shuffle(el2[q], eh2[q], ODD);
                BT4(out + 4 * q, a, b, c, d);
            }
            store16(v, ld, (long)i * tw + j0, out);
        }
}

/* A^T m A for every tile of one plane (m[xi * ld + t]), plus bias and the fused activation,
 * into the output plane. A^T = [1 1 1 0; 0 1 -1 -1]. */
static void output_transform_plane(real_t *plane, const real_t *restrict m, long ld, int h,
                                   int w, int th, int tw, real_t bias, rt_act act,
                                   real_t *restrict scratch) {
    long len = row_len(tw);
    real_t *rows = scratch;   /* output rows 2i .. 2i+3 of the tiles in flight */
    int pair = tw <= PAIR_TW, step = pair ? 2 : 1;
    rsel zip_b;   /* pair mode: row i+1's tiles start at lane tw */
    for (int l = 0; l < 16; l++) zip_b[l] = (l % 2 ? 16 : 0) + tw + l / 2;
    for (int i = 0; i < th; i += step) {
        for (int j0 = 0; j0 < tw; j0 += 16) {
            rvec f0[4], f1[4];
            long at = (long)i * tw + j0;
            for (int c = 0; c < 4; c++) {   /* A^T m down the columns */
                rvec m0, m1, m2, m3;
                VLOAD(m0, m + c * ld + at); VLOAD(m1, m + (4 + c) * ld + at);
                VLOAD(m2, m + (8 + c) * ld + at); VLOAD(m3, m + (12 + c) * ld + at);
                f0[c] = m0 + m1 + m2;
                f1[c] = m1 - m2 - m3;
            }
            /* ... times A: pixel (2i + a, 2j + b) of every tile */
            rvec y00 = f0[0] + f0[1] + f0[2], y01 = f0[1] - f0[2] - f0[3];
            rvec y10 = f1[0] + f1[1] + f1[2], y11 = f1[1] - f1[2] - f1[3];
            VSTORE(rows + 2 * j0, __builtin_shuffle(y00, y01, ZIP_LO));
            VSTORE(rows + 2 * j0 + 16, __builtin_shuffle(y00, y01, ZIP_HI));
            VSTORE(rows + len + 2 * j0, __builtin_shuffle(y10, y11, ZIP_LO));
            VSTORE(rows + len + 2 * j0 + 16, __builtin_shuffle(y10, y11, ZIP_HI));
            if (pair) {
                VSTORE(rows + 2 * len, __builtin_shuffle(y00, y01, zip_b));
                VSTORE(rows + 3 * len, __builtin_shuffle(y10, y11, zip_b));
            }
        }
        for (int q = 0; q < 2 * step && 2 * i + q < h; q++) {
            RT_FN(wino_bias_act_row)(plane + (long)(2 * i + q) * w, rows + q * len, w, bias, act);
        }
    }
}

/* A dy A^T for every tile of one output-gradient plane (masked by the fused activation's
 * output when `mask` is set): v[xi * ld + t]. Tile (i, j) reads dy[2i + a][2j + b], zero
 * past the edge. A = [1 0; 1 1; 1 -1; 0 -1]. */
static void output_grad_transform_plane(real_t *restrict v, long ld, const real_t *plane,
                                        const real_t *mask, int h, int w, int th, int tw,
                                        real_t *restrict scratch) {
    long len = row_len(tw);
    RT_FN(wino_pad_plane)(scratch, len, 2L * th + 4, 1, plane, mask, h, w);
    int pair = tw <= PAIR_TW;
    rsel sel[2];
    for (int b = 0; b < 2; b++) pair_select(&sel[b], tw, b);
    for (int i = 0; i < th; i += pair ? 2 : 1)
        for (int j0 = 0; j0 < tw; j0 += 16) {
            /* dy rows 2i, 2i+1 from column 2j0: padded rows 2i+1, 2i+2 from column 1 + 2j0 */
            const real_t *r0 = scratch + (2 * i + 1) * len + 1 + 2 * j0, *r1 = r0 + len;
            rvec g00, g01, g10, g11;   /* gab: pixel (2i + a, 2j + b) of every tile */
            if (pair) {   /* tile row i+1 reads dy rows 2i+2, 2i+3 */
                rvec a0, a1, b0, b1;
                VLOAD(a0, r0); VLOAD(a1, r1); VLOAD(b0, r0 + 2 * len); VLOAD(b1, r1 + 2 * len);
                g00 = __builtin_shuffle(a0, b0, sel[0]); g01 = __builtin_shuffle(a0, b0, sel[1]);
                g10 = __builtin_shuffle(a1, b1, sel[0]); g11 = __builtin_shuffle(a1, b1, sel[1]);
            } else {
                rvec lo0, hi0, lo1, hi1;
                VLOAD(lo0, r0); VLOAD(hi0, r0 + 16); VLOAD(lo1, r1); VLOAD(hi1, r1 + 16);
                g00 = __builtin_shuffle(lo0, hi0, EVEN); g01 = __builtin_shuffle(lo0, hi0, ODD);
                g10 = __builtin_shuffle(lo1, hi1, EVEN); g11 = __builtin_shuffle(lo1, hi1, ODD);
            }
            rvec z[4][2] = { { g00, g01 }, { g00 + g10, g01 + g11 }, { g00 - g10, g01 - g11 },
                             { -g10, -g11 } };
            rvec out[16];
            for (int q = 0; q < 4; q++) {
                out[4 * q + 0] = z[q][0];
                out[4 * q + 1] = z[q][0] + z[q][1];
                out[4 * q + 2] = z[q][0] - z[q][1];
                out[4 * q + 3] = -z[q][1];
            }
            store16(v, ld, (long)i * tw + j0, out);
        }
}


/* The block-of-images forms the driver calls: one plane after another. */
static void input_planes(real_t *restrict v, long ld, const real_t *src, const real_t *mask,
                         long img_stride, int imgs, int h, int w, int th, int tw,
                         real_t *restrict scratch) {
    for (int im = 0; im < imgs; im++)
        input_transform_plane(v + (long)im * th * tw, ld, src + im * img_stride,
                              mask ? mask + im * img_stride : NULL, h, w, th, tw, scratch);
}

static void output_grad_planes(real_t *restrict v, long ld, const real_t *src,
                               const real_t *mask, long img_stride, int imgs, int h, int w,
                               int th, int tw, real_t *restrict scratch) {
    for (int im = 0; im < imgs; im++)
        output_grad_transform_plane(v + (long)im * th * tw, ld, src + im * img_stride,
                                    mask ? mask + im * img_stride : NULL, h, w, th, tw, scratch);
}

static void output_planes(real_t *dst, const real_t *restrict m, long ld, long img_stride,
                          int imgs, int h, int w, int th, int tw, real_t bias, rt_act act,
                          real_t *restrict scratch) {
    for (int im = 0; im < imgs; im++)
        output_transform_plane(dst + im * img_stride, m + (long)im * th * tw, ld, h, w, th, tw,
                               bias, act, scratch);
}

const wino_tiles RT_FN(wino_f2x2) = {
    .m = 2, .r = 3, .xi = XI, .kernel = kernel_transform, .kernel_grad = kernel_grad_transform,
    .input = input_planes, .output_grad = output_grad_planes, .output = output_planes,
    .scratch_elems = f2_scratch_elems,
};
