/* RMSprop in torch's form and in TF's (rt_optim.h), in one fused pass per tensor. */
#include <math.h>
#include "rt_optim.h"

#define RMSPROP_PAR_MIN 32768

void rt_rmsprop_step(float *param, float *square_avg, float *momentum_buf, const float *grad, long n,
                     const rt_rmsprop_config *cfg, const rt_optim_args *a) {
    /* 1 − α rounded once from double, as AdamW's 1 − β */
    float alpha = (float)cfg->alpha, one_alpha = (float)(1.0 - cfg->alpha), eps = (float)cfg->eps;
    float lr = a->lr, wd = a->weight_decay, s = a->grad_scale, mom = cfg->momentum;
    bool tf = cfg->tf, first = a->step == 0;
    /* the TF form's mean square starts at 1, the state at 0: step 0 reads 1 in its place */
    float sq0 = tf && first ? 1.0f : -1.0f;
    #pragma omp parallel for simd schedule(static) if (n >= RMSPROP_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float d = grad[i] * s + wd * param[i];
        float prev = sq0 >= 0.0f ? sq0 : square_avg[i];
        float sq = alpha * prev + one_alpha * d * d;
        square_avg[i] = sq;
        float u = tf ? d / sqrtf(sq + eps) : d / (sqrtf(sq) + eps);
        if (mom == 0.0f) {
            param[i] -= lr * u;
        } else if (tf) {
            float b = mom * momentum_buf[i] + lr * u;
            momentum_buf[i] = b;
            param[i] -= b;
        } else {
            float b = mom * momentum_buf[i] + u;
            momentum_buf[i] = b;
            param[i] -= lr * b;
        }
    }
}
