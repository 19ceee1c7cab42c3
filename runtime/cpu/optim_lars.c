/* LARS (You et al. 2017): a per-tensor trust ratio eta·‖p‖/(‖g‖ + wd·‖p‖) scales the LR of
 * a momentum update; one reduction pass for both norms, then one fused update pass. */
#include <math.h>
#include "rt_optim.h"

#define LARS_PAR_MIN 32768

float rt_lars_trust_ratio(const float *param, const float *grad, long n, bool exempt,
                          const rt_lars_config *cfg, const rt_optim_args *a) {
    if (exempt) return 1.0f;
    double pp, gg;
    rt_sum_squares_pair(&pp, &gg, param, grad, n);
    double pn = sqrt(pp), gn = sqrt(gg) * fabs((double)a->grad_scale);
    /* A zero tensor (fresh zero-init) or a zero gradient has no meaningful ratio; the
     * MLPerf reference falls back to the plain LR there. */
    if (!(pn > 0) || !(gn > 0)) return 1.0f;
    return (float)(cfg->eta * pn / (gn + a->weight_decay * pn + cfg->eps));
}

void rt_lars_step(float *param, float *momentum_buf, const float *grad, long n, bool exempt,
                  const rt_lars_config *cfg, const rt_optim_args *a) {
    float local_lr = a->lr * rt_lars_trust_ratio(param, grad, n, exempt, cfg, a);
    float wd = exempt ? 0.0f : a->weight_decay, s = a->grad_scale, mom = cfg->momentum;
    /* p −= b (plain) or momentum·b + u (Nesterov), as one expression without a branch. */
    float kb = cfg->nesterov ? mom : 1.0f, ku = cfg->nesterov ? 1.0f : 0.0f;
    float *p = param, *v = momentum_buf;
    const float *g = grad;
    if (mom == 0.0f) {
        #pragma omp parallel for simd schedule(static) if (n >= LARS_PAR_MIN)
        for (long i = 0; i < n; i++) p[i] -= local_lr * (g[i] * s + wd * p[i]);
        return;
    }
    #pragma omp parallel for simd schedule(static) if (n >= LARS_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float u = local_lr * (g[i] * s + wd * p[i]);
        float b = mom * v[i] + u;
        v[i] = b;
        p[i] -= kb * b + ku * u;
    }
}
