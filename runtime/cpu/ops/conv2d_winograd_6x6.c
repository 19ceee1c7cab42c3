/* Winograd tile transforms with 6x6 transformed tiles (interpolation points 0, 1, -1, 2, -2,
 * infinity; Lavin & Gray, 2016) for conv2d_winograd.c, in the two kinds that share the input
 * transform B^T d B:
 *   F(4x4,3x3)  4x4 outputs per tile: 4x fewer multiply-adds than im2col + GEMM (3x3 convs);
 *   F(2x2,5x5)  2x2 outputs per tile: 2.8x fewer (5x5 convs, as in LeNet).
 * Below M is the output tile side, 7 - M the kernel side and (6 - M) / 2 the padding; each
 * function is written once for both and specialized by inlining with M constant.
 *
 * The 2-D transforms are split so that the pass across tiles runs on 16 consecutive tiles
 * of a whole block of images with aligned loads and stores:
 *   input        the row pass (d B, tiles at a stride of M columns) goes row by row into
 *                H[p][k][tile], k = 0..5 the tile's patch row, after which the column pass
 *                (B^T .) reads H[p][0..5] at the same tile;
 *   output       both passes on 16 consecutive tiles, then the MxM pixels of the tiles are
 *                interleaved back into the planes' rows;
 *   output grad  the planes' rows are split by column phase into dY[a][b][tile], then both
 *                passes on 16 consecutive tiles;
 *   input adjoint (the input gradient) the input's passes transposed and in reverse order.
 * Rows of at most ROW_TW(M) tiles (28 output columns of either kind) are split and
 * interleaved with two-vector shuffles; wider rows take a scalar path. */
#include "conv2d_winograd_tiles.h"

#define XI 36                      /* 6x6 transformed positions */
#define KSIDE(M) (7 - (M))         /* kernel side */
#define PADDING(M) ((6 - (M)) / 2) /* the convolution's zero padding */
/* Widest tile row the shuffles handle: patch columns M*j .. M*j + 5 of every tile within the
 * 32 lanes of two vectors (7 tiles for M = 4, 14 for M = 2). */
#define ROW_TW(M) (26 / (M) + 1)
#define INLINE static inline __attribute__((always_inline))

/* G of each kind: row i evaluates the kernel polynomial at point i, scaled to match B^T. */
static const real_t G3[6][3] = {
    { 1.0 / 4, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 1.0 / 12, 1.0 / 6 },
    { 1.0 / 24, -1.0 / 12, 1.0 / 6 },
    { 0, 0, 1 },
};
static const real_t G5[6][5] = {
    { 1.0 / 4, 0, 0, 0, 0 },
    { -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6 },
    { -1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6 },
    { 1.0 / 24, 1.0 / 12, 1.0 / 6, 1.0 / 3, 2.0 / 3 },
    { 1.0 / 24, -1.0 / 12, 1.0 / 6, -1.0 / 3, 2.0 / 3 },
    { 0, 0, 0, 0, 1 },
};
INLINE real_t g_at(int M, int i, int j) { return M == 4 ? G3[i][j] : G5[i][j]; }

/* The 1-D transforms, on vectors or scalars:
 * B^T x (6 -> 6), B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
 *                        0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1] */
#define BT6(T, o, x0, x1, x2, x3, x4, x5) do {                                               \
        (o)[0] = BT6_0(x0, x2, x4);                                                          \
        BT6_12(T, (o)[1], (o)[2], x1, x2, x3, x4);                                           \
        BT6_34(T, (o)[3], (o)[4], x1, x2, x3, x4);                                           \
        (o)[5] = BT6_5(x1, x3, x5);                                                          \
    } while (0)
/* Its outputs in the groups that share no terms, for passes that make one group at a time
 * (fewer values live at once, so none spill to the stack): outputs 0, 5, 1 and 2, 3 and 4 */
#define BT6_0(x0, x2, x4) ((real_t)4 * (x0) - (real_t)5 * (x2) + (x4))
#define BT6_5(x1, x3, x5) ((real_t)4 * (x1) - (real_t)5 * (x3) + (x5))
#define BT6_12(T, o1, o2, x1, x2, x3, x4) do {                                               \
        T t1_ = (x4) - (real_t)4 * (x2), t2_ = (x3) - (real_t)4 * (x1);                      \
        (o1) = t1_ + t2_; (o2) = t1_ - t2_;                                                  \
    } while (0)
#define BT6_34(T, o3, o4, x1, x2, x3, x4) do {                                               \
        T t3_ = (x4) - (x2), t4_ = (real_t)2 * ((x3) - (x1));                                \
        (o3) = t3_ + t4_; (o4) = t3_ - t4_;                                                  \
    } while (0)
/* B x (6 -> 6), B the transpose of B^T: the adjoint of BT6 */
#define B6(T, o, x0, x1, x2, x3, x4, x5) do {                                                \
        T s12_ = (x1) + (x2), d12_ = (x1) - (x2), s34_ = (x3) + (x4), d34_ = (x3) - (x4);  \
        (o)[0] = (real_t)4 * (x0);                                                           \
        (o)[1] = (real_t)-4 * d12_ - (real_t)2 * d34_ + (real_t)4 * (x5);                    \
        (o)[2] = (real_t)-5 * (x0) - (real_t)4 * s12_ - s34_;                                \
        (o)[3] = d12_ + (real_t)2 * d34_ - (real_t)5 * (x5);                                 \
        (o)[4] = (x0) + s12_ + s34_; (o)[5] = (x5);                                          \
    } while (0)
/* A^T x (6 -> M): the first M powers of the points, A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0;
 * 0 1 1 4 4 0; 0 1 -1 8 -8 1] for M = 4 and [1 1 1 1 1 0; 0 1 -1 2 -2 1] for M = 2 */
