/* Caffe's DataTransformer on a database's raw images: a crop_size window of the stored image,
 * at a random offset in training (from the sample's hash: (seed, epoch, position)) or at the
 * center in evaluation, mirrored at random in training when flip is on, and its mean_file
 * image subtracted at each pixel's place in the stored image before the window is cut:
 * out[c][y][x] = (v - mean[c][y0 + y][x0 + sx]) * scale, sx the mirrored column. */
#include "loader_internal.h"

/* The window's top-left corner and the flip; Caffe draws h_off in [0, H - crop], w_off in
 * [0, W - crop] and the mirror bit independently (here from independent bit fields). */
static void window_place(const rt_loader *l, uint64_t bits, int augment, int *y0, int *x0, int *flip) {
    const int H = l->ds->h, W = l->ds->w, wh = l->cfg.window_h ? l->cfg.window_h : H,
              ww = l->cfg.window_w ? l->cfg.window_w : W;
    if (augment) {
        *y0 = (int)((bits & 0xffffff) % (uint64_t)(H - wh + 1));
        *x0 = (int)(((bits >> 24) & 0xffff) % (uint64_t)(W - ww + 1));
    } else {
        *y0 = (H - wh) / 2, *x0 = (W - ww) / 2;
    }
    *flip = augment && l->cfg.flip && ((bits >> 40) & 1);
}

void augment_window_sample(const rt_loader *l, const uint8_t *src, void *dst, uint64_t bits, int augment) {
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w, wh = l->cfg.window_h ? l->cfg.window_h : H,
              ww = l->cfg.window_w ? l->cfg.window_w : W;
    int y0, x0, flip;
    window_place(l, bits, augment, &y0, &x0, &flip);
    const float *mean = l->cfg.mean_image;
    for (int c = 0; c < C; c++)
        for (int y = 0; y < wh; y++) {
            size_t row = ((size_t)c * H + (size_t)(y0 + y)) * W + (size_t)x0;   /* the source row's first pixel */
            const uint8_t *s = src + row;
            if (l->cfg.raw_u8) {
                uint8_t *d = (uint8_t *)dst + ((size_t)c * wh + y) * ww;
                for (int x = 0; x < ww; x++) d[x] = s[flip ? ww - 1 - x : x];
                continue;
            }
            const float *lut = l->lut[c], *m = mean ? mean + row : NULL;
            float *d = (float *)dst + ((size_t)c * wh + y) * ww;
            for (int x = 0; x < ww; x++) {
                int sx = flip ? ww - 1 - x : x;
                d[x] = lut[s[sx]] - (m ? m[sx] : 0.0f);
            }
        }
}
