/* Training data: datasets in memory (IDX files or synthetic) and a batch loader that
 * shuffles, slices per rank, augments, normalizes and prefetches on a background thread.
 *
 *   rt_dataset train;
 *   rt_dataset_load_idx(&train, RT_DEFAULT_DATA_DIR, "train", 10, NULL);   // dies on error
 *   rt_loader_config cfg;
 *   rt_loader_config_default(&cfg);
 *   cfg.global_batch = 256; cfg.rank = rank; cfg.world = world; cfg.seed = seed;
 *   cfg.crop_pad = 2; cfg.flip = 1; cfg.mean[0] = 0.2860f; cfg.std[0] = 0.3530f;
 *   rt_loader loader;
 *   rt_loader_init(&loader, &train, &cfg, NULL);
 *   rt_loader_seek(&loader, epoch, step_in_epoch);        // when resuming
 *   const void *x; const int32_t *y;                    // [batch_per_rank, c, h, w] floats
 *   int got = rt_loader_next_view(&loader, &x, &y);      // no copy; valid until the next call
 *   ...
 *   rt_loader_free(&loader); rt_dataset_free(&train);
 *
 * Determinism contract: which samples form global batch (epoch, step) depends only on
 * (seed, epoch); rank r of `world` gets slice [r*B/world, (r+1)*B/world) of it; the crop
 * offset and flip of a sample depend only on (seed, epoch, its position in the epoch).
 * So 1 rank and 4 ranks see the same global batch, pixel for pixel, and a resumed run
 * sees exactly what the uninterrupted one would have. */
#ifndef RT_DATA_H
#define RT_DATA_H
#include <stdint.h>
#include "rt_core.h"
#include "rt_image.h"

#define RT_DEFAULT_DATA_DIR "/usr/share/datasets/fashion-mnist"
#define RT_MAX_CHANNELS 4

struct rt_image_set;
typedef struct {
    long n;              /* samples */
    int c, h, w;         /* of a sample as the loader hands it out */
    uint8_t *images;     /* [n, c, h, w]; NULL for an encoded (image) dataset */
    float *values;       /* [n, c, h, w] floats (HDF5), handed to the net as they are; NULL otherwise */
    int32_t *labels;     /* [n], each in [0, classes) */
    int classes;
    struct rt_image_set *encoded;   /* JPEG files or packed shards, decoded by the loader */
} rt_dataset;

/* Reads DIR/<split>-images-idx3-ubyte[.gz] and DIR/<split>-labels-idx1-ubyte[.gz]
 * (split is "train" or "t10k"). classes > 0: labels must lie in [0, classes);
 * classes == 0: inferred as max label + 1. Any bad input returns one message naming the
 * path, what is wrong and what to do (err == NULL: print it and exit). */
rt_status rt_dataset_load_idx(rt_dataset *ds, const char *dir, const char *split, int classes,
                              rt_err *err);
/* Reads one IDX file of unsigned bytes: expect_dims 3 (images) or 1 (labels). On success
 * *data is malloc'd and dims[0..expect_dims) are set. Used by rt_dataset_load_idx. */
rt_status rt_idx_read(const char *path, int expect_dims, uint8_t **data, long dims[3],
                      rt_err *err);
/* Caffe's LMDB of Datum records (a Data layer's database) at path (the folder with data.mdb, or
 * the file), in key order: raw byte images, all of one size, and labels (classes as above).
 * A record that is not a Datum, is encoded or float, or differs in size is named by its
 * position and key. Built without liblmdb or protobuf-c, it fails saying so. */
rt_status rt_dataset_load_lmdb(rt_dataset *ds, const char *path, int classes, rt_err *err);
/* The record count of an LMDB of Datum records and its first record's [c, h, w] (for
 * `trainc import caffe`, which takes the input shape and training-set size from them). */
rt_status rt_lmdb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err);
/* Caffe's LevelDB databases of Datum records (runtime/data/leveldb_datum.c, libleveldb's C
 * API): the same records as an LMDB's, in key order, read the same way. Built without
 * libleveldb (WITH_LEVELDB=0) both fail saying so. */
