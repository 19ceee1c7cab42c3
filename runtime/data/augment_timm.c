/* timm's RandAugment ("rand-m9-mstd0.5-inc1", timm/data/auto_augment.py rand_augment_transform):
 * num_ops ops drawn with replacement from the 15 of _RAND_TRANSFORMS (or
 * _RAND_INCREASING_TRANSFORMS), each applied with probability 0.5 at a level drawn from
 * N(magnitude, magnitude_std) (uniform in [0, magnitude] when magnitude_std > 100) clipped to
 * [0, 10], turned into the op's argument by timm's level_to_arg functions. Per op, in timm's
 * order: the op, whether it applies, the level, the sign (signed ops), the interpolation
 * (geometric ops: bilinear or bicubic with equal chance, or always bilinear when configured).
 * The fill is timm's img_mean, round(255 * mean) of the spec's normalization. Randomness from
 * (seed, epoch, position) alone, like the rest of the data path. The ops are in augment_timm_ops.c. */
#include <math.h>
#include <stdlib.h>
#include "loader_internal.h"

#define TIMM_LEVEL_MAX 10.0   /* timm's _LEVEL_DENOM, also the upper clip of the level */
#define TIMM_APPLY_PROB 0.5   /* rand_augment_transform's default prob */

static int enhance_op(timm_op op) { return op >= TIMM_COLOR && op <= TIMM_SHARPNESS; }

int timm_op_geometric(timm_op op) { return op == TIMM_ROTATE || (op >= TIMM_SHEAR_X && op <= TIMM_TRANSLATE_Y_REL); }

int timm_op_signed(timm_op op, int increasing) { return timm_op_geometric(op) || (increasing && enhance_op(op)); }

double timm_level_arg(timm_op op, int increasing, double level, int negate) {
    const double frac = level / TIMM_LEVEL_MAX, sign = negate ? -1.0 : 1.0;
    switch (op) {
    case TIMM_ROTATE: return sign * (frac * 30.0);
    case TIMM_SHEAR_X: case TIMM_SHEAR_Y: return sign * (frac * 0.3);
    case TIMM_TRANSLATE_X_REL: case TIMM_TRANSLATE_Y_REL: return sign * (frac * 0.45);
    case TIMM_POSTERIZE: return increasing ? 4 - (int)(frac * 4) : (int)(frac * 4);
    case TIMM_SOLARIZE: {
        int t = (int)(frac * 256);
        t = t < 256 ? t : 256;
        return increasing ? 256 - t : t;
    }
    case TIMM_SOLARIZE_ADD: {
        int add = (int)(frac * 110);
        return add < 128 ? add : 128;
    }
    case TIMM_COLOR: case TIMM_CONTRAST: case TIMM_BRIGHTNESS: case TIMM_SHARPNESS:
        if (!increasing) return frac * 1.8 + 0.1;
        return fmax(0.1, 1.0 + sign * (frac * 0.9));
    case TIMM_AUTOCONTRAST: case TIMM_EQUALIZE: case TIMM_INVERT: case TIMM_OP_COUNT: return 0;
    }
    return 0;
}

void augment_timm_apply(const rt_loader *l, uint8_t *img, uint64_t aug_key, long pos) {
    const rt_augment_config *a = &l->cfg.augment;
    const int c = l->ds->c, h = l->ds->h, w = l->ds->w;
    uint8_t fill[RT_MAX_CHANNELS];
    for (int ch = 0; ch < c; ch++) {
        double v = nearbyint(255.0 * l->cfg.mean[ch]);
        fill[ch] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
    rt_rng r;
    rt_rng_init(&r, rt_hash_u64(aug_key, (uint64_t)pos, 3), RT_STREAM_AUGMENT);
    uint8_t *scratch = NULL;
    for (int k = 0; k < a->num_ops; k++) {
        timm_op op = (timm_op)rt_rng_below(&r, TIMM_OP_COUNT);
        if (augment_uniform(&r) > TIMM_APPLY_PROB) continue;
        double level = a->magnitude;
        if (a->magnitude_std > 100) level = augment_uniform(&r) * a->magnitude;
        else if (a->magnitude_std > 0) level = a->magnitude + a->magnitude_std * (double)rt_rng_normal(&r);
        level = level < 0 ? 0 : level > TIMM_LEVEL_MAX ? TIMM_LEVEL_MAX : level;
        int negate = timm_op_signed(op, a->increasing) && augment_uniform(&r) > 0.5;
        int bicubic = timm_op_geometric(op) && !a->bilinear && rt_rng_below(&r, 2);
        if (!scratch) scratch = rt_xmalloc((size_t)c * h * w);
        timm_op_apply(op, timm_level_arg(op, a->increasing, level, negate), bicubic, fill, img, scratch, c, h, w);
    }
    free(scratch);
}
