/* Caffe's solvers' forms against float64 references of Caffe's update rules: RMSProp,
 * AdaGrad and AdaDelta (rt_rmsprop_step, rt_adaptive_step, and the dispatcher) below. Adam
 * (rt_adamw_config.caffe_form, adam_solver.cpp): the gradient gets local_decay·w added, the
 * moments are of that, and the update is local_rate·sqrt(1 − β2^t)/(1 − β1^t)·m/(sqrt(v) + δ).
 * SGD and Nesterov (rt_sgd_config.lr_in_velocity), written from sgd_solver.cpp /
 * nesterov_solver.cpp: the gradient gets
 * local_decay·w added (Regularize), then history = momentum·history + local_rate·diff and the
 * update is history (Nesterov: (1 + momentum)·history − momentum·history_before), history
 * starting at 0. The LR changes at every step, which is where Caffe's form and torch's
 * differ; a check that the two do differ keeps the test from passing on torch's form. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_optim.h"
#include "testlib.h"

static void ref_caffe(double *w, double *hist, const double *g, long n, double rate, double decay, double mom,
                      int nesterov) {
    for (long i = 0; i < n; i++) {
        double diff = g[i] + decay * w[i];
        double before = hist[i];
        hist[i] = mom * hist[i] + rate * diff;
        w[i] -= nesterov ? (1 + mom) * hist[i] - mom * before : hist[i];
    }
}

static unsigned long long state = 0x9E3779B97F4A7C15ULL;
static double uniform(void) {   /* xorshift64 in [-1, 1) */
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 4503599627370496.0 - 1.0;
}

/* Steps a tensor of n through `steps` updates with a changing LR (and a grad_scale that the
 * step must undo), then compares weights and history with the reference. */
static void run_vs_ref(long n, int nesterov, float mom, float wd, float scale, int steps) {
    float *p = malloc(n * sizeof *p), *v = calloc(n, sizeof *v), *g = malloc(n * sizeof *g);
    double *rp = malloc(n * sizeof *rp), *rv = calloc(n, sizeof *rv), *rg = malloc(n * sizeof *rg);
    for (long i = 0; i < n; i++) rp[i] = p[i] = (float)uniform();
    rt_sgd_config c = { .momentum = mom, .nesterov = nesterov, .lr_in_velocity = true };
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) {
            g[i] = (float)uniform() * scale;
            rg[i] = (double)g[i] / scale;
        }
        float lr = s < steps / 2 ? 0.1f : 0.01f * (float)(s + 1);   /* a drop, then a climb */
        rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / scale, .step = s };
        rt_sgd_step(p, v, g, n, &c, &a);
        ref_caffe(rp, rv, rg, n, lr, wd, mom, nesterov);
    }
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double e = fmax(fabs(p[i] - rp[i]), fabs(v[i] - rv[i])) / fmax(1.0, fabs(rp[i]));
        if (e > worst) worst = e, at = i;
    }
    if (worst > 2e-6)
        fprintf(stderr, "caffe sgd n=%ld nesterov=%d: max rel diff %.3g at [%ld]: w %.9g vs %.9g, v %.9g vs %.9g\n", n,
                nesterov, worst, at, p[at], rp[at], v[at], rv[at]);
    CHECK(worst <= 2e-6);
    free(p), free(v), free(g), free(rp), free(rv), free(rg);
}

/* After an LR change the two forms part: Caffe's velocity still carries the old LR. */
static void test_differs_from_torch_after_lr_change(void) {
    float pc = 1, vc = 0, pt = 1, vt = 0;
    const float g = 0.5f;
    rt_sgd_config caffe = { .momentum = 0.9f, .lr_in_velocity = true }, torch = { .momentum = 0.9f };
    for (long s = 0; s < 3; s++) {
        rt_optim_args a = { .lr = s == 0 ? 0.1f : 0.01f, .grad_scale = 1, .step = s };
        rt_sgd_step(&pc, &vc, &g, 1, &caffe, &a);
        rt_sgd_step(&pt, &vt, &g, 1, &torch, &a);
        if (s == 0) CHECK(pc == pt);   /* the first step is the same: lr·g either way */
    }
    /* by hand: Caffe v = 0.05, 0.045 + 0.005 = 0.05, 0.045 + 0.005 = 0.05 -> w = 1 - 0.15;
     * torch buf = 0.5, 0.95, 1.355 -> w = 1 - 0.05 - 0.0095 - 0.01355 */
    CHECK_NEAR(pc, 0.85, 1e-6);
    CHECK_NEAR(pt, 1 - 0.05 - 0.0095 - 0.01355, 1e-6);
}

