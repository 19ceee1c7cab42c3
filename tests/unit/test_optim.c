/* Optimizer tests: SGD (plain, momentum, dampening, Nesterov), LARS and AdamW against first
 * steps derived by hand and against independent double-precision loops over many steps;
 * exempt tensors, grad_scale folding, state sizes, and the dispatcher. */
#include <omp.h>
#include <string.h>
#include "rt_optim.h"
#include "testlib.h"

/* ---- Independent references (double, written from the papers / torch source) ---------- */
static void ref_sgd(double *p, double *buf, const double *g, long n, double lr, double wd,
                    double mom, double damp, bool nesterov, long step) {
    for (long i = 0; i < n; i++) {
        double d_p = g[i] + wd * p[i];
        if (mom != 0) {
            buf[i] = step == 0 ? d_p : mom * buf[i] + (1 - damp) * d_p;
            d_p = nesterov ? d_p + mom * buf[i] : buf[i];
        }
        p[i] -= lr * d_p;
    }
}

static void ref_lars(double *p, double *v, const double *g, long n, double lr, double wd,
                     double mom, double eta, bool nesterov, bool exempt) {
    double pn = 0, gn = 0;
    for (long i = 0; i < n; i++) { pn += p[i] * p[i]; gn += g[i] * g[i]; }
    pn = sqrt(pn); gn = sqrt(gn);
    if (exempt) wd = 0;
    double trust = (!exempt && pn > 0 && gn > 0) ? eta * pn / (gn + wd * pn) : 1.0;
    for (long i = 0; i < n; i++) {
        double u = lr * trust * (g[i] + wd * p[i]);
        v[i] = mom * v[i] + u;
        p[i] -= nesterov ? mom * v[i] + u : v[i];
    }
}

static void ref_adamw(double *p, double *m, double *v, const double *g, long n, double lr,
                      double wd, double b1, double b2, double eps, long t) {
    for (long i = 0; i < n; i++) {
        p[i] *= 1 - lr * wd;
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        double mhat = m[i] / (1 - pow(b1, (double)t)), vhat = v[i] / (1 - pow(b2, (double)t));
        p[i] -= lr * mhat / (sqrt(vhat) + eps);
    }
}

/* ---- Helpers --------------------------------------------------------------------------- */
static unsigned long long rng_state = 88172645463325252ULL;
static double uniform(void) {   /* xorshift64, in [-1, 1) */
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 4503599627370496.0 - 1.0;
}

typedef struct { long n; float *p, *s0, *s1, *g; double *rp, *r0, *r1, *rg; } bufs;

static bufs bufs_make(long n) {
    bufs b = { .n = n };
    b.p = calloc(n, sizeof(float)); b.s0 = calloc(n, sizeof(float));
    b.s1 = calloc(n, sizeof(float)); b.g = calloc(n, sizeof(float));
    b.rp = calloc(n, sizeof(double)); b.r0 = calloc(n, sizeof(double));
    b.r1 = calloc(n, sizeof(double)); b.rg = calloc(n, sizeof(double));
    for (long i = 0; i < n; i++) b.rp[i] = b.p[i] = (float)uniform();
    return b;
}

static void bufs_free(bufs *b) {
    free(b->p); free(b->s0); free(b->s1); free(b->g);
    free(b->rp); free(b->r0); free(b->r1); free(b->rg);
}

/* New gradient; the float side gets it divided by `scale` so grad_scale must undo that. */
static void bufs_grad(bufs *b, float scale) {
    for (long i = 0; i < b->n; i++) {
        float g = (float)uniform() * scale;
        b->g[i] = g;
        b->rg[i] = (double)g / scale;
    }
}

