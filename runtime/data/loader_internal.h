/* Private to runtime/data/loader*.c, shuffle.c, augment.c, prefetch.c: the pieces the
 * loader is built from. */
#ifndef LOADER_INTERNAL_H
#define LOADER_INTERNAL_H
#include "rt_data.h"

/* The epoch's order, computed into *cache when *cache_epoch differs; NULL in eval mode
 * (dataset order). Each caller (the sync path, the prefetch thread) owns its own cache. */
const uint32_t *loader_perm(const rt_loader *l, uint32_t **cache, int64_t *cache_epoch,
                            int64_t epoch);
/* Writes this rank's slice of global batch (epoch, step); returns the sample count. */
int loader_fill(const rt_loader *l, const uint32_t *perm, int64_t epoch, int64_t step, float *x,
                int32_t *y);
/* Copies one sample to float CHW: random crop + flip when bits say so, then normalization. */
void augment_sample(const rt_loader *l, const uint8_t *src, float *dst, uint64_t bits, int augment);
void loader_build_lut(rt_loader *l);
void loader_advance(const rt_loader *l, int64_t *epoch, int64_t *step);

struct rt_prefetch *prefetch_start(rt_loader *l, int64_t epoch, int64_t step);
int prefetch_take(struct rt_prefetch *p, float *x, int32_t *y);
void prefetch_stop(struct rt_prefetch *p);

#endif