/* Momentum 0 is plain SGD in both forms, and needs no state. */
static void test_no_momentum(void) {
    float p = 1, g = 0.5f;
    rt_sgd_config c = { .lr_in_velocity = true };
    rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.1f, .grad_scale = 1, .step = 3 };
    rt_sgd_step(&p, NULL, &g, 1, &c, &a);
    CHECK_NEAR(p, 1 - 0.1 * (0.5 + 0.1), 1e-7);
    rt_optim_config oc = { .kind = RT_OPTIM_SGD, .sgd = c };
    CHECK(rt_optim_state_per_param(&oc) == 0);
    oc.sgd.momentum = 0.9f;
    CHECK(rt_optim_state_per_param(&oc) == 1);
}

static void ref_caffe_adam(double *w, double *m, double *v, const double *g, long n, double rate, double decay,
                           double b1, double b2, double delta, long t) {
    double correction = sqrt(1 - pow(b2, (double)t)) / (1 - pow(b1, (double)t));
    for (long i = 0; i < n; i++) {
        double diff = g[i] + decay * w[i];
        m[i] = b1 * m[i] + (1 - b1) * diff;
        v[i] = b2 * v[i] + (1 - b2) * diff * diff;
        w[i] -= rate * correction * m[i] / (sqrt(v[i]) + delta);
    }
}

static void run_adam_vs_ref(long n, float wd, float scale, int steps) {
    float *p = malloc(n * sizeof *p), *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v), *g = malloc(n * sizeof *g);
    double *rp = malloc(n * sizeof *rp), *rm = calloc(n, sizeof *rm), *rv = calloc(n, sizeof *rv), *rg = malloc(n * sizeof *rg);
    for (long i = 0; i < n; i++) rp[i] = p[i] = (float)uniform();
    rt_adamw_config c = { .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-3, .caffe_form = true };   /* a large δ shows */
    for (int s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) {
            g[i] = (float)uniform() * scale;
            rg[i] = (double)g[i] / scale;
        }
        float lr = 0.01f / (float)(1 + s);
        rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / scale, .step = s };
        rt_adamw_step(p, m, v, g, n, &c, &a);
        ref_caffe_adam(rp, rm, rv, rg, n, lr, wd, 0.9, 0.999, 1e-3, s + 1);
    }
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs(p[i] - rp[i]) / fmax(1.0, fabs(rp[i]));
        if (e > worst) worst = e, at = i;
    }
    if (worst > 2e-6) fprintf(stderr, "caffe adam n=%ld: max rel diff %.3g at [%ld]: %.9g vs %.9g\n", n, worst, at, p[at], rp[at]);
    CHECK(worst <= 2e-6);
    free(p), free(m), free(v), free(g), free(rp), free(rm), free(rv), free(rg);
}

/* One step by hand: m = 0.1·g', v = 0.001·g'², step lr·sqrt(0.001)/0.1 · m/(sqrt(v) + δ). */
static void test_adam_first_step_by_hand(void) {
    float p = 1, m = 0, v = 0, g = 0.5f;
    rt_adamw_config c = { .beta1 = 0.9, .beta2 = 0.999, .eps = 0.01, .caffe_form = true };
    rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.1f, .grad_scale = 1, .step = 0 };
    rt_adamw_step(&p, &m, &v, &g, 1, &c, &a);
    double gd = 0.5 + 0.1, mm = 0.1 * gd, vv = 0.001 * gd * gd;
    CHECK_NEAR(p, 1 - 0.1 * sqrt(0.001) / 0.1 * mm / (sqrt(vv) + 0.01), 1e-6);
    float pt = 1, mt = 0, vt = 0;   /* torch's AdamW from the same start goes elsewhere */
    c.caffe_form = false;
    rt_adamw_step(&pt, &mt, &vt, &g, 1, &c, &a);
    CHECK(fabs(pt - p) > 1e-3);
}

/* RMSProp (rt_rmsprop_step's torch form), AdaGrad and AdaDelta (rt_adaptive_step) against rmsprop_solver.cpp,
 * adagrad_solver.cpp and adadelta_solver.cpp in float64: the gradient with local_decay·w
 * added, the history updated, the update local_rate times the solver's ratio. */
