/* LAMB (rt_lamb_step) against timm's Lamb written out in double precision: several tensors,
 * several steps, the global gradient clipping, exempt tensors (no decay, no trust ratio),
 * trust_clip, and the dispatcher's state layout. */
#include <math.h>
#include <string.h>
#include "rt_optim.h"
#include "testlib.h"

enum { T = 3, STEPS = 6 };
static const long counts[T] = { 70001, 96, 513 };   /* a conv weight, a bias, a small fc */
static const int exempt[T] = { 0, 1, 0 };

/* timm/optim/lamb.py, step(), in double: global norm, clip, then per tensor. */
static void ref_lamb_step(double *p[T], double *m[T], double *v[T], double *const g[T], double lr, double wd,
                          double b1, double b2, double eps, double max_norm, bool trust_clip, long step) {
    double gn = 0;
    for (int t = 0; t < T; t++)
        for (long i = 0; i < counts[t]; i++) gn += g[t][i] * g[t][i];
    gn = sqrt(gn);
    double clip = max_norm > 0 && gn > max_norm ? gn / max_norm : 1.0;
    double bc1 = 1 - pow(b1, step + 1.0), bc2 = 1 - pow(b2, step + 1.0);
    for (int t = 0; t < T; t++) {
        double w = exempt[t] ? 0 : wd, wn = 0, un = 0;
        double *u = calloc(counts[t], sizeof(double));
        for (long i = 0; i < counts[t]; i++) {
            double gi = g[t][i] / clip;
            m[t][i] = b1 * m[t][i] + (1 - b1) * gi;
            v[t][i] = b2 * v[t][i] + (1 - b2) * gi * gi;
            u[i] = (m[t][i] / bc1) / (sqrt(v[t][i]) / sqrt(bc2) + eps) + w * p[t][i];
            wn += p[t][i] * p[t][i];
            un += u[i] * u[i];
        }
        double trust = 1.0;
        if (w != 0) {
            wn = sqrt(wn), un = sqrt(un);
            trust = wn > 0 ? (un > 0 ? wn / un : 1.0) : 1.0;
            if (trust_clip && trust > 1) trust = 1;
        }
        for (long i = 0; i < counts[t]; i++) p[t][i] -= lr * trust * u[i];
        free(u);
    }
}