#define AT6(M, T, o, x0, x1, x2, x3, x4, x5) do {                                            \
        T s12_ = (x1) + (x2), d12_ = (x1) - (x2), s34_ = (x3) + (x4), d34_ = (x3) - (x4);  \
        (o)[0] = (x0) + s12_ + s34_;                                                         \
        if ((M) == 4) {                                                                      \
            (o)[1] = d12_ + (real_t)2 * d34_;                                                \
            (o)[2] = s12_ + (real_t)4 * s34_; (o)[3] = d12_ + (real_t)8 * d34_ + (x5);       \
        } else {                                                                             \
            (o)[1] = d12_ + (real_t)2 * d34_ + (x5);                                         \
        }                                                                                    \
    } while (0)
/* A z (M -> 6), A the transpose of A^T; z holds M values */
#define A6(M, T, o, z) do {                                                                  \
        if ((M) == 4) {                                                                      \
            (o)[0] = (z)[0];                                                                 \
            A6_12(T, (o)[1], (o)[2], z);                                                     \
            A6_34(T, (o)[3], (o)[4], z);                                                     \
            (o)[5] = (z)[3];                                                                 \
        } else {                                                                             \
            T f2_ = (real_t)2 * (z)[1];                                                      \
            (o)[0] = (z)[0]; (o)[1] = (z)[0] + (z)[1]; (o)[2] = (z)[0] - (z)[1];             \
            (o)[3] = (z)[0] + f2_; (o)[4] = (z)[0] - f2_; (o)[5] = (z)[1];                   \
        }                                                                                    \
    } while (0)

/* A6's outputs 1, 2 and 3, 4 for M = 4, which share their terms, for passes that make one
 * pair at a time */
#define A6_12(T, o1, o2, z) do {                                                             \
        T e_ = (z)[0] + (z)[2], f_ = (z)[1] + (z)[3];                                        \
        (o1) = e_ + f_; (o2) = e_ - f_;                                                      \
    } while (0)
#define A6_34(T, o3, o4, z) do {                                                             \
        T e4_ = (z)[0] + (real_t)4 * (z)[2], f4_ = (real_t)2 * (z)[1] + (real_t)8 * (z)[3]; \
        (o3) = e4_ + f4_; (o4) = e4_ - f4_;                                                  \
    } while (0)

/* Lane j of PHASE<M>[c] picks column M*j + c of a row held in two vectors (j < ROW_TW(M)). */
#define PH4(c) { c, c + 4, c + 8, c + 12, c + 16, c + 20, c + 24 }
#define PH2(c) { c, c + 2, c + 4, c + 6, c + 8, c + 10, c + 12, c + 14, c + 16, c + 18,     \
                 c + 20, c + 22, c + 24, c + 26 }
static const rsel PHASE4[6] = { PH4(0), PH4(1), PH4(2), PH4(3), PH4(4), PH4(5) };
static const rsel PHASE2[6] = { PH2(0), PH2(1), PH2(2), PH2(3), PH2(4), PH2(5) };
#define PHASE(M, c) ((M) == 4 ? PHASE4[c] : PHASE2[c])
/* The same on an unpadded row: column M*j + c of the zero-padded row is column
 * M*j + c - PADDING(M) of the plane's, and the padding's columns (< 0) read lane 31, which
 * is zero since rows this path takes have w <= 28. */
#define UNPAD(x) ((x) < 0 ? 31 : (x))
#define PU4(c) { UNPAD((c) - 1), (c) + 3, (c) + 7, (c) + 11, (c) + 15, (c) + 19, (c) + 23 }
#define PU2(c) { UNPAD((c) - 2), (c), (c) + 2, (c) + 4, (c) + 6, (c) + 8, (c) + 10, (c) + 12,  \
                 (c) + 14, (c) + 16, (c) + 18, (c) + 20, (c) + 22, (c) + 24 }
static const rsel PADDED4[6] = { PU4(0), PU4(1), PU4(2), PU4(3), PU4(4), PU4(5) };
static const rsel PADDED2[6] = { PU2(0), PU2(1), PU2(2), PU2(3), PU2(4), PU2(5) };
#define PADDED_PHASE(M, c) ((M) == 4 ? PADDED4[c] : PADDED2[c])
static const rsel ZIP_LO = WINO_ZIP_LO;
static const rsel ZIP_HI = WINO_ZIP_HI;

/* Scratch: 36 sections of H (input, input adjoint) or M*M of dY / Y (output grad, output),
 * each the block's tiles plus 16 for the vectors that run past its end, then one zero-padded
 * plane of M * th + 6 - M rows of pad_len (see wino_pad_plane). */
static long section(int imgs, int th, int tw) { return ((long)imgs * th * tw + 31) / 16 * 16; }
INLINE long pad_rows(int M, int th) { return (long)M * th + 6 - M; }
INLINE long pad_len(int M, int tw) { return ((long)M * tw + 6 - M + 15) / 16 * 16 + 16; }
INLINE long scratch_elems(int M, int imgs, int th, int tw) {
    return 36 * section(imgs, th, tw) + pad_rows(M, th) * pad_len(M, tw);
}

/* u[xi] = (G g G^T)[xi] for 16 kernels g[e], one per lane. */
INLINE void kernel_transform(int M, rvec *u, const rvec *k) {
    enum { RMAX = 5 };
    int r = KSIDE(M);
    rvec t[6][RMAX];
    for (int i = 0; i < 6; i++)
        for (int c = 0; c < r; c++) {
            rvec acc = { 0 };
            for (int j = 0; j < r; j++) acc += g_at(M, i, j) * k[j * r + c];
            t[i][c] = acc;
        }
    for (int i = 0; i < 6; i++)
        for (int q = 0; q < 6; q++) {
            rvec acc = { 0 };
            for (int c = 0; c < r; c++) acc += t[i][c] * g_at(M, q, c);
            u[6 * i + q] = acc;
        }
}

