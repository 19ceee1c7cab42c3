/* The training driver every compiled trainer runs: command line, data, the epoch/step loop,
 * evaluation, metrics, checkpoints and resume. The compiler emits an rt_model (straight-line
 * forward/backward functions with constant shapes and offsets) and an rt_run_config (the
 * spec's data/solver settings), and its main() is one call to rt_trainer_main.
 * Under mpirun/srun every rank runs the same loop on its slice of each global batch and the
 * gradients are averaged over ranks (rt_comm.h); only rank 0 writes logs and checkpoints.
 *
 *   int main(int argc, char **argv) { return rt_trainer_main(&model, &run, argc, argv); }
 */
#ifndef RT_TRAINER_H
#define RT_TRAINER_H

#include <stdint.h>
#include "rt_comm.h"
#include "rt_gemm.h"
#include "rt_init.h"
#include "rt_data.h"
#include "rt_ema.h"
#include "rt_optim.h"
#include "rt_schedule.h"

/* Working memory of one model instance; every pointer is one planned allocation. */
typedef struct {
    float *params;          /* [n_params] trainable, contiguous (see rt_param_tensor) */
    float *grads;           /* [n_params] same layout */
    float *buffers;         /* [n_buffers] non-trainable state: BN running mean/var */
    unsigned char *arena;   /* [arena_bytes] activations, their gradients, saved state, workspace */
    uint64_t step_seed;     /* per-step seed for dropout / drop-path masks, the same on every rank */
    long first_sample;      /* index of this rank's sample 0 in the global batch: masks are keyed
                             * by it, so a sample's mask does not depend on the world size */
    int training;           /* 1: batch statistics and masks; 0: eval */
    rt_comm *comm;          /* the other ranks; NULL in a world of 1 (no MPI calls at all) */
    int no_graph;           /* device models: launch the step op by op (--no-graph) */
    /* The next step's batch (x, as train_step's), already taken from the loader, or NULL: a
     * device model copies it to the device while this step computes. The next train_step is
     * then called with exactly this pointer. CPU models ignore it. */
    const void *next_x;
} rt_model_ctx;

/* rt_param_tensor.no_decay: 0 a weight that always decays; RT_PARAM_BIAS a bias or a
 * layer-scale gamma (exempt under exempt_bn_bias); RT_PARAM_NORM a BN/LN weight or bias
 * (exempt under exempt_bn_bias and exempt_norm). */
enum { RT_PARAM_BIAS = 1, RT_PARAM_NORM = 2 };

/* One trainable tensor inside params/grads. */
typedef struct {
    const char *name;       /* "layer1.0.conv1.weight" */
    long offset, count;     /* in floats */
    int no_decay;           /* RT_PARAM_*: which exemption of the optimizer's applies */
    /* Caffe's lr_mult / decay_mult of this blob, read only when has_mult (0: both are 1, so
     * tables without multipliers need not list them); rt_param_lr_mult() and
     * rt_param_decay_mult() read them. */
    int has_mult;
    float lr_mult, decay_mult;
} rt_param_tensor;

static inline float rt_param_lr_mult(const rt_param_tensor *p) { return p->has_mult ? p->lr_mult : 1.0f; }
static inline float rt_param_decay_mult(const rt_param_tensor *p) { return p->has_mult ? p->decay_mult : 1.0f; }
/* Zeroes the gradients of the tensors with lr_mult 0 (param_mult.c): Caffe computes none for
 * them, so clipping's global norm leaves them out. */
void rt_param_zero_frozen_grads(const rt_param_tensor *tensors, int n_tensors, float *grads);

typedef struct {
    const char *name, *spec_path, *spec_hash, *spec_text, *compiler_version;
    int in_c, in_h, in_w, classes;
    int batch;              /* per-rank batch the code was specialized for */
    long n_params, n_buffers;
    long param_count;       /* trainable values: n_params less the CUDA plan's alignment gaps */
    long arena_bytes, arena_naive_bytes;
    int n_tensors;
    const rt_param_tensor *tensors;
    /* Gradient buckets in the order backward completes them; train_step calls
     * rt_grad_bucket_ready(ctx->comm, k) right after the last gradient of bucket k. */
    int n_buckets;
    const rt_grad_bucket *buckets;
    void (*init)(float *params, float *buffers, uint64_t seed);
    /* 0: x is normalized floats; 1: x is the batch's bytes, cropped and flipped but not
     * normalized, and the model normalizes them itself (rt_normalize_lut with the run's
     * mean and std): the CUDA backend, which then copies a quarter of the bytes, unless the
     * spec mixes or erases (rt_cuda_model.input_u8, chosen per build). */
    int input_u8;
    /* 1: x's samples are channels-last [in_h][in_w][in_c] (a CUDA plan built with --layout
     * nhwc); 0: [in_c][in_h][in_w]. */
    int input_nhwc;
    /* Forward, loss and backward over one batch (x: batch × in_c × in_h × in_w). Gradients
     * are overwritten in ctx->grads; returns the mean loss; logits stay readable through
     * `logits` (batch × classes) for accuracy. */
    double (*train_step)(rt_model_ctx *ctx, const void *x, const int32_t *y);
    /* Forward only, running statistics, no masks; logits out: batch × classes. */
    void (*eval_forward)(rt_model_ctx *ctx, const void *x, float *logits);
    const float *(*logits)(const rt_model_ctx *ctx);
    const struct rt_device_hooks *device;   /* NULL: params live in host memory (CPU) */
} rt_model;

