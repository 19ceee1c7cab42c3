/* The ops of timm's RandAugment (timm/data/auto_augment.py) with Pillow's semantics, on one
 * 8-bit C x H x W sample: Image.transform(AFFINE) with Pillow's bilinear and bicubic filters
 * (Geometry.c: sample at pixel centres, neighbours clamped to the edge, results truncated) and
 * timm's fillcolor; ImageEnhance's blends (Image.blend in float32, truncated); Pillow's
 * RGB-to-L weights (19595, 38470, 7471) / 65536; the SMOOTH 3x3 filter; ImageOps' LUTs.
 * A 1-channel image is Pillow's mode L: Color is the identity there, as in Pillow. */
#include <math.h>
#include <string.h>
#include "loader_internal.h"

static int clamp_index(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

/* Geometry.c's bilinear_filter8 / bicubic_filter8 at input point (xin, yin) of one plane;
 * 0 when the point lies outside the image (the pixel keeps the fill). */
static int filter_at(const uint8_t *p, int h, int w, double xin, double yin, int bicubic, uint8_t *out) {
    if (xin < 0.0 || xin >= w || yin < 0.0 || yin >= h) return 0;
    xin -= 0.5, yin -= 0.5;
    int x = (int)floor(xin), y = (int)floor(yin);
    double dx = xin - x, dy = yin - y;
    if (!bicubic) {
        int x0 = clamp_index(x, w), x1 = clamp_index(x + 1, w);
        const uint8_t *r0 = p + (size_t)clamp_index(y, h) * w, *r1 = p + (size_t)clamp_index(y + 1, h) * w;
        double v1 = r0[x0] + (r0[x1] - r0[x0]) * dx, v2 = r1[x0] + (r1[x1] - r1[x0]) * dx;
        *out = (uint8_t)(v1 + (v2 - v1) * dy);
        return 1;
    }
    double v[4];   /* Pillow's cubic with a = -0.5, one row at a time, then down the column */
    for (int k = 0; k < 4; k++) {
        const uint8_t *r = p + (size_t)clamp_index(y - 1 + k, h) * w;
        double a = r[clamp_index(x - 1, w)], b = r[clamp_index(x, w)], c = r[clamp_index(x + 1, w)],
               d = r[clamp_index(x + 2, w)];
        v[k] = b + dx * ((c - a) + dx * ((2 * (a - b) + c - d) + dx * (-a + b - c + d)));
    }
    double s = v[1] + dy * ((v[2] - v[0]) + dy * ((2 * (v[0] - v[1]) + v[2] - v[3]) + dy * (-v[0] + v[1] - v[2] + v[3])));
    *out = s <= 0.0 ? 0 : s >= 255.0 ? 255 : (uint8_t)s;
    return 1;
}

/* Image.transform(size, AFFINE, a, resample, fillcolor): out(x, y) = in(a0 x' + a1 y' + a2,
 * a3 x' + a4 y' + a5) at the centre (x', y') = (x + 0.5, y + 0.5). */
static void affine(uint8_t *img, uint8_t *scratch, int c, int h, int w, const double a[6], int bicubic,
                   const uint8_t *fill) {
    const size_t plane = (size_t)h * w;
    memcpy(scratch, img, (size_t)c * plane);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double xo = x + 0.5, yo = y + 0.5;
            double xin = a[0] * xo + a[1] * yo + a[2], yin = a[3] * xo + a[4] * yo + a[5];
            for (int ch = 0; ch < c; ch++) {
                uint8_t *o = img + ch * plane + (size_t)y * w + x;
                if (!filter_at(scratch + ch * plane, h, w, xin, yin, bicubic, o)) *o = fill[ch];
            }
        }
}

/* Image.rotate(degrees) without expand: about the centre (w / 2, h / 2). */
static void rotation_matrix(double a[6], double degrees, int h, int w) {
    double angle = -degrees * M_PI / 180, cx = w / 2.0, cy = h / 2.0;
    a[0] = cos(angle), a[1] = sin(angle), a[3] = -sin(angle), a[4] = cos(angle);
    a[2] = a[0] * -cx + a[1] * -cy + cx;
    a[5] = a[3] * -cx + a[4] * -cy + cy;
}

/* Image.blend(degenerate, img, factor): float32, clamped when extrapolating, truncated. */
static uint8_t pil_blend(uint8_t degenerate, uint8_t v, float factor) {
    float t = (float)degenerate + factor * (float)((int)v - (int)degenerate);
    return t <= 0.0f ? 0 : t >= 255.0f ? 255 : (uint8_t)t;
}

static uint8_t luma(const uint8_t *img, size_t plane, size_t i) {
    return (uint8_t)((img[i] * 19595u + img[plane + i] * 38470u + img[2 * plane + i] * 7471u + 0x8000u) >> 16);
}

