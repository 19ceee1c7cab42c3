/* Winograd F(4x4,3x3) tile transforms for conv2d_winograd.c: 6x6 transformed tiles of 4x4
 * outputs (interpolation points 0, 1, -1, 2, -2, infinity; Lavin & Gray, 2016), 4x fewer
 * multiply-adds than im2col + GEMM and 1.8x fewer than F(2x2,3x3) on 28x28 and 7x7 maps.
 *
 * The 2-D transforms are split so that the pass across tiles runs on 16 consecutive tiles
 * of a whole block of images with aligned loads and stores:
 *   input        the row pass (d B, tiles at a stride of 4 columns) goes row by row into
 *                H[p][k][tile], k = 0..5 the tile's patch row, after which the column pass
 *                (B^T .) reads H[p][0..5] at the same tile;
 *   output       both passes on 16 consecutive tiles, then the 4x4 pixels of the tiles are
 *                interleaved back into the planes' rows;
 *   output grad  the planes' rows are split by column phase into dY[a][b][tile], then both
 *                passes on 16 consecutive tiles;
 *   input adjoint (the input gradient) the input's passes transposed and in reverse order.
 * Rows of at most 7 tiles (28 columns) are split and interleaved with two-vector shuffles;
 * wider rows take a scalar path. */
#include "conv2d_winograd_tiles.h"

#define XI 36        /* 6x6 transformed positions */
#define ROW_TW 7     /* widest tile row the shuffles handle: 4 * 7 + 2 columns fit 32 lanes */

static const real_t G[6][3] = {
    { 1.0 / 4, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
    { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
    { 0, 0, 1 },
};

/* The 1-D transforms, on vectors or scalars:
 * B^T x (6 -> 6), B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
 *                        0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1] */
#define BT6(T, o, x0, x1, x2, x3, x4, x5) do {                                               \
        T t1_ = (x4) - (real_t)4 * (x2), t2_ = (x3) - (real_t)4 * (x1);                              \
        T t3_ = (x4) - (x2), t4_ = (real_t)2 * ((x3) - (x1));                                   \
        (o)[0] = (real_t)4 * (x0) - (real_t)5 * (x2) + (x4);                                         \
        (o)[1] = t1_ + t2_; (o)[2] = t1_ - t2_; (o)[3] = t3_ + t4_; (o)[4] = t3_ - t4_;     \
        (o)[5] = (real_t)4 * (x1) - (real_t)5 * (x3) + (x5);                                         \
    } while (0)
/* A^T x (6 -> 4), A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1] */
#define AT6(T, o, x0, x1, x2, x3, x4, x5) do {                                               \
        T s12_ = (x1) + (x2), d12_ = (x1) - (x2), s34_ = (x3) + (x4), d34_ = (x3) - (x4);  \
        (o)[0] = (x0) + s12_ + s34_; (o)[1] = d12_ + (real_t)2 * d34_;                          \
        (o)[2] = s12_ + (real_t)4 * s34_; (o)[3] = d12_ + (real_t)8 * d34_ + (x5);                   \
    } while (0)
/* B x (6 -> 6), B the transpose of B^T: the adjoint of BT6 */
#define B6(T, o, x0, x1, x2, x3, x4, x5) do {                                                \
        T s12_ = (x1) + (x2), d12_ = (x1) - (x2), s34_ = (x3) + (x4), d34_ = (x3) - (x4);  \
        (o)[0] = (real_t)4 * (x0);                                                         \
        (o)[1] = (real_t)-4 * d12_ - (real_t)2 * d34_ + (real_t)4 * (x5);                  \
        (o)[2] = (real_t)-5 * (x0) - (real_t)4 * s12_ - s34_;                              \
        (o)[3] = d12_ + (real_t)2 * d34_ - (real_t)5 * (x5);                               \
        (o)[4] = (x0) + s12_ + s34_; (o)[5] = (x5);                                        \
    } while (0)
/* A z (4 -> 6), A the transpose of A^T */
#define A4(T, o, z0, z1, z2, z3) do {                                                        \
        T e_ = (z0) + (z2), f_ = (z1) + (z3), e4_ = (z0) + (real_t)4 * (z2);                    \
        T f4_ = (real_t)2 * (z1) + (real_t)8 * (z3);                                                 \
        (o)[0] = (z0); (o)[1] = e_ + f_; (o)[2] = e_ - f_; (o)[3] = e4_ + f4_;              \
        (o)[4] = e4_ - f4_; (o)[5] = (z3);                                                 \
    } while (0)

