/* Synchronized batch norm (parallel.sync_bn): batchnorm.c's passes with the per-channel sums
 * all-reduced over the ranks in between, so every rank normalizes with the mean and variance
 * of the global batch, as one process holding the whole batch would. With comm == NULL (a
 * world of one) these are the per-rank ops. */
#include <stddef.h>

#include "rt_comm.h"
#include "rt_ops.h"

static void comm_sum(void *ctx, double *v, int n, const char *what) {
    rt_comm_sum(ctx, v, n, what);
}

/* NULL (per-process statistics) for a world of one: no all-reduce to wait for. */
static const rt_bn_sync *sync_of(rt_comm *c, rt_bn_sync *buf) {
    if (!c || rt_comm_size(c) == 1) return NULL;
    *buf = (rt_bn_sync){ comm_sum, c, rt_comm_size(c) };
    return buf;
}

void sync_batchnorm_forward_train(rt_comm *c, float *out, float *save_mean, float *save_inv_std,
                                  float *running_mean, float *running_var, const float *in,
                                  const float *gamma, const float *beta, int n, int ch, int hw,
                                  float momentum, float eps, rt_act act) {
    rt_bn_sync s;
    batchnorm_forward_train_sync(out, save_mean, save_inv_std, running_mean, running_var, in,
                                 gamma, beta, n, ch, hw, momentum, eps, act, sync_of(c, &s));
}

void sync_batchnorm_backward(rt_comm *c, float *din, float *dgamma, float *dbeta, const float *dout,
                             const float *in, const float *gamma, const float *beta,
                             const float *save_mean, const float *save_inv_std, int n, int ch,
                             int hw, rt_act act) {
    rt_bn_sync s;
    batchnorm_backward_sync(din, dgamma, dbeta, dout, in, gamma, beta, save_mean, save_inv_std,
                            n, ch, hw, act, sync_of(c, &s));
}
