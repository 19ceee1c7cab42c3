/* AdamW (torch.optim.AdamW: decoupled weight decay, bias correction), or Caffe's Adam (L2
 * decay, eps on the uncorrected second moment), in one fused pass. */
#include <math.h>
#include "rt_optim.h"

#define ADAMW_PAR_MIN 32768

/* Note for speed: with the default -fmath-errno GCC will not vectorize sqrtf (it may set
 * errno), so this loop runs scalar; built with -fno-math-errno it vectorizes. */
/* Caffe's Adam: L2 decay into the gradient, eps on the uncorrected sqrt(v). */
static void adam_caffe(float *p, float *m, float *v, const float *g, long n, float step_size, float wd, float s,
                       float b1, float b2, float one_b1, float one_b2, float eps) {
    #pragma omp parallel for simd schedule(static) if (n >= ADAMW_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float gi = g[i] * s + wd * p[i];
        float mi = b1 * m[i] + one_b1 * gi;
        float vi = b2 * v[i] + one_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] -= step_size * mi / (sqrtf(vi) + eps);
    }
}

void rt_adamw_step(float *param, float *exp_avg, float *exp_avg_sq, const float *grad, long n,
                   const rt_adamw_config *cfg, const rt_optim_args *a) {
    /* Bias corrections in double: β2^t for t in the 100k range loses digits in float. */
    double t = (double)a->step + 1.0;
    double bc1 = 1.0 - pow(cfg->beta1, t), bc2 = 1.0 - pow(cfg->beta2, t);
    float step_size = (float)(a->lr / bc1);
    float inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2));
    float decay = 1.0f - a->lr * a->weight_decay;
    /* 1 − β rounded once from double: 1 − 0.999f would be off by 1.3e-5 relative. */
    float b1 = (float)cfg->beta1, b2 = (float)cfg->beta2, eps = (float)cfg->eps;
    float one_b1 = (float)(1.0 - cfg->beta1), one_b2 = (float)(1.0 - cfg->beta2);
    float s = a->grad_scale;
    if (cfg->caffe_form) {   /* Caffe: lr·sqrt(1 − β2^t)/(1 − β1^t), computed in double as above */
        adam_caffe(param, exp_avg, exp_avg_sq, grad, n, (float)(a->lr * sqrt(bc2) / bc1), a->weight_decay, s, b1, b2,
                   one_b1, one_b2, eps);
        return;
    }
    float *p = param, *m = exp_avg, *v = exp_avg_sq;
    const float *g = grad;
    #pragma omp parallel for simd schedule(static) if (n >= ADAMW_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float gi = g[i] * s;
        float mi = b1 * m[i] + one_b1 * gi;
        float vi = b2 * v[i] + one_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * decay - step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
    }
}
