/* Repeated augmentation (timm RASampler, torchvision's ra_reps): the epoch's order is the
 * shuffled dataset with each sample repeated `repeats` times in a row, cut to the dataset's
 * length. The copies sit at different epoch positions, so each gets its own augmentation.
 * RASampler hands rank r every world-th entry of that list, so global batch s holds entries
 * [s*B, (s+1)*B) whatever the world size; the loader's contiguous shares hold the same
 * samples, only the rank that trains each copy differs. Its epoch is the dataset length
 * rounded down to 256 samples; ours drops only the last partial batch, as without repeats. */
#include "loader_internal.h"

void sampler_repeat(uint32_t *perm, long n, int repeats) {
    /* downwards: perm[i / repeats] (i / repeats < i for i > 0) is still the shuffled entry */
    for (long i = n - 1; i > 0; i--) perm[i] = perm[i / repeats];
}
