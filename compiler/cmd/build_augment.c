/* Honour or refuse, per backend, the modern-recipe data features: the CPU trainer's loader
 * produces normalized float batches and does mixup, cutmix and random erasing on them; the
 * CUDA trainer's loader hands the device bytes (normalized there), which cannot carry a
 * blended or noise-filled pixel, so the CUDA backend refuses those three at build. Repeated
 * augmentation (an epoch order), TrivialAugment and RandAugment (on the 8-bit image) and the
 * BCE loss work on both, and so does timm's RandAugment variant (augment_timm.c, also on the
 * 8-bit image in the shared loader). */
#include <stdio.h>
#include "build_augment.h"

int augment_backend_check(const char *spec_path, const run_config *run, int cuda) {
    const run_augment *a = &run->augment;
    if (!cuda) return 0;
    const char *what = a->mixup_alpha > 0 ? "mixup_alpha" : a->cutmix_alpha > 0 ? "cutmix_alpha"
                     : a->erase_p > 0 ? "random_erasing" : NULL;
    if (!what) return 0;
    fprintf(stderr, "%s: error: data.train.augment.%s is not implemented by the CUDA backend (its loader sends "
                    "the device 8-bit pixels, which cannot hold a mixed or erased sample)\n"
                    "  hint: build with --backend cpu, or remove mixup_alpha, cutmix_alpha and random_erasing\n",
            spec_path, what);
    return 1;
}
