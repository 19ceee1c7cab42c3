/* im2col and its adjoint for conv2d: the matrix whose product with the weights is the
 * convolution, with a fast path for stride-1 "same" convolutions. */
#include <string.h>
#include "conv2d_im2col.h"

/* Output columns ox whose input column ox*sw-pw+kj*dw lies inside [0, w): [*lo, *hi).
 * Computing the range once per kernel column keeps bounds tests out of the inner loops. */
static void valid_cols(const rt_conv_shape *s, int kj, int *lo, int *hi) {
    int off = kj * s->dw - s->pw;              /* ix = ox*sw + off */
    int a = off >= 0 ? 0 : (-off + s->sw - 1) / s->sw;
    int b = s->w - off <= 0 ? 0 : (s->w - off + s->sw - 1) / s->sw;
    if (b > s->ow) b = s->ow;
    if (a > b) a = b;
    *lo = a; *hi = b;
}

/* im2col of a stride-1 "same" convolution through one shifted plane per (ci, kj). */
static void im2col_same(real_t *col, real_t *shifted /*(H+KH-1),W*/, const real_t *in, int cg,
                        const rt_conv_shape *s) {
    int w = s->w, h = s->h, rows = h + s->kh - 1;
    long hw = (long)h * w;
    for (int ci = 0; ci < cg; ci++) {
        const real_t *plane = in + (long)ci * hw;
        for (int kj = 0; kj < s->kw; kj++) {
            int lo, hi, off = kj - s->pw;     /* shifted[(y+ph)*w + x] = plane[y*w + x + off] */
            valid_cols(s, kj, &lo, &hi);
            for (int r = 0; r < rows; r++) {
                real_t *row = shifted + (long)r * w;
                int y = r - s->ph;
                if (y < 0 || y >= h) { for (int x = 0; x < w; x++) row[x] = 0; continue; }
                const real_t *src = plane + (long)y * w + off + lo;
                for (int x = 0; x < lo; x++) row[x] = 0;
                for (int i = 0; i < hi - lo; i++) row[lo + i] = src[i];
                for (int x = hi; x < w; x++) row[x] = 0;
            }
            for (int ki = 0; ki < s->kh; ki++)
                memcpy(col + ((long)(ci * s->kh + ki) * s->kw + kj) * hw, shifted + (long)ki * w,
                       sizeof(real_t) * hw);
        }
    }
}

void RT_FN(conv2d_im2col)(real_t *col /*cg*KH*KW, OH*OW*/, real_t *shifted,
                          const real_t *in /*cg,H,W*/, int cg, const rt_conv_shape *s) {
    if (is_same_stride1(s)) { im2col_same(col, shifted, in, cg, s); return; }
    int rows = cg * s->kh * s->kw;
    for (int r = 0; r < rows; r++) {
        int kj = r % s->kw, ki = (r / s->kw) % s->kh, ci = r / (s->kw * s->kh);
        const real_t *plane = in + (long)ci * s->h * s->w;
        real_t *dst = col + (long)r * s->oh * s->ow;
        int lo, hi, off = kj * s->dw - s->pw;
        valid_cols(s, kj, &lo, &hi);
        for (int oy = 0; oy < s->oh; oy++) {
            int iy = oy * s->sh - s->ph + ki * s->dh;
            real_t *row = dst + (long)oy * s->ow;
            if (iy < 0 || iy >= s->h || lo == hi) {
                for (int ox = 0; ox < s->ow; ox++) row[ox] = 0;
                continue;
            }
            /* Rows are short (tens of elements): plain loops, which the compiler vectorizes,
             * beat memcpy/memset calls here (measured: im2col was 14% of conv time). */
            long base = (long)iy * s->w + off;   /* input index of ox is base + ox*sw */
            for (int ox = 0; ox < lo; ox++) row[ox] = 0;
            if (s->sw == 1) {
                const real_t *src = plane + base + lo;
                for (int i = 0; i < hi - lo; i++) row[lo + i] = src[i];
            } else if (s->sw == 2) {   /* a constant step GCC vectorizes with two-vector shuffles
                                        * (the 1x1/2 projections' im2col: 17% of their time) */
                const real_t *src = plane + base + 2L * lo;
                for (int i = 0; i < hi - lo; i++) row[lo + i] = src[2 * i];
            } else {
                for (int ox = lo; ox < hi; ox++) row[ox] = plane[base + (long)ox * s->sw];
            }
            for (int ox = hi; ox < s->ow; ox++) row[ox] = 0;
        }
    }
}

/* Adjoint of im2col_same: the kh rows of one (ci, kj) are summed into the shifted plane with
 * long vector adds, then the plane is added to din row by row. */
static void col2im_same_add(real_t *din, real_t *shifted, const real_t *dcol, int cg,
                            const rt_conv_shape *s) {
    int w = s->w, h = s->h, rows = h + s->kh - 1;
    long hw = (long)h * w;
    for (int ci = 0; ci < cg; ci++) {
        real_t *plane = din + (long)ci * hw;
        for (int kj = 0; kj < s->kw; kj++) {
            int lo, hi, off = kj - s->pw;
            valid_cols(s, kj, &lo, &hi);
            for (long i = 0; i < (long)rows * w; i++) shifted[i] = 0;
            for (int ki = 0; ki < s->kh; ki++) {
                const real_t *src = dcol + ((long)(ci * s->kh + ki) * s->kw + kj) * hw;
                real_t *dst = shifted + (long)ki * w;
                for (long i = 0; i < hw; i++) dst[i] += src[i];
            }
            for (int y = 0; y < h; y++) {
                const real_t *row = shifted + (long)(y + s->ph) * w;
                real_t *dst = plane + (long)y * w + off + lo;
                for (int i = 0; i < hi - lo; i++) dst[i] += row[lo + i];
            }
        }
    }
}

void RT_FN(conv2d_col2im_add)(real_t *din /*cg,H,W*/, real_t *shifted, const real_t *dcol, int cg,
                              const rt_conv_shape *s) {
    if (is_same_stride1(s)) { col2im_same_add(din, shifted, dcol, cg, s); return; }
    for (int ci = 0; ci < cg; ci++) {
        real_t *plane = din + (long)ci * s->h * s->w;
        for (int ki = 0; ki < s->kh; ki++)
            for (int kj = 0; kj < s->kw; kj++) {
                const real_t *src = dcol + ((long)(ci * s->kh + ki) * s->kw + kj) * s->oh * s->ow;
                int lo, hi, off = kj * s->dw - s->pw;
                valid_cols(s, kj, &lo, &hi);
                for (int oy = 0; oy < s->oh; oy++) {
                    int iy = oy * s->sh - s->ph + ki * s->dh;
                    if (iy < 0 || iy >= s->h) continue;
                    long base = (long)iy * s->w + off;   /* input index of ox is base + ox*sw */
                    const real_t *row = src + (long)oy * s->ow;
                    if (s->sw == 1) {
                        real_t *dst = plane + base + lo;
                        for (int ox = 0; ox < hi - lo; ox++) dst[ox] += row[lo + ox];
                    } else {
                        for (int ox = lo; ox < hi; ox++) plane[base + (long)ox * s->sw] += row[ox];
                    }
                }
            }
    }
}
