/* The trainer's state and the steps that --eval and --predict (eval_mode.c, predict.c)
 * share with training (trainer.c). Private to runtime/train/. */
#ifndef RT_TRAINER_INTERNAL_H
#define RT_TRAINER_INTERNAL_H
#include "rt_checkpoint.h"
#include "rt_metrics.h"
#include "rt_loss_guard.h"
#include "rt_tensorboard.h"
#include "rt_trainer.h"
#include "trainer_args.h"

/* Everything a checkpoint must restore besides the tensors. */
typedef struct {
    int64_t step;
    uint64_t seed;
    int64_t n_params, n_buffers, n_state;
    /* The open log interval, so a resumed run logs the same averages. */
    double interval_loss;
    int64_t interval_correct, interval_steps;
    int64_t world;            /* ranks of the run: the data order of a step depends on it */
} trainer_resume_state;

/* The data loader's state that a resume needs beyond the step (sample order and crops follow
 * from seed, epoch and position): the decode failures counted so far, so the resumed run
 * reaches the failure cap at the step the uninterrupted run does. Its own checkpoint section
 * ("data", image sources only), versioned; checkpoints written before it existed load with
 * a count of 0. */
#define TRAINER_DATA_STATE_VERSION 1
typedef struct {
    uint32_t version;
    uint32_t reserved;
    int64_t decode_failures;
} trainer_data_state;

/* The loss scaler of a device model (rt_device_hooks.loss_scaler): its own checkpoint
 * section, present only for models that scale, so other checkpoints keep their layout. */
typedef struct {
    double scale, clean, skipped;
} trainer_scaler_state;

typedef struct {
    const rt_model *m;
    rt_run_config run;
    rt_trainer_args args;
    rt_dataset train_set, val_set;
    float *mean_image;        /* run.mean_file in normalized units, for both loaders; NULL: none */
    int mean_c, mean_h, mean_w;   /* its size */
    rt_loader train, val;
    rt_model_ctx ctx;
    rt_comm *comm;            /* NULL: a world of 1 */
    int rank, world, global_batch;
    int stop_votes;           /* ranks that received a stop signal, summed every step */
    float *opt_state;
    long n_state;
    float *logits;
    const void *next_x;       /* the next training batch, taken during this step (have_next) */
    const int32_t *next_y;
    int have_next;
    int next_failures;        /* undecodable samples in the next batch (image sources) */
    long steps_per_epoch, total_steps, step;
    double interval_loss, interval_comm_s;
    long interval_correct, interval_steps;
    rt_metrics metrics;       /* OUT/metrics.jsonl (benchmark.jsonl); off on ranks other than 0 */
    rt_progress progress;     /* stdout; off on ranks other than 0 */
    trainer_scaler_state scaler;   /* host mirror: filled before a checkpoint, after a resume */
    rt_loss_guard loss_guard;
    long decode_failures;     /* image sources: undecodable samples so far, over all ranks */
    rt_ema ema;               /* solver.ema: averaged weights, evaluated beside the model */
    rt_tensorboard tb;        /* --tensorboard DIR: the same scalars as event files; off otherwise */
} trainer;

/* The spec's datasets (train and val; --data DIR overrides the spec's path). */
void trainer_load_data(trainer *t);
void trainer_make_loader(trainer *t, rt_loader *l, const rt_dataset *ds, int train);
/* Parameters, gradients, buffers, arena, optimizer state and logits of the model. */
void trainer_allocate(trainer *t);
/* Loss and top-1/top-5 over the validation split, split over the ranks (the model's
 * weights; _ema: the EMA's in their place). */
void trainer_evaluate(trainer *t, double *loss, double *top1, double *top5);
void trainer_evaluate_ema(trainer *t, double *loss, double *top1, double *top5);

/* BIN --eval CKPT: the checkpoint's weights evaluated on the validation data (eval_mode.c). */
int trainer_run_eval(trainer *t);
/* BIN --predict CKPT IMAGES...: the top-k classes of each image (predict.c). */
int trainer_run_predict(trainer *t);
/* Rank 0 loads the checkpoint's weights and BN statistics (and the EMA's where it has
 * them: *has_ema) and hands them to every rank; returns the checkpoint's step. */
long trainer_load_weights(trainer *t, const char *path, int *has_ema, long *epoch);
/* The run folder of a checkpoint OUT/checkpoints/ckpt-N.bin (its own folder when it lies
 * elsewhere), or --out when given: where --eval's record goes and classes.txt is read. */
void trainer_run_dir(const trainer *t, const char *ckpt, char *out, size_t cap);
#endif