/* dg[e] = G^T dU G for 16 kernels, du[xi]. */
INLINE void kernel_grad_transform(int M, rvec *dg, const rvec *du) {
    enum { RMAX = 5 };
    int r = KSIDE(M);
    rvec t[RMAX][6];
    for (int a = 0; a < r; a++)
        for (int q = 0; q < 6; q++) {
            rvec acc = { 0 };
            for (int i = 0; i < 6; i++) acc += g_at(M, i, a) * du[6 * i + q];
            t[a][q] = acc;
        }
    for (int a = 0; a < r; a++)
        for (int c = 0; c < r; c++) {
            rvec acc = { 0 };
            for (int q = 0; q < 6; q++) acc += t[a][q] * g_at(M, q, c);
            dg[r * a + c] = acc;
        }
}

/* Row y of an h x w plane (w <= 32) in two vectors, lanes 0..31 its columns, zero from
 * column w on and for rows outside the plane; masked to where mask > 0 when `mask` is set.
 * Reads nothing outside the plane: a row too near the plane's end is loaded as the plane's
 * last 16 or 32 values and moved down into place. Reading rows straight from the plane
 * replaces building a zero-padded copy (wino_pad_plane), whose stores and reloads were a
 * fifth of the input transform's time. */
static const rsel IOTA16 = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
INLINE void load_span(rvec *lo, rvec *hi, const real_t *p, long start, int n, long len) {
    const rvec zero = { 0 };
    rvec a = zero, b = zero;
    if (start + (n <= 16 ? 16 : 32) <= len) {
        VLOAD(a, p + start);
        if (n > 16) VLOAD(b, p + start + 16);
    } else if (n <= 16 && len >= 16) {
        rvec t;
        VLOAD(t, p + len - 16);
        a = __builtin_shuffle(t, IOTA16 + (int)(start - (len - 16)));   /* indices mod 16 */
    } else if (len >= 32) {
        rvec t0, t1;
        VLOAD(t0, p + len - 32); VLOAD(t1, p + len - 16);
        rsel at = IOTA16 + (int)(start - (len - 32));                     /* indices mod 32 */
        a = __builtin_shuffle(t0, t1, at);
        b = __builtin_shuffle(t0, t1, at + 16);
    } else {   /* through a local array: lane stores into a or b would keep both on the stack */
        real_t buf[32] = { 0 };
        for (int l = 0; l < n; l++) buf[l] = p[start + l];
        VLOAD(a, buf);
        VLOAD(b, buf + 16);
    }
    *lo = (rvec)((rsel)a & (IOTA16 < n));
    *hi = (rvec)((rsel)b & (IOTA16 + 16 < n));
}
INLINE void load_row(rvec *lo, rvec *hi, const real_t *plane, const real_t *mask, int y, int h,
                     int w) {
    const rvec zero = { 0 };
    *lo = *hi = zero;
    if (y < 0 || y >= h) return;
    long hw = (long)h * w;
    load_span(lo, hi, plane, (long)y * w, w, hw);
    if (mask) {
        rvec mlo, mhi;
        load_span(&mlo, &mhi, mask, (long)y * w, w, hw);
        *lo = (rvec)((rsel)*lo & (mlo > zero));
        *hi = (rvec)((rsel)*hi & (mhi > zero));
    }
}

/* Row y of an h x w plane (w <= 32) from two vectors, lanes shift .. shift + w - 1 of the
 * pair (shift: a constant), written or, when `add`, added to the row. Whole vectors go
 * straight into the plane where they stay inside it: what they write past the row lands in
 * later rows, which the callers write after it (when adding, they add zeros there). The rows
 * near the plane's end go through `buf` (32 values). */
INLINE void store_row(real_t *plane, const rvec *lo_in, const rvec *hi_in, int shift, int y,
                      int h, int w, int add, real_t *buf) {
    const rvec zero = { 0 };
    rvec lo = *lo_in, hi = *hi_in;
    if (shift) {
        rvec a = __builtin_shuffle(lo, hi, IOTA16 + shift);
        hi = __builtin_shuffle(hi, zero, IOTA16 + shift);
        lo = a;
    }
    int span = w <= 16 ? 16 : 32;   /* the values the vector stores cover */
    real_t *out = plane + (long)y * w;
    if ((long)y * w + span <= (long)h * w) {
        if (add) {
            rvec a, b;
            VLOAD(a, out);
            VSTORE(out, a + (rvec)((rsel)lo & (IOTA16 < w)));
            if (span == 32) {
                VLOAD(b, out + 16);
                VSTORE(out + 16, b + (rvec)((rsel)hi & (IOTA16 + 16 < w)));
            }
        } else {
            VSTORE(out, lo);
            if (span == 32) VSTORE(out + 16, hi);
        }
    } else {
        VSTORE(buf, lo); VSTORE(buf + 16, hi);
        RT_FN(wino_copy_row)(out, buf, w, add);
    }
}

/* B^T d B for every tile of a block's planes of one channel: v[xi * ld + t], xi = 6q + p;
 * the patch of tile (i, j) is rows M*i .. M*i + 5 and columns M*j .. M*j + 5 of its plane
 * zero-padded by PADDING(M). */