/* RT_DATA_IMAGES: JPEG folders (train/<class>/ of .JPEG files) or `trainc pack` shards. */
/* RT_DATA_LMDB: Caffe's LMDB of Datum records (runtime/data/lmdb_datum.c), train at data_path and val at val_path. */
/* RT_DATA_HDF5: Caffe's HDF5Data (runtime/data/hdf5_data.c), lists of .h5 files at data_path and val_path. */
typedef enum { RT_DATA_FASHION_MNIST = 0, RT_DATA_IDX, RT_DATA_SYNTHETIC, RT_DATA_IMAGES, RT_DATA_LMDB,
               RT_DATA_HDF5 } rt_data_source;

typedef struct {
    int epochs;             /* with lr.iterations, the epochs the run touches */
    uint64_t seed;
    int ranks;              /* spec's world size; 0 = any */
    int overlap;            /* all-reduce buckets during backward (0: after it, blocking) */
    int global_batch;
    rt_lr_config lr;        /* steps_per_epoch is recomputed from the real dataset size */
    rt_optim_config optim;
    float weight_decay;
    int exempt_bn_bias;
    int exempt_norm;        /* no decay (nor LARS/LAMB trust) on RT_PARAM_NORM tensors only */
    rt_ema_config ema;      /* solver.ema; decay 0 = none */
    /* Evaluation at data.val's crop when it differs from the input (train 176 / eval 224):
     * the val set is read at eval_h x eval_w and the model's eval_forward runs a forward
     * lowered at that shape, in an arena of eval_arena_bytes. 0: at the input shape. */
    int eval_h, eval_w;
    long eval_arena_bytes;
    double clip_grad_norm;  /* 0 = off */
    int log_every, eval_every, ckpt_every, ckpt_keep;
    double hang_timeout_s;  /* parallel.hang_timeout: seconds a stopped peer may hold a wait; 0 = derived */
    int eval_every_steps, ckpt_every_steps;   /* > 0: by optimizer steps instead of epochs */
    rt_data_source source;
    const char *data_path;
    long train_samples, val_samples;   /* synthetic sizes */
    /* Real datasets: data.train_samples / val_samples as the spec wrote them (0: unset). More
     * samples in the data: an evenly spaced subset is used; fewer: refused at start-up. */
    long spec_train_samples, spec_val_samples;
    int crop_pad, flip;
    /* Caffe's Data layer transform (RT_DATA_LMDB): db_crop, its crop_size (a random window in
     * training, the center in evaluation, of the stored images; 0 = none), and mean_file, the
     * path of its mean image (a BlobProto of the stored size; NULL = none), subtracted before
     * the crop and the scale (std) */
    int db_crop;
    const char *mean_file;
    /* rt_caffe_mean_image, set by the generated code of specs with a mean_file (so that only
     * their trainers link protobuf-c's reader) */
    rt_status (*load_mean)(const char *path, int *c, int *h, int *w, float **image, rt_err *err);
    float mean[4], std[4];
    /* precision.compute for the CPU ops (rt_gemm_set_compute, set at start-up): FP32, or BF16
     * products with FP32 accumulation; 0 (FP32) unless the spec says BF16. Device models
     * ignore it (they have their own precision). */
    rt_compute cpu_compute;
    const struct rt_init_config *init;   /* the spec's init block (rt_init.h); NULL: none */
    /* Image sources (rt_data_open_run): the spec's val path, each split's crop/resize/flip
     * (out_h/out_w: the net's input), decode threads (0: default) and the failure cap. */
    const char *val_path;
    /* Caffe's ImageData lists (source "image-list"): each split's root_folder, the prefix of
     * its listed paths; NULL: that split is a folder or a pack */
    const char *train_root, *val_root;
    rt_image_transform train_image, val_image;
    int decode_threads;
    long max_decode_failures;
    int loader_slots;       /* the loader's ring of batch buffers (0: its default) */
    rt_augment_config augment;   /* mixup/cutmix, random erasing, repeated augmentation */
    /* RT_DATA_LMDB: rt_dataset_load_lmdb, set by the generated code of specs that read an
     * LMDB, so that only their trainers link liblmdb and libprotobuf-c */
    /* (or rt_dataset_load_leveldb for a LevelDB: the same records, read the same way) */
    rt_status (*load_lmdb)(rt_dataset *ds, const char *path, int classes, rt_err *err);
    /* RT_DATA_HDF5: rt_dataset_load_hdf5, set only for specs that read HDF5 (libhdf5 likewise) */
    rt_status (*load_hdf5)(rt_dataset *ds, const char *list, int classes, rt_err *err);
} rt_run_config;