/* Lane j of PHASE[k] picks column 4j + k of a row held in two vectors (tiles j < ROW_TW). */
static const rsel PHASE[6] = {
    { 0, 4, 8, 12, 16, 20, 24, 28 }, { 1, 5, 9, 13, 17, 21, 25, 29 },
    { 2, 6, 10, 14, 18, 22, 26, 30 }, { 3, 7, 11, 15, 19, 23, 27, 31 },
    { 4, 8, 12, 16, 20, 24, 28 }, { 5, 9, 13, 17, 21, 25, 29 },
};
static const rsel ZIP_LO = WINO_ZIP_LO;
static const rsel ZIP_HI = WINO_ZIP_HI;

/* Scratch: 36 sections of H (input, input adjoint) or 16 of dY / Y (output grad, output), each
 * the block's tiles plus 16 for the vectors that run past its end, then one zero-padded
 * plane of 4 * th + 2 rows of pad_len (see wino_pad_plane). */
static long section(int imgs, int th, int tw) { return ((long)imgs * th * tw + 31) / 16 * 16; }
static long pad_len(int tw) { return (4L * tw + 2 + 15) / 16 * 16 + 16; }
static long f4_scratch_elems(int imgs, int th, int tw) {
    return 36 * section(imgs, th, tw) + (4L * th + 2) * pad_len(tw);
}

/* u[xi * stride] = (G g G^T)[xi] for one 3x3 kernel g (flipped: rotated by 180 degrees). */
static void kernel_transform(real_t *u, long stride, const real_t *g, int flip) {
    real_t k[9], t[6][3];
    for (int i = 0; i < 9; i++) k[i] = flip ? g[8 - i] : g[i];
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 3; c++) t[r][c] = G[r][0] * k[c] + G[r][1] * k[3 + c] + G[r][2] * k[6 + c];
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++)
            u[(6 * r + c) * stride] = t[r][0] * G[c][0] + t[r][1] * G[c][1] + t[r][2] * G[c][2];
}

/* dg = G^T dU G for one kernel; du[xi * stride]. */
static void kernel_grad_transform(real_t *dg, const real_t *du, long stride) {
    real_t t[3][6];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 6; c++) {
            real_t acc = 0;
            for (int i = 0; i < 6; i++) acc += G[i][r] * du[(6 * i + c) * stride];
            t[r][c] = acc;
        }
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            real_t acc = 0;
            for (int j = 0; j < 6; j++) acc += t[r][j] * G[j][c];
            dg[3 * r + c] = acc;
        }
}

/* B^T d B for every tile of a block's planes of one channel: v[xi * ld + t], xi = 6q + p;
 * the patch of tile (i, j) is rows 4i-1 .. 4i+4 and columns 4j-1 .. 4j+4 of its plane (zero
 * outside). */
static void input_transform(real_t *restrict v, long ld, const real_t *src, const real_t *mask,
                            long img_stride, int imgs, int h, int w, int th, int tw,
                            real_t *restrict scratch) {
    long sec = section(imgs, th, tw), len = pad_len(tw), tiles = (long)th * tw;
    real_t *hbuf = scratch, *pad = scratch + 36 * sec;
    for (int im = 0; im < imgs; im++) {
        RT_FN(wino_pad_plane)(pad, len, 4L * th + 2, 1, src + im * img_stride,
                              mask ? mask + im * img_stride : NULL, h, w);
        /* row pass: padded row y times B is patch row k = y - 4i of tile rows i = y / 4 and,
         * for k = 4, 5, i - 1: H[p][k][t]. 16-lane stores past tw land in rows that are
         * written later or in the section's room. */
        for (int y = 0; y < 4 * th + 2; y++) {
            const real_t *row = pad + y * len;
            int i = y / 4, k = y % 4;
            real_t *here = i < th ? hbuf + (long)k * sec + im * tiles + (long)i * tw : NULL;
            real_t *above = k < 2 && i > 0 ? hbuf + (long)(k + 4) * sec + im * tiles + (long)(i - 1) * tw
                                           : NULL;
            if (tw <= ROW_TW) {
                rvec lo, hi, x[6], o[6];
                VLOAD(lo, row); VLOAD(hi, row + 16);
                for (int c = 0; c < 6; c++) x[c] = __builtin_shuffle(lo, hi, PHASE[c]);
                BT6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
                for (int p = 0; p < 6; p++) {
                    if (here) VSTORE(here + 6 * p * sec, o[p]);
                    if (above) VSTORE(above + 6 * p * sec, o[p]);
                }
            } else {
                for (int j = 0; j < tw; j++) {
                    const real_t *d = row + 4 * j;
                    real_t o[6];
                    BT6(real_t, o, d[0], d[1], d[2], d[3], d[4], d[5]);
                    for (int p = 0; p < 6; p++) {
                        if (here) here[6 * p * sec + j] = o[p];
                        if (above) above[6 * p * sec + j] = o[p];
                    }
                }
            }
        }
    }
    /* column pass over the block's tiles */
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16) {
        rvec out[XI];
        for (int p = 0; p < 6; p++) {
            rvec x[6], o[6];
            for (int k = 0; k < 6; k++) VLOAD(x[k], hbuf + (long)(6 * p + k) * sec + t0);
            BT6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
            for (int q = 0; q < 6; q++) out[6 * q + p] = o[q];
        }
        wino_store_tiles(v, ld, t0, out, XI);
    }
}