static void ref_adaptive(rt_optim_kind kind, double *w, double *h, double *h2, const double *g, long n, double rate,
                         double decay, double rho, double delta) {
    for (long i = 0; i < n; i++) {
        double diff = g[i] + decay * w[i];
        if (kind == RT_OPTIM_ADAGRAD) {
            h[i] += diff * diff;
            w[i] -= rate * diff / (sqrt(h[i]) + delta);
        } else if (kind == RT_OPTIM_RMSPROP) {
            h[i] = rho * h[i] + (1 - rho) * diff * diff;
            w[i] -= rate * diff / (sqrt(h[i]) + delta);
        } else {
            h[i] = rho * h[i] + (1 - rho) * diff * diff;
            double update = diff * sqrt((h2[i] + delta) / (h[i] + delta));
            h2[i] = rho * h2[i] + (1 - rho) * update * update;
            w[i] -= rate * update;
        }
    }
}

static void run_adaptive_vs_ref(rt_optim_kind kind, long n, float wd, float scale) {
    /* the state as the dispatcher lays it out: v, then (AdaDelta) acc */
    float *p = malloc(n * sizeof *p), *state = calloc(2 * n, sizeof *state), *g = malloc(n * sizeof *g);
    double *rp = malloc(n * sizeof *rp), *rv = calloc(n, sizeof *rv), *ra = calloc(n, sizeof *ra), *rg = malloc(n * sizeof *rg);
    for (long i = 0; i < n; i++) rp[i] = p[i] = (float)uniform();
    double rho = kind == RT_OPTIM_ADADELTA ? 0.95 : 0.98, delta = kind == RT_OPTIM_ADADELTA ? 1e-6 : 1e-8;
    rt_adaptive_config c = { .decay = kind == RT_OPTIM_ADAGRAD ? 0 : rho, .eps = delta };
    rt_optim_config oc = { .kind = kind, .adaptive = c };
    /* Caffe's RMSProp is rmsprop's torch form without momentum (rt_rmsprop_step) */
    rt_rmsprop_config rc = { .alpha = rho, .eps = delta, .momentum = 0.0f, .tf = false };
    if (kind == RT_OPTIM_RMSPROP) oc = (rt_optim_config){ .kind = kind, .rmsprop = rc };
    for (int s = 0; s < 8; s++) {
        for (long i = 0; i < n; i++) {
            g[i] = (float)uniform() * scale;
            rg[i] = (double)g[i] / scale;
        }
        float lr = (kind == RT_OPTIM_ADADELTA ? 1.0f : 0.01f) / (float)(1 + s);
        rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / scale, .step = s };
        if (s % 2) rt_optim_step(p, state, g, n, false, &oc, &a);   /* the dispatcher on odd steps */
        else if (kind == RT_OPTIM_RMSPROP) rt_rmsprop_step(p, state, NULL, g, n, &rc, &a);
        else rt_adaptive_step(kind, p, state, kind == RT_OPTIM_ADADELTA ? state + n : NULL, g, n, &c, &a);
        ref_adaptive(kind, rp, rv, ra, rg, n, lr, wd, rho, delta);
    }
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double e = fabs(p[i] - rp[i]) / fmax(1.0, fabs(rp[i]));
        if (e > worst) worst = e, at = i;
    }
    if (worst > 5e-6)
        fprintf(stderr, "%s n=%ld: max rel diff %.3g at [%ld]: %.9g vs %.9g\n", rt_optim_kind_name(kind), n, worst, at,
                p[at], rp[at]);
    CHECK(worst <= 5e-6);
    oc.kind = kind;
    CHECK(rt_optim_state_per_param(&oc) == (kind == RT_OPTIM_ADADELTA ? 2 : 1));
    free(p), free(state), free(g), free(rp), free(rv), free(ra), free(rg);
}

int main(void) {
    const long sizes[] = { 1, 1000, 100003 };   /* 100003 takes the parallel path */
    for (int k = 0; k < 3; k++) {
        run_vs_ref(sizes[k], 0, 0.9f, 5e-4f, 1.0f, 8);
        run_vs_ref(sizes[k], 1, 0.9f, 5e-4f, 1.0f, 8);
        run_vs_ref(sizes[k], 0, 0.5f, 0.0f, 1024.0f, 8);
    }
    test_differs_from_torch_after_lr_change();
    test_no_momentum();
    for (int k = 0; k < 3; k++) {
        run_adam_vs_ref(sizes[k], 5e-4f, 1.0f, 8);
        run_adam_vs_ref(sizes[k], 0.0f, 1024.0f, 8);
    }
    test_adam_first_step_by_hand();
    const rt_optim_kind adaptive[] = { RT_OPTIM_RMSPROP, RT_OPTIM_ADAGRAD, RT_OPTIM_ADADELTA };
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++) {
            run_adaptive_vs_ref(adaptive[j], sizes[k], 5e-4f, 1.0f);
            run_adaptive_vs_ref(adaptive[j], sizes[k], 0.0f, 1024.0f);
        }
    return test_finish("test_optim_caffe");
}
