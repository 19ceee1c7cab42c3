/* Honour or refuse, per backend, the modern-recipe data features. Both backends run mixup,
 * cutmix and random erasing (the loader does them on normalized floats; a CUDA trainer whose
 * spec has them takes float batches instead of bytes: lower.c's input_float), repeated
 * augmentation, TrivialAugment and RandAugment (on the 8-bit image) and the BCE loss;
 * timm's RandAugment variant runs on neither. */
#include <stdio.h>
#include "build_augment.h"

int augment_backend_check(const char *spec_path, const run_config *run) {
    const run_augment *a = &run->augment;
    if (a->rand_augment && (a->ra_magnitude_std > 0 || a->ra_increasing)) {
        fprintf(stderr, "%s: error: rand_augment.%s is timm's RandAugment variant, which the trainer does not "
                        "implement (it runs torchvision's RandAugment)\n"
                        "  hint: set magnitude_std: 0 and increasing: false for torchvision's RandAugment\n",
                spec_path, a->ra_magnitude_std > 0 ? "magnitude_std" : "increasing");
        return 1;
    }
    return 0;
}