/* A^T m A for every tile of a block (m[xi * ld + t]), plus bias and the fused activation,
 * into its planes of one channel. */
static void output_transform(real_t *dst, const real_t *restrict m, long ld, long img_stride,
                             int imgs, int h, int w, int th, int tw, real_t bias, rt_act act,
                             real_t *restrict scratch) {
    long sec = section(imgs, th, tw), tiles = (long)th * tw;
    real_t *ys = scratch, *row = scratch + 36 * sec;
    /* both passes on 16 tiles at a time: Y[a][b][t] = pixel (4i + a, 4j + b) of tile t */
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16) {
        rvec z[4][6];
        for (int p = 0; p < 6; p++) {
            rvec x[6], o[4];
            for (int q = 0; q < 6; q++) VLOAD(x[q], m + (6 * q + p) * ld + t0);
            AT6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
            for (int a = 0; a < 4; a++) z[a][p] = o[a];
        }
        for (int a = 0; a < 4; a++) {
            rvec o[4];
            AT6(rvec, o, z[a][0], z[a][1], z[a][2], z[a][3], z[a][4], z[a][5]);
            for (int b = 0; b < 4; b++) VSTORE(ys + (4 * a + b) * sec + t0, o[b]);
        }
    }
    /* interleave each output row's pixels back: x = 4j + b */
    for (int im = 0; im < imgs; im++)
        for (int y = 0; y < h; y++) {
            const real_t *yr = ys + 4 * (y % 4) * sec + im * tiles + (long)(y / 4) * tw;
            if (tw <= ROW_TW) {
                rvec y0, y1, y2, y3;
                VLOAD(y0, yr); VLOAD(y1, yr + sec); VLOAD(y2, yr + 2 * sec); VLOAD(y3, yr + 3 * sec);
                rvec e = __builtin_shuffle(y0, y2, ZIP_LO), f = __builtin_shuffle(y1, y3, ZIP_LO);
                VSTORE(row, __builtin_shuffle(e, f, ZIP_LO));
                VSTORE(row + 16, __builtin_shuffle(e, f, ZIP_HI));
            } else {
                for (int x = 0; x < w; x++) row[x] = yr[(x % 4) * sec + x / 4];
            }
            RT_FN(wino_bias_act_row)(dst + im * img_stride + (long)y * w, row, w, bias, act);
        }
}

/* A dy A^T for every 4x4 tile of a block's output-gradient planes of one channel (masked by
 * the fused activation's output when `mask` is set): v[xi * ld + t]; pixels past a plane's
 * edge count as zero. */
static void output_grad_transform(real_t *restrict v, long ld, const real_t *src,
                                  const real_t *mask, long img_stride, int imgs, int h, int w,
                                  int th, int tw, real_t *restrict scratch) {
    long sec = section(imgs, th, tw), len = pad_len(tw), tiles = (long)th * tw;
    real_t *gs = scratch, *pad = scratch + 36 * sec;
    /* split rows by column phase: dY[a][b][t] = dy[4i + a][4j + b]; 16-lane stores past tw
     * land in rows written later or in the section's room */
    for (int im = 0; im < imgs; im++) {
        RT_FN(wino_pad_plane)(pad, len, 4L * th + 2, 0, src + im * img_stride,
                              mask ? mask + im * img_stride : NULL, h, w);
        for (int y = 0; y < 4 * th; y++) {
            const real_t *row = pad + y * len;
            real_t *gy = gs + 4 * (y % 4) * sec + im * tiles + (long)(y / 4) * tw;
            if (tw <= ROW_TW) {
                rvec lo, hi;
                VLOAD(lo, row); VLOAD(hi, row + 16);
                for (int b = 0; b < 4; b++) VSTORE(gy + b * sec, __builtin_shuffle(lo, hi, PHASE[b]));
            } else {
                for (int x = 0; x < 4 * tw; x++) gy[(x % 4) * sec + x / 4] = row[x];
            }
        }
    }
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16) {
        rvec z[6][4], out[XI];
        for (int b = 0; b < 4; b++) {   /* A dY down the columns */
            rvec d[4], o[6];
            for (int a = 0; a < 4; a++) VLOAD(d[a], gs + (4 * a + b) * sec + t0);
            A4(rvec, o, d[0], d[1], d[2], d[3]);
            for (int k = 0; k < 6; k++) z[k][b] = o[k];
        }
        for (int k = 0; k < 6; k++)      /* ... times A^T */
            A4(rvec, out + 6 * k, z[k][0], z[k][1], z[k][2], z[k][3]);
        wino_store_tiles(v, ld, t0, out, XI);
    }
}