rt_status rt_dataset_load_leveldb(rt_dataset *ds, const char *path, int classes, rt_err *err);
rt_status rt_leveldb_probe(const char *path, long *n, int *c, int *h, int *w, rt_err *err);
/* One Datum record (its key and bytes) into ds at index i, shared by the LMDB and LevelDB
 * readers: the first record sets the shape the others must have, ds->images is allocated for
 * ds->n records at record 0; a record that is not a raw-pixel Datum of that shape, or whose
 * label is outside 0..classes-1, is named by position and key. */
typedef struct { const void *data; size_t size; } rt_datum_bytes;
rt_status rt_datum_take(rt_dataset *ds, const char *path, long i, const rt_datum_bytes *key, const rt_datum_bytes *val,
                        int classes, rt_err *err);
/* A Caffe mean_file (a binaryproto BlobProto, as compute_image_mean writes it): its [c, h, w]
 * and the mean of each channel's plane. */
rt_status rt_caffe_mean_file(const char *path, int *c, int *h, int *w, double channel_mean[4], rt_err *err);
/* The same file's whole mean image: *image is c x h x w floats (malloc'd; free it). */
rt_status rt_caffe_mean_image(const char *path, int *c, int *h, int *w, float **image, rt_err *err);
/* Caffe's HDF5Data source (runtime/data/hdf5_data.c, libhdf5): LIST names .h5 files (one
 * path a line, relative to where the trainer runs, as Caffe reads them), each with a float
 * dataset "data" [N, C, H, W] (or [N, D]: [D, 1, 1]) and "label" [N] or [N, 1] of class
 * indices, concatenated in list order into memory. A file, dataset or label that does not fit
 * is named (file, dataset, row). Built without libhdf5 (WITH_HDF5=0) it fails saying so. */
rt_status rt_dataset_load_hdf5(rt_dataset *ds, const char *list, int classes, rt_err *err);
/* The samples and the [C, H, W] of a list's files, for `trainc import caffe`. */
rt_status rt_hdf5_probe(const char *list, long *n, int *c, int *h, int *w, rt_err *err);
/* A learnable stand-in: each class is a bright blob at its own place plus noise. */
void rt_dataset_synthetic(rt_dataset *ds, long n, int c, int h, int w, int classes,
                          uint64_t seed);
void rt_dataset_free(rt_dataset *ds);
/* An image dataset, decoded on demand into 3 x out_h x out_w samples: PATH.index (packed by
 * `trainc pack`), or the folder PATH: PATH/<class>/...images (class labels from the sorted
 * folder names), or, for validation, a flat PATH/ of images with PATH/labels.txt.
 * train: NULL for the training set; for validation the training set, whose class names it
 * uses. classes > 0 must equal the class count. */
rt_status rt_dataset_open_images(rt_dataset *ds, const char *path, const rt_dataset *train,
                                 int out_h, int out_w, int classes, rt_err *err);
/* Caffe's ImageData source: LIST of "path label" lines, each path prefixed by root_folder (as
 * Caffe concatenates them), decoded on demand like an image folder into 3 x out_h x out_w
 * samples; labels 0..classes-1 (classes > 0), a bad line named by file and line. */
rt_status rt_dataset_open_image_list(rt_dataset *ds, const char *list, const char *root_folder, int out_h, int out_w,
                                     int classes, rt_err *err);
/* Class k's name (an image dataset's folder name), or NULL. */
const char *rt_dataset_class_name(const rt_dataset *ds, int k);

/* The modern-recipe augmentations (runtime/data/augment_mix.c, augment_erase.c,
 * sampler_repeat.c); all off when zeroed. Their randomness depends only on (seed, epoch,
 * position in the epoch) for a sample and (seed, epoch, step) for a batch, never on the rank
 * count, the decode threads or a resume. */