/* Reports the largest difference and its index, as STYLE asks of every comparison. */
static void check_close(const char *what, const float *got, const double *want, long n,
                        double tol) {
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]) / fmax(1.0, fabs(want[i]));
        if (e > worst) { worst = e; at = i; }
    }
    if (worst > tol)
        fprintf(stderr, "%s: max rel diff %.3g at [%ld]: got %.9g want %.9g (first: %.9g vs %.9g)\n",
                what, worst, at, got[at], want[at], got[0], want[0]);
    CHECK(worst <= tol);
}

/* ---- SGD ------------------------------------------------------------------------------- */
static void test_sgd_first_steps_by_hand(void) {
    rt_sgd_config c = { .momentum = 0.9f };
    float p = 1.0f, buf = 0, g = 0.5f;
    rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.01f, .grad_scale = 1.0f, .step = 0 };
    rt_sgd_step(&p, &buf, &g, 1, &c, &a);
    CHECK_NEAR(buf, 0.51, 1e-6);           /* first buffer = d = g + wd·p, no dampening */
    CHECK_NEAR(p, 0.949, 1e-6);
    a.step = 1;
    rt_sgd_step(&p, &buf, &g, 1, &c, &a);
    CHECK_NEAR(buf, 0.96849, 1e-6);        /* 0.9·0.51 + (0.5 + 0.01·0.949) */
    CHECK_NEAR(p, 0.852151, 1e-6);

    c.nesterov = true;
    p = 1.0f; buf = 0; a.step = 0;
    rt_sgd_step(&p, &buf, &g, 1, &c, &a);
    CHECK_NEAR(p, 0.9031, 1e-6);           /* 1 − 0.1·(0.51 + 0.9·0.51) */
    a.step = 1;
    rt_sgd_step(&p, &buf, &g, 1, &c, &a);
    CHECK_NEAR(buf, 0.968031, 1e-6);
    CHECK_NEAR(p, 0.76507411, 1e-6);       /* 0.9031 − 0.1·(0.509031 + 0.9·0.968031) */

    rt_sgd_config plain = {0};
    p = 1.0f; a.step = 0;
    rt_sgd_step(&p, NULL, &g, 1, &plain, &a);
    CHECK_NEAR(p, 0.949, 1e-6);
}

static void run_sgd_vs_ref(long n, rt_sgd_config c, float wd, float scale) {
    bufs b = bufs_make(n);
    for (long step = 0; step < 6; step++) {
        bufs_grad(&b, scale);
        float lr = 0.1f * (1.0f + step) / 3.0f;   /* the LR changes every step */
        rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / scale, .step = step };
        rt_sgd_step(b.p, b.s0, b.g, n, &c, &a);
        ref_sgd(b.rp, b.r0, b.rg, n, lr, wd, c.momentum, c.dampening, c.nesterov, step);
    }
    char what[96];
    snprintf(what, sizeof what, "sgd n=%ld mom=%g damp=%g nesterov=%d", n, c.momentum,
             c.dampening, c.nesterov);
    check_close(what, b.p, b.rp, n, 2e-6);
    if (c.momentum != 0) check_close(what, b.s0, b.r0, n, 2e-6);
    bufs_free(&b);
}

static void test_sgd_vs_reference(void) {
    const long sizes[] = {1, 1000, 100003};   /* 100003 takes the parallel path */
    for (int k = 0; k < 3; k++) {
        run_sgd_vs_ref(sizes[k], (rt_sgd_config){ .momentum = 0.9f }, 1e-4f, 1.0f);
        run_sgd_vs_ref(sizes[k], (rt_sgd_config){ .momentum = 0.9f, .nesterov = true }, 5e-4f, 1.0f);
        run_sgd_vs_ref(sizes[k], (rt_sgd_config){ .momentum = 0.5f, .dampening = 0.1f }, 0, 1.0f);
        run_sgd_vs_ref(sizes[k], (rt_sgd_config){ 0 }, 1e-2f, 1.0f);
        run_sgd_vs_ref(sizes[k], (rt_sgd_config){ .momentum = 0.9f }, 1e-4f, 1024.0f);
    }
}

