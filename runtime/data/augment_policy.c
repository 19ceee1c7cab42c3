/* TrivialAugmentWide and RandAugment (torchvision 0.14 autoaugment.py; AutoAugment's sub-policies
 * are augment_auto.c): the op list, the
 * magnitude bins (torch.linspace's float32 formula; its SIMD path rounds a few bins one ulp
 * apart, by CPU, never across an integer, which translate and posterize truncate to) and
 * the draws: TrivialAugment picks one op, one bin and a sign per sample; RandAugment num_ops
 * ops at the one magnitude bin, each with a random sign. Randomness from (seed, epoch,
 * position) alone. The ops are in augment_ops.c. */
#include <math.h>
#include <stdlib.h>
#include "loader_internal.h"

/* torch.linspace(start, end, steps)[i] in float32: from the start for the first half, from
 * the end for the rest, as ATen's scalar kernel computes it. */
static float linspace_at(float start, float end, int steps, int i) {
    if (steps == 1) return start;
    float step = (end - start) / (float)(steps - 1);
    return i < steps / 2 ? start + step * (float)i : end - step * (float)(steps - i - 1);
}

int augment_signed_op(augment_op op) { return op >= AUG_SHEAR_X && op <= AUG_SHARPNESS; }

/* Ops without a magnitude. */
static int scalar_op(augment_op op) {
    return op == AUG_IDENTITY || op == AUG_AUTOCONTRAST || op == AUG_EQUALIZE || op == AUG_INVERT;
}

double augment_policy_magnitude(int policy, augment_op op, int bin, int bins, int h, int w) {
    const int wide = policy == RT_POLICY_TRIVIAL_AUGMENT;
    switch (op) {
    case AUG_SHEAR_X: case AUG_SHEAR_Y: return linspace_at(0.0f, wide ? 0.99f : 0.3f, bins, bin);
    case AUG_TRANSLATE_X: return linspace_at(0.0f, wide ? 32.0f : (float)(150.0 / 331.0 * w), bins, bin);
    case AUG_TRANSLATE_Y: return linspace_at(0.0f, wide ? 32.0f : (float)(150.0 / 331.0 * h), bins, bin);
    case AUG_ROTATE: return linspace_at(0.0f, wide ? 135.0f : 30.0f, bins, bin);
    case AUG_BRIGHTNESS: case AUG_COLOR: case AUG_CONTRAST: case AUG_SHARPNESS:
        return linspace_at(0.0f, wide ? 0.99f : 0.9f, bins, bin);
    case AUG_POSTERIZE:   /* 8 - round(i / ((bins - 1) / 6 or 4)), in float32, half to even */
        return 8 - (int)nearbyintf((float)bin / (float)((bins - 1) / (wide ? 6.0 : 4.0)));
    case AUG_SOLARIZE: return linspace_at(255.0f, 0.0f, bins, bin);
    case AUG_IDENTITY: case AUG_AUTOCONTRAST: case AUG_EQUALIZE: case AUG_INVERT: case AUG_OP_COUNT: return 0;
    }
    return 0;
}

void augment_policy_apply(const rt_loader *l, uint8_t *img, uint64_t aug_key, long pos) {
    const rt_augment_config *a = &l->cfg.augment;
    if (a->policy == RT_POLICY_NONE) return;
    if (a->policy == RT_POLICY_TIMM_RAND_AUGMENT) {   /* timm's variant: augment_timm.c */
        augment_timm_apply(l, img, aug_key, pos);
        return;
    }
    const int c = l->ds->c, h = l->ds->h, w = l->ds->w;
    rt_rng r;
    rt_rng_init(&r, rt_hash_u64(aug_key, (uint64_t)pos, 3), RT_STREAM_AUGMENT);
    uint8_t *scratch = rt_xmalloc((size_t)c * h * w);
    if (a->policy == RT_POLICY_AUTO_AUGMENT) {
        augment_auto_apply(a->auto_policy, a->bilinear, img, scratch, c, h, w, &r, NULL);
        free(scratch);
        return;
    }
    int ops = a->policy == RT_POLICY_TRIVIAL_AUGMENT ? 1 : a->num_ops;
    for (int k = 0; k < ops; k++) {
        augment_op op = (augment_op)rt_rng_below(&r, AUG_WIDE_OPS);
        double mag = 0;
        if (!scalar_op(op)) {
            int bin = a->policy == RT_POLICY_TRIVIAL_AUGMENT ? (int)rt_rng_below(&r, (uint32_t)a->num_bins) : a->magnitude;
            mag = augment_policy_magnitude(a->policy, op, bin, a->num_bins, h, w);
        }
        if (augment_signed_op(op) && rt_rng_below(&r, 2)) mag = -mag;
        augment_op_apply(op, mag, a->bilinear, img, scratch, c, h, w);
    }
    free(scratch);
}
