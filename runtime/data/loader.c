/* Batch loader: validates the layout, maps (epoch, step, rank) to samples, and hands out
 * batches in order, through the prefetch thread when it is on. */
#include <stdlib.h>
#include <string.h>
#include "loader_internal.h"
#include "rt_rng.h"

void rt_loader_config_default(rt_loader_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->global_batch = 64;
    cfg->world = 1;
    cfg->train = 1;
    for (int c = 0; c < RT_MAX_CHANNELS; c++) cfg->std[c] = 1.0f;
    cfg->prefetch = 1;
}

static rt_status check_config(const rt_dataset *ds, const rt_loader_config *c, rt_err *err) {
    if (c->world < 1 || c->rank < 0 || c->rank >= c->world)
        return rt_fail(err, RT_E_ARG, NULL, "data loader: rank %d is not in a world of %d", c->rank,
                       c->world);
    if (c->global_batch < 1 || c->global_batch % c->world != 0)
        return rt_fail(err, RT_E_ARG, "choose a global batch that is a multiple of the rank count",
                       "data loader: global batch %d cannot be split evenly over %d ranks",
                       c->global_batch, c->world);
    if (ds->values && (c->raw_u8 || c->crop_pad || c->flip || c->augment.policy || c->augment.erase_p > 0 ||
                       RT_TARGET_WORDS(c->augment) > 1))
        return rt_fail(err, RT_E_ARG, "train HDF5 data with the CPU backend and without augmentation (Caffe's HDF5Data "
                       "has no transform either)", "data loader: HDF5 samples are floats handed to the net as they are; "
                       "this trainer %s", c->raw_u8 ? "takes bytes" : "augments them");
    if (ds->c > RT_MAX_CHANNELS && !ds->values)
        return rt_fail(err, RT_E_ARG, NULL, "data loader: %d channels (at most %d)", ds->c,
                       RT_MAX_CHANNELS);
    if (c->mean_image && ds->encoded) {   /* Caffe's ImageData: the mean image of the resized images */
        if (c->raw_u8)
            return rt_fail(err, RT_E_ARG, "train with the CPU backend, or give per-channel mean_value instead",
                           "data loader: a mean image (Caffe's mean_file) needs float batches, and this trainer "
                           "takes bytes (it normalizes per channel on the device)");
        if (c->image.mode == RT_IMG_RRC || c->image.pad || c->augment.policy || c->augment.erase_p > 0 ||
            RT_TARGET_WORDS(c->augment) > 1 || c->mean_h < 1 || c->mean_w < 1)
            return rt_fail(err, RT_E_ARG, "keep Caffe's transform alone (resize_to, random_crop or center_crop, flip, "
                           "mean_file, scale)", "data loader: a mean image with a random-resized crop, padding, a "
                           "policy, erasing or mixing");
    } else if (c->window_h || c->window_w || c->mean_image) {   /* Caffe's crop_size and mean_file on raw images */
        int wh = c->window_h ? c->window_h : ds->h, ww = c->window_w ? c->window_w : ds->w;
        if (ds->values || ds->encoded || !ds->images)
            return rt_fail(err, RT_E_ARG, NULL, "data loader: a crop window or mean image is for databases of raw images");
        if (wh < 1 || ww < 1 || wh > ds->h || ww > ds->w)
            return rt_fail(err, RT_E_ARG, "crop at most the stored size (Caffe's crop_size)",
                           "data loader: a %dx%d crop window of %dx%d images", wh, ww, ds->h, ds->w);
        if (c->crop_pad || c->augment.policy || c->augment.erase_p > 0 || RT_TARGET_WORDS(c->augment) > 1)
            return rt_fail(err, RT_E_ARG, "keep Caffe's transform alone (crop_size, mirror, mean, scale)",
                           "data loader: a crop window or mean image with padding, a policy, erasing or mixing");
        if (c->mean_image && c->raw_u8)
            return rt_fail(err, RT_E_ARG, "train with the CPU backend, or give per-channel mean_value instead",
                           "data loader: a mean image (Caffe's mean_file) needs float batches, and this trainer "
                           "takes bytes (it normalizes per channel on the device)");
    }
    if (c->crop_pad < 0 || c->crop_pad > 255)
        return rt_fail(err, RT_E_ARG, NULL, "data loader: crop padding %d out of 0..255", c->crop_pad);
    if (c->train && ds->n < c->global_batch)
        return rt_fail(err, RT_E_ARG, "use a smaller batch or more data",
                       "data loader: %ld samples do not fill one global batch of %d (training "
                       "drops partial batches)", ds->n, c->global_batch);
    if (c->slots != 0 && (c->slots < RT_LOADER_HELD + 1 || c->slots > RT_LOADER_MAX_SLOTS))
        return rt_fail(err, RT_E_ARG, NULL, "data loader: %d batch slots (%d to %d)", c->slots,
                       RT_LOADER_HELD + 1, RT_LOADER_MAX_SLOTS);
    const rt_augment_config *a = &c->augment;
    if (c->raw_u8 && (RT_TARGET_WORDS(*a) > 1 || a->erase_p > 0))
        return rt_fail(err, RT_E_ARG, "train with the CPU backend, or drop mixup, cutmix and random_erasing",
                       "data loader: mixup, cutmix and random erasing need normalized float batches, and this "
                       "trainer takes bytes");
    if (a->erase_p > 0 && !(a->erase_scale[0] > 0 && a->erase_scale[0] <= a->erase_scale[1] &&
                            a->erase_ratio[0] > 0 && a->erase_ratio[0] <= a->erase_ratio[1]))
        return rt_fail(err, RT_E_ARG, NULL, "data loader: random erasing needs 0 < scale[0] <= scale[1] and "
                       "0 < ratio[0] <= ratio[1]");
    if (a->policy && (a->num_bins < 2 || a->magnitude < 0 || a->magnitude >= a->num_bins || a->num_ops < 1))
        return rt_fail(err, RT_E_ARG, NULL, "data loader: augmentation policy with %d ops at magnitude %d of %d bins",
                       a->num_ops, a->magnitude, a->num_bins);
    if (ds->n > 0xffffffffL)
        return rt_fail(err, RT_E_ARG, NULL, "data loader: %ld samples is more than 2^32", ds->n);
    return RT_OK;
}

