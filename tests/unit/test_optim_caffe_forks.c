/* The Caffe forks' SGD rules against float64 references written from their sources:
 * - NVCaffe's LARC (src/caffe/solvers/sgd_solver.cpp, SGDSolver::GetLocalRate and
 *   ComputeUpdateValue, GPU path): per blob rate = (1 − momentum)·larc_eta·‖w‖/‖g‖ (1 when
 *   either norm is 0; g before the decay, which the update kernel fuses in), which replaces a
 *   non-zero lr_mult: local_rate = rate·lr ("scale") or min(lr, rate) ("clip"); then
 *   h = momentum·h + local_rate·(g + local_decay·w), w −= h. Through rt_optim_apply_mults and
 *   rt_optim_step, as the trainer calls them, with lr_mult 2 / decay_mult 0 biases, a frozen
 *   blob and a zero blob.
 * - Intel Caffe's local_lr_auto (its LARS, GetLocalRate): rate = local_gw_ratio·‖w‖/(‖g‖ +
 *   weight_decay·‖w‖), the solver's weight_decay whatever the blob's decay_mult, in place of a
 *   non-zero lr_mult, local_rate = rate·lr; the gradient taken before Regularize.
 * - Intel Caffe's warmup (same file, GetWarmUpLR, GetLearningRate, ComputeUpdateValue): below
 *   warmup_iter the LR is (iter·base_lr + (warmup_iter − iter)·warmup_start_lr)/warmup_iter
 *   and the momentum is multiplied by rate/prev_rate; from warmup_iter on the policy on the
 *   same clock. Through rt_lr_at, rt_lr_warmup_ratio and rt_sgd_step.
 * - NVCaffe's rampup (GetLearningRate): rampup_lr + (base_lr − rampup_lr)·(iter/interval)²,
 *   then poly to min_lr, (base_lr − min_lr)(1 − iter/max_iter)^power + min_lr.
 * Each check is paired with a wrong rule (no (1 − momentum), no correction, a delayed poly)
 * that the same comparison must reject, so that the tolerance cannot hide the rule. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt_optim.h"
#include "rt_schedule.h"
#include "testlib.h"

static unsigned long long state = 0x2545F4914F6CDD1DULL;
static double uniform(void) {   /* xorshift64 in [-1, 1) */
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    return (double)(state >> 11) / 4503599627370496.0 - 1.0;
}

/* ---- NVCaffe's LARC ------------------------------------------------------------------------ */
enum { BLOBS = 4 };
static const float lr_mults[BLOBS] = { 1, 2, 0, 1 }, decay_mults[BLOBS] = { 1, 0, 1, 1 };

/* one blob's update in float64: NVCaffe's rate, or Intel's (solver_wd: the solver's weight
 * decay); mutant: NVCaffe's without (1 − momentum), Intel's with the blob's decay */
static void ref_larc(double *w, double *h, const double *g, long n, double lr, double lr_mult, double wd,
                     double mom, double eta, int clip, int intel, double solver_wd, int mutant) {
    double local_lr = lr_mult;
    if (lr_mult > 0) {
        double ww = 0, gg = 0;
        for (long i = 0; i < n; i++) ww += w[i] * w[i], gg += g[i] * g[i];
        double rate = 1;
        if (ww > 0 && gg > 0 && intel) rate = eta * sqrt(ww) / (sqrt(gg) + (mutant ? wd : solver_wd) * sqrt(ww));
        else if (ww > 0 && gg > 0) rate = (mutant ? 1 : 1 - mom) * eta * sqrt(ww) / sqrt(gg);
        local_lr = rate;
    }
    double local_rate = clip ? fmin(lr, local_lr) : lr * local_lr;
    for (long i = 0; i < n; i++) {
        h[i] = mom * h[i] + local_rate * (g[i] + wd * w[i]);
        w[i] -= h[i];
    }
}

