/* An exponential moving average of the weights and BN statistics, as torchvision's
 * references/classification/train.py keeps it (--model-ema: utils.ExponentialMovingAverage,
 * an AveragedModel with use_buffers=True):
 *   alpha = 1 − decay, times global batch × every / epochs when batch_adjust, at most 1;
 *   after the optimizer step of batch i of epoch e (i counted from 0 in each epoch), when
 *   i % every == 0: the first update (count 0) copies the model, later ones do
 *   ema = (1 − alpha)·ema + alpha·model; then count = 0 again while e < warmup_epochs.
 * The trainer evaluates it beside the model and keeps it in checkpoints (sections
 * "ema_params", "ema_buffers", "ema_count"). Every rank updates its own copy from identical
 * parameters, so the averaged weights are identical on every rank.
 *
 *   rt_ema e;
 *   rt_ema_init(&e, &run->ema, n_params, n_buffers, global_batch, epochs);
 *   rt_ema_reset(&e, params, buffers);                    // a fresh run: the initial model
 *   ... optimizer step of global step s ...
 *   rt_ema_after_step(&e, params, buffers, s, steps_per_epoch);
 */
#ifndef RT_EMA_H
#define RT_EMA_H
#include <stdint.h>

/* The spec's solver.ema; decay 0 = no EMA. */
typedef struct {
    double decay;
    int every_iterations, warmup_epochs, batch_adjust;
} rt_ema_config;

typedef struct {
    float *params, *buffers;   /* NULL when off */
    long n_params, n_buffers;
    double alpha;              /* the model's weight in an update */
    int every, warmup_epochs;
    int64_t count;             /* AveragedModel.n_averaged */
} rt_ema;

/* alpha from the run's real global batch and epochs; allocates only when cfg->decay > 0. */
void rt_ema_init(rt_ema *e, const rt_ema_config *cfg, long n_params, long n_buffers, long global_batch,
                 long epochs);
int rt_ema_on(const rt_ema *e);
void rt_ema_reset(rt_ema *e, const float *params, const float *buffers);
/* Whether the update after global step `step` takes the weights (a device model downloads
 * them first). */
int rt_ema_due(const rt_ema *e, long step, long steps_per_epoch);
/* step: the 0-based global step whose optimizer update just finished. */
void rt_ema_after_step(rt_ema *e, const float *params, const float *buffers, long step, long steps_per_epoch);
void rt_ema_free(rt_ema *e);

#endif