rt_status rt_loader_init(rt_loader *l, const rt_dataset *ds, const rt_loader_config *cfg,
                         rt_err *err) {
    memset(l, 0, sizeof *l);
    rt_status st = check_config(ds, cfg, err);
    if (st) return st;
    l->ds = ds;
    l->cfg = *cfg;
    l->batch_per_rank = cfg->global_batch / cfg->world;
    l->steps_per_epoch = cfg->train ? ds->n / cfg->global_batch
                                    : (ds->n + cfg->global_batch - 1) / cfg->global_batch;
    l->perm_epoch = -1;
    rt_normalize_lut(cfg->mean, cfg->std, ds->c < RT_MAX_CHANNELS ? ds->c : RT_MAX_CHANNELS, l->lut);
    l->sample_bytes = (size_t)ds->c * loader_out_h(l) * loader_out_w(l) * (cfg->raw_u8 ? 1 : sizeof(float));
    l->slots = cfg->slots ? cfg->slots : RT_LOADER_DEFAULT_SLOTS;
    for (int s = 0; s < l->slots; s++) {
        l->slot_x[s] = rt_alloc_pages((size_t)l->batch_per_rank * l->sample_bytes);   /* may be page-locked */
        l->slot_y[s] = rt_xcalloc((size_t)l->batch_per_rank * RT_TARGET_WORDS(cfg->augment), sizeof(int32_t));
    }
    if (ds->encoded) l->pool = image_pool_start(l);
    if (cfg->prefetch) l->bg = prefetch_start(l, 0, 0);
    return RT_OK;
}

void rt_loader_free(rt_loader *l) {
    if (l->bg) prefetch_stop(l->bg);
    image_pool_stop(l->pool);
    for (int s = 0; s < l->slots; s++) {
        rt_free_aligned(l->slot_x[s]);
        free(l->slot_y[s]);
    }
    free(l->perm);
    memset(l, 0, sizeof *l);
}

void loader_advance(const rt_loader *l, int64_t *epoch, int64_t *step) {
    if (++*step >= l->steps_per_epoch) {
        *step = 0;
        ++*epoch;
    }
}