INLINE void input_transform(int M, real_t *restrict v, long ld, const real_t *src,
                            const real_t *mask, long img_stride, int imgs, int h, int w, int th,
                            int tw, real_t *restrict scratch) {
    long sec = section(imgs, th, tw), len = pad_len(M, tw), tiles = (long)th * tw;
    real_t *hbuf = scratch, *pad = scratch + 36 * sec;
    int narrow = tw <= ROW_TW(M);
    for (int im = 0; im < imgs; im++) {
        const real_t *plane = src + im * img_stride, *pmask = mask ? mask + im * img_stride : NULL;
        if (!narrow) RT_FN(wino_pad_plane)(pad, len, pad_rows(M, th), PADDING(M), plane, pmask, h, w);
        /* row pass: padded row y times B is patch row k = y - M*i of every tile row i with
         * 0 <= k <= 5: H[p][k][t]. 16-lane stores past tw land in later tile rows of the same
         * section, written by later padded rows, or in the section's room. */
        for (int y = 0; y < pad_rows(M, th); y++) {
            real_t *dst[3];   /* the tile rows' slots: at most 6 / M of them */
            int n = 0;
            for (int i = y / M; i >= 0 && y - M * i <= 5; i--)
                if (i < th) dst[n++] = hbuf + (long)(y - M * i) * sec + im * tiles + (long)i * tw;
            if (narrow) {
                rvec lo, hi, x[6], o[6];
                load_row(&lo, &hi, plane, pmask, y - PADDING(M), h, w);
                for (int c = 0; c < 6; c++) x[c] = __builtin_shuffle(lo, hi, PADDED_PHASE(M, c));
                BT6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
                for (int d = 0; d < n; d++)
                    for (int p = 0; p < 6; p++) VSTORE(dst[d] + 6 * p * sec, o[p]);
            } else {   /* from the padded copy */
                const real_t *row = pad + y * len;
                for (int j = 0; j < tw; j++) {
                    const real_t *x = row + M * j;
                    real_t o[6];
                    BT6(real_t, o, x[0], x[1], x[2], x[3], x[4], x[5]);
                    for (int d = 0; d < n; d++)
                        for (int p = 0; p < 6; p++) dst[d][6 * p * sec + j] = o[p];
                }
            }
        }
    }
    /* column pass over the block's tiles, each result stored as it is made (gathering the
     * 36 first spills them to the stack) */
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16)
        for (int p = 0; p < 6; p++) {
            rvec x[6], o[6];
            for (int k = 0; k < 6; k++) VLOAD(x[k], hbuf + (long)(6 * p + k) * sec + t0);
            BT6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
            for (int q = 0; q < 6; q++) VSTORE(v + (6 * q + p) * ld + t0, o[q]);
        }
}

/* Prefetches the row M rows below row y of the 16 planes (ch_stride apart), in the next
 * image past the plane's end when there is one: the 16 planes' rows are 16 streams that the
 * hardware prefetchers do not follow, and their loads were the most sampled instructions of
 * input_transposed. */
INLINE void prefetch_ahead(int M, const real_t *img, long ch_stride, long img_stride,
                           int next_img, int y, int h, int w) {
    int ahead = y + M;
    if (ahead >= h) {
        if (!next_img) return;
        img += img_stride, ahead -= h;
    }
    const real_t *row = img + (long)ahead * w;
    for (int l = 0; l < 16; l++) {
        __builtin_prefetch(row + l * ch_stride);
        __builtin_prefetch(row + l * ch_stride + w - 1);
    }
}

/* The column pass of input_transposed for column p of the row pass hk[k][p], each result
 * stored as made (out[(6q + p) * xs]). */
INLINE void input_column_pass(real_t *out, long xs, rvec hk[6][6], int p) {
    rvec o[6];
    BT6(rvec, o, hk[0][p], hk[1][p], hk[2][p], hk[3][p], hk[4][p], hk[5][p]);
    for (int q = 0; q < 6; q++) VSTORE(out + (6 * q + p) * xs, o[q]);
}

/* input_transform on 16 channels at once, one per lane (see wino_tiles.input_transposed):
 * rows of the 16 planes are loaded as for input_transform, transposed in registers into a
 * ring of the six padded rows a tile row needs, column x of the row as one vector of 16
 * channels; then each tile's row pass and column pass run on whole vectors (no lanes idle
 * on narrow planes, no shuffles but the transposes), in the order and with the arithmetic
 * of input_transform's, and the results are stored 16 channels at a time, which is the
 * layout the weight gradient's GEMMs take: the block's separate transpose goes away. */