static void test_nesterov_differs(void) {
    float p1[4] = {1, 2, 3, 4}, p2[4] = {1, 2, 3, 4}, b1[4] = {0}, b2[4] = {0};
    const float g[4] = {0.5f, -0.5f, 0.25f, 1};
    rt_sgd_config plain = { .momentum = 0.9f }, nest = { .momentum = 0.9f, .nesterov = true };
    for (long s = 0; s < 3; s++) {
        rt_optim_args a = { .lr = 0.1f, .grad_scale = 1.0f, .step = s };
        rt_sgd_step(p1, b1, g, 4, &plain, &a);
        rt_sgd_step(p2, b2, g, 4, &nest, &a);
    }
    CHECK(fabs(p1[0] - p2[0]) > 1e-3);
    CHECK(memcmp(b1, b2, sizeof b1) == 0);   /* Nesterov changes the step, not the buffer */
}

/* The spec's exemption (BN, bias) through the dispatcher is the same as weight decay 0. */
static void test_sgd_exempt(void) {
    rt_optim_config c = { .kind = RT_OPTIM_SGD, .sgd = { .momentum = 0.9f } };
    float p1[3] = {1, 2, 3}, p2[3] = {1, 2, 3}, p3[3] = {1, 2, 3};
    float s1[3] = {0}, s2[3] = {0}, s3[3] = {0};
    const float g[3] = {0.1f, 0.2f, 0.3f};
    rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.1f, .grad_scale = 1.0f, .step = 0 };
    rt_optim_args no_wd = a; no_wd.weight_decay = 0;
    rt_optim_step(p1, s1, g, 3, true, &c, &a);
    rt_sgd_step(p2, s2, g, 3, &c.sgd, &no_wd);
    rt_optim_step(p3, s3, g, 3, false, &c, &a);
    CHECK(memcmp(p1, p2, sizeof p1) == 0);
    CHECK_NEAR(p1[2], 3 - 0.1 * 0.3, 1e-6);
    CHECK_NEAR(p3[2], 3 - 0.1 * (0.3 + 0.1 * 3), 1e-6);
}

/* Caffe's lr_mult / decay_mult against Caffe's own update (sgd_solver.cpp, constant LR):
 * v = momentum·v + lr·lr_mult·(g + wd·decay_mult·p); p −= v, two steps by hand, for the bias
 * of a layer with lr_mult 2, decay_mult 0 and a weight with 1, 0.5; lr_mult 0 is frozen. */
static void test_caffe_mults(void) {
    rt_optim_config c = { .kind = RT_OPTIM_SGD, .sgd = { .momentum = 0.9f } };
    const double lr_mult[2] = {1, 2}, decay_mult[2] = {0.5, 0}, lr = 0.01, wd = 5e-4;
    const float g[2][2] = {{0.5f, -0.25f}, {0.125f, 1.0f}};   /* step, element */
    float p[2] = {1.5f, -2.0f}, buf[2] = {0};
    double pr[2] = {1.5, -2.0}, v[2] = {0};
    for (int step = 0; step < 2; step++)
        for (int blob = 0; blob < 2; blob++) {
            rt_optim_args a = { .lr = (float)lr, .weight_decay = (float)wd, .grad_scale = 1.0f, .step = step };
            CHECK(rt_optim_apply_mults(&c, &a, (float)lr_mult[blob], (float)decay_mult[blob]));
            rt_optim_step(&p[blob], &buf[blob], &g[step][blob], 1, false, &c, &a);
            v[blob] = 0.9 * v[blob] + lr * lr_mult[blob] * (g[step][blob] + wd * decay_mult[blob] * pr[blob]);
            pr[blob] -= v[blob];
        }
    CHECK_NEAR(p[0], pr[0], 1e-6);
    CHECK_NEAR(p[1], pr[1], 1e-6);
    CHECK_NEAR(pr[1], -2.0105, 1e-9);   /* worked out: v = -0.005, then 0.0155 */
    rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.1f, .grad_scale = 1.0f };
    CHECK(!rt_optim_apply_mults(&c, &a, 0.0f, 1.0f) && a.lr == 0.0f);
    /* AdamW: lr_mult scales the step and the decoupled decay, decay_mult the decay only */
    rt_optim_config ad = { .kind = RT_OPTIM_ADAMW, .adamw = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 } };
    float q = 2.0f, st[2] = {0}, gq = 0.5f;
    rt_optim_args b = { .lr = 0.01f, .weight_decay = 0.1f, .grad_scale = 1.0f, .step = 0 };
    CHECK(rt_optim_apply_mults(&ad, &b, 3.0f, 0.5f));
    rt_optim_step(&q, st, &gq, 1, false, &ad, &b);
    /* first AdamW step: p·(1 − lr·wd) − lr·g/(|g| + eps) */
    CHECK_NEAR(q, 2.0 * (1 - 0.03 * 0.05) - 0.03 * 0.5 / (0.5 + 1e-8), 1e-6);
}