/* An in-memory sample [c][hw] rewritten as [hw][c] (elements of elem bytes), through scratch. */
static void to_channels_last(void *sample, uint8_t *scratch, int c, size_t hw, size_t elem) {
    uint8_t *s = sample;
    memcpy(scratch, s, (size_t)c * hw * elem);
    for (int ch = 0; ch < c; ch++)
        for (size_t q = 0; q < hw; q++) memcpy(s + (q * c + ch) * elem, scratch + (ch * hw + q) * elem, elem);
}

/* Crop and flip to bytes, the augmentation policy, then normalization unless raw_u8. */
static void policy_sample(const rt_loader *l, const uint8_t *src, void *dst, uint64_t bits, uint64_t aug_key, long pos) {
    size_t n = (size_t)l->ds->c * l->ds->h * l->ds->w, plane = (size_t)l->ds->h * l->ds->w;
    uint8_t *bytes = l->cfg.raw_u8 ? dst : rt_xmalloc(n);
    augment_sample_u8(l, src, bytes, bits, 1);
    augment_policy_apply(l, bytes, aug_key, pos);
    if (l->cfg.raw_u8) return;
    for (size_t i = 0; i < n; i++) ((float *)dst)[i] = l->lut[i / plane][bytes[i]];
    free(bytes);
}

/* Samples of a shuffled epoch lie at random places in a data set larger than the caches:
 * asking for a later sample's bytes while this one is converted hides most of the misses. */
enum { PREFETCH_AHEAD = 4 };

static void prefetch_sample(const rt_dataset *ds, const uint32_t *perm, long pos, size_t sample) {
    if (!ds->images) return;
    const uint8_t *src = ds->images + (size_t)(perm ? (long)perm[pos] : pos) * sample;
    for (size_t b = 0; b < sample; b += 64) __builtin_prefetch(src + b);
    __builtin_prefetch(src + sample - 1);
}

int loader_fill_samples(const rt_loader *l, const uint32_t *perm, int64_t epoch, long first, long lo, long hi,
                        void *x, int32_t *y) {
    const rt_dataset *ds = l->ds;
    const size_t sample = (size_t)ds->c * ds->h * ds->w;
    const uint64_t aug_key = rt_hash_u64(l->cfg.seed, RT_STREAM_AUGMENT, (uint64_t)epoch);
    unsigned char *out = x;
    int failures = ds->encoded ? image_pool_fill(l->pool, perm, epoch, first, lo, hi, x, y) : 0;
    for (long j = lo; j < hi && !ds->encoded; j++) {
        long pos = first + j;   /* position in the epoch: the only input to augmentation */
        long idx = perm ? (long)perm[pos] : pos;
        uint64_t bits = rt_hash_u64(aug_key, (uint64_t)pos, 0);
        void *dst = out + (size_t)(j - lo) * l->sample_bytes;
        if (j + PREFETCH_AHEAD < hi) prefetch_sample(ds, perm, first + j + PREFETCH_AHEAD, sample);
        if (ds->values)   /* HDF5: the floats as they are (check_config refused any augmentation) */
            memcpy(dst, ds->values + (size_t)idx * sample, sample * sizeof(float));
        else if (l->cfg.window_h || l->cfg.mean_image)   /* Caffe's crop_size / mean_file */
            augment_window_sample(l, ds->images + (size_t)idx * sample, dst, bits, l->cfg.train);
        else if (l->cfg.train && l->cfg.augment.policy)   /* the policy works on bytes, before normalization */
            policy_sample(l, ds->images + (size_t)idx * sample, dst, bits, aug_key, pos);
        else if (l->cfg.raw_u8)
            augment_sample_u8(l, ds->images + (size_t)idx * sample, dst, bits, l->cfg.train);
        else
            augment_sample(l, ds->images + (size_t)idx * sample, dst, bits, l->cfg.train);
        y[j - lo] = ds->labels[idx];
    }
    for (long j = lo; j < hi && l->cfg.train && !l->cfg.raw_u8; j++)
        augment_erase_sample(l, (float *)(out + (size_t)(j - lo) * l->sample_bytes), aug_key, first + j);
    return failures;
}

