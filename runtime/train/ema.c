/* The EMA of the weights and BN statistics (rt_ema.h): torchvision's recipe, step by step. */
#include "rt_ema.h"

#include <string.h>
#include "rt_core.h"

void rt_ema_init(rt_ema *e, const rt_ema_config *cfg, long n_params, long n_buffers, long global_batch,
                 long epochs) {
    memset(e, 0, sizeof *e);
    if (!(cfg->decay > 0)) return;
    double alpha = 1.0 - cfg->decay;
    if (cfg->batch_adjust) alpha *= (double)global_batch * cfg->every_iterations / (double)epochs;
    e->alpha = alpha < 1.0 ? alpha : 1.0;
    e->every = cfg->every_iterations > 0 ? cfg->every_iterations : 1;
    e->warmup_epochs = cfg->warmup_epochs;
    e->n_params = n_params, e->n_buffers = n_buffers;
    e->params = rt_alloc_aligned((size_t)(n_params ? n_params : 1) * sizeof(float));
    e->buffers = rt_alloc_aligned((size_t)(n_buffers ? n_buffers : 1) * sizeof(float));
}

int rt_ema_on(const rt_ema *e) { return e->params != NULL; }

void rt_ema_reset(rt_ema *e, const float *params, const float *buffers) {
    if (!rt_ema_on(e)) return;
    memcpy(e->params, params, (size_t)e->n_params * sizeof(float));
    if (e->n_buffers) memcpy(e->buffers, buffers, (size_t)e->n_buffers * sizeof(float));
    e->count = 0;
}

/* torchvision's ema_avg: decay·avg + (1 − decay)·param, in float. */
static void average(float *avg, const float *x, long n, float keep, float take) {
    #pragma omp parallel for simd schedule(static) if (n >= 65536)
    for (long i = 0; i < n; i++) avg[i] = keep * avg[i] + take * x[i];
}

int rt_ema_due(const rt_ema *e, long step, long steps_per_epoch) {
    return rt_ema_on(e) && (step % steps_per_epoch) % e->every == 0;
}

void rt_ema_after_step(rt_ema *e, const float *params, const float *buffers, long step, long steps_per_epoch) {
    if (!rt_ema_due(e, step, steps_per_epoch)) return;
    long epoch = step / steps_per_epoch;
    if (e->count == 0) {
        memcpy(e->params, params, (size_t)e->n_params * sizeof(float));
        if (e->n_buffers) memcpy(e->buffers, buffers, (size_t)e->n_buffers * sizeof(float));
    } else {
        float keep = (float)(1.0 - e->alpha), take = (float)e->alpha;
        average(e->params, params, e->n_params, keep, take);
        average(e->buffers, buffers, e->n_buffers, keep, take);
    }
    e->count++;
    if (epoch < e->warmup_epochs) e->count = 0;   /* keep copying during the LR warmup */
}

void rt_ema_free(rt_ema *e) {
    rt_free_aligned(e->params);
    rt_free_aligned(e->buffers);
    memset(e, 0, sizeof *e);
}