/* ---- LARS ------------------------------------------------------------------------------ */
static void test_lars_by_hand(void) {
    rt_lars_config c = { .momentum = 0.9f, .eta = 0.001f };
    float p[2] = {3, 4}, v[2] = {0}, g[2] = {0.6f, 0.8f};   /* ‖p‖ = 5, ‖g‖ = 1 */
    rt_optim_args a = { .lr = 1.0f, .weight_decay = 0.1f, .grad_scale = 1.0f, .step = 0 };
    /* trust = 0.001·5 / (1 + 0.1·5) = 1/300 */
    CHECK_NEAR(rt_lars_trust_ratio(p, g, 2, false, &c, &a), 1.0 / 300, 1e-6);
    rt_lars_step(p, v, g, 2, false, &c, &a);
    CHECK_NEAR(v[0], 0.003, 1e-6);            /* (0.6 + 0.3)/300 */
    CHECK_NEAR(v[1], 0.004, 1e-6);            /* (0.8 + 0.4)/300 */
    CHECK_NEAR(p[0], 2.997, 1e-6);
    CHECK_NEAR(p[1], 3.996, 1e-6);
    /* grad_scale folds into ‖g‖: the same gradient stored ×8 with scale 1/8 gives the same. */
    float g8[2] = {4.8f, 6.4f};
    rt_optim_args a8 = a; a8.grad_scale = 0.125f;
    CHECK_NEAR(rt_lars_trust_ratio(p, g8, 2, false, &c, &a8),
               rt_lars_trust_ratio(p, g, 2, false, &c, &a), 1e-6);
    /* Exempt: trust 1, no weight decay: a plain momentum step. */
    float q[2] = {3, 4}, w[2] = {0};
    CHECK(rt_lars_trust_ratio(q, g, 2, true, &c, &a) == 1.0f);
    rt_lars_step(q, w, g, 2, true, &c, &a);
    CHECK_NEAR(q[0], 2.4, 1e-6);
    /* A zero tensor has no ratio: falls back to 1. */
    float z[2] = {0, 0};
    CHECK(rt_lars_trust_ratio(z, g, 2, false, &c, &a) == 1.0f);
}

static void run_lars_vs_ref(long n, bool nesterov, bool exempt) {
    rt_lars_config c = { .momentum = 0.9f, .eta = 0.001f, .nesterov = nesterov };
    bufs b = bufs_make(n);
    for (long step = 0; step < 5; step++) {
        bufs_grad(&b, 1.0f);
        float lr = 2.0f + step;
        rt_optim_args a = { .lr = lr, .weight_decay = 5e-4f, .grad_scale = 1.0f, .step = step };
        rt_lars_step(b.p, b.s0, b.g, n, exempt, &c, &a);
        ref_lars(b.rp, b.r0, b.rg, n, lr, 5e-4, 0.9, 0.001, nesterov, exempt);
    }
    char what[64];
    snprintf(what, sizeof what, "lars n=%ld nesterov=%d exempt=%d", n, nesterov, exempt);
    check_close(what, b.p, b.rp, n, 1e-5);
    check_close(what, b.s0, b.r0, n, 1e-5);
    bufs_free(&b);
}

