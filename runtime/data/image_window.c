/* Which part of an image becomes a sample: torchvision's random-resized-crop window,
 * resize-shorter-side + center crop, Caffe's resize + random crop, and the flip, all drawn
 * from one per-sample seed. */
#include <math.h>
#include "rt_image.h"
#include "rt_rng.h"

static double uniform(rt_rng *r, double lo, double hi) {
    return lo + (hi - lo) * ((double)(rt_rng_u64(r) >> 11) * 0x1.0p-53);
}

/* torchvision.transforms.RandomResizedCrop.get_params; Python's round() is
 * round-half-even, which nearbyint is in the default rounding mode. */
static void rrc_window(const rt_image_transform *t, int width, int height, rt_rng *r,
                       rt_image_window *win) {
    double area = (double)width * height;
    double log_lo = log(t->ratio[0]), log_hi = log(t->ratio[1]);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * uniform(r, t->scale[0], t->scale[1]);
        double aspect = exp(uniform(r, log_lo, log_hi));
        long w = (long)nearbyint(sqrt(target * aspect));
        long h = (long)nearbyint(sqrt(target / aspect));
        if (0 < w && w <= width && 0 < h && h <= height) {
            long i = rt_rng_below(r, (uint32_t)(height - h + 1));
            long j = rt_rng_below(r, (uint32_t)(width - w + 1));
            *win = (rt_image_window){ j, i, j + w, i + h, 0, 1, 0, t->filter, 0, 0, 0, 0 };
            return;
        }
    }
    double in_ratio = (double)width / height, lo = fmin(t->ratio[0], t->ratio[1]),
           hi = fmax(t->ratio[0], t->ratio[1]);
    long w = width, h = height;
    if (in_ratio < lo) h = (long)nearbyint(w / lo);
    else if (in_ratio > hi) w = (long)nearbyint(h * hi);
    long i = (height - h) / 2, j = (width - w) / 2;
    *win = (rt_image_window){ j, i, j + w, i + h, 0, 1, 0, t->filter, 0, 0, 0, 0 };
}

/* torchvision Resize(int) on a PIL image: the shorter side becomes `resize`, the longer
 * int(resize * long / short). 0 keeps the size. */
static void resized_size(int resize, int width, int height, long *rw, long *rh) {
    *rw = width, *rh = height;
    if (resize <= 0) return;
    if (width <= height) *rw = resize, *rh = (long)((double)resize * height / width);
    else *rh = resize, *rw = (long)((double)resize * width / height);
}

void rt_image_plan(const rt_image_transform *t, int src_w, int src_h, uint64_t sample_seed,
                   rt_image_window *win) {
    rt_rng r;
    rt_rng_init(&r, sample_seed, RT_STREAM_AUGMENT);
    if (t->mode == RT_IMG_RRC) {
        rrc_window(t, src_w, src_h, &r, win);
    } else {
        long rw, rh;
        resized_size(t->resize, src_w, src_h, &rw, &rh);
        if (t->resize_h > 0 && t->resize_w > 0) rw = t->resize_w, rh = t->resize_h;   /* Caffe's warp */
        long top, left;
        const int caffe = (t->resize_h > 0 && t->resize_w > 0) || t->filter == RT_IMG_CV_LINEAR;
        if (t->mode == RT_IMG_CENTER && caffe) {   /* Caffe: (size - crop) / 2 */
            top = (rh - t->out_h) / 2, left = (rw - t->out_w) / 2;
        } else if (t->mode == RT_IMG_CENTER) {   /* CenterCrop: int(round((size - crop) / 2)) */
            top = (long)nearbyint((rh - t->out_h) / 2.0);
            left = (long)nearbyint((rw - t->out_w) / 2.0);
        } else {   /* Caffe: a random offset inside the resized image, zero-padded by pad */
            long ph = rh + 2L * t->pad, pw = rw + 2L * t->pad;
            top = (ph > t->out_h ? rt_rng_below(&r, (uint32_t)(ph - t->out_h + 1)) : (ph - t->out_h) / 2) - t->pad;
            left = (pw > t->out_w ? rt_rng_below(&r, (uint32_t)(pw - t->out_w + 1)) : (pw - t->out_w) / 2) - t->pad;
        }
        /* The window in source pixels: resizing then cropping samples the same points. */
        double sx = (double)src_w / rw, sy = (double)src_h / rh;
        *win = (rt_image_window){ left * sx, top * sy, (left + t->out_w) * sx, (top + t->out_h) * sy, 0, 0,
                                  t->mode == RT_IMG_RANDOM_CROP && t->pad > 0, t->filter, top, left, rw, rh };
    }
    win->flip = t->flip && (rt_rng_u64(&r) >> 63);
}
