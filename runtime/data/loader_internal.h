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
/* Caffe's window crop and mean image (augment_window.c): the cfg.window_h x window_w window
 * of the stored sample, random (augment) or central, to floats, or to bytes when raw_u8. */
void augment_window_sample(const rt_loader *l, const uint8_t *src, void *dst, uint64_t bits, int augment);
/* A sample's height and width as the loader hands it out: the window's, or the dataset's. */
static inline int loader_out_h(const rt_loader *l) { return l->cfg.window_h ? l->cfg.window_h : l->ds->h; }
static inline int loader_out_w(const rt_loader *l) { return l->cfg.window_w ? l->cfg.window_w : l->ds->w; }
/* Decode threads for an encoded dataset (image_fill.c). image_pool_fill writes samples
 * [lo, hi) of the global batch starting at epoch position `first` (rows from x, y) and returns
 * how many of them failed to decode and were replaced. */
struct image_pool *image_pool_start(const rt_loader *l);
int image_pool_fill(struct image_pool *p, const uint32_t *perm, int64_t epoch, long first, long lo,
                    long hi, void *x, int32_t *y);
void image_pool_stop(struct image_pool *p);
void loader_advance(const rt_loader *l, int64_t *epoch, int64_t *step);
/* Samples [lo, hi) of the global batch at epoch position `first` into x and y (row 0 is
 * sample lo), augmented and erased; returns how many failed to decode and were replaced. */
int loader_fill_samples(const rt_loader *l, const uint32_t *perm, int64_t epoch, long first, long lo, long hi,
                        void *x, int32_t *y);

/* Modern-recipe augmentation (augment_erase.c, augment_mix.c, sampler_repeat.c). */
#include "rt_rng.h"
#include <stdio.h>   /* augment_auto_apply's trace */
double augment_uniform(rt_rng *r);   /* [0, 1), 53 bits */
double augment_beta(rt_rng *r, double alpha);
/* Draws whether random erasing hits an h x w sample and where: box = { top, left, height,
 * width }; 0 when not erased. */
int augment_erase_box(rt_rng *r, const rt_augment_config *a, int h, int w, int box[4]);
/* Erases one normalized float sample at epoch position pos (aug_key: the epoch's). */
void augment_erase_sample(const rt_loader *l, float *x, uint64_t aug_key, long pos);
/* One global batch's mixing: lam is the weight of each sample's own image and label; for
 * cutmix the box [y0, y1) x [x0, x1) comes from the partner. */
typedef struct { double lam; int cutmix, y0, x0, y1, x1; } augment_mix;
int augment_mix_plan(const rt_augment_config *a, uint64_t batch_key, int h, int w, augment_mix *m);
/* Mixes this rank's share [lo, hi) of global batch (epoch, step) in place and writes the
 * partner labels and weights after the labels (RT_TARGET_WORDS). */
void augment_mix_batch(const rt_loader *l, const uint32_t *perm, int64_t epoch, int64_t step, long lo, long hi,
                       float *x, int32_t *y);
/* TrivialAugmentWide / RandAugment ops (augment_ops.c) and policies (augment_policy.c). */
typedef enum {
    AUG_IDENTITY, AUG_SHEAR_X, AUG_SHEAR_Y, AUG_TRANSLATE_X, AUG_TRANSLATE_Y, AUG_ROTATE, AUG_BRIGHTNESS,
    AUG_COLOR, AUG_CONTRAST, AUG_SHARPNESS, AUG_POSTERIZE, AUG_SOLARIZE, AUG_AUTOCONTRAST, AUG_EQUALIZE,
    AUG_INVERT,   /* AutoAugment's only: TrivialAugmentWide and RandAugment draw from the ops before it */
    AUG_OP_COUNT
} augment_op;
#define AUG_WIDE_OPS AUG_INVERT   /* TrivialAugmentWide's and RandAugment's op count */
/* Applies op at magnitude mag to the 8-bit c x h x w img in place (geometric ops by nearest
 * neighbour, or bilinear); scratch holds c*h*w bytes. */
void augment_op_apply(augment_op op, double mag, int bilinear, uint8_t *img, uint8_t *scratch, int c, int h, int w);
/* torchvision's magnitude of op in bin `bin` of `bins` (policy: RT_POLICY_*), unsigned. */
double augment_policy_magnitude(int policy, augment_op op, int bin, int bins, int h, int w);
/* Ops whose magnitude takes a random sign (torchvision's `signed`): geometric and colour. */
int augment_signed_op(augment_op op);
/* AutoAugment (augment_auto.c): one of the policy set's 25 sub-policies per sample, each of its
 * two ops applied with its probability; trace (or NULL) gets one line per op applied. */
void augment_auto_apply(int policy_set, int bilinear, uint8_t *img, uint8_t *scratch, int c, int h, int w,
                        rt_rng *r, FILE *trace);
/* The configured policy on the 8-bit sample at epoch position pos. */
void augment_policy_apply(const rt_loader *l, uint8_t *img, uint64_t aug_key, long pos);
/* timm's RandAugment (augment_timm.c: draws and level-to-argument; augment_timm_ops.c: the
 * ops with Pillow's semantics). The order is timm's _RAND_TRANSFORMS / _RAND_INCREASING_TRANSFORMS. */
typedef enum {
    TIMM_AUTOCONTRAST, TIMM_EQUALIZE, TIMM_INVERT, TIMM_ROTATE, TIMM_POSTERIZE, TIMM_SOLARIZE, TIMM_SOLARIZE_ADD,
    TIMM_COLOR, TIMM_CONTRAST, TIMM_BRIGHTNESS, TIMM_SHARPNESS, TIMM_SHEAR_X, TIMM_SHEAR_Y, TIMM_TRANSLATE_X_REL,
    TIMM_TRANSLATE_Y_REL, TIMM_OP_COUNT
} timm_op;
/* timm's level_to_arg of op at level (0..10): negate is the _randomly_negate draw (ignored by
 * the ops without a sign), increasing picks the *Increasing variants. */
double timm_level_arg(timm_op op, int increasing, double level, int negate);
/* Whether op draws a sign, and whether it resamples (draws its interpolation). */
int timm_op_signed(timm_op op, int increasing);
int timm_op_geometric(timm_op op);
/* Applies op with argument arg (Pillow semantics) to the 8-bit c x h x w img in place;
 * geometric ops resample bilinear (bicubic = 0) or bicubic and fill uncovered pixels with
 * fill[ch]; scratch holds c*h*w bytes. */
void timm_op_apply(timm_op op, double arg, int bicubic, const uint8_t *fill, uint8_t *img, uint8_t *scratch, int c,
                   int h, int w);
/* timm's RandAugment on the 8-bit sample at epoch position pos. */
void augment_timm_apply(const rt_loader *l, uint8_t *img, uint64_t aug_key, long pos);
/* torchvision's equalize, which is Pillow's ImageOps.equalize too, on one channel of n bytes. */
void augment_equalize_channel(uint8_t *p, size_t n);
/* Repeated augmentation: perm[i] = perm[i / repeats], in place. */
void sampler_repeat(uint32_t *perm, long n, int repeats);

/* The background thread fills the loader's slots in batch order; prefetch_view hands out the
 * next full one and gives the previously handed-out slot back to the thread. */
struct rt_prefetch *prefetch_start(rt_loader *l, int64_t epoch, int64_t step);
int prefetch_view(struct rt_prefetch *p, int *slot);
void prefetch_stop(struct rt_prefetch *p);

#endif
