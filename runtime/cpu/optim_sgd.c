/* SGD with momentum, dampening, Nesterov and coupled weight decay (torch.optim.SGD), or in
 * Caffe's form (the LR inside the velocity), in one fused pass over a tensor. */
#include "rt_optim.h"

/* Below this many elements a parallel region costs more than the update (biases, BN). */
#define SGD_PAR_MIN 32768

static void sgd_plain(float *p, const float *g, long n, float lr, float wd, float s) {
    #pragma omp parallel for simd schedule(static) if (n >= SGD_PAR_MIN)
    for (long i = 0; i < n; i++) p[i] -= lr * (g[i] * s + wd * p[i]);
}

/* torch starts the buffer as a copy of the first gradient, without dampening. */
static void sgd_first(float *p, float *buf, const float *g, long n, float lr, float wd, float s,
                      float nesterov_mom) {
    #pragma omp parallel for simd schedule(static) if (n >= SGD_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float d = g[i] * s + wd * p[i];
        buf[i] = d;
        p[i] -= lr * (d + nesterov_mom * d);
    }
}

static void sgd_momentum(float *p, float *buf, const float *g, long n, float lr, float wd,
                         float s, float mom, float damp) {
    float keep = 1.0f - damp;
    #pragma omp parallel for simd schedule(static) if (n >= SGD_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float d = g[i] * s + wd * p[i];
        float b = mom * buf[i] + keep * d;
        buf[i] = b;
        p[i] -= lr * b;
    }
}

static void sgd_nesterov(float *p, float *buf, const float *g, long n, float lr, float wd,
                         float s, float mom, float damp) {
    float keep = 1.0f - damp;
    #pragma omp parallel for simd schedule(static) if (n >= SGD_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float d = g[i] * s + wd * p[i];
        float b = mom * buf[i] + keep * d;
        buf[i] = b;
        p[i] -= lr * (d + mom * b);
    }
}

/* Caffe's form: the LR inside the velocity, which starts at 0 (so no first-step case). */
static void sgd_caffe(float *p, float *buf, const float *g, long n, float lr, float wd, float s, float mom,
                      bool nesterov) {
    #pragma omp parallel for simd schedule(static) if (n >= SGD_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float d = g[i] * s + wd * p[i];
        float before = buf[i];
        float v = mom * before + lr * d;
        buf[i] = v;
        p[i] -= nesterov ? (1.0f + mom) * v - mom * before : v;
    }
}

void rt_sgd_step(float *param, float *momentum_buf, const float *grad, long n,
                 const rt_sgd_config *cfg, const rt_optim_args *a) {
    float lr = a->lr, wd = a->weight_decay, s = a->grad_scale, mom = cfg->momentum;
    if (cfg->larc != RT_LARC_NONE) {   /* NVCaffe's LARC: this tensor's LR from its norms */
        double pp, gg;
        rt_sum_squares_pair(&pp, &gg, param, grad, n);
        lr = rt_larc_lr(cfg, lr, rt_larc_rate(cfg, pp, gg, s));
    }
    /* Intel Caffe's warmup: momentum = momentum * (rate / prev_rate), in float */
    if (cfg->warmup_momentum_correction && a->momentum_scale != 0.0f && mom != 0.0f) mom *= a->momentum_scale;
    if (mom == 0.0f)
        sgd_plain(param, grad, n, lr, wd, s);
    else if (cfg->lr_in_velocity)
        sgd_caffe(param, momentum_buf, grad, n, lr, wd, s, mom, cfg->nesterov);
    else if (a->step == 0)
        sgd_first(param, momentum_buf, grad, n, lr, wd, s, cfg->nesterov ? mom : 0.0f);
    else if (cfg->nesterov)
        sgd_nesterov(param, momentum_buf, grad, n, lr, wd, s, mom, cfg->dampening);
    else
        sgd_momentum(param, momentum_buf, grad, n, lr, wd, s, mom, cfg->dampening);
}