typedef struct {
    float mixup_alpha, cutmix_alpha;   /* > 0: on; lambda ~ Beta(alpha, alpha) per global batch */
    float mix_prob;                    /* chance a global batch is mixed */
    float mix_switch_prob;             /* both on: chance of cutmix rather than mixup */
    float erase_p;                     /* random erasing (after normalization); 0 = off */
    float erase_scale[2], erase_ratio[2];
    float erase_value;                 /* in normalized units */
    int erase_random;                  /* 1: N(0,1) noise instead of erase_value */
    int repeats;                       /* repeated augmentation (RASampler); 0 or 1 = off */
    int policy;                        /* rt_augment_policy: on the 8-bit sample after crop and flip */
    int num_ops, magnitude, num_bins;  /* RandAugment's; num_bins also TrivialAugment's (31) */
    int bilinear;                      /* the policy's geometric ops: 1 bilinear, 0 nearest (timm: 1 bilinear,
                                          0 timm's random choice of bilinear and bicubic) */
    float magnitude_std;               /* timm's RandAugment: magnitude noise; > 100 uniform in [0, magnitude] */
    int increasing;                    /* timm's RandAugment: the *Increasing op set */
    int auto_policy;                   /* AutoAugment's policy set: rt_auto_policy */
} rt_augment_config;
enum rt_augment_policy { RT_POLICY_NONE = 0, RT_POLICY_TRIVIAL_AUGMENT, RT_POLICY_RAND_AUGMENT,
                         RT_POLICY_TIMM_RAND_AUGMENT, RT_POLICY_AUTO_AUGMENT };
/* AutoAugment's policy sets (torchvision's AutoAugmentPolicy). */
enum rt_auto_policy { RT_AUTO_IMAGENET = 0, RT_AUTO_CIFAR10, RT_AUTO_SVHN };

/* With mixup or cutmix on, a batch's labels are 3 x batch_per_rank int32s: the labels, then
 * each sample's partner label (the sample before it in the global batch), then the weight w
 * of the own label as float bits: the target is w * onehot(a) + (1 - w) * onehot(b). */
#define RT_TARGET_WORDS(aug) ((aug).mixup_alpha > 0 || (aug).cutmix_alpha > 0 ? 3 : 1)

typedef struct {
    int global_batch;   /* B: samples per step over all ranks */
    int rank, world;    /* this rank gets B/world samples per step; B % world must be 0 */
    int train;          /* 1: shuffle + augment + drop the last partial batch;
                           0 (eval): dataset order, no augmentation, keep the partial batch */
    uint64_t seed;
    int crop_pad;       /* random crop: zero-pad by this much, crop back to h x w (0 = off) */
    int flip;           /* random horizontal flip, p = 0.5 */
    /* Caffe's crop_size on a database of larger images (augment_window.c): each sample is the
     * window_h x window_w window of the stored ds->h x ds->w image at a random offset (train:
     * from (seed, epoch, position)) or at the center (eval); 0 = the whole image. */
    int window_h, window_w;
    /* Caffe's mean_file: NULL, or ds->c x ds->h x ds->w floats in normalized units (the mean
     * image divided by 255 * std), subtracted at each pixel's place in the stored image, before
     * the window is cut, as Caffe's DataTransformer does. Float batches of raw images, or of an
     * image list (Caffe's ImageData: mean_h x mean_w, the resized image's size, image_fill.c). */
    const float *mean_image;
    int mean_h, mean_w;   /* the mean image's size (a database's: ds->h x ds->w) */
    float mean[RT_MAX_CHANNELS], std[RT_MAX_CHANNELS];   /* out = (x/255 - mean) / std */
    int prefetch;       /* 1: prepare the next batch on a background thread */
    int raw_u8;         /* 1: batches are the cropped and flipped bytes (uint8), not normalized
                           floats; the consumer normalizes them with rt_normalize_lut. A GPU
                           trainer does that on the device: a quarter of the bytes to copy. */
    int nhwc;           /* 1: each sample channels-last, [h][w][c] (a channels-last device plan,
                           which then normalizes without a transpose); 0: [c][h][w] */
    /* Encoded (image) datasets only: */
    rt_image_transform image;   /* crop/resize/flip; out_h/out_w are the dataset's h and w */
    int decode_threads;         /* JPEG decode threads (0: half the cores, up to 8) */
    int slots;                  /* batch buffers in the ring (0: RT_LOADER_DEFAULT_SLOTS) */
    rt_augment_config augment;  /* training only: mixup/cutmix, erasing, repeats (float batches) */
} rt_loader_config;

/* Batch buffers the loader owns, a ring of cfg.slots (3 by default, at most
 * RT_LOADER_MAX_SLOTS): the consumer may hold two (the batch in flight and the next one, which
 * a GPU trainer copies to the device meanwhile) while the prefetch thread fills the others. */
