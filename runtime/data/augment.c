/* Per-sample augmentation and normalization: zero-padded random crop, horizontal flip,
 * (x/255 - mean) / std through a 256-entry table per channel. */
#include <string.h>
#include "loader_internal.h"

/* A measured note: computing the formula in 16-wide vectors (two divisions) and AVX-512
 * gathers from the table were both slower here than this scalar loop. */
static void normalize_row(float *restrict dst, const uint8_t *restrict src, int n, const float *restrict lut) {
    for (int x = 0; x < n; x++) dst[x] = lut[src[x]];
}

void rt_normalize_lut(const float *mean, const float *std, int channels, float lut[][256]) {
    for (int c = 0; c < channels; c++) {
        float s = std[c] != 0.0f ? std[c] : 1.0f;
        for (int v = 0; v < 256; v++) lut[c][v] = ((float)v / 255.0f - mean[c]) / s;
    }
}

/* Offsets into the padded image: 0..2*pad; pad means "no shift". Independent bit fields of
 * one 64-bit hash pick dy, dx and the flip. */
static void crop_and_flip(const rt_loader *l, uint64_t bits, int augment, int *oy, int *ox, int *flip) {
    const int pad = augment ? l->cfg.crop_pad : 0;
    *oy = pad ? (int)((bits & 0xffff) % (uint64_t)(2 * pad + 1)) - pad : 0;
    *ox = pad ? (int)(((bits >> 16) & 0xffff) % (uint64_t)(2 * pad + 1)) - pad : 0;
    *flip = augment && l->cfg.flip && ((bits >> 40) & 1);
}

/* Output columns [*x0, *x1) of a row read inside the source row (the rest is padding): source
 * column x + ox, or W - 1 - x + ox under a flip. */
static void inside_span(int W, int ox, int flip, int *x0, int *x1) {
    *x0 = flip ? ox : -ox;
    *x1 = flip ? W + ox : W - ox;
    if (*x0 < 0) *x0 = 0;
    if (*x1 > W) *x1 = W;
}

/* The CPU trainer's loader thread runs this for every sample while the trainer's threads
 * compute on the same cores, so the loops carry no per-pixel branch (perf on the MLP example:
 * the branchy loop was 12% of the trainer's cycles). */
void augment_sample(const rt_loader *l, const uint8_t *src, float *dst, uint64_t bits, int augment) {
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w;
    int oy, ox, flip, x0, x1;
    crop_and_flip(l, bits, augment, &oy, &ox, &flip);
    inside_span(W, ox, flip, &x0, &x1);
    for (int c = 0; c < C; c++) {
        const float *lut = l->lut[c];
        const float pad = lut[0];   /* the zero padding, normalized like a 0 pixel */
        const uint8_t *s = src + (size_t)c * H * W;
        float *d = dst + (size_t)c * H * W;
        for (int y = 0; y < H; y++) {
            int sy = y + oy;
            float *row = d + (size_t)y * W;
            if (sy < 0 || sy >= H || x0 >= x1) {
                for (int x = 0; x < W; x++) row[x] = pad;
                continue;
            }
            const uint8_t *srow = s + (size_t)sy * W;
            for (int x = 0; x < x0; x++) row[x] = pad;
            if (flip)
                for (int x = x0; x < x1; x++) row[x] = lut[srow[W - 1 - x + ox]];
            else
                normalize_row(row + x0, srow + x0 + ox, x1 - x0, lut);
            for (int x = x1; x < W; x++) row[x] = pad;
        }
    }
}

void augment_sample_u8(const rt_loader *l, const uint8_t *src, uint8_t *dst, uint64_t bits, int augment) {
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w;
    int oy, ox, flip;
    crop_and_flip(l, bits, augment, &oy, &ox, &flip);
    /* Without a flip the span read inside the source row is one memcpy: this is the GPU
     * trainer's loader, which must keep up with it. */
    int x0, x1;
    inside_span(W, ox, flip, &x0, &x1);
    for (int c = 0; c < C; c++)
        for (int y = 0; y < H; y++) {
            uint8_t *row = dst + ((size_t)c * H + y) * W;
            int sy = y + oy;
            if (sy < 0 || sy >= H || x0 >= x1) {
                memset(row, 0, (size_t)W);
                continue;
            }
            const uint8_t *srow = src + ((size_t)c * H + sy) * W;
            memset(row, 0, (size_t)x0);
            if (flip)
                for (int x = x0; x < x1; x++) row[x] = srow[W - 1 - x + ox];
            else
                memcpy(row + x0, srow + x0 + ox, (size_t)(x1 - x0));
            memset(row + x1, 0, (size_t)(W - x1));
        }
}
