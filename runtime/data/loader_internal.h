/* Private to runtime/data/loader*.c, shuffle.c, augment.c, prefetch.c: the pieces the
 * loader is built from. */
#ifndef LOADER_INTERNAL_H
#define LOADER_INTERNAL_H
#include "rt_data.h"

/* The epoch's order, computed into *cache when *cache_epoch differs; NULL in eval mode
 * (dataset order). Each caller (the sync path, the prefetch thread) owns its own cache. */
const uint32_t *loader_perm(const rt_loader *l, uint32_t **cache, int64_t *cache_epoch,
                            int64_t epoch);
/* Writes this rank's slice of global batch (epoch, step), zeros past its end; returns the
 * sample count. x holds batch_per_rank samples of l->sample_bytes. */
int loader_fill(const rt_loader *l, const uint32_t *perm, int64_t epoch, int64_t step, void *x,
                int32_t *y, int *failures);
/* Copies one sample to float CHW: random crop + flip when bits say so, then normalization. */
void augment_sample(const rt_loader *l, const uint8_t *src, float *dst, uint64_t bits, int augment);
/* The same crop and flip, to bytes: no normalization (raw_u8). */
void augment_sample_u8(const rt_loader *l, const uint8_t *src, uint8_t *dst, uint64_t bits, int augment);
/* Decode threads for an encoded dataset (image_fill.c). image_pool_fill writes samples
 * [lo, hi) of the global batch starting at epoch position `first` (rows from x, y) and returns
 * how many of them failed to decode and were replaced. */
struct image_pool *image_pool_start(const rt_loader *l);
int image_pool_fill(struct image_pool *p, const uint32_t *perm, int64_t epoch, long first, long lo,
                    long hi, void *x, int32_t *y);
void image_pool_stop(struct image_pool *p);
void loader_advance(const rt_loader *l, int64_t *epoch, int64_t *step);

/* The background thread fills the loader's slots in batch order; prefetch_view hands out the
 * next full one and gives the previously handed-out slot back to the thread. */
struct rt_prefetch *prefetch_start(rt_loader *l, int64_t epoch, int64_t step);
int prefetch_view(struct rt_prefetch *p, int *slot);
void prefetch_stop(struct rt_prefetch *p);

#endif