/* Worst relative difference over every blob after `steps` steps with a changing LR. */
static double larc_run(long n, rt_larc_policy policy, float scale, int intel, int mutant) {
    const float mom = 0.9f, eta = 0.02f, wd = 5e-4f;
    rt_optim_config c = { .kind = RT_OPTIM_SGD,
                          .sgd = { .momentum = mom, .lr_in_velocity = true, .larc = policy, .larc_eta = eta,
                                   .larc_intel = intel, .larc_weight_decay = wd } };
    float *p[BLOBS], *v[BLOBS], *g = malloc(n * sizeof *g);
    double *rp[BLOBS], *rv[BLOBS], *rg = malloc(n * sizeof *rg);
    for (int b = 0; b < BLOBS; b++) {
        p[b] = malloc(n * sizeof *p[b]), v[b] = calloc(n, sizeof *v[b]);
        rp[b] = malloc(n * sizeof *rp[b]), rv[b] = calloc(n, sizeof *rv[b]);
        for (long i = 0; i < n; i++) rp[b][i] = p[b][i] = b == 3 ? 0.0f : (float)uniform();   /* blob 3: zero */
    }
    for (int s = 0; s < 8; s++) {
        float lr = s < 4 ? 0.1f : 0.01f * (float)(s + 1);
        for (int b = 0; b < BLOBS; b++) {
            /* the bias's gradients are small: its rate then tops the LR, and "clip" keeps the LR */
            double gs = b == 1 ? 0.002 : 1.0;
            for (long i = 0; i < n; i++) {
                g[i] = (float)(uniform() * gs) * scale;
                rg[i] = (double)g[i] / scale;
            }
            rt_optim_args a = { .lr = lr, .weight_decay = wd, .grad_scale = 1.0f / scale, .step = s };
            if (rt_optim_apply_mults(&c, &a, lr_mults[b], decay_mults[b]))
                rt_optim_step(p[b], v[b], g, n, false, &c, &a);
            else
                CHECK(lr_mults[b] == 0);
            ref_larc(rp[b], rv[b], rg, n, lr, lr_mults[b], (double)wd * decay_mults[b], mom, eta,
                     policy == RT_LARC_CLIP, intel, wd, mutant);
        }
    }
    double worst = 0;
    for (int b = 0; b < BLOBS; b++) {
        for (long i = 0; i < n; i++) {
            double e = fmax(fabs(p[b][i] - rp[b][i]), fabs(v[b][i] - rv[b][i])) / fmax(1e-2, fabs(rp[b][i]));
            if (e > worst) worst = e;
        }
        free(p[b]), free(v[b]), free(rp[b]), free(rv[b]);
    }
    free(g), free(rg);
    return worst;
}

static void test_larc(void) {
    const long sizes[] = { 1, 1000, 100003 };   /* 100003 takes the parallel path */
    for (int k = 0; k < 3; k++)
        for (int form = 0; form < 3; form++) {   /* NVCaffe's scale, clip; Intel's (scale) */
            rt_larc_policy pol = form == 1 ? RT_LARC_CLIP : RT_LARC_SCALE;
            int intel = form == 2;
            double e = larc_run(sizes[k], pol, 1.0f, intel, 0), es = larc_run(sizes[k], pol, 1024.0f, intel, 0);
            if (e > 1e-5 || es > 1e-5)
                fprintf(stderr, "larc form %d n=%ld: max rel diff %.3g (grad scale 1), %.3g (1024)\n", form, sizes[k], e, es);
            CHECK(e <= 1e-5 && es <= 1e-5);
            /* the same comparison rejects the rule without (1 − momentum) (trainc's lars has
             * none), and Intel's with the blob's decay (trainc's lars takes that one) */
            if (sizes[k] > 1) CHECK(larc_run(sizes[k], pol, 1.0f, intel, 1) > 1e-3);
        }
}

/* One step by hand: ‖w‖ = 5, ‖g‖ = 1, rate = 0.1·0.002·5 = 0.001; clip keeps min(0.1, 0.001),
 * scale 0.1·0.001; lr_mult 2 is replaced by the rate, not multiplied. */
static void test_larc_by_hand(void) {
    for (int clip = 0; clip < 2; clip++) {
        rt_optim_config c = { .kind = RT_OPTIM_SGD, .sgd = { .momentum = 0.9f, .lr_in_velocity = true,
                                                             .larc = clip ? RT_LARC_CLIP : RT_LARC_SCALE, .larc_eta = 0.002f } };
        float p[2] = { 3, 4 }, v[2] = { 0 }, g[2] = { 0.6f, 0.8f };
        rt_optim_args a = { .lr = 0.1f, .weight_decay = 0.0f, .grad_scale = 1.0f, .step = 0 };
        CHECK(rt_optim_apply_mults(&c, &a, 2.0f, 1.0f) && a.lr == 0.1f);
        rt_optim_step(p, v, g, 2, false, &c, &a);
        double local = clip ? 0.001 : 0.0001;
        CHECK_NEAR(p[0], 3 - local * 0.6, 1e-7);
        CHECK_NEAR(v[1], local * 0.8, 1e-9);
        CHECK_NEAR(rt_larc_rate(&c.sgd, 25.0, 1.0, 1.0f), 0.001, 1e-9);
        CHECK(rt_larc_rate(&c.sgd, 0.0, 1.0, 1.0f) == 1.0f);   /* a zero blob: rate 1 */
    }
}

