/* AdaGrad and AdaDelta in the form Caffe's solvers and torch share (rt_optim.h), each in one
 * fused pass over a tensor (Caffe's RMSProp is optim_rmsprop.c's torch form). */
#include <math.h>
#include "rt_optim.h"

#define ADAPTIVE_PAR_MIN 32768

void rt_adaptive_step(rt_optim_kind kind, float *param, float *v, float *acc, const float *grad, long n,
                      const rt_adaptive_config *cfg, const rt_optim_args *a) {
    float lr = a->lr, wd = a->weight_decay, s = a->grad_scale, eps = (float)cfg->eps;
    float rho = (float)cfg->decay, one_rho = (float)(1.0 - cfg->decay);
    if (kind == RT_OPTIM_ADAGRAD) {
        #pragma omp parallel for simd schedule(static) if (n >= ADAPTIVE_PAR_MIN)
        for (long i = 0; i < n; i++) {
            float d = grad[i] * s + wd * param[i];
            float vi = v[i] + d * d;
            v[i] = vi;
            param[i] -= lr * d / (sqrtf(vi) + eps);
        }
    } else {   /* AdaDelta */
        #pragma omp parallel for simd schedule(static) if (n >= ADAPTIVE_PAR_MIN)
        for (long i = 0; i < n; i++) {
            float d = grad[i] * s + wd * param[i];
            float vi = rho * v[i] + one_rho * d * d;
            float u = d * sqrtf((acc[i] + eps) / (vi + eps));
            v[i] = vi;
            acc[i] = rho * acc[i] + one_rho * u * u;
            param[i] -= lr * u;
        }
    }
}