/* The adjoint of input_transform (the input gradient from dV = U^T dM): the column pass
 * B dV[.][p] into H[p][k][tile], then per padded row y the sum of the two tile rows it is
 * patch row k of, times B, added up over the overlapping columns: x = 4j + c. */
static void input_adjoint(real_t *dst, const real_t *restrict m, long ld, long img_stride,
                          int imgs, int h, int w, int th, int tw, real_t *restrict scratch) {
    long sec = section(imgs, th, tw), tiles = (long)th * tw;
    real_t *hbuf = scratch, *row = scratch + 36 * sec;
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16)
        for (int p = 0; p < 6; p++) {
            rvec x[6], o[6];
            for (int q = 0; q < 6; q++) VLOAD(x[q], m + (6 * q + p) * ld + t0);
            B6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
            for (int k = 0; k < 6; k++) VSTORE(hbuf + (long)(6 * p + k) * sec + t0, o[k]);
        }
    rsel live;   /* lanes of real tiles: the rest hold the next row's values */
    for (int l = 0; l < 16; l++) live[l] = l < tw ? -1 : 0;
    static const rsel UP = { 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
    const rvec zero = { 0 };
    for (int im = 0; im < imgs; im++)
        for (int y = 1; y <= h; y++) {   /* padded rows 0 and past h are the zero border */
            int i = y / 4, k = y % 4;
            const real_t *here = i < th ? hbuf + (long)k * sec + im * tiles + (long)i * tw : NULL;
            const real_t *above = k < 2 && i > 0
                                  ? hbuf + (long)(k + 4) * sec + im * tiles + (long)(i - 1) * tw : NULL;
            if (tw <= ROW_TW) {
                rvec o[6], x[6];
                for (int p = 0; p < 6; p++) {
                    rvec a = zero, b = zero;
                    if (here) VLOAD(a, here + 6 * p * sec);
                    if (above) VLOAD(b, above + 6 * p * sec);
                    o[p] = (rvec)((rsel)(a + b) & live);
                }
                B6(rvec, x, o[0], o[1], o[2], o[3], o[4], o[5]);
                /* columns 4j + 4, 4j + 5 are columns 0, 1 of tile j + 1 */
                rvec c0 = x[0] + __builtin_shuffle(x[4], zero, UP);
                rvec c1 = x[1] + __builtin_shuffle(x[5], zero, UP);
                rvec e = __builtin_shuffle(c0, x[2], ZIP_LO), f = __builtin_shuffle(c1, x[3], ZIP_LO);
                VSTORE(row, __builtin_shuffle(e, f, ZIP_LO));
                VSTORE(row + 16, __builtin_shuffle(e, f, ZIP_HI));
            } else {
                for (int x = 0; x < 4 * tw + 2; x++) row[x] = 0;
                for (int j = 0; j < tw; j++) {
                    real_t o[6], x[6];
                    for (int p = 0; p < 6; p++)
                        o[p] = (here ? here[6 * p * sec + j] : 0) + (above ? above[6 * p * sec + j] : 0);
                    B6(real_t, x, o[0], o[1], o[2], o[3], o[4], o[5]);
                    for (int c = 0; c < 6; c++) row[4 * j + c] += x[c];
                }
            }
            memcpy(dst + im * img_stride + (long)(y - 1) * w, row + 1, sizeof(real_t) * w);
        }
}

const wino_tiles RT_FN(wino_f4x4) = {
    .m = 4, .xi = XI, .kernel = kernel_transform, .kernel_grad = kernel_grad_transform,
    .input = input_transform, .output_grad = output_grad_transform, .output = output_transform,
    .input_adjoint = input_adjoint, .scratch_elems = f4_scratch_elems,
};