/* A model whose tensors live on a device (the CUDA backend). The trainer's host arrays
 * (params, buffers, optimizer state) are mirrors: init and resume fill them, upload copies
 * them to the device once, the device runs every step and the optimizer, and download
 * refreshes the mirrors before the trainer reads them (checkpoint, params hash). With
 * several ranks the device model all-reduces its own gradients (NCCL) inside train_step, so
 * the trainer attaches no host gradient buffer to rt_comm. */
typedef struct rt_device_hooks {
    void (*upload)(rt_model_ctx *ctx, const rt_run_config *run, const float *opt_state, long n_state);
    void (*download)(rt_model_ctx *ctx, float *opt_state, long n_state);
    void (*optimizer_step)(rt_model_ctx *ctx, double lr, double momentum_scale, long step);
    /* Rank 0's batch-norm running statistics to every rank, on the device. */
    void (*broadcast_buffers)(rt_model_ctx *ctx);
    /* Loss scaling (FP16), or NULL: reads (set = 0) or restores (set = 1) the scaler's state
     * { scale, clean steps in a row, skipped steps so far }, kept in checkpoints. */
    void (*loss_scaler)(rt_model_ctx *ctx, double state[3], int set);
    /* Forgets a batch staged from rt_model_ctx.next_x, waiting for its copy: before the
     * training loader is repositioned, which hands its slots out anew. */
    void (*drop_staged)(rt_model_ctx *ctx);
    /* Puts these host weights and BN statistics on the device in place of the model's (the
     * EMA's for its evaluation, then the model's back); the optimizer state stays. */
    void (*load_weights)(rt_model_ctx *ctx, const float *params, const float *buffers);
} rt_device_hooks;

/* Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set: OpenMP workers spin briefly at barriers
 * (GOMP_SPINCOUNT=10000), or sleep at once (passive) where this node's ranks x threads exceed
 * its cores; unless set, OPENBLAS_NUM_THREADS=1. Set by re-executing the binary once (the libraries read them
 * before main), with the process's CPUs even where OMP_PROC_BIND bound this thread to one. */
void rt_trainer_choose_omp_policy(char **argv);

/* Image sources (runtime/data/run_data.c). The train and val sets: DIR/train and DIR/val
 * with --data DIR, else the spec's paths; dies with one message on bad data. */
void rt_data_open_images(const rt_run_config *run, const char *data_dir, int in_c, int in_h, int in_w,
                         int classes, rt_dataset *train, rt_dataset *val);
/* A split's loader settings from the run: the ring's slots, and for image sources the
 * crop/resize/flip and decode threads (decode_threads > 0: the command line's). */
void rt_data_image_loader_config(const rt_run_config *run, int train, int decode_threads, int in_h, int in_w,
                                 rt_loader_config *cfg);
/* Honours run->spec_train_samples / spec_val_samples (runtime/data/dataset_subset.c): dies
 * with one message when a split has fewer samples, keeps an evenly spaced subset when it has
 * more (saying so on stdout when speak). where: the IDX directory (image sets name their own). */
void rt_data_honour_sample_counts(const rt_run_config *run, const char *where, rt_dataset *train, rt_dataset *val,
                                  int speak);
/* OUT/classes.txt: "index name" per line (image sources; nothing otherwise). */
void rt_data_write_classes(const rt_dataset *train, const char *out_dir);
/* Adds a step's decode failures (summed over ranks) to *total: 1 when past the spec's cap. */
int rt_data_failures_over_cap(const rt_run_config *run, long *total, long new_failures);

/* Whether the run's optimizer exempts tensor p from weight decay (and trust ratios). */
int rt_param_exempt(const rt_run_config *run, const rt_param_tensor *p);

int rt_trainer_main(const rt_model *model, const rt_run_config *run, int argc, char **argv);

#endif