/* ---- Intel Caffe's warmup ------------------------------------------------------------------ */
/* GetWarmUpLR, and GetLearningRate with the multistep policy */
static double intel_warmup_lr(long it, long warmup, double base, double start) {
    if (it < 0) it = 0;
    return ((double)it * base + (double)(warmup - it) * start) / (double)warmup;
}

static double intel_lr(long it, long warmup, double base, double start, const long *steps, int nsteps, double gamma) {
    if (it < warmup) return intel_warmup_lr(it, warmup, base, start);
    int k = 0;
    while (k < nsteps && it >= steps[k]) k++;
    return base * pow(gamma, k);
}

static rt_lr_config intel_config(long warmup, double base, double start, const long *steps, int nsteps, double gamma,
                                 long iterations) {
    rt_lr_config c = { .base = base, .per_batch = 1, .global_batch = 1, .steps_per_epoch = 10,
                       .epochs = (int)((iterations + 9) / 10), .iterations = iterations,
                       .milestone_unit = RT_LR_UNIT_ITERATIONS, .stepping = RT_LR_PER_ITERATION,
                       .warmup = { .length = (double)warmup, .unit = RT_LR_UNIT_ITERATIONS, .kind = RT_WARMUP_LINEAR,
                                   .start = RT_WARMUP_FROM_LR, .start_lr = start, .replaces_schedule = true },
                       .kind = RT_LR_MULTISTEP, .multistep = { .count = nsteps, .gamma = gamma } };
    for (int i = 0; i < nsteps; i++) c.multistep.milestones[i] = (double)steps[i];
    return c;
}

/* Worst relative difference of weights and history after the run; correct: whether trainc
 * applies the correction (the mutant does not). */
static double warmup_run(long n, int correct) {
    const long warmup = 12, steps[2] = { 5, 20 }, iterations = 30;   /* a drop inside the warmup */
    const double base = 0.4, start = 0.05, gamma = 0.1, mom = 0.9, wd = 1e-3;
    rt_lr_config lc = intel_config(warmup, base, start, steps, 2, gamma, iterations);
    rt_err err;
    CHECK(rt_lr_validate(&lc, &err) == RT_OK);
    rt_sgd_config c = { .momentum = (float)mom, .lr_in_velocity = true, .warmup_momentum_correction = correct };
    float *p = malloc(n * sizeof *p), *v = calloc(n, sizeof *v), *g = malloc(n * sizeof *g);
    double *rp = malloc(n * sizeof *rp), *rv = calloc(n, sizeof *rv), *rg = malloc(n * sizeof *rg);
    for (long i = 0; i < n; i++) rp[i] = p[i] = (float)uniform();
    double worst_lr = 0;
    for (long s = 0; s < iterations; s++) {
        for (long i = 0; i < n; i++) rg[i] = g[i] = (float)uniform();
        double rate = intel_lr(s, warmup, base, start, steps, 2, gamma);
        worst_lr = fmax(worst_lr, fabs(rt_lr_at(&lc, s) - rate) / rate);
        rt_optim_args a = { .lr = (float)rt_lr_at(&lc, s), .weight_decay = (float)wd, .grad_scale = 1.0f, .step = s,
                            .momentum_scale = (float)rt_lr_warmup_ratio(&lc, s) };
        rt_sgd_step(p, v, g, n, &c, &a);
        double m = mom;   /* ComputeUpdateValue's momentum correction */
        if (s < warmup) m = mom * (rate / intel_warmup_lr(s - 1, warmup, base, start));
        for (long i = 0; i < n; i++) {
            rv[i] = m * rv[i] + rate * (rg[i] + wd * rp[i]);
            rp[i] -= rv[i];
        }
    }
    CHECK(worst_lr < 1e-12);   /* the LR itself, in double */
    double worst = 0;
    for (long i = 0; i < n; i++) worst = fmax(worst, fmax(fabs(p[i] - rp[i]), fabs(v[i] - rv[i])) / fmax(1.0, fabs(rp[i])));
    free(p), free(v), free(g), free(rp), free(rv), free(rg);
    return worst;
}

