/* `trainc show`'s line for the modern-recipe data path and loss (mixup/cutmix, erasing,
 * TrivialAugment/RandAugment, repeated augmentation, BCE), printed only when one is on. */
#include <stdio.h>
#include <string.h>
#include "show.h"

void show_recipe(FILE *out, const run_config *r) {
    const run_augment *a = &r->augment;
    char line[512] = "";
    size_t n = 0;
#define ADD(...) (n += (size_t)snprintf(line + n, n < sizeof line ? sizeof line - n : 0, __VA_ARGS__))
    if (a->mixup_alpha > 0) ADD(", mixup %g", a->mixup_alpha);
    if (a->cutmix_alpha > 0) ADD(", cutmix %g", a->cutmix_alpha);
    if (a->mixup_alpha > 0 || a->cutmix_alpha > 0) {
        ADD(" (mix_prob %g", a->mix_prob);
        if (a->mixup_alpha > 0 && a->cutmix_alpha > 0) ADD(", switch %g", a->mix_switch_prob);
        ADD(")");
    }
    if (a->erase_p > 0) ADD(", erasing p %g", a->erase_p);
    if (a->trivial_augment) ADD(", TrivialAugmentWide");
    if (a->rand_augment && (a->ra_magnitude_std > 0 || a->ra_increasing))
        ADD(", timm's RandAugment %ld ops at m%ld mstd %g%s", (long)a->ra_num_ops, (long)a->ra_magnitude,
            a->ra_magnitude_std, a->ra_increasing ? " increasing" : "");
    else if (a->rand_augment)
        ADD(", RandAugment %ld ops at %ld/%ld", (long)a->ra_num_ops, (long)a->ra_magnitude, (long)a->ra_num_bins);
    if (a->auto_augment)
        ADD(", AutoAugment %s policy", a->auto_augment == 2 ? "CIFAR10" : a->auto_augment == 3 ? "SVHN" : "ImageNet");
    if ((a->trivial_augment || a->rand_augment || a->auto_augment) && a->policy_bilinear) ADD(" (bilinear)");
    if (a->repeats > 1) ADD(", repeated x%ld", (long)a->repeats);
    if (r->loss_kind == RUN_LOSS_BCE) ADD(", loss BCE%s", r->bce_target_threshold > 0 ? " (thresholded)" : "");
#undef ADD
    if (n) fprintf(out, "  recipe            %s\n", line + 2);
}
