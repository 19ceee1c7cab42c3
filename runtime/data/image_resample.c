/* Pillow's bilinear and bicubic resampling (Resample.c: the filter widened by the shrink
 * factor, coefficients in 22-bit fixed point, horizontal pass then vertical, each rounded and
 * clipped to a byte), so a sample equals Pillow's resize of the same pixels; output planar
 * CHW, optionally mirrored. */
#include <math.h>
#include <stdlib.h>
#include "rt_core.h"
#include "rt_image.h"

#define PRECISION_BITS (32 - 8 - 2)

typedef struct {
    int ksize;
    int *bounds;   /* [out][2]: first source index, count */
    int32_t *k;    /* [out][ksize] */
} coeffs;

static double triangle(double x) {
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Pillow's bicubic_filter: Keys' cubic with a = -0.5. */
static double bicubic(double x) {
    const double a = -0.5;
    x = fabs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
    if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
    return 0.0;
}

double rt_image_filter_support(rt_image_filter f) { return f == RT_IMG_BICUBIC ? 2.0 : 1.0; }

/* Pillow's precompute_coeffs + normalize_coeffs_8bpc. Pillow keeps the box in floats. The
 * taps are clamped to [lo, hi) of the source. */
static void coeffs_make(coeffs *c, rt_image_filter f, int lo, int hi, float in0, float in1, int out) {
    double (*filter)(double) = f == RT_IMG_BICUBIC ? bicubic : triangle;
    double scale = (double)(in1 - in0) / out, filterscale = scale < 1.0 ? 1.0 : scale;
    double support = rt_image_filter_support(f) * filterscale, ss = 1.0 / filterscale;
    c->ksize = (int)ceil(support) * 2 + 1;
    c->bounds = rt_xmalloc((size_t)out * 2 * sizeof(int));
    c->k = rt_xcalloc((size_t)out * c->ksize, sizeof(int32_t));
    double *w = rt_xmalloc((size_t)c->ksize * sizeof(double));
    for (int xx = 0; xx < out; xx++) {
        double center = in0 + (xx + 0.5) * scale, ww = 0.0;
        int xmin = (int)(center - support + 0.5), xmax = (int)(center + support + 0.5);
        if (xmin < lo) xmin = lo;
        if (xmax > hi) xmax = hi;
        xmax -= xmin;
        if (xmax < 1) {   /* a window outside the image: nearest edge pixel */
            xmin = xmin >= hi ? hi - 1 : lo;
            xmax = 1;
        }
        if (xmax > c->ksize) xmax = c->ksize;
        for (int x = 0; x < xmax; x++) ww += w[x] = filter((x + xmin - center + 0.5) * ss);
        for (int x = 0; x < xmax; x++) {
            double v = ww != 0.0 ? w[x] / ww : (xmax == 1 ? 1.0 : 0.0);
            c->k[(size_t)xx * c->ksize + x] = (int32_t)(v < 0 ? -0.5 + v * (1 << PRECISION_BITS)
                                                              : 0.5 + v * (1 << PRECISION_BITS));
        }
        c->bounds[2 * xx] = xmin;
        c->bounds[2 * xx + 1] = xmax;
    }
    free(w);
}

static void coeffs_free(coeffs *c) {
    free(c->bounds);
    free(c->k);
}

static inline uint8_t clip8(int32_t v) {
    v >>= PRECISION_BITS;
    return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v;
}

/* Padding: output pixels sampled from outside the image are zeros, not the edge. */
static void zero_outside(uint8_t *chw, int out_h, int out_w, int src_w, int src_h, const rt_image_window *win) {
    double sx = (win->x1 - win->x0) / out_w, sy = (win->y1 - win->y0) / out_h;
    const size_t plane = (size_t)out_h * out_w;
    for (int yy = 0; yy < out_h; yy++) {
        double cy = win->y0 + (yy + 0.5) * sy;
        for (int xx = 0; xx < out_w; xx++) {
            double cx = win->x0 + (xx + 0.5) * sx;
            if (cy >= 0 && cy < src_h && cx >= 0 && cx < src_w) continue;
            size_t at = (size_t)yy * out_w + (win->flip ? out_w - 1 - xx : xx);
            chw[at] = chw[at + plane] = chw[at + 2 * plane] = 0;
        }
    }
}

size_t rt_image_resample_tmp_bytes(int src_h, int out_w) { return (size_t)src_h * out_w * 3; }

void rt_image_resample(uint8_t *chw, int out_h, int out_w, const uint8_t *rgb, int src_w,
                       int src_h, const rt_image_window *win, uint8_t *tmp) {
    int clamp = win->clamp_to_window;
    /* A window of whole pixels clamps there; after a DCT scale its edges may be fractional,
     * and the pixels they cut count as inside. */
    int xlo = clamp ? (int)floor(win->x0) : 0, xhi = clamp ? (int)ceil(win->x1) : src_w;
    int ylo = clamp ? (int)floor(win->y0) : 0, yhi = clamp ? (int)ceil(win->y1) : src_h;
    if (xhi > src_w) xhi = src_w;
    if (yhi > src_h) yhi = src_h;
    coeffs h, v;
    coeffs_make(&h, win->filter, xlo, xhi, (float)win->x0, (float)win->x1, out_w);
    coeffs_make(&v, win->filter, ylo, yhi, (float)win->y0, (float)win->y1, out_h);
    /* Source rows the vertical pass reads: the horizontal pass runs on those only. */
    int yfirst = v.bounds[0], ylast = v.bounds[2 * (out_h - 1)] + v.bounds[2 * (out_h - 1) + 1];
    for (int y = yfirst; y < ylast; y++) {
        const uint8_t *row = rgb + (size_t)y * src_w * 3;
        uint8_t *t = tmp + (size_t)(y - yfirst) * out_w * 3;
        for (int xx = 0; xx < out_w; xx++) {
            const int32_t *k = h.k + (size_t)xx * h.ksize;
            const uint8_t *p = row + (size_t)h.bounds[2 * xx] * 3;
            int32_t s0 = 1 << (PRECISION_BITS - 1), s1 = s0, s2 = s0;
            for (int x = 0, n = h.bounds[2 * xx + 1]; x < n; x++, p += 3) {
                s0 += p[0] * k[x];
                s1 += p[1] * k[x];
                s2 += p[2] * k[x];
            }
            t[3 * xx] = clip8(s0), t[3 * xx + 1] = clip8(s1), t[3 * xx + 2] = clip8(s2);
        }
    }
    /* Vertical pass a whole row at a time: taps outer, the row's bytes inner, so the
     * multiply-adds run over contiguous memory and vectorize. */
    const size_t plane = (size_t)out_h * out_w, row_len = (size_t)out_w * 3;
    int32_t *acc = rt_xmalloc(row_len * sizeof(int32_t));
    for (int yy = 0; yy < out_h; yy++) {
        const int32_t *k = v.k + (size_t)yy * v.ksize;
        const uint8_t *row0 = tmp + (size_t)(v.bounds[2 * yy] - yfirst) * row_len;
        for (size_t i = 0; i < row_len; i++) acc[i] = 1 << (PRECISION_BITS - 1);
        for (int y = 0, n = v.bounds[2 * yy + 1]; y < n; y++) {
            const uint8_t *p = row0 + (size_t)y * row_len;
            const int32_t ky = k[y];
            for (size_t i = 0; i < row_len; i++) acc[i] += p[i] * ky;
        }
        uint8_t *o0 = chw + (size_t)yy * out_w, *o1 = o0 + plane, *o2 = o1 + plane;
        for (int xx = 0; xx < out_w; xx++) {
            int ox = win->flip ? out_w - 1 - xx : xx;
            o0[ox] = clip8(acc[3 * xx]), o1[ox] = clip8(acc[3 * xx + 1]), o2[ox] = clip8(acc[3 * xx + 2]);
        }
    }
    free(acc);
    if (win->zero_outside) zero_outside(chw, out_h, out_w, src_w, src_h, win);
    coeffs_free(&h);
    coeffs_free(&v);
}
