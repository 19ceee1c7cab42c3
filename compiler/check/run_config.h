/* The resolved run: every data / solver / precision / parallel / seed / reference setting of
 * a spec with defaults applied, plus derived numbers (global batch, steps, LR curve).
 * Filled by sema (sema_run.c); read by `show`, `diff` and the code generator. */
#ifndef TRAINC_RUN_CONFIG_H
#define TRAINC_RUN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include "rt_optim.h"      /* rt_larc_policy */
#include "rt_schedule.h"

typedef enum { RUN_OPT_SGD = 0, RUN_OPT_LARS, RUN_OPT_ADAMW, RUN_OPT_LAMB, RUN_OPT_RMSPROP, RUN_OPT_ADAGRAD,
               RUN_OPT_ADADELTA } run_optimizer;
typedef enum { RUN_FP32 = 0, RUN_TF32, RUN_FP16, RUN_BF16 } run_compute;
typedef enum { RUN_LOSS_SOFTMAX_CE = 0, RUN_LOSS_BCE } run_loss_kind;
typedef enum { RUN_LOSS_SCALE_NONE = 0, RUN_LOSS_SCALE_STATIC, RUN_LOSS_SCALE_DYNAMIC } run_loss_scale;

/* The spec's spellings of these enums and of the runtime's LR enums (the values schema.def
 * allows), indexed by the enum: sema reads enum fields through them (sv_enum), show prints
 * with them. */
extern const char *const run_compute_names[RUN_BF16 + 1];
extern const char *const run_loss_scale_names[RUN_LOSS_SCALE_DYNAMIC + 1];
extern const char *const run_loss_kind_names[RUN_LOSS_BCE + 1];
extern const char *const run_lr_scaling_names[RT_LR_SCALE_SQRT + 1];
extern const char *const run_warmup_kind_names[RT_WARMUP_QUADRATIC + 1];
/* Where samples come from; RUN_DATA_IMAGE_FOLDER is JPEG folders or packed shards. */
/* RUN_DATA_HDF5: Caffe's HDF5Data, a list of .h5 files of float samples. RUN_DATA_LEVELDB:
 * Caffe's LevelDB of Datum records, read as an LMDB is (the runtime's RT_DATA_LMDB). */
typedef enum { RUN_DATA_FASHION_MNIST = 0, RUN_DATA_SYNTHETIC, RUN_DATA_IDX, RUN_DATA_IMAGE_FOLDER, RUN_DATA_LMDB,
               RUN_DATA_HDF5, RUN_DATA_LEVELDB } run_data_source;

typedef struct {
    run_data_source source;
    const char *source_name;  /* as written: "fashion-mnist" | "synthetic" | "idx" | "imagenet-folder" */
    const char *path;
    int64_t batch_per_rank;
    int64_t samples;          /* synthetic; 0 otherwise */
    bool flip;
    int64_t crop_size, crop_padding;           /* random_crop; size 0 = off */
    int64_t rrc_size;                          /* random_resized_crop; 0 = off */
    double rrc_scale[2], rrc_ratio[2];
    int n_mean, n_std;        /* normalize; 0 = off */
    const char *mean_file;    /* normalize.mean_file (Caffe's mean image; lmdb and leveldb); NULL = none */
    double mean[16], std[16];
    int64_t resize;           /* val: before center_crop; train (image sources): before random_crop; 0 = off */
    int64_t center_crop;      /* val only; 0 = off */
    bool bicubic;             /* interpolation: BICUBIC (image sources); false = bilinear */
    bool cv_linear;           /* interpolation: OPENCV_LINEAR (image sources: cv::resize, Caffe's) */
    bool list;                /* source "image-list": Caffe's ImageData list (source is RUN_DATA_IMAGE_FOLDER) */
    const char *root_folder;  /* image-list: the prefix of every listed path ("" = none) */
    int64_t resize_to[2];     /* image sources: resize to exactly [H, W] first; 0 = off */
    bool bgr;                 /* image sources: planes B, G, R (Caffe's order) */
    bool gray;                /* image sources: one gray plane, decoded as cv::imread(IMREAD_GRAYSCALE) */
} run_data_split;