/* ImageFilter.SMOOTH ([1 1 1; 1 5 1; 1 1 1] / 13, float32, rounded); the border is copied. */
static void smooth(const uint8_t *src, uint8_t *dst, int h, int w) {
    const float k = 1.0f / 13.0f, kc = 5.0f / 13.0f;
    memcpy(dst, src, (size_t)h * w);
    for (int y = 1; y < h - 1; y++)
        for (int x = 1; x < w - 1; x++) {
            float ss = 0;
            for (int dy = 1; dy >= -1; dy--) {
                const uint8_t *r = src + (size_t)(y + dy) * w + x;
                ss += (float)r[-1] * k + (float)r[0] * (dy ? k : kc) + (float)r[1] * k;
            }
            dst[(size_t)y * w + x] = ss <= 0 ? 0 : ss >= 255 ? 255 : (uint8_t)(ss + 0.5f);
        }
}

static void autocontrast_channel(uint8_t *p, size_t n) {
    int lo = 255, hi = 0;
    for (size_t i = 0; i < n; i++) lo = p[i] < lo ? p[i] : lo, hi = p[i] > hi ? p[i] : hi;
    if (hi <= lo) return;
    double scale = 255.0 / (hi - lo), offset = -lo * scale;
    uint8_t lut[256];
    for (int v = 0; v < 256; v++) {
        int t = (int)(v * scale + offset);
        lut[v] = (uint8_t)(t < 0 ? 0 : t > 255 ? 255 : t);
    }
    for (size_t i = 0; i < n; i++) p[i] = lut[p[i]];
}

static void enhance(timm_op op, float factor, uint8_t *img, uint8_t *scratch, int c, int h, int w) {
    const size_t plane = (size_t)h * w, n = (size_t)c * plane;
    if (op == TIMM_BRIGHTNESS)
        for (size_t i = 0; i < n; i++) img[i] = pil_blend(0, img[i], factor);
    if (op == TIMM_COLOR && c == 3)
        for (size_t i = 0; i < plane; i++) {
            uint8_t g = luma(img, plane, i);
            for (int ch = 0; ch < 3; ch++) img[ch * plane + i] = pil_blend(g, img[ch * plane + i], factor);
        }
    if (op == TIMM_CONTRAST) {   /* against the rounded mean of the L image */
        double sum = 0;
        for (size_t i = 0; i < plane; i++) sum += c == 3 ? luma(img, plane, i) : img[i];
        uint8_t mean = (uint8_t)(int)(sum / (double)plane + 0.5);
        for (size_t i = 0; i < n; i++) img[i] = pil_blend(mean, img[i], factor);
    }
    if (op == TIMM_SHARPNESS) {
        for (int ch = 0; ch < c; ch++) smooth(img + ch * plane, scratch + ch * plane, h, w);
        for (size_t i = 0; i < n; i++) img[i] = pil_blend(scratch[i], img[i], factor);
    }
}

void timm_op_apply(timm_op op, double arg, int bicubic, const uint8_t *fill, uint8_t *img, uint8_t *scratch, int c,
                   int h, int w) {
    const size_t plane = (size_t)h * w, n = (size_t)c * plane;
    double a[6] = { 1, 0, 0, 0, 1, 0 };
    switch (op) {
    case TIMM_AUTOCONTRAST:
        for (int ch = 0; ch < c; ch++) autocontrast_channel(img + ch * plane, plane);
        return;
    case TIMM_EQUALIZE:
        for (int ch = 0; ch < c; ch++) augment_equalize_channel(img + ch * plane, plane);
        return;
    case TIMM_INVERT:
        for (size_t i = 0; i < n; i++) img[i] = (uint8_t)(255 - img[i]);
        return;
    case TIMM_POSTERIZE: {   /* keep the arg top bits; 8 or more: unchanged (timm returns img) */
        if (arg >= 8) return;
        uint8_t mask = (uint8_t)~((1u << (8 - (int)arg)) - 1);
        for (size_t i = 0; i < n; i++) img[i] &= mask;
        return;
    }
    case TIMM_SOLARIZE:
        for (size_t i = 0; i < n; i++) img[i] = img[i] < arg ? img[i] : (uint8_t)(255 - img[i]);
        return;
    case TIMM_SOLARIZE_ADD:   /* below 128: add arg, saturating */
        for (size_t i = 0; i < n; i++) img[i] = img[i] < 128 ? (uint8_t)(img[i] + arg > 255 ? 255 : img[i] + arg) : img[i];
        return;
    case TIMM_COLOR: case TIMM_CONTRAST: case TIMM_BRIGHTNESS: case TIMM_SHARPNESS:
        enhance(op, (float)arg, img, scratch, c, h, w);
        return;
    case TIMM_ROTATE:
        if (arg == 0) return;   /* Image.rotate(0) is a copy */
        rotation_matrix(a, arg, h, w);
        break;
    case TIMM_SHEAR_X: a[1] = arg; break;
    case TIMM_SHEAR_Y: a[3] = arg; break;
    case TIMM_TRANSLATE_X_REL: a[2] = arg * w; break;
    case TIMM_TRANSLATE_Y_REL: a[5] = arg * h; break;
    case TIMM_OP_COUNT: return;
    }
    affine(img, scratch, c, h, w, a, bicubic, fill);
}