static void test_lars_vs_reference(void) {
    run_lars_vs_ref(1000, false, false);
    run_lars_vs_ref(1000, true, false);
    run_lars_vs_ref(100003, false, false);
    run_lars_vs_ref(64, false, true);
}

/* ---- AdamW ----------------------------------------------------------------------------- */
static void test_adamw_by_hand(void) {
    rt_adamw_config c = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 };
    float p = 1.0f, m = 0, v = 0, g = 0.5f;
    rt_optim_args a = { .lr = 0.01f, .weight_decay = 0.1f, .grad_scale = 1.0f, .step = 0 };
    rt_adamw_step(&p, &m, &v, &g, 1, &c, &a);
    /* Bias correction makes the first step m̂/√v̂ = g/|g| = 1: p = 1·(1 − 0.001) − 0.01. */
    CHECK_NEAR(m, 0.05, 1e-7);
    CHECK_NEAR(v, 0.00025, 1e-9);
    CHECK_NEAR(p, 0.989, 1e-6);
    /* Second step, g = −0.5: m = 0.045 − 0.05 = −0.005, v = 0.00024975 + 0.00025 = 0.00049975,
     * m̂ = −0.005/0.19 = −0.0263158, v̂ = 0.00049975/0.001999 = 0.25000, step = lr·m̂/√v̂. */
    g = -0.5f; a.step = 1;
    rt_adamw_step(&p, &m, &v, &g, 1, &c, &a);
    CHECK_NEAR(m, -0.005, 1e-7);
    CHECK_NEAR(v, 0.00049975, 1e-9);
    double want = 0.989 * (1 - 0.001) + 0.01 * (0.005 / 0.19) / sqrt(0.00049975 / 0.001999);
    CHECK_NEAR(p, want, 1e-6);
}

static void run_adamw_vs_ref(long n, float wd) {
    rt_adamw_config c = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 };
    bufs b = bufs_make(n);
    for (long step = 0; step < 8; step++) {
        bufs_grad(&b, 64.0f);
        float lr = 1e-3f * (step + 1);
        rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / 64, .step = step };
        rt_adamw_step(b.p, b.s0, b.s1, b.g, n, &c, &a);
        ref_adamw(b.rp, b.r0, b.r1, b.rg, n, lr, wd, 0.9, 0.999, 1e-8, step + 1);
    }
    char what[48];
    snprintf(what, sizeof what, "adamw n=%ld wd=%g", n, wd);
    check_close(what, b.p, b.rp, n, 2e-6);
    check_close(what, b.s0, b.r0, n, 2e-6);
    check_close(what, b.s1, b.r1, n, 2e-6);
    bufs_free(&b);
}

static void test_adamw_vs_reference(void) {
    run_adamw_vs_ref(1000, 0.05f);
    run_adamw_vs_ref(100003, 0.0f);
}

