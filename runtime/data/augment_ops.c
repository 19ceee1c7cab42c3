/* The image ops of TrivialAugmentWide and RandAugment on one 8-bit C x H x W sample, with
 * torchvision's tensor semantics (transforms/functional_tensor.py, 0.14): affine warps by
 * nearest neighbour or bilinear through grid_sample's float32 grid with fill 0, blends in float32
 * truncated to bytes, per-channel autocontrast and equalize. A 1-channel image has no colour
 * to saturate (Color is the identity) and its contrast mean is the image's own mean, as
 * torchvision does on grayscale. */
#include <math.h>
#include <string.h>
#include "loader_internal.h"

/* torchvision's _get_inverse_affine_matrix (angles in degrees, center relative to the image
 * centre), in double like the Python that computes it. */
static void inverse_affine(double m[6], double cx, double cy, double angle, double tx, double ty,
                           double shear_x, double shear_y) {
    double rot = angle * M_PI / 180, sx = shear_x * M_PI / 180, sy = shear_y * M_PI / 180;
    double a = cos(rot - sy) / cos(sy);
    double b = -cos(rot - sy) * tan(sx) / cos(sy) - sin(rot);
    double c = sin(rot - sy) / cos(sy);
    double d = -sin(rot - sy) * tan(sx) / cos(sy) + cos(rot);
    m[0] = d, m[1] = -b, m[2] = 0, m[3] = -c, m[4] = a, m[5] = 0;
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty);
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty);
    m[2] += cx;
    m[5] += cy;
}

/* _gen_affine_grid + grid_sample(nearest or bilinear, zeros padding, align_corners=False), in
 * float32 as there; bilinear results are rounded half to even like torchvision's cast back. */
static void warp(uint8_t *img, uint8_t *scratch, int c, int h, int w, const double m[6], int bilinear) {
    const float hw = 0.5f * (float)w, hh = 0.5f * (float)h;
    const float r00 = (float)m[0] / hw, r10 = (float)m[1] / hw, r20 = (float)m[2] / hw;
    const float r01 = (float)m[3] / hh, r11 = (float)m[4] / hh, r21 = (float)m[5] / hh;
    memcpy(scratch, img, (size_t)c * h * w);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float bx = (float)x - 0.5f * (float)w + 0.5f, by = (float)y - 0.5f * (float)h + 0.5f;
            float gx = bx * r00 + by * r10 + r20, gy = bx * r01 + by * r11 + r21;
            float ix = ((gx + 1) * (float)w - 1) / 2, iy = ((gy + 1) * (float)h - 1) / 2;
            if (!bilinear) {
                ix = nearbyintf(ix), iy = nearbyintf(iy);
                int inside = ix >= 0 && ix < w && iy >= 0 && iy < h;
                for (int ch = 0; ch < c; ch++)
                    img[((size_t)ch * h + y) * w + x] = inside ? scratch[((size_t)ch * h + (int)iy) * w + (int)ix] : 0;
                continue;
            }
            float x0 = floorf(ix), y0 = floorf(iy), x1 = x0 + 1, y1 = y0 + 1;
            const float cx[4] = { x0, x1, x0, x1 }, cy[4] = { y0, y0, y1, y1 };   /* nw, ne, sw, se */
            const float wt[4] = { (x1 - ix) * (y1 - iy), (ix - x0) * (y1 - iy), (x1 - ix) * (iy - y0), (ix - x0) * (iy - y0) };
            for (int ch = 0; ch < c; ch++) {
                float acc = 0;
                for (int q = 0; q < 4; q++)
                    if (cx[q] >= 0 && cx[q] < w && cy[q] >= 0 && cy[q] < h)
                        acc += (float)scratch[((size_t)ch * h + (int)cy[q]) * w + (int)cx[q]] * wt[q];
                img[((size_t)ch * h + y) * w + x] = (uint8_t)nearbyintf(acc);
            }
        }
}

/* _blend(img, other, ratio) with other[i] = other_at(i) in float32; clamp, truncate. */
static uint8_t blend(float ratio, float one_minus, uint8_t v, float other) {
    float r = ratio * (float)v + one_minus * other;
    r = r < 0 ? 0 : r > 255 ? 255 : r;
    return (uint8_t)r;
}

static uint8_t gray_of(const uint8_t *img, size_t plane, size_t i) {
    float g = 0.2989f * (float)img[i] + 0.587f * (float)img[plane + i];
    g = g + 0.114f * (float)img[2 * plane + i];
    return (uint8_t)g;
}

void augment_equalize_channel(uint8_t *p, size_t n) {
    long hist[256] = { 0 };
    for (size_t i = 0; i < n; i++) hist[p[i]]++;
    long last = 255, sum = 0;
    while (last > 0 && hist[last] == 0) last--;
    for (int v = 0; v < last; v++) sum += hist[v];   /* every non-zero bin but the last */
    long step = sum / 255;
    if (step == 0) return;
    uint8_t lut[256];
    long cum = 0;
    for (int v = 0; v < 256; v++) {   /* lut[v] = (cumsum up to v - 1 + step / 2) / step */
        long l = (cum + step / 2) / step;
        lut[v] = (uint8_t)(l > 255 ? 255 : l);
        cum += hist[v];
    }
    for (size_t i = 0; i < n; i++) p[i] = lut[p[i]];
}

