/* Random erasing (torchvision RandomErasing) on one normalized float sample: with chance p,
 * a rectangle of random area share and log-uniform aspect ratio (up to 10 tries to fit) is
 * overwritten with a value or N(0,1) noise. Randomness from (seed, epoch, position) only. */
#include <math.h>
#include "loader_internal.h"
#include "rt_rng.h"

/* A double in [0, 1) with 53 random bits (rt_rng_uniform has 24). */
double augment_uniform(rt_rng *r) { return (double)(rt_rng_u64(r) >> 11) * 0x1.0p-53; }

int augment_erase_box(rt_rng *r, const rt_augment_config *a, int h, int w, int box[4]) {
    if (augment_uniform(r) >= a->erase_p) return 0;
    double area = (double)h * w, log_lo = log(a->erase_ratio[0]), log_hi = log(a->erase_ratio[1]);
    for (int attempt = 0; attempt < 10; attempt++) {
        double erase_area = area * (a->erase_scale[0] + (a->erase_scale[1] - a->erase_scale[0]) * augment_uniform(r));
        double aspect = exp(log_lo + (log_hi - log_lo) * augment_uniform(r));
        int eh = (int)nearbyint(sqrt(erase_area * aspect)), ew = (int)nearbyint(sqrt(erase_area / aspect));
        if (!(eh < h && ew < w)) continue;   /* torchvision: strictly inside, else try again */
        box[0] = (int)rt_rng_below(r, (uint32_t)(h - eh + 1));
        box[1] = (int)rt_rng_below(r, (uint32_t)(w - ew + 1));
        box[2] = eh, box[3] = ew;
        return 1;
    }
    return 0;   /* no fit in 10 tries: the sample stays as it is (torchvision returns it unchanged) */
}

void augment_erase_sample(const rt_loader *l, float *x, uint64_t aug_key, long pos) {
    const rt_augment_config *a = &l->cfg.augment;
    if (a->erase_p <= 0) return;
    const int C = l->ds->c, H = l->ds->h, W = l->ds->w;
    rt_rng r;
    rt_rng_init(&r, rt_hash_u64(aug_key, (uint64_t)pos, 1), RT_STREAM_AUGMENT);
    int box[4];
    if (!augment_erase_box(&r, a, H, W, box)) return;
    for (int c = 0; c < C; c++)
        for (int y = box[0]; y < box[0] + box[2]; y++) {
            float *row = x + ((size_t)c * H + y) * W + box[1];
            for (int q = 0; q < box[3]; q++) row[q] = a->erase_random ? rt_rng_normal(&r) : a->erase_value;
        }
}
