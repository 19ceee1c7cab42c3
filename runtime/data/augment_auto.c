/* AutoAugment (torchvision 0.14 autoaugment.py AutoAugment): per sample one of the policy
 * set's 25 sub-policies, uniformly; each of its two (op, probability, magnitude bin) entries
 * applied when a uniform draw is at most its probability, at the magnitude of its bin of 10
 * (RandAugment's magnitude table: shear 0.3, translate 150/331 of the side, rotate 30 degrees,
 * colour ops 0.9, posterize 8 - round(bin / 2.25), solarize 255 down to 0), negated on a
 * coin's tails where the op is signed; fill 0. Randomness from the caller's stream, which
 * comes from (seed, epoch, position) alone. The ops are augment_ops.c's. */
#include "loader_internal.h"

#define AUTO_BINS 10
#define NO_BIN -1

typedef struct {
    augment_op op;
    float p;   /* float32, as torch.rand's draw is compared with it */
    int bin;
} auto_entry;

#define E(op, p, bin) { AUG_##op, p, bin }
static const auto_entry imagenet[25][2] = {
    { E(POSTERIZE, 0.4f, 8), E(ROTATE, 0.6f, 9) },          { E(SOLARIZE, 0.6f, 5), E(AUTOCONTRAST, 0.6f, NO_BIN) },
    { E(EQUALIZE, 0.8f, NO_BIN), E(EQUALIZE, 0.6f, NO_BIN) }, { E(POSTERIZE, 0.6f, 7), E(POSTERIZE, 0.6f, 6) },
    { E(EQUALIZE, 0.4f, NO_BIN), E(SOLARIZE, 0.2f, 4) },     { E(EQUALIZE, 0.4f, NO_BIN), E(ROTATE, 0.8f, 8) },
    { E(SOLARIZE, 0.6f, 3), E(EQUALIZE, 0.6f, NO_BIN) },     { E(POSTERIZE, 0.8f, 5), E(EQUALIZE, 1.0f, NO_BIN) },
    { E(ROTATE, 0.2f, 3), E(SOLARIZE, 0.6f, 8) },            { E(EQUALIZE, 0.6f, NO_BIN), E(POSTERIZE, 0.4f, 6) },
    { E(ROTATE, 0.8f, 8), E(COLOR, 0.4f, 0) },               { E(ROTATE, 0.4f, 9), E(EQUALIZE, 0.6f, NO_BIN) },
    { E(EQUALIZE, 0.0f, NO_BIN), E(EQUALIZE, 0.8f, NO_BIN) }, { E(INVERT, 0.6f, NO_BIN), E(EQUALIZE, 1.0f, NO_BIN) },
    { E(COLOR, 0.6f, 4), E(CONTRAST, 1.0f, 8) },             { E(ROTATE, 0.8f, 8), E(COLOR, 1.0f, 2) },
    { E(COLOR, 0.8f, 8), E(SOLARIZE, 0.8f, 7) },             { E(SHARPNESS, 0.4f, 7), E(INVERT, 0.6f, NO_BIN) },
    { E(SHEAR_X, 0.6f, 5), E(EQUALIZE, 1.0f, NO_BIN) },      { E(COLOR, 0.4f, 0), E(EQUALIZE, 0.6f, NO_BIN) },
    { E(EQUALIZE, 0.4f, NO_BIN), E(SOLARIZE, 0.2f, 4) },     { E(SOLARIZE, 0.6f, 5), E(AUTOCONTRAST, 0.6f, NO_BIN) },
    { E(INVERT, 0.6f, NO_BIN), E(EQUALIZE, 1.0f, NO_BIN) },  { E(COLOR, 0.6f, 4), E(CONTRAST, 1.0f, 8) },
    { E(EQUALIZE, 0.8f, NO_BIN), E(EQUALIZE, 0.6f, NO_BIN) },
};
static const auto_entry cifar10[25][2] = {
    { E(INVERT, 0.1f, NO_BIN), E(CONTRAST, 0.2f, 6) },         { E(ROTATE, 0.7f, 2), E(TRANSLATE_X, 0.3f, 9) },
    { E(SHARPNESS, 0.8f, 1), E(SHARPNESS, 0.9f, 3) },          { E(SHEAR_Y, 0.5f, 8), E(TRANSLATE_Y, 0.7f, 9) },
    { E(AUTOCONTRAST, 0.5f, NO_BIN), E(EQUALIZE, 0.9f, NO_BIN) }, { E(SHEAR_Y, 0.2f, 7), E(POSTERIZE, 0.3f, 7) },
    { E(COLOR, 0.4f, 3), E(BRIGHTNESS, 0.6f, 7) },             { E(SHARPNESS, 0.3f, 9), E(BRIGHTNESS, 0.7f, 9) },
    { E(EQUALIZE, 0.6f, NO_BIN), E(EQUALIZE, 0.5f, NO_BIN) },  { E(CONTRAST, 0.6f, 7), E(SHARPNESS, 0.6f, 5) },
    { E(COLOR, 0.7f, 7), E(TRANSLATE_X, 0.5f, 8) },            { E(EQUALIZE, 0.3f, NO_BIN), E(AUTOCONTRAST, 0.4f, NO_BIN) },
    { E(TRANSLATE_Y, 0.4f, 3), E(SHARPNESS, 0.2f, 6) },        { E(BRIGHTNESS, 0.9f, 6), E(COLOR, 0.2f, 8) },
    { E(SOLARIZE, 0.5f, 2), E(INVERT, 0.0f, NO_BIN) },         { E(EQUALIZE, 0.2f, NO_BIN), E(AUTOCONTRAST, 0.6f, NO_BIN) },
    { E(EQUALIZE, 0.2f, NO_BIN), E(EQUALIZE, 0.6f, NO_BIN) },  { E(COLOR, 0.9f, 9), E(EQUALIZE, 0.6f, NO_BIN) },
    { E(AUTOCONTRAST, 0.8f, NO_BIN), E(SOLARIZE, 0.2f, 8) },   { E(BRIGHTNESS, 0.1f, 3), E(COLOR, 0.7f, 0) },
    { E(SOLARIZE, 0.4f, 5), E(AUTOCONTRAST, 0.9f, NO_BIN) },   { E(TRANSLATE_Y, 0.9f, 9), E(TRANSLATE_Y, 0.7f, 9) },
    { E(AUTOCONTRAST, 0.9f, NO_BIN), E(SOLARIZE, 0.8f, 3) },   { E(EQUALIZE, 0.8f, NO_BIN), E(INVERT, 0.1f, NO_BIN) },
    { E(TRANSLATE_Y, 0.7f, 9), E(AUTOCONTRAST, 0.9f, NO_BIN) },
};
static const auto_entry svhn[25][2] = {
    { E(SHEAR_X, 0.9f, 4), E(INVERT, 0.2f, NO_BIN) },          { E(SHEAR_Y, 0.9f, 8), E(INVERT, 0.7f, NO_BIN) },
    { E(EQUALIZE, 0.6f, NO_BIN), E(SOLARIZE, 0.6f, 6) },       { E(INVERT, 0.9f, NO_BIN), E(EQUALIZE, 0.6f, NO_BIN) },
    { E(EQUALIZE, 0.6f, NO_BIN), E(ROTATE, 0.9f, 3) },         { E(SHEAR_X, 0.9f, 4), E(AUTOCONTRAST, 0.8f, NO_BIN) },
    { E(SHEAR_Y, 0.9f, 8), E(INVERT, 0.4f, NO_BIN) },          { E(SHEAR_Y, 0.9f, 5), E(SOLARIZE, 0.2f, 6) },
    { E(INVERT, 0.9f, NO_BIN), E(AUTOCONTRAST, 0.8f, NO_BIN) }, { E(EQUALIZE, 0.6f, NO_BIN), E(ROTATE, 0.9f, 3) },
    { E(SHEAR_X, 0.9f, 4), E(SOLARIZE, 0.3f, 3) },             { E(SHEAR_Y, 0.8f, 8), E(INVERT, 0.7f, NO_BIN) },
    { E(EQUALIZE, 0.9f, NO_BIN), E(TRANSLATE_Y, 0.6f, 6) },    { E(INVERT, 0.9f, NO_BIN), E(EQUALIZE, 0.6f, NO_BIN) },
    { E(CONTRAST, 0.3f, 3), E(ROTATE, 0.8f, 4) },              { E(INVERT, 0.8f, NO_BIN), E(TRANSLATE_Y, 0.0f, 2) },
    { E(SHEAR_Y, 0.7f, 6), E(SOLARIZE, 0.4f, 8) },             { E(INVERT, 0.6f, NO_BIN), E(ROTATE, 0.8f, 4) },
    { E(SHEAR_Y, 0.3f, 7), E(TRANSLATE_X, 0.9f, 3) },          { E(SHEAR_X, 0.1f, 6), E(INVERT, 0.6f, NO_BIN) },
    { E(SOLARIZE, 0.7f, 2), E(TRANSLATE_Y, 0.6f, 7) },         { E(SHEAR_Y, 0.8f, 4), E(INVERT, 0.8f, NO_BIN) },
    { E(SHEAR_X, 0.7f, 9), E(TRANSLATE_Y, 0.8f, 3) },          { E(SHEAR_Y, 0.8f, 5), E(AUTOCONTRAST, 0.7f, NO_BIN) },
    { E(SHEAR_X, 0.7f, 2), E(INVERT, 0.1f, NO_BIN) },
};
#undef E

void augment_auto_apply(int policy_set, int bilinear, uint8_t *img, uint8_t *scratch, int c, int h, int w,
                        rt_rng *r, FILE *trace) {
    const auto_entry(*set)[2] = policy_set == RT_AUTO_CIFAR10 ? cifar10 : policy_set == RT_AUTO_SVHN ? svhn : imagenet;
    int id = (int)rt_rng_below(r, 25);
    float draw[2] = { rt_rng_uniform(r), rt_rng_uniform(r) };
    int negate[2] = { (int)rt_rng_below(r, 2), (int)rt_rng_below(r, 2) };
    if (trace) fprintf(trace, "policy %d\n", id);
    for (int k = 0; k < 2; k++) {
        const auto_entry *e = &set[id][k];
        if (!(draw[k] <= e->p)) continue;
        double mag = e->bin == NO_BIN ? 0 : augment_policy_magnitude(RT_POLICY_AUTO_AUGMENT, e->op, e->bin, AUTO_BINS, h, w);
        if (augment_signed_op(e->op) && negate[k]) mag = -mag;
        if (trace) fprintf(trace, "op %d %d %.17g\n", k, (int)e->op, mag);
        augment_op_apply(e->op, mag, bilinear, img, scratch, c, h, w);
    }
}