void augment_op_apply(augment_op op, double mag, int bilinear, uint8_t *img, uint8_t *scratch, int c, int h, int w) {
    const size_t plane = (size_t)h * w, n = (size_t)c * plane;
    double m[6];
    float ratio = (float)(1.0 + mag), one_minus = (float)(1.0 - (1.0 + mag));
    switch (op) {
    case AUG_IDENTITY: return;
    case AUG_SHEAR_X: case AUG_SHEAR_Y: {   /* center [0, 0]: the top-left corner */
        double deg = atan(mag) * 180 / M_PI;
        inverse_affine(m, -0.5 * w, -0.5 * h, 0, 0, 0, op == AUG_SHEAR_X ? deg : 0, op == AUG_SHEAR_Y ? deg : 0);
        warp(img, scratch, c, h, w, m, bilinear);
        return;
    }
    case AUG_TRANSLATE_X: case AUG_TRANSLATE_Y:
        inverse_affine(m, 0, 0, 0, op == AUG_TRANSLATE_X ? (int)mag : 0, op == AUG_TRANSLATE_Y ? (int)mag : 0, 0, 0);
        warp(img, scratch, c, h, w, m, bilinear);
        return;
    case AUG_ROTATE:   /* F.rotate passes -angle to the matrix */
        inverse_affine(m, 0, 0, -mag, 0, 0, 0, 0);
        warp(img, scratch, c, h, w, m, bilinear);
        return;
    case AUG_BRIGHTNESS:
        for (size_t i = 0; i < n; i++) img[i] = blend(ratio, one_minus, img[i], 0);
        return;
    case AUG_COLOR:
        if (c != 3) return;
        for (size_t i = 0; i < plane; i++) {
            float g = gray_of(img, plane, i);
            for (int ch = 0; ch < 3; ch++) img[ch * plane + i] = blend(ratio, one_minus, img[ch * plane + i], g);
        }
        return;
    case AUG_CONTRAST: {
        double sum = 0;
        for (size_t i = 0; i < plane; i++) sum += c == 3 ? gray_of(img, plane, i) : 0;
        for (size_t i = 0; i < n && c != 3; i++) sum += img[i];
        float mean = (float)(sum / (c == 3 ? plane : n));
        for (size_t i = 0; i < n; i++) img[i] = blend(ratio, one_minus, img[i], mean);
        return;
    }
    case AUG_SHARPNESS: {   /* blend with the 3x3 [1 1 1; 1 5 1; 1 1 1] / 13 blur; the border blends with itself */
        if (h <= 2 || w <= 2) return;
        memcpy(scratch, img, n);
        const float k = 1.0f / 13.0f, kc = 5.0f / 13.0f;
        for (int ch = 0; ch < c; ch++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    const uint8_t *s = scratch + ((size_t)ch * h + y) * w + x;
                    float other = *s;
                    if (y > 0 && y < h - 1 && x > 0 && x < w - 1) {
                        float acc = 0;
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++) acc += (dy || dx ? k : kc) * (float)s[dy * w + dx];
                        other = nearbyintf(acc);
                    }
                    img[s - scratch] = blend(ratio, one_minus, *s, other);
                }
        return;
    }
    case AUG_POSTERIZE: {
        uint8_t mask = (uint8_t)(0xff << (8 - (int)mag));
        for (size_t i = 0; i < n; i++) img[i] &= mask;
        return;
    }
    case AUG_SOLARIZE:
        for (size_t i = 0; i < n; i++) img[i] = img[i] >= mag ? (uint8_t)(255 - img[i]) : img[i];
        return;
    case AUG_AUTOCONTRAST:
        for (int ch = 0; ch < c; ch++) {
            uint8_t *p = img + ch * plane, lo = 255, hi = 0;
            for (size_t i = 0; i < plane; i++) lo = p[i] < lo ? p[i] : lo, hi = p[i] > hi ? p[i] : hi;
            if (hi == lo) continue;   /* torchvision: scale 1, minimum 0: unchanged */
            float scale = 255.0f / ((float)hi - (float)lo);
            for (size_t i = 0; i < plane; i++) {
                float v = ((float)p[i] - (float)lo) * scale;
                p[i] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
        return;
    case AUG_EQUALIZE:
        for (int ch = 0; ch < c; ch++) augment_equalize_channel(img + ch * plane, plane);
        return;
    case AUG_INVERT:
        for (size_t i = 0; i < n; i++) img[i] = (uint8_t)(255 - img[i]);
        return;
    case AUG_OP_COUNT: return;
    }
}