#define RT_LOADER_DEFAULT_SLOTS 3
#define RT_LOADER_MAX_SLOTS 8
#define RT_LOADER_HELD 2

/* The prefetch thread keeps a pointer to the rt_loader: do not copy or move it between
 * rt_loader_init and rt_loader_free. The dataset must outlive the loader. */
struct rt_prefetch;
typedef struct {
    const rt_dataset *ds;
    rt_loader_config cfg;
    int batch_per_rank;
    long steps_per_epoch;
    int64_t epoch, step;          /* position of the batch the next rt_loader_next returns */
    float lut[RT_MAX_CHANNELS][256];   /* normalized value of each byte, per channel */
    size_t sample_bytes;          /* one sample in a batch: c*h*w floats, or bytes (raw_u8) */
    /* Allocated once and kept until rt_loader_free, so a consumer may page-lock them. */
    int slots;                    /* in use of the arrays below */
    void *slot_x[RT_LOADER_MAX_SLOTS];
    int32_t *slot_y[RT_LOADER_MAX_SLOTS];
    int sync_slot;                /* the slot the sync path (no prefetch) filled last */
    uint32_t *perm;               /* permutation cache for perm_epoch (sync path) */
    int64_t perm_epoch;
    struct rt_prefetch *bg;       /* NULL when prefetch is off */
    int slot_failures[RT_LOADER_MAX_SLOTS];   /* samples of the slot's batch that failed to decode */
    int last_failures;            /* ... of the batch the last rt_loader_next_view returned */
    struct image_pool *pool;      /* decode threads (encoded datasets) */
} rt_loader;

void rt_loader_config_default(rt_loader_config *cfg);
rt_status rt_loader_init(rt_loader *l, const rt_dataset *ds, const rt_loader_config *cfg,
                         rt_err *err);
void rt_loader_free(rt_loader *l);
/* This rank's part of the next batch, without a copy: *x and *y point into one of the
 * loader's slots and stay valid through the next call as well: until the second
 * rt_loader_next_view or rt_loader_next after it, or rt_loader_seek or rt_loader_free. So a
 * consumer can hold the batch it computes on and the next one. Returns the sample count
 * (batch_per_rank, or fewer for eval's last partial batch; the rows past the count are zeros,
 * labels 0). After the last batch of an epoch the loader moves on to step 0 of the next epoch. */
int rt_loader_next_view(rt_loader *l, const void **x, const int32_t **y);
/* The same, copied into x (batch_per_rank samples of rt_loader_sample_bytes) and y. */
int rt_loader_next(rt_loader *l, void *x, int32_t *y);
/* Makes the next rt_loader_next return batch (epoch, step_in_epoch): for resume. Every view
 * ends here: a consumer still reading one (a device copy) must finish first. */
void rt_loader_seek(rt_loader *l, int64_t epoch, int64_t step_in_epoch);
/* Random access, no prefetch, loader position unchanged (tests, benchmarks). */
int rt_loader_batch_at(rt_loader *l, int64_t epoch, int64_t step, void *x, int32_t *y);
long rt_loader_steps_per_epoch(const rt_loader *l);
/* How many samples of the batch the last rt_loader_next_view returned could not be decoded
 * (each named on stderr, and replaced by the next sample in dataset order that decodes, with
 * the same augmentation): the trainer sums this over ranks and applies its failure cap. */
int rt_loader_last_failures(const rt_loader *l);
int rt_loader_batch_per_rank(const rt_loader *l);   /* capacity x and y need */
size_t rt_loader_sample_bytes(const rt_loader *l);

/* lut[c][v] = (v/255 - mean[c]) / std[c] (std 0 counts as 1): what a byte becomes. The loader
 * and the CUDA trainer's on-device normalization share it, so both see the same floats. */
void rt_normalize_lut(const float *mean, const float *std, int channels, float lut[][256]);

/* The epoch's sample order (identity in eval mode); perm has ds->n entries. Depends only
 * on (seed, epoch). */
void rt_shuffle_permutation(uint32_t *perm, long n, uint64_t seed, int64_t epoch);

#endif