/* data.train.augment's modern-recipe part and data.train.repeated_augment (train only). */
typedef struct {
    double mixup_alpha, cutmix_alpha, mix_prob, mix_switch_prob;   /* alphas 0 = off */
    double erase_p, erase_scale[2], erase_ratio[2], erase_value;  /* erase_p 0 = off */
    bool erase_random;
    bool trivial_augment, rand_augment;
    int64_t ra_num_ops, ra_magnitude, ra_num_bins;
    double ra_magnitude_std;
    bool ra_increasing;
    bool policy_bilinear;     /* policy_interpolation: BILINEAR */
    int auto_augment;         /* 0 off, else 1 + rt_auto_policy (IMAGENET, CIFAR10, SVHN) */
    int64_t repeats;          /* 1 = off */
} run_augment;

typedef struct run_config {
    bool has_run;             /* false when the spec has no solver or no data.train */
    const char *name;         /* spec name, "" if none */
    int64_t seed;

    run_data_split train, val;
    bool has_val;
    int64_t eval_h, eval_w;   /* evaluation resolution when data.val's crop differs from the input; 0 = the input's */
    int64_t train_samples, val_samples;        /* val_samples 0 = whole set */
    bool train_samples_given;                  /* data.train_samples written (not its default) */
    int64_t decode_threads;   /* image sources; 0 = the runtime's default */
    int64_t max_decode_failures;
    int64_t loader_slots;

    int64_t epochs;
    run_optimizer optimizer;
    double momentum, dampening, weight_decay, eta, beta1, beta2, adam_eps;
    bool nesterov, exempt_bn_bias;
    bool lr_in_velocity;          /* sgd: Caffe's form, the LR inside the velocity */
    rt_larc_policy larc;          /* sgd.larc: NVCaffe's LARC (RT_LARC_NONE without) */
    double larc_eta;
    bool larc_intel;              /* sgd.larc.form INTEL: Intel Caffe's local_lr_auto */
    bool warmup_momentum_correction;   /* sgd: Intel Caffe's momentum correction in warmup */
    bool adam_caffe_form;         /* adamw: Caffe's Adam (L2 decay, eps on the uncorrected sqrt(v)) */
    double adaptive_decay, adaptive_eps;   /* adadelta rho (adagrad: 0); their eps */
    bool exempt_norm;         /* no decay on norm weights and biases only */
    double lamb_max_grad_norm;
    bool lamb_trust_clip;
    double rms_alpha, rms_eps;    /* rmsprop (its momentum is `momentum`) */
    bool rms_tf;                  /* rmsprop form: TF */
    struct {                  /* solver.ema; decay 0 = off */
        double decay;
        int64_t every_iterations, warmup_epochs;
        bool batch_adjust;
        double alpha;         /* derived: the weight of the model in each update */
    } ema;
    double label_smoothing, clip_grad_norm;
    run_loss_kind loss_kind;
    double bce_target_threshold;   /* 0 = off */
    run_augment augment;
    int64_t log_every, eval_every, ckpt_every_epochs, ckpt_keep;
    int64_t iterations;       /* solver.iterations; 0 = the run is `epochs` long */
    int64_t eval_every_iterations, ckpt_every_iterations;   /* 0 = by epochs */

    run_compute compute;      /* master weights are always FP32 */
    run_loss_scale loss_scale;
    double init_scale;

    int64_t ranks;            /* as written; 0 = any */
    int64_t ranks_for_show;   /* ranks, or 1 when 0 */
    int64_t ranks_per_node;   /* 0 = unspecified */
    double bucket_mb;
    bool overlap, sync_bn;
    double hang_timeout_s;    /* 0 = derived from the measured step time */

    /* Derived. */
    int64_t global_batch;     /* batch_per_rank × ranks_for_show */
    int64_t steps_per_epoch;  /* floor(train_samples / global_batch) */
    int64_t total_steps;      /* iterations, or steps_per_epoch × epochs */
    int64_t warmup_steps;
    double peak_lr;           /* after batch scaling */
    rt_lr_config lr;          /* validated; feed to rt_lr_at */

    struct {                  /* reference { } */
        const char *source, *url, *time, *notes;   /* "" if absent */
        double top1, top5;    /* < 0 if absent */
        int64_t gpus;         /* 0 if absent */
    } reference;
} run_config;

#endif
