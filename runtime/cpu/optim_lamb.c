/* LAMB (timm's Lamb): Adam moments with bias correction, decoupled weight decay inside the
 * update, and a per-tensor trust ratio ‖p‖/‖update‖; three passes over the tensor. */
#include <math.h>
#include "rt_optim.h"

#define LAMB_PAR_MIN 32768
/* The norms sum in NORM_CHUNKS fixed slices added in order, as optim_norm.c does, so a run
 * repeats bit for bit at any thread count. */
#define LAMB_CHUNKS 64

typedef struct {
    float inv_bc1, inv_sqrt_bc2, eps, wd;
} lamb_coef;

/* The update u for one element, from the new moments; the same expression in both passes. */
static inline float lamb_update(float m, float v, float p, const lamb_coef *c) {
    return (m * c->inv_bc1) / (sqrtf(v) * c->inv_sqrt_bc2 + c->eps) + c->wd * p;
}

static void sums_serial(double *pp, double *uu, const float *p, const float *m, const float *v, long lo,
                        long hi, const lamb_coef *c) {
    double a = 0.0, b = 0.0;
    for (long i = lo; i < hi; i++) {
        double u = lamb_update(m[i], v[i], p[i], c);
        a += (double)p[i] * (double)p[i];
        b += u * u;
    }
    *pp = a;
    *uu = b;
}

static long chunk_start(long n, int k) { return (long)((double)n * k / LAMB_CHUNKS); }

static void lamb_norms(double *pp, double *uu, const float *p, const float *m, const float *v, long n,
                       const lamb_coef *c) {
    double part_p[LAMB_CHUNKS], part_u[LAMB_CHUNKS];
    #pragma omp parallel for schedule(static) if (n >= LAMB_PAR_MIN)
    for (int k = 0; k < LAMB_CHUNKS; k++)
        sums_serial(&part_p[k], &part_u[k], p, m, v, chunk_start(n, k),
                    k + 1 == LAMB_CHUNKS ? n : chunk_start(n, k + 1), c);
    double a = 0.0, b = 0.0;
    for (int k = 0; k < LAMB_CHUNKS; k++) a += part_p[k], b += part_u[k];
    *pp = a;
    *uu = b;
}

float rt_lamb_step(float *param, float *exp_avg, float *exp_avg_sq, const float *grad, long n,
                   const rt_lamb_config *cfg, const rt_optim_args *a) {
    double t = (double)a->step + 1.0;   /* bias corrections in double, as rt_adamw_step */
    lamb_coef c = { (float)(1.0 / (1.0 - pow(cfg->beta1, t))), (float)(1.0 / sqrt(1.0 - pow(cfg->beta2, t))),
                    (float)cfg->eps, a->weight_decay };
    float b1 = (float)cfg->beta1, b2 = (float)cfg->beta2;
    float one_b1 = (float)(1.0 - cfg->beta1), one_b2 = (float)(1.0 - cfg->beta2), s = a->grad_scale;
    float *p = param, *m = exp_avg, *v = exp_avg_sq;
    const float *g = grad;
    #pragma omp parallel for simd schedule(static) if (n >= LAMB_PAR_MIN)
    for (long i = 0; i < n; i++) {
        float gi = g[i] * s;
        m[i] = b1 * m[i] + one_b1 * gi;
        v[i] = b2 * v[i] + one_b2 * gi * gi;
    }
    float trust = 1.0f;
    if (c.wd != 0.0f) {   /* timm adapts only tensors with weight decay */
        double pp, uu;
        lamb_norms(&pp, &uu, p, m, v, n, &c);
        double pn = sqrt(pp), un = sqrt(uu);
        if (pn > 0 && un > 0) trust = (float)(pn / un);
        if (cfg->trust_clip && trust > 1.0f) trust = 1.0f;
    }
    float step = a->lr * trust;
    #pragma omp parallel for simd schedule(static) if (n >= LAMB_PAR_MIN)
    for (long i = 0; i < n; i++) p[i] -= step * lamb_update(m[i], v[i], p[i], &c);
    return trust;
}

float rt_lamb_clip_coef(double norm, double max_grad_norm) {
    if (!(max_grad_norm > 0) || !isfinite(norm) || norm <= max_grad_norm) return 1.0f;
    return (float)(max_grad_norm / norm);
}
