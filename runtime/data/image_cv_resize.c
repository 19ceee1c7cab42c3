/* OpenCV's cv::resize with INTER_LINEAR on 8-bit images, bit for bit (Caffe's ImageData resizes
 * to new_height x new_width with it): OpenCV's modules/imgproc/src/resize.cpp, hal::resize and
 * resizeGeneric_ with HResizeLinear<uchar, int, short> and the VResizeLinear<uchar, ...>
 * specialization. Each destination coordinate d maps to f = (float)((d + 0.5) * scale - 0.5),
 * scale = 1 / (dst / src) in doubles; s = floor(f), f -= s; the weights (1 - f) and f become
 * shorts at INTER_RESIZE_COEF_SCALE = 2048, rounded half to even (cvRound). Horizontally a
 * position left of the first or right of the last pixel takes that pixel (f = 0); vertically
 * both rows are clamped to the image and the weights stay. The horizontal pass keeps ints
 * (pixel x weight, no rounding); the vertical one computes
 * ((b0 * (S0 >> 4)) >> 16) + ((b1 * (S1 >> 4)) >> 16), then (+ 2) >> 2. A same-size resize
 * is a copy, and OpenCV's switch of an exact 2x shrink to INTER_AREA gives (a + b + c + d + 2) >> 2,
 * which this arithmetic gives too. Only the crop's pixels of the resized image are computed:
 * each depends on its own coordinates alone. */
#include <math.h>
#include <stdlib.h>
#include "rt_core.h"
#include "rt_image.h"

#define COEF_SCALE 2048   /* OpenCV's INTER_RESIZE_COEF_SCALE (1 << INTER_RESIZE_COEF_BITS, 11) */

typedef struct {
    int s0, s1;       /* source indices, clamped */
    int16_t a0, a1;   /* their weights */
    int inside;       /* the destination coordinate lies in the resized image (else: padding, 0) */
} tap;

/* cvRound then saturate_cast<short> of a float. */
static int16_t short_round(float v) {
    long r = lrintf(v);
    return (int16_t)(r < -32768 ? -32768 : r > 32767 ? 32767 : r);
}

/* The taps of destination coordinates first .. first + n - 1 of a dst-long axis over a src-long
 * one. horizontal: OpenCV's xofs/alpha (edges take the edge pixel), else yofs/beta. */
static void make_taps(tap *t, long first, int n, int dst, int src, int horizontal) {
    const double inv_scale = (double)dst / src, scale = 1. / inv_scale;
    for (int i = 0; i < n; i++) {
        long d = first + i;
        t[i].inside = d >= 0 && d < dst;
        /* stored, so that no compiler fuses the product and the difference into one FMA: OpenCV
         * rounds the product (its baseline build has no FMA here) */
        volatile double at = (d + 0.5) * scale;
        float f = (float)(at - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (horizontal) {
            if (s < 0) f = 0, s = 0;
            if (s >= src - 1) f = 0, s = src - 1;
        }
        t[i].s0 = s < 0 ? 0 : s > src - 1 ? src - 1 : s;
        t[i].s1 = s + 1 < 0 ? 0 : s + 1 > src - 1 ? src - 1 : s + 1;
        t[i].a0 = short_round((1.f - f) * COEF_SCALE);
        t[i].a1 = short_round(f * COEF_SCALE);
    }
}

/* The horizontal pass of one source row into row[x * cn + c]. */
static void hpass(int32_t *row, const uint8_t *src_row, int cn, const tap *h, int out_w) {
    for (int x = 0; x < out_w; x++) {
        const uint8_t *p0 = src_row + (size_t)h[x].s0 * cn, *p1 = src_row + (size_t)h[x].s1 * cn;
        for (int c = 0; c < cn; c++) row[x * cn + c] = p0[c] * h[x].a0 + p1[c] * h[x].a1;
    }
}

void rt_image_cv_linear(uint8_t *chw, int out_h, int out_w, const uint8_t *src, int cn, int src_w, int src_h,
                        const rt_image_window *win) {
    const int rw = (int)win->rw, rh = (int)win->rh;
    const size_t plane = (size_t)out_h * out_w;
    tap *h = rt_xmalloc((size_t)out_w * sizeof *h), *v = rt_xmalloc((size_t)out_h * sizeof *v);
    make_taps(h, win->left, out_w, rw, src_w, 1);
    make_taps(v, win->top, out_h, rh, src_h, 0);
    int32_t *r0 = rt_xmalloc((size_t)out_w * cn * sizeof *r0), *r1 = rt_xmalloc((size_t)out_w * cn * sizeof *r1);
    const int copy = rw == src_w && rh == src_h;   /* cv::resize copies a same-size image */
    for (int y = 0; y < out_h; y++) {
        const uint8_t *row0 = src + (size_t)v[y].s0 * src_w * cn, *row1 = src + (size_t)v[y].s1 * src_w * cn;
        const int32_t b0 = v[y].a0, b1 = v[y].a1;
        if (!copy) hpass(r0, row0, cn, h, out_w), hpass(r1, row1, cn, h, out_w);
        for (int x = 0; x < out_w; x++) {
            const size_t at = (size_t)y * out_w + (win->flip ? out_w - 1 - x : x);
            for (int c = 0; c < cn; c++) {
                int val;
                if (!v[y].inside || !h[x].inside) val = 0;
                else if (copy) val = row0[(size_t)h[x].s0 * cn + c];
                else val = (((b0 * (r0[x * cn + c] >> 4)) >> 16) + ((b1 * (r1[x * cn + c] >> 4)) >> 16) + 2) >> 2;
                chw[c * plane + at] = (uint8_t)val;
            }
        }
    }
    free(r0), free(r1), free(h), free(v);
}