static void test_intel_warmup(void) {
    const long sizes[] = { 1, 1000, 100003 };
    for (int k = 0; k < 3; k++) {
        double e = warmup_run(sizes[k], 1);
        if (e > 1e-5) fprintf(stderr, "intel warmup n=%ld: max rel diff %.3g\n", sizes[k], e);
        CHECK(e <= 1e-5);
        CHECK(warmup_run(sizes[k], 0) > 1e-3);   /* without the correction: Caffe's plain form */
    }
    /* the ratio: 1 at step 0 (lr_-1 = lr_0), lr_1/lr_0 after, 1 from the warmup's end */
    const long steps[1] = { 100 };
    rt_lr_config lc = intel_config(10, 1.0, 0.1, steps, 1, 0.1, 200);
    CHECK(rt_lr_warmup_ratio(&lc, 0) == 1.0);
    CHECK_NEAR(rt_lr_warmup_ratio(&lc, 1), (float)0.19 / (float)0.1, 1e-7);
    CHECK(rt_lr_warmup_ratio(&lc, 10) == 1.0);
    /* a warmup longer than the run is Caffe's too (Intel's benchmark resnet_50 solver) */
    rt_lr_config longer = intel_config(300, 1.0, 0.1, steps, 1, 0.1, 200);
    rt_err err;
    CHECK(rt_lr_validate(&longer, &err) == RT_OK);
    CHECK_NEAR(rt_lr_at(&longer, 150), (150 * 1.0 + 150 * 0.1) / 300, 1e-12);
}

/* Intel's poly after its warmup runs on the clock from 0 (base (1 − iter/max_iter)^power):
 * the LR steps down at the warmup's end; NVCaffe's rampup is quadratic, then poly to min_lr. */
static void test_forks_poly(void) {
    const long warmup = 50, total = 200;
    const double base = 0.6, start = 0.05, power = 2;
    rt_lr_config c = { .base = base, .per_batch = 1, .global_batch = 1, .steps_per_epoch = 10, .epochs = 20,
                       .iterations = total, .stepping = RT_LR_PER_ITERATION,
                       .warmup = { .length = warmup, .unit = RT_LR_UNIT_ITERATIONS, .kind = RT_WARMUP_LINEAR,
                                   .start = RT_WARMUP_FROM_LR, .start_lr = start, .replaces_schedule = true },
                       .kind = RT_LR_POLYNOMIAL, .polynomial = { .power = power } };
    rt_err err;
    CHECK(rt_lr_validate(&c, &err) == RT_OK);
    double worst = 0, worst_delayed = 0;
    rt_lr_config delayed = c;   /* trainc's own convention: the curve starts at the warmup's end */
    delayed.warmup.replaces_schedule = false;
    for (long it = 0; it < total; it++) {
        double want = it < warmup ? intel_warmup_lr(it, warmup, base, start) : base * pow(1.0 - (double)it / total, power);
        worst = fmax(worst, fabs(rt_lr_at(&c, it) - want) / want);
        worst_delayed = fmax(worst_delayed, fabs(rt_lr_at(&delayed, it) - want) / want);
    }
    CHECK(worst < 1e-12);
    CHECK(worst_delayed > 1e-2);
    /* NVCaffe: rampup_interval 40 from rampup_lr 0.01, poly power 2 to min_lr 0.001 */
    rt_lr_config r = c;
    r.warmup = (rt_warmup_config){ .length = 40, .unit = RT_LR_UNIT_ITERATIONS, .kind = RT_WARMUP_QUADRATIC,
                                   .start = RT_WARMUP_FROM_LR, .start_lr = 0.01, .replaces_schedule = true };
    r.polynomial.end_lr = 0.001;
    CHECK(rt_lr_validate(&r, &err) == RT_OK);
    worst = 0;
    for (long it = 0; it < total; it++) {
        double a = (double)it / 40;
        double want = it < 40 ? 0.01 + (base - 0.01) * a * a : (base - 0.001) * pow(1.0 - (double)it / total, power) + 0.001;
        worst = fmax(worst, fabs(rt_lr_at(&r, it) - want) / want);
    }
    CHECK(worst < 1e-12);
}

int main(void) {
    test_larc_by_hand();
    test_larc();
    test_intel_warmup();
    test_forks_poly();
    return test_finish("test_optim_caffe_forks");
}
