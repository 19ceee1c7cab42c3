/* Epoch permutation: a Fisher-Yates shuffle keyed only by (seed, epoch), so every rank and
 * every world size agree on the order without communicating. */
#include <stdlib.h>
#include "loader_internal.h"
#include "rt_rng.h"

void rt_shuffle_permutation(uint32_t *perm, long n, uint64_t seed, int64_t epoch) {
    rt_rng r;
    rt_rng_init(&r, rt_hash_u64(seed, RT_STREAM_SHUFFLE, (uint64_t)epoch), RT_STREAM_SHUFFLE);
    for (long i = 0; i < n; i++) perm[i] = (uint32_t)i;
    for (long i = n - 1; i > 0; i--) {
        uint32_t j = rt_rng_below(&r, (uint32_t)(i + 1));
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

const uint32_t *loader_perm(const rt_loader *l, uint32_t **cache, int64_t *cache_epoch,
                            int64_t epoch) {
    if (!l->cfg.train) return NULL;
    if (!*cache) *cache = rt_xmalloc((size_t)l->ds->n * sizeof(uint32_t));
    if (*cache_epoch != epoch) {
        rt_shuffle_permutation(*cache, l->ds->n, l->cfg.seed, epoch);
        if (l->cfg.augment.repeats > 1) sampler_repeat(*cache, l->ds->n, l->cfg.augment.repeats);
        *cache_epoch = epoch;
    }
    return *cache;
}