INLINE void input_transposed(int M, real_t *restrict vt, long xs, long ldt, const real_t *src,
                             long ch_stride, long img_stride, int imgs, int h, int w, int th,
                             int tw) {
    enum { LP = 32 };   /* padded row length M*tw + 6 - M <= 32 for w <= 28 */
    rvec ring[6][LP];
    const rvec zero = { 0 };
    long tiles = (long)th * tw, hw = (long)h * w;
    int pad = PADDING(M), lp = M * tw + 6 - M;
    for (int im = 0; im < imgs; im++) {
        const real_t *img = src + im * img_stride;
        int built = 0;   /* padded rows in the ring so far */
        for (int i = 0; i < th; i++) {
            for (; built <= M * i + 5; built++) {   /* padded row `built` into its slot */
                rvec *row = ring[built % 6];
                int y = built - pad;
                if (y < 0 || y >= h) {
                    for (int x = 0; x < lp; x++) row[x] = zero;
                    continue;
                }
                rvec lo[16], hi[16];
                #pragma GCC unroll 16
                for (int l = 0; l < 16; l++)
                    load_span(&lo[l], &hi[l], img + l * ch_stride, (long)y * w, w, hw);
                prefetch_ahead(M, img, ch_stride, img_stride, im + 1 < imgs, y, h, w);
                for (int x = 0; x < pad; x++) row[x] = zero;
                wino_transpose16(lo);
                for (int x = 0; x < 16 && x < w; x++) row[pad + x] = lo[x];
                if (w > 16) {
                    wino_transpose16(hi);
                    for (int x = 16; x < w; x++) row[pad + x] = hi[x - 16];
                }
                for (int x = pad + w; x < lp; x++) row[x] = zero;
            }
            for (int j = 0; j < tw; j++) {
                const rvec *x[6];   /* patch row k of the tile */
                for (int k = 0; k < 6; k++) x[k] = ring[(M * i + k) % 6] + M * j;
                real_t *out = vt + (im * tiles + (long)i * tw + j) * ldt;
                /* the row pass (patch row k times B: hk[k][p]) one group of BT6's outputs
                 * at a time, each group's column passes stored as made: all 36 hk at once
                 * spilled to the stack */
                rvec hk[6][6];
                for (int k = 0; k < 6; k++) hk[k][0] = BT6_0(x[k][0], x[k][2], x[k][4]);
                input_column_pass(out, xs, hk, 0);
                for (int k = 0; k < 6; k++)
                    BT6_12(rvec, hk[k][1], hk[k][2], x[k][1], x[k][2], x[k][3], x[k][4]);
                input_column_pass(out, xs, hk, 1);
                input_column_pass(out, xs, hk, 2);
                for (int k = 0; k < 6; k++)
                    BT6_34(rvec, hk[k][3], hk[k][4], x[k][1], x[k][2], x[k][3], x[k][4]);
                input_column_pass(out, xs, hk, 3);
                input_column_pass(out, xs, hk, 4);
                for (int k = 0; k < 6; k++) hk[k][5] = BT6_5(x[k][1], x[k][3], x[k][5]);
                input_column_pass(out, xs, hk, 5);
            }
        }
    }
}

/* A^T m A for every tile of a block (m[xi * ld + t]), plus bias and the fused activation,
 * into its planes of one channel. */
INLINE void output_transform(int M, real_t *dst, const real_t *restrict m, long ld,
                             long img_stride, int imgs, int h, int w, int th, int tw,
                             real_t bias, rt_act act, real_t *restrict scratch) {
    long sec = section(imgs, th, tw), tiles = (long)th * tw;
    real_t *ys = scratch, *row = scratch + 36 * sec;
    /* both passes on 16 tiles at a time: Y[a][b][t] = pixel (M*i + a, M*j + b) of tile t */
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16) {
        rvec z[4][6];
        for (int p = 0; p < 6; p++) {
            rvec x[6], o[4];
            for (int q = 0; q < 6; q++) VLOAD(x[q], m + (6 * q + p) * ld + t0);
            AT6(M, rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
            for (int a = 0; a < M; a++) z[a][p] = o[a];
        }
        for (int a = 0; a < M; a++) {
            rvec o[4];
            AT6(M, rvec, o, z[a][0], z[a][1], z[a][2], z[a][3], z[a][4], z[a][5]);
            for (int b = 0; b < M; b++) VSTORE(ys + (M * a + b) * sec + t0, o[b]);
        }
    }
    /* interleave each output row's pixels back: x = M*j + b */
    const rvec zero = { 0 };
    for (int im = 0; im < imgs; im++)
        for (int y = 0; y < h; y++) {
            const real_t *yr = ys + M * (y % M) * sec + im * tiles + (long)(y / M) * tw;
            if (tw > ROW_TW(M)) {
                for (int x = 0; x < w; x++) row[x] = yr[(x % M) * sec + x / M];
                RT_FN(wino_bias_act_row)(dst + im * img_stride + (long)y * w, row, w, bias, act);
                continue;
            }
            rvec lo, hi;
            if (M == 4) {
                rvec y0, y1, y2, y3;
                VLOAD(y0, yr); VLOAD(y1, yr + sec); VLOAD(y2, yr + 2 * sec); VLOAD(y3, yr + 3 * sec);
                rvec e = __builtin_shuffle(y0, y2, ZIP_LO), f = __builtin_shuffle(y1, y3, ZIP_LO);
                lo = __builtin_shuffle(e, f, ZIP_LO);
                hi = __builtin_shuffle(e, f, ZIP_HI);
            } else {
                rvec y0, y1;
                VLOAD(y0, yr); VLOAD(y1, yr + sec);
                lo = __builtin_shuffle(y0, y1, ZIP_LO);
                hi = __builtin_shuffle(y0, y1, ZIP_HI);
            }
            lo += bias; hi += bias;
            if (act == RT_ACT_RELU) {
                lo = (rvec)((rsel)lo & (lo > zero));
                hi = (rvec)((rsel)hi & (hi > zero));
            }
            store_row(dst + im * img_stride, &lo, &hi, 0, y, h, w, 0, row);
        }
}

/* output_transform on 16 output channels at once, one per lane (see
 * wino_tiles.output_transposed): per tile row, each tile's both passes on whole vectors, in
 * the order and with the arithmetic of output_transform's, its M x M pixels into a ring of the
 * tile row's M output rows (pixel x of a row as one vector of 16 channels); plus bias,
 * through the activation; then each row transposed in registers back into the 16 planes. */