static unsigned long long rng_state = 0x9E3779B97F4A7C15ULL;
static double uniform(void) {   /* xorshift64, in [-1, 1) */
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

static void run_case(const char *what, double wd, double max_norm, bool trust_clip, double grad_size) {
    rt_optim_config cfg = { .kind = RT_OPTIM_LAMB, .lamb = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-6,
                                                             .max_grad_norm = max_norm, .trust_clip = trust_clip } };
    CHECK(rt_optim_state_per_param(&cfg) == 2);
    long np = 0, off[T];
    for (int t = 0; t < T; t++) off[t] = np, np += counts[t];
    float *P = calloc(np, 4), *S = calloc(2 * np, 4), *G = calloc(np, 4);
    double *rp[T], *rm[T], *rv[T], *rg[T];
    for (int t = 0; t < T; t++) {
        rp[t] = calloc(counts[t], 8), rm[t] = calloc(counts[t], 8), rv[t] = calloc(counts[t], 8);
        rg[t] = calloc(counts[t], 8);
        for (long i = 0; i < counts[t]; i++) rp[t][i] = P[off[t] + i] = (float)(0.1 * uniform());
    }
    for (long step = 0; step < STEPS; step++) {
        for (int t = 0; t < T; t++)
            for (long i = 0; i < counts[t]; i++) rg[t][i] = G[off[t] + i] = (float)(grad_size * uniform());
        double lr = 0.004 * (step + 1);
        ref_lamb_step(rp, rm, rv, rg, lr, wd, 0.9, 0.999, 1e-6, max_norm, trust_clip, step);
        /* the trainer's way: one global coefficient folded into grad_scale */
        float scale = rt_lamb_clip_coef(sqrt(rt_sum_squares(G, np)), max_norm);
        for (int t = 0; t < T; t++) {
            rt_optim_args a = { (float)lr, (float)wd, scale, step, 1.0f };
            rt_optim_step(P + off[t], S + 2 * off[t], G + off[t], counts[t], exempt[t], &cfg, &a);
        }
    }
    double worst = 0;
    long at = 0;
    for (int t = 0; t < T; t++)
        for (long i = 0; i < counts[t]; i++) {
            double d = fabs(P[off[t] + i] - rp[t][i]) / fmax(1e-3, fabs(rp[t][i]));
            if (d > worst) worst = d, at = off[t] + i;
        }
    if (worst > 2e-4) {
        fprintf(stderr, "FAIL lamb %s: largest relative difference %.3g at %ld\n", what, worst, at);
        for (int i = 0; i < 4; i++) fprintf(stderr, "  p[%d] got %.9g want %.9g\n", i, P[i], rp[0][i]);
    }
    CHECK(worst <= 2e-4);
    /* the state planes: exp_avg then exp_avg_sq, per tensor at 2 x offset */
    double mdiff = 0;
    for (int t = 0; t < T; t++)
        for (long i = 0; i < counts[t]; i++)
            mdiff = fmax(mdiff, fabs(S[2 * off[t] + counts[t] + i] - rv[t][i]) / fmax(1e-9, rv[t][i]));
    if (mdiff > 1e-4) fprintf(stderr, "FAIL lamb %s: exp_avg_sq off by %.3g relative\n", what, mdiff);
    CHECK(mdiff <= 1e-4);
    printf("lamb %s: %d steps, largest relative difference %.2g\n", what, STEPS, worst);
    free(P), free(S), free(G);
    for (int t = 0; t < T; t++) free(rp[t]), free(rm[t]), free(rv[t]), free(rg[t]);
}

int main(void) {
    run_case("timm defaults (wd 0.01, global norm clipped at 1)", 0.01, 1.0, false, 1.0);
    run_case("small gradients, clip inactive", 0.02, 1.0, false, 1e-4);
    run_case("no global clipping, LAMBC trust clip", 0.05, 0.0, true, 1.0);
    run_case("no weight decay: no trust ratio anywhere", 0.0, 1.0, false, 1.0);
    /* the trust ratio on a single tensor: p = 3 everywhere, first step, wd 0 → u = ±1/(1+eps) */
    float p[4] = { 3, 3, 3, 3 }, m[4] = { 0 }, v[4] = { 0 }, g[4] = { 1, -1, 1, -1 };
    rt_lamb_config c = { .beta1 = 0.9, .beta2 = 0.999, .eps = 0, .max_grad_norm = 0 };
    rt_optim_args a = { 0.5f, 1e-9f, 1.0f, 0, 1.0f };
    float trust = rt_lamb_step(p, m, v, g, 4, &c, &a);
    CHECK(fabsf(trust - 3.0f) < 1e-5f);           /* ‖p‖ = 6, ‖u‖ = 2 */
    CHECK(fabsf(p[0] - (3.0f - 0.5f * 3.0f)) < 1e-5f && fabsf(p[1] - 4.5f) < 1e-5f);
    CHECK(rt_lamb_clip_coef(4.0, 1.0) == 0.25f && rt_lamb_clip_coef(0.5, 1.0) == 1.0f);
    CHECK(rt_lamb_clip_coef(INFINITY, 1.0) == 1.0f && rt_lamb_clip_coef(9.0, 0.0) == 1.0f);
    CHECK(strcmp(rt_optim_kind_name(RT_OPTIM_LAMB), "lamb") == 0);
    CHECK(strcmp(rt_optim_state_name(RT_OPTIM_LAMB, 1), "exp_avg_sq") == 0);
    return test_finish("test_optim_lamb");
}
