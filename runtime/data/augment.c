/* Per-sample augmentation and normalization: zero-padded random crop, horizontal flip,
 * (x/255 - mean) / std through a 256-entry table per channel. */
#include "loader_internal.h"

void loader_build_lut(rt_loader *l) {
    for (int c = 0; c < l->ds->c; c++) {
        float std = l->cfg.std[c] != 0.0f ? l->cfg.std[c] : 1.0f;
        for (int v = 0; v < 256; v++) l->lut[c][v] = ((float)v / 255.0f - l->cfg.mean[c]) / std;
    }
}

void augment_sample(const rt_loader *l, const uint8_t *src, float *dst, uint64_t bits, int augment) {
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w;
    const int pad = augment ? l->cfg.crop_pad : 0;
    /* Offsets into the padded image: 0..2*pad; pad means "no shift". Independent bit fields
     * of one 64-bit hash pick dy, dx and the flip. */
    const int oy = pad ? (int)((bits & 0xffff) % (uint64_t)(2 * pad + 1)) - pad : 0;
    const int ox = pad ? (int)(((bits >> 16) & 0xffff) % (uint64_t)(2 * pad + 1)) - pad : 0;
    const int flip = augment && l->cfg.flip && ((bits >> 40) & 1);
    for (int c = 0; c < C; c++) {
        const float *lut = l->lut[c];
        const uint8_t *s = src + (size_t)c * H * W;
        float *d = dst + (size_t)c * H * W;
        for (int y = 0; y < H; y++) {
            int sy = y + oy;
            float *row = d + (size_t)y * W;
            if (sy < 0 || sy >= H) {   /* the zero padding, normalized like a 0 pixel */
                for (int x = 0; x < W; x++) row[x] = lut[0];
                continue;
            }
            const uint8_t *srow = s + (size_t)sy * W;
            for (int x = 0; x < W; x++) {
                int sx = (flip ? W - 1 - x : x) + ox;
                row[x] = (sx >= 0 && sx < W) ? lut[srow[sx]] : lut[0];
            }
        }
    }
}