int loader_fill(const rt_loader *l, const uint32_t *perm, int64_t epoch, int64_t step, void *x,
                int32_t *y, int *failures) {
    const rt_dataset *ds = l->ds;
    const long B = l->cfg.global_batch, world = l->cfg.world, rank = l->cfg.rank;
    const long first = (long)step * B;
    long in_batch = ds->n - first < B ? ds->n - first : B;   /* < B only for eval's last */
    if (in_batch < 0) in_batch = 0;
    const long lo = rank * in_batch / world, hi = (rank + 1) * in_batch / world;
    unsigned char *out = x;
    *failures = loader_fill_samples(l, perm, epoch, first, lo, hi, x, y);
    if (l->cfg.train && RT_TARGET_WORDS(l->cfg.augment) > 1) augment_mix_batch(l, perm, epoch, step, lo, hi, x, y);
    /* last: the augmentations above work on [c][hw] (encoded bytes come channels-last already) */
    if (l->cfg.nhwc && (!ds->encoded || !l->cfg.raw_u8) && ds->c > 1) {
        uint8_t *scratch = rt_xmalloc(l->sample_bytes);
        for (long j = lo; j < hi; j++)
            to_channels_last(out + (size_t)(j - lo) * l->sample_bytes, scratch, ds->c, (size_t)loader_out_h(l) * loader_out_w(l),
                             l->cfg.raw_u8 ? 1 : sizeof(float));
        free(scratch);
    }
    /* A compiled model always runs its full batch: the rows past a partial one are zeros,
     * never a previous batch's leftovers. */
    long n = hi - lo;
    memset(out + (size_t)n * l->sample_bytes, 0, (size_t)(l->batch_per_rank - n) * l->sample_bytes);
    memset(y + n, 0, (size_t)(l->batch_per_rank - n) * sizeof(int32_t));
    return (int)n;
}

int rt_loader_batch_at(rt_loader *l, int64_t epoch, int64_t step, void *x, int32_t *y) {
    if (step < 0 || step >= l->steps_per_epoch || epoch < 0)
        rt_die("rt_loader_batch_at: step %lld of epoch %lld is outside 0..%ld",
               (long long)step, (long long)epoch, l->steps_per_epoch - 1);
    const uint32_t *perm = loader_perm(l, &l->perm, &l->perm_epoch, epoch);
    return loader_fill(l, perm, epoch, step, x, y, &l->last_failures);
}

int rt_loader_next_view(rt_loader *l, const void **x, const int32_t **y) {
    int slot, got;
    if (l->bg) {
        got = prefetch_view(l->bg, &slot);
    } else {   /* slots in turn, so the views before stay valid */
        slot = l->sync_slot = (l->sync_slot + 1) % l->slots;
        got = rt_loader_batch_at(l, l->epoch, l->step, l->slot_x[slot], l->slot_y[slot]);
        l->slot_failures[slot] = l->last_failures;
    }
    l->last_failures = l->slot_failures[slot];
    loader_advance(l, &l->epoch, &l->step);
    *x = l->slot_x[slot];
    *y = l->slot_y[slot];
    return got;
}

int rt_loader_next(rt_loader *l, void *x, int32_t *y) {
    const void *vx;
    const int32_t *vy;
    int got = rt_loader_next_view(l, &vx, &vy);
    memcpy(x, vx, (size_t)l->batch_per_rank * l->sample_bytes);
    memcpy(y, vy, (size_t)l->batch_per_rank * RT_TARGET_WORDS(l->cfg.augment) * sizeof(int32_t));
    return got;
}

void rt_loader_seek(rt_loader *l, int64_t epoch, int64_t step_in_epoch) {
    if (epoch < 0 || step_in_epoch < 0 || step_in_epoch >= l->steps_per_epoch)
        rt_die_hint("the checkpoint and the data disagree: resume with the same dataset and batch size",
                    "cannot seek the data loader to step %lld of epoch %lld: an epoch has %ld steps",
                    (long long)step_in_epoch, (long long)epoch, l->steps_per_epoch);
    l->epoch = epoch;
    l->step = step_in_epoch;
    if (l->bg) {   /* what the thread prepared is for the old position: restart it */
        prefetch_stop(l->bg);
        l->bg = prefetch_start(l, epoch, step_in_epoch);
    }
}

long rt_loader_steps_per_epoch(const rt_loader *l) { return l->steps_per_epoch; }

int rt_loader_last_failures(const rt_loader *l) { return l->last_failures; }

int rt_loader_batch_per_rank(const rt_loader *l) { return l->batch_per_rank; }

size_t rt_loader_sample_bytes(const rt_loader *l) { return l->sample_bytes; }