INLINE void output_transposed(int M, real_t *dst, long ch_stride, long img_stride,
                              const real_t *restrict mt, long xs, long ldt, int imgs, int h,
                              int w, int th, int tw, const real_t *bias, rt_act act) {
    enum { LP = 32 };   /* output row length M*tw <= 32 for w <= 28 */
    rvec rows[4][LP], b = { 0 };
    real_t buf[32];
    const rvec zero = { 0 };
    long tiles = (long)th * tw;
    if (bias) VLOAD(b, bias);
    for (int a = 0; a < M; a++)   /* pixels past the tiles: stored past the rows, then overwritten */
        for (int x = M * tw; x < LP; x++) rows[a][x] = zero;
    for (int im = 0; im < imgs; im++)
        for (int i = 0; i < th; i++) {
            for (int j = 0; j < tw; j++) {
                const real_t *m = mt + (im * tiles + (long)i * tw + j) * ldt;
                rvec z[4][6];
                for (int p = 0; p < 6; p++) {
                    rvec x[6], o[4];
                    for (int q = 0; q < 6; q++) VLOAD(x[q], m + (6 * q + p) * xs);
                    AT6(M, rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
                    for (int a = 0; a < M; a++) z[a][p] = o[a];
                }
                for (int a = 0; a < M; a++) {
                    rvec o[4];
                    AT6(M, rvec, o, z[a][0], z[a][1], z[a][2], z[a][3], z[a][4], z[a][5]);
                    for (int c = 0; c < M; c++) {
                        rvec v = o[c] + b;
                        if (act == RT_ACT_RELU) v = (rvec)((rsel)v & (v > zero));
                        rows[a][M * j + c] = v;
                    }
                }
            }
            for (int a = 0; a < M && M * i + a < h; a++) {
                rvec lo[16], hi[16];
                #pragma GCC unroll 16
                for (int l = 0; l < 16; l++) lo[l] = rows[a][l], hi[l] = rows[a][16 + l];
                wino_transpose16(lo);
                if (w > 16) wino_transpose16(hi);
                else for (int l = 0; l < 16; l++) hi[l] = zero;
                for (int l = 0; l < 16; l++)
                    store_row(dst + l * ch_stride + im * img_stride, &lo[l], &hi[l], 0, M * i + a,
                              h, w, 0, buf);
            }
        }
}

/* output_grad_transform's two passes on 16 tiles for M = 4 (dY[a][b] at g + (4a + b) * sec):
 * row k of A dY, made for the rows 0, 5, the pair 1, 2 and the pair 3, 4 in turn (the
 * arithmetic of A6), times A^T and stored as made: v[(6k + q) * ld]. */
INLINE void output_grad_row(real_t *v, long ld, int k, const rvec *z) {
    rvec o[6];
    A6(4, rvec, o, z);
    for (int q = 0; q < 6; q++) VSTORE(v + (6 * k + q) * ld, o[q]);
}
INLINE void output_grad_rows4(real_t *v, long ld, const real_t *g, long sec) {
    rvec z[4], z2[4];
    for (int b = 0; b < 4; b++) VLOAD(z[b], g + b * sec);          /* row 0: dY[0][b] */
    output_grad_row(v, ld, 0, z);
    for (int b = 0; b < 4; b++) VLOAD(z[b], g + (12 + b) * sec);   /* row 5: dY[3][b] */
    output_grad_row(v, ld, 5, z);
    rvec d[4][4];   /* d[b][a] = dY[a][b]: column b */
    for (int b = 0; b < 4; b++)
        for (int a = 0; a < 4; a++) VLOAD(d[b][a], g + (4 * a + b) * sec);
    for (int b = 0; b < 4; b++) A6_12(rvec, z[b], z2[b], d[b]);
    output_grad_row(v, ld, 1, z);
    output_grad_row(v, ld, 2, z2);
    for (int b = 0; b < 4; b++) A6_34(rvec, z[b], z2[b], d[b]);
    output_grad_row(v, ld, 3, z);
    output_grad_row(v, ld, 4, z2);
}

/* A dy A^T for every MxM tile of a block's output-gradient planes of one channel (masked by
 * the fused activation's output when `mask` is set): v[xi * ld + t]; pixels past a plane's
 * edge count as zero. */
INLINE void output_grad_transform(int M, real_t *restrict v, long ld, const real_t *src,
                                  const real_t *mask, long img_stride, int imgs, int h, int w,
                                  int th, int tw, real_t *restrict scratch) {
    long sec = section(imgs, th, tw), len = pad_len(M, tw), tiles = (long)th * tw;
    real_t *gs = scratch, *pad = scratch + 36 * sec;
    /* split rows by column phase: dY[a][b][t] = dy[M*i + a][M*j + b]; 16-lane stores past tw
     * land in rows written later or in the section's room */
    int narrow = tw <= ROW_TW(M);
    for (int im = 0; im < imgs; im++) {
        const real_t *plane = src + im * img_stride, *pmask = mask ? mask + im * img_stride : NULL;
        if (!narrow) RT_FN(wino_pad_plane)(pad, len, pad_rows(M, th), 0, plane, pmask, h, w);
        for (int y = 0; y < M * th; y++) {
            real_t *gy = gs + M * (y % M) * sec + im * tiles + (long)(y / M) * tw;
            if (narrow) {
                rvec lo, hi;
                load_row(&lo, &hi, plane, pmask, y, h, w);
                for (int b = 0; b < M; b++)
                    VSTORE(gy + b * sec, __builtin_shuffle(lo, hi, PHASE(M, b)));
            } else {   /* from the padded copy */
                const real_t *row = pad + y * len;
                for (int x = 0; x < M * tw; x++) gy[(x % M) * sec + x / M] = row[x];
            }
        }
    }
    for (long t0 = 0; t0 < imgs * tiles; t0 += 16) {
        if (M == 4) {   /* one pair of the column pass's rows k at a time: all 24 spilled */
            output_grad_rows4(v + t0, ld, gs + t0, sec);
            continue;
        }
        rvec z[6][4];
        for (int b = 0; b < M; b++) {   /* A dY down the columns */
            rvec d[4], o[6];
            for (int a = 0; a < M; a++) VLOAD(d[a], gs + (M * a + b) * sec + t0);
            A6(M, rvec, o, d);
            for (int k = 0; k < 6; k++) z[k][b] = o[k];
        }
        for (int k = 0; k < 6; k++) {    /* ... times A^T, stored as made */
            rvec o[6];
            A6(M, rvec, o, z[k]);
            for (int q = 0; q < 6; q++) VSTORE(v + (6 * k + q) * ld + t0, o[q]);
        }
    }
}

/* The adjoint of input_transform (the input gradient from dV = U^T dM): the column pass
 * B dV[.][p] into H[p][k][tile], then per padded row y the sum of the tile rows it is patch
 * row k of, times B, added up over the overlapping columns: x = M*j + c. */
INLINE void input_adjoint(int M, real_t *dst, const real_t *restrict m, long ld,
                          long img_stride, int imgs, int h, int w, int th, int tw, int add,
                          real_t *restrict scratch) {
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
    /* lane j takes lane j - 1 (UP1) or j - 2 (UP2) of the first vector, zero below */
    static const rsel UP1 = { 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };
    static const rsel UP2 = { 16, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
    const rvec zero = { 0 };
    int pad = PADDING(M);
    for (int im = 0; im < imgs; im++)
        for (int y = pad; y < pad + h; y++) {   /* the padded rows of the plane proper */
            const real_t *src[3];   /* the tile rows' slots: at most 6 / M of them */
            int n = 0;
            for (int i = y / M; i >= 0 && y - M * i <= 5; i--)
                if (i < th) src[n++] = hbuf + (long)(y - M * i) * sec + im * tiles + (long)i * tw;
            if (tw <= ROW_TW(M)) {
                rvec o[6], x[6];
                for (int p = 0; p < 6; p++) {
                    rvec acc = zero, a;
                    for (int d = 0; d < n; d++) { VLOAD(a, src[d] + 6 * p * sec); acc += a; }
                    o[p] = (rvec)((rsel)acc & live);
                }
                B6(rvec, x, o[0], o[1], o[2], o[3], o[4], o[5]);
                rvec e, f;   /* the padded row: its columns 0..31 interleaved from e and f */
                if (M == 4) {   /* columns 4j + 4, 4j + 5 are columns 0, 1 of tile j + 1 */
                    rvec c0 = x[0] + __builtin_shuffle(x[4], zero, UP1);
                    rvec c1 = x[1] + __builtin_shuffle(x[5], zero, UP1);
                    e = __builtin_shuffle(c0, x[2], ZIP_LO), f = __builtin_shuffle(c1, x[3], ZIP_LO);
                } else {        /* column 2j + c is column c - 2 of tile j + 1, c - 4 of j + 2 */
                    e = x[0] + __builtin_shuffle(x[2], zero, UP1) + __builtin_shuffle(x[4], zero, UP2);
                    f = x[1] + __builtin_shuffle(x[3], zero, UP1) + __builtin_shuffle(x[5], zero, UP2);
                }
                rvec lo = __builtin_shuffle(e, f, ZIP_LO), hi = __builtin_shuffle(e, f, ZIP_HI);
                store_row(dst + im * img_stride, &lo, &hi, pad, y - pad, h, w, add, row);
            } else {
                for (int x = 0; x < M * tw + 6 - M; x++) row[x] = 0;
                for (int j = 0; j < tw; j++) {
                    real_t o[6], x[6];
                    for (int p = 0; p < 6; p++) {
                        o[p] = 0;
                        for (int d = 0; d < n; d++) o[p] += src[d][6 * p * sec + j];
                    }
                    B6(real_t, x, o[0], o[1], o[2], o[3], o[4], o[5]);
                    for (int c = 0; c < 6; c++) row[M * j + c] += x[c];
                }
                RT_FN(wino_copy_row)(dst + im * img_stride + (long)(y - pad) * w, row + pad, w, add);
            }
        }
}

/* input_adjoint on 16 channels at once, one per lane (see wino_tiles.adjoint_transposed):
 * per tile row, each tile's column pass B dV[.][p] into a ring of the last three tile rows'
 * H; per plane row, the sum of the tile rows it is patch row k of, times B, added up over the
 * overlapping columns, all in the order of input_adjoint's (the tiles past the row's last
 * are B of zeros, as input_adjoint's masked lanes); then the row transposed in registers
 * back into the 16 planes. */
INLINE void input_adjoint_transposed(int M, real_t *dst, long ch_stride, long img_stride,
                                     const real_t *restrict dvt, long xs, long ldt, int imgs,
                                     int h, int w, int th, int tw, int add) {
    enum { TW = 14, LP = 32 };   /* tiles per row (ROW_TW(2)), plane row length */
    rvec hb[3][TW][36];          /* H of the tile rows i % 3 */
    rvec xs_[TW + 2][6];         /* B times each tile's row sums; two tiles of zeros past */
    rvec cols[LP];
    real_t buf[32];
    const rvec zero = { 0 };
    long tiles = (long)th * tw;
    int pad = PADDING(M);
    for (int x = 0; x < LP; x++) cols[x] = zero;
    for (int j = tw; j < tw + 2; j++) {
        rvec o[6] = { zero, zero, zero, zero, zero, zero };
        B6(rvec, xs_[j], o[0], o[1], o[2], o[3], o[4], o[5]);
    }
    for (int im = 0; im < imgs; im++) {
        int done = 0;   /* tile rows in the ring so far */
        for (int y = pad; y < pad + h; y++) {   /* the padded rows of the plane proper */
            int last = y / M < th ? y / M : th - 1;
            for (; done <= last; done++)
                for (int j = 0; j < tw; j++) {
                    const real_t *m = dvt + (im * tiles + (long)done * tw + j) * ldt;
                    for (int p = 0; p < 6; p++) {
                        rvec x[6], o[6];
                        for (int q = 0; q < 6; q++) VLOAD(x[q], m + (6 * q + p) * xs);
                        B6(rvec, o, x[0], x[1], x[2], x[3], x[4], x[5]);
                        for (int k = 0; k < 6; k++) hb[done % 3][j][6 * p + k] = o[k];
                    }
                }
            for (int j = 0; j < tw; j++) {
                rvec o[6];
                for (int p = 0; p < 6; p++) {
                    rvec acc = zero;
                    for (int i = y / M; i >= 0 && y - M * i <= 5; i--)
                        if (i < th) acc += hb[i % 3][j][6 * p + y - M * i];
                    o[p] = acc;
                }
                B6(rvec, xs_[j], o[0], o[1], o[2], o[3], o[4], o[5]);
            }
            /* padded column M*j + c is x[c] of tile j, plus x[c + M] of tile j - 1 and (M = 2)
             * x[c + 4] of tile j - 2, summed in that order; plane column x is padded x + pad */
            for (int x = 0; x < w; x++) {
                int col = x + pad, j = col / M, c = col % M;
                rvec v = xs_[j][c];
                if (c + M < 6) v += j >= 1 ? xs_[j - 1][c + M] : zero;   /* M = 4: c < 2 */
                if (M == 2) v += j >= 2 ? xs_[j - 2][c + 4] : zero;
                cols[x] = v;
            }
            rvec lo[16], hi[16];
            #pragma GCC unroll 16
            for (int l = 0; l < 16; l++) lo[l] = cols[l], hi[l] = cols[16 + l];
            wino_transpose16(lo);
            if (w > 16) wino_transpose16(hi);
            for (int l = 0; l < 16; l++)
                store_row(dst + l * ch_stride + im * img_stride, &lo[l], &hi[l], 0, y - pad, h, w,
                          add, buf);
        }
    }
}

/* ---- the two kinds: every function above with M fixed ---- */

#define KIND(M, name)                                                                        \
    static void name##_kernel(rvec *u, const rvec *g) { kernel_transform(M, u, g); }         \
    static void name##_kernel_grad(rvec *dg, const rvec *du) {                               \
        kernel_grad_transform(M, dg, du);                                                    \
    }                                                                                        \
    static void name##_input(real_t *restrict v, long ld, const real_t *src,                 \
                             const real_t *mask, long img_stride, int imgs, int h, int w,    \
                             int th, int tw, real_t *restrict scratch) {                     \
        input_transform(M, v, ld, src, mask, img_stride, imgs, h, w, th, tw, scratch);      \
    }                                                                                        \
    static void name##_output_grad(real_t *restrict v, long ld, const real_t *src,           \
                                   const real_t *mask, long img_stride, int imgs, int h,     \
                                   int w, int th, int tw, real_t *restrict scratch) {        \
        output_grad_transform(M, v, ld, src, mask, img_stride, imgs, h, w, th, tw, scratch);\
    }                                                                                        \
    static void name##_output(real_t *dst, const real_t *restrict m, long ld,                \
                              long img_stride, int imgs, int h, int w, int th, int tw,       \
                              real_t bias, rt_act act, real_t *restrict scratch) {           \
        output_transform(M, dst, m, ld, img_stride, imgs, h, w, th, tw, bias, act, scratch);\
    }                                                                                        \
    static void name##_input_adjoint(real_t *dst, const real_t *restrict m, long ld,         \
                                     long img_stride, int imgs, int h, int w, int th,        \
                                     int tw, int add, real_t *restrict scratch) {            \
        input_adjoint(M, dst, m, ld, img_stride, imgs, h, w, th, tw, add, scratch);          \
    }                                                                                        \
    static long name##_scratch_elems(int imgs, int th, int tw) {                             \
        return scratch_elems(M, imgs, th, tw);                                               \
    }                                                                                        \
    static void name##_output_transposed(real_t *dst, long ch_stride, long img_stride,       \
                                         const real_t *restrict mt, long xs, long ldt,       \
                                         int imgs, int h, int w, int th, int tw,             \
                                         const real_t *bias, rt_act act) {                   \
        output_transposed(M, dst, ch_stride, img_stride, mt, xs, ldt, imgs, h, w, th, tw,    \
                          bias, act);                                                        \
    }                                                                                        \
    static void name##_adjoint_transposed(real_t *dst, long ch_stride, long img_stride,      \
                                          const real_t *restrict dvt, long xs, long ldt,     \
                                          int imgs, int h, int w, int th, int tw, int add) { \
        input_adjoint_transposed(M, dst, ch_stride, img_stride, dvt, xs, ldt, imgs, h, w,    \
                                 th, tw, add);                                               \
    }                                                                                        \
    static void name##_input_transposed(real_t *restrict vt, long xs, long ldt,              \
                                        const real_t *src, long ch_stride, long img_stride,  \
                                        int imgs, int h, int w, int th, int tw) {            \
        input_transposed(M, vt, xs, ldt, src, ch_stride, img_stride, imgs, h, w, th, tw);    \
    }                                                                                        \
    const wino_tiles RT_FN(wino_##name) = {                                                  \
        .m = M, .r = KSIDE(M), .xi = XI, .kernel = name##_kernel,                            \
        .kernel_grad = name##_kernel_grad, .input = name##_input,                            \
        .output_grad = name##_output_grad, .output = name##_output,                          \
        .input_adjoint = name##_input_adjoint, .scratch_elems = name##_scratch_elems,        \
        .input_transposed = name##_input_transposed,                                         \
        .output_transposed = name##_output_transposed,                                       \
        .adjoint_transposed = name##_adjoint_transposed,                                     \
    };

KIND(4, f4x4)
KIND(2, f2x2_5x5)