/* The dispatcher's state layout (exp_avg plane then exp_avg_sq plane) and sizes. */
static void test_state_and_dispatch(void) {
    rt_optim_config sgd = { .kind = RT_OPTIM_SGD, .sgd = { .momentum = 0.9f } };
    rt_optim_config sgd0 = { .kind = RT_OPTIM_SGD };
    rt_optim_config lars = { .kind = RT_OPTIM_LARS, .lars = { .momentum = 0.9f, .eta = 1e-3f } };
    rt_optim_config adamw = { .kind = RT_OPTIM_ADAMW,
                              .adamw = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8 } };
    CHECK(rt_optim_state_per_param(&sgd) == 1);
    CHECK(rt_optim_state_per_param(&sgd0) == 0);
    CHECK(rt_optim_state_per_param(&lars) == 1);
    CHECK(rt_optim_state_per_param(&adamw) == 2);
    CHECK(strcmp(rt_optim_state_name(RT_OPTIM_ADAMW, 1), "exp_avg_sq") == 0);
    CHECK(rt_optim_state_name(RT_OPTIM_SGD, 1) == NULL);
    CHECK(strcmp(rt_optim_kind_name(RT_OPTIM_LARS), "lars") == 0);

    float p1[5] = {1, 2, 3, 4, 5}, p2[5] = {1, 2, 3, 4, 5}, st[10] = {0}, m[5] = {0}, v[5] = {0};
    const float g[5] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f};
    for (long s = 0; s < 3; s++) {
        rt_optim_args a = { .lr = 1e-2f, .weight_decay = 0.01f, .grad_scale = 1.0f, .step = s };
        rt_optim_step(p1, st, g, 5, false, &adamw, &a);
        rt_adamw_step(p2, m, v, g, 5, &adamw.adamw, &a);
    }
    CHECK(memcmp(p1, p2, sizeof p1) == 0);
    CHECK(memcmp(st, m, sizeof m) == 0 && memcmp(st + 5, v, sizeof v) == 0);
}

/* ---- Norms and clipping ---------------------------------------------------------------- */
static void test_clip_by_hand(void) {
    float a[2] = {3, 4}, b[1] = {12};
    float *gs[2] = {a, b};
    const long counts[2] = {2, 1};
    CHECK_NEAR(rt_grad_global_norm((const float *const *)gs, counts, 2), 13.0, 1e-12);
    CHECK(rt_grad_clip_coef(13.0, 100.0) == 1.0f);
    CHECK(rt_grad_clip_coef(NAN, 1.0) == 1.0f);
    CHECK(rt_grad_clip_coef(INFINITY, 1.0) == 1.0f);
    double norm = rt_grad_clip_global_norm(gs, counts, 2, 6.5);
    CHECK_NEAR(norm, 13.0, 1e-12);
    CHECK_NEAR(a[0], 1.5, 1e-6);
    CHECK_NEAR(b[0], 6.0, 1e-6);
    CHECK_NEAR(rt_grad_global_norm((const float *const *)gs, counts, 2), 6.5, 1e-6);
    norm = rt_grad_clip_global_norm(gs, counts, 2, 100.0);   /* under the cap: unchanged */
    CHECK_NEAR(b[0], 6.0, 1e-6);
}

/* Same bits at 1, 2 and 7 threads, and close to a double sum, on a large tensor. */
static void test_norm_deterministic(void) {
    long n = 3000017;
    float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
    double want = 0;
    for (long i = 0; i < n; i++) {
        x[i] = (float)uniform(); y[i] = (float)uniform();
        want += (double)x[i] * x[i];
    }
    double got[3], px[3], py[3];
    const int threads[3] = {1, 2, 7};
    for (int k = 0; k < 3; k++) {
        omp_set_num_threads(threads[k]);
        got[k] = rt_sum_squares(x, n);
        rt_sum_squares_pair(&px[k], &py[k], x, y, n);
    }
    CHECK(got[0] == got[1] && got[1] == got[2]);
    CHECK(px[0] == px[1] && px[1] == px[2] && py[0] == py[2]);
    CHECK(px[0] == got[0]);
    CHECK_NEAR(got[0], want, 1e-12);
    free(x); free(y);
}

int main(void) {
    test_caffe_mults();
    test_sgd_first_steps_by_hand();
    test_sgd_vs_reference();
    test_nesterov_differs();
    test_sgd_exempt();
    test_lars_by_hand();
    test_lars_vs_reference();
    test_adamw_by_hand();
    test_adamw_vs_reference();
    test_state_and_dispatch();
    test_clip_by_hand();
    test_norm_deterministic();
    return test_finish("test_optim");
}
