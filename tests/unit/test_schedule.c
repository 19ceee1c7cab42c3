/* LR schedule tests: each torch scheduler's numbers (from tests/ref/lr_reference.py, which
 * replays torch's recursive get_lr updates), warmup composition, scaling rules, key points
 * and validation. */
#include <string.h>
#include "rt_schedule.h"
#include "testlib.h"

#define TOL 1e-12

static rt_lr_config per_epoch(double base, int epochs, rt_lr_kind kind) {
    return (rt_lr_config){ .base = base, .steps_per_epoch = 100, .epochs = epochs,
                           .stepping = RT_LR_PER_EPOCH, .kind = kind };
}

/* Per-epoch stepping: epoch e is steps [100e, 100e + 99]; check both ends of each epoch. */
#define CHECK_EPOCH(cfg, e, want) do { \
    CHECK_NEAR(rt_lr_at(&(cfg), 100L * (e)), (want), TOL); \
    CHECK_NEAR(rt_lr_at(&(cfg), 100L * (e) + 99), (want), TOL); } while (0)

static void test_step_lr(void) {
    rt_lr_config c = per_epoch(0.1, 90, RT_LR_STEP);
    c.step.every = 30; c.step.gamma = 0.1;
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_EPOCH(c, 0, 0.1);
    CHECK_EPOCH(c, 29, 0.1);
    CHECK_EPOCH(c, 30, 0.010000000000000002);
    CHECK_EPOCH(c, 59, 0.010000000000000002);
    CHECK_EPOCH(c, 60, 0.0010000000000000002);
    CHECK_EPOCH(c, 89, 0.0010000000000000002);
}

static void test_multistep_lr(void) {
    rt_lr_config c = per_epoch(1.6, 90, RT_LR_MULTISTEP);
    c.multistep = (rt_lr_multistep_params){ .milestones = {30, 60, 80}, .count = 3, .gamma = 0.1 };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_EPOCH(c, 29, 1.6);
    CHECK_EPOCH(c, 30, 0.16000000000000003);
    CHECK_EPOCH(c, 60, 0.016000000000000004);
    CHECK_EPOCH(c, 79, 0.016000000000000004);
    CHECK_EPOCH(c, 80, 0.0016000000000000005);
    CHECK_EPOCH(c, 89, 0.0016000000000000005);
}

static void test_exponential_lr(void) {
    rt_lr_config c = per_epoch(0.4, 90, RT_LR_EXPONENTIAL);
    c.exponential.gamma = 0.95;
    CHECK_EPOCH(c, 0, 0.4);
    CHECK_EPOCH(c, 1, 0.38);
    CHECK_EPOCH(c, 10, 0.23949477569535144);
    CHECK_EPOCH(c, 89, 0.0041635219830142923);
    /* Per iteration the exponent is the fractional epoch: 0.4 · 0.95^1.5 at step 150. */
    c.stepping = RT_LR_PER_ITERATION;
    CHECK_NEAR(rt_lr_at(&c, 150), 0.4 * pow(0.95, 1.5), TOL);
}

static void test_cosine_lr(void) {
    rt_lr_config c = per_epoch(0.1, 90, RT_LR_COSINE);
    c.cosine.min_lr = 0.001;
    CHECK_EPOCH(c, 0, 0.1);
    CHECK_EPOCH(c, 1, 0.099969845937445248);
    CHECK_EPOCH(c, 30, 0.075250000000000039);
    CHECK_EPOCH(c, 45, 0.050500000000000024);
    CHECK_EPOCH(c, 89, 0.0010301540625547599);
    CHECK_NEAR(rt_lr_at(&c, 9000), 0.001, TOL);   /* T_max: torch's value, the floor */
    CHECK_NEAR(rt_lr_at(&c, 12000), 0.001, TOL);  /* past the end it stays at the floor */
}

static void test_polynomial_lr(void) {
    rt_lr_config c = per_epoch(0.1, 85, RT_LR_POLYNOMIAL);
    c.polynomial.power = 2.0;
    CHECK_EPOCH(c, 0, 0.1);
    CHECK_EPOCH(c, 1, 0.097660899653979255);
    CHECK_EPOCH(c, 40, 0.02802768166089966);
    CHECK_EPOCH(c, 84, 1.3840830449826899e-05);
    CHECK_NEAR(rt_lr_at(&c, 8500), 0.0, TOL);
    /* With end_lr the curve is end + (P − end)(1 − p)^2: halfway, (0.1 − 0.01)/4 + 0.01. */
    c.polynomial.end_lr = 0.01; c.epochs = 90;
    CHECK_NEAR(rt_lr_at(&c, 4500), 0.0325, TOL);
}

/* torch LinearLR(start 1/3, end 1, total_iters 10) as a warmup in front of a constant LR. */
static void test_linear_warmup(void) {
    rt_lr_config c = per_epoch(0.5, 20, RT_LR_CONSTANT);
    c.warmup = (rt_warmup_config){ .length = 10, .start_factor = 1.0 / 3.0 };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_EPOCH(c, 0, 0.16666666666666666);
    CHECK_EPOCH(c, 1, 0.19999999999999998);
    CHECK_EPOCH(c, 5, 0.33333333333333331);
    CHECK_EPOCH(c, 9, 0.46666666666666667);
    CHECK_EPOCH(c, 10, 0.5);
    CHECK_EPOCH(c, 11, 0.5);
    CHECK(rt_lr_warmup_steps(&c) == 1000);
}

/* torch LinearLR(1, 0, 100) stepped per iteration: 2.0 decaying linearly over 100 steps. */
static void test_linear_decay(void) {
    rt_lr_config c = { .base = 2.0, .steps_per_epoch = 10, .epochs = 10, .kind = RT_LR_LINEAR };
    CHECK_NEAR(rt_lr_at(&c, 0), 2.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 1), 1.98, TOL);
    CHECK_NEAR(rt_lr_at(&c, 37), 1.2599999999999993, 1e-11);
    CHECK_NEAR(rt_lr_at(&c, 99), 0.019999999999999987, 1e-11);
    CHECK_NEAR(rt_lr_at(&c, 100), 0.0, TOL);
}

static void test_one_cycle(void) {
    rt_lr_config c = { .steps_per_epoch = 35, .epochs = 10, .kind = RT_LR_ONE_CYCLE,
        .one_cycle = { .max_lr = 3e-3, .pct_start = 0.25, .div_factor = 25,
                       .final_div_factor = 1e4, .anneal = RT_ANNEAL_COS } };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_at(&c, 0), 0.00011999999999999988, TOL);
    CHECK_NEAR(rt_lr_at(&c, 1), 0.00012094962532416655, TOL);
    CHECK_NEAR(rt_lr_at(&c, 50), 0.0019094951012307896, TOL);
    CHECK_NEAR(rt_lr_at(&c, 86), 0.0029997625740956738, TOL);
    CHECK_NEAR(rt_lr_at(&c, 87), 0.0029999731441211651, TOL);
    CHECK_NEAR(rt_lr_at(&c, 88), 0.0029997583028603799, TOL);
    CHECK_NEAR(rt_lr_at(&c, 200), 0.0018162607848977287, TOL);
    CHECK_NEAR(rt_lr_at(&c, 349), 1.2e-08, TOL);
    CHECK_NEAR(rt_lr_peak(&c), 3e-3, TOL);

    rt_lr_config l = { .steps_per_epoch = 10, .epochs = 10, .kind = RT_LR_ONE_CYCLE,
        .one_cycle = { .max_lr = 0.1, .pct_start = 0.3, .div_factor = 25,
                       .final_div_factor = 1e4, .anneal = RT_ANNEAL_LINEAR } };
    CHECK_NEAR(rt_lr_at(&l, 0), 0.004, TOL);
    CHECK_NEAR(rt_lr_at(&l, 10), 0.037103448275862067, TOL);
    CHECK_NEAR(rt_lr_at(&l, 29), 0.1, TOL);
    CHECK_NEAR(rt_lr_at(&l, 30), 0.098571434285714285, TOL);
    CHECK_NEAR(rt_lr_at(&l, 60), 0.055714462857142863, TOL);
    CHECK_NEAR(rt_lr_at(&l, 99), 3.9999999999762448e-07, 1e-9);
}

/* Goyal et al. at toy size: 10 steps/epoch, base 0.1 per 256, global 8192 (k = 32), 5-epoch
 * gradual warmup from the unscaled base, drops at epochs 30/60/80 counted from the start.
 * Expected = torch ChainedScheduler(LinearLR(1/32, 1, 50), MultiStepLR([300,600,800], .1)). */
static rt_lr_config goyal(void) {
    return (rt_lr_config){ .base = 0.1, .per_batch = 256, .scaling = RT_LR_SCALE_LINEAR,
        .global_batch = 8192, .steps_per_epoch = 10, .epochs = 90,
        .warmup = { .length = 5, .kind = RT_WARMUP_LINEAR, .start = RT_WARMUP_FROM_BASE },
        .kind = RT_LR_MULTISTEP,
        .multistep = { .milestones = {30, 60, 80}, .count = 3, .gamma = 0.1 } };
}

static void test_goyal_warmup(void) {
    rt_lr_config c = goyal();
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_peak(&c), 3.2, TOL);
    CHECK(rt_lr_warmup_steps(&c) == 50);
    CHECK(rt_lr_total_steps(&c) == 900);
    const long steps[] = {0, 1, 25, 49, 50, 299, 300, 600, 899};
    const double want[] = {0.1, 0.162, 1.65, 3.138, 3.2, 3.2, 0.32, 0.032, 0.0032};
    for (int i = 0; i < 9; i++) CHECK_NEAR(rt_lr_at(&c, steps[i]), want[i], TOL);
    /* The same warmup written as a start factor of 1/k. */
    c.warmup.start = RT_WARMUP_FROM_FACTOR; c.warmup.start_factor = 1.0 / 32;
    for (int i = 0; i < 9; i++) CHECK_NEAR(rt_lr_at(&c, steps[i]), want[i], TOL);
    /* Warmup given as 50 iterations is the same run. */
    c.warmup.unit = RT_LR_UNIT_ITERATIONS; c.warmup.length = 50;
    for (int i = 0; i < 9; i++) CHECK_NEAR(rt_lr_at(&c, steps[i]), want[i], TOL);
}

/* torch SequentialLR([LinearLR(0.1, 1, 20), CosineAnnealingLR(180)], milestones=[20]). */
static void test_warmup_then_cosine(void) {
    rt_lr_config c = { .base = 0.4, .steps_per_epoch = 20, .epochs = 10, .kind = RT_LR_COSINE,
        .warmup = { .length = 20, .unit = RT_LR_UNIT_ITERATIONS, .start_factor = 0.1 } };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    const long steps[] = {0, 10, 19, 20, 21, 110, 199};
    const double want[] = {0.04, 0.22, 0.382, 0.4, 0.3999695390312783, 0.2,
                           3.0460968721746079e-05};
    for (int i = 0; i < 7; i++) CHECK_NEAR(rt_lr_at(&c, steps[i]), want[i], 1e-11);
}

/* IntelCaffe (PRACE 5a): 5 warmup epochs, then linear decay over the remaining 85. */
static void test_warmup_then_linear_decay(void) {
    rt_lr_config c = { .base = 1.0, .steps_per_epoch = 10, .epochs = 90, .kind = RT_LR_LINEAR,
        .warmup = { .length = 5 } };
    CHECK_NEAR(rt_lr_at(&c, 0), 0.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 25), 0.5, TOL);
    CHECK_NEAR(rt_lr_at(&c, 50), 1.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 50 + 425), 0.5, TOL);
    CHECK_NEAR(rt_lr_at(&c, 899), 1.0 / 850, TOL);
}

static void test_constant_warmup_and_exponential(void) {
    rt_lr_config c = { .base = 1.0, .steps_per_epoch = 10, .epochs = 20,
        .kind = RT_LR_EXPONENTIAL, .exponential.gamma = 0.5,
        .warmup = { .length = 2, .kind = RT_WARMUP_CONSTANT, .start_factor = 0.1 } };
    CHECK_NEAR(rt_lr_at(&c, 0), 0.1, TOL);
    CHECK_NEAR(rt_lr_at(&c, 19), 0.1, TOL);
    CHECK_NEAR(rt_lr_at(&c, 20), 1.0, TOL);     /* the exponential starts at warmup end */
    CHECK_NEAR(rt_lr_at(&c, 30), 0.5, TOL);
    CHECK_NEAR(rt_lr_at(&c, 45), pow(0.5, 2.5), TOL);
}

static void test_scaling_rules(void) {
    rt_lr_config c = { .base = 0.1, .per_batch = 256, .global_batch = 1024,
                       .steps_per_epoch = 1, .epochs = 1 };
    CHECK_NEAR(rt_lr_peak(&c), 0.1, TOL);
    c.scaling = RT_LR_SCALE_SQRT;
    CHECK_NEAR(rt_lr_peak(&c), 0.2, TOL);
    c.scaling = RT_LR_SCALE_LINEAR;
    CHECK_NEAR(rt_lr_peak(&c), 0.4, TOL);
    c.global_batch = 13312;                      /* IBM HAL, 64 GPUs × 208 */
    CHECK_NEAR(rt_lr_peak(&c), 5.2, TOL);
    CHECK_NEAR(rt_lr_at(&c, 0), 5.2, TOL);
}

/* 0.7 epochs × 10 steps is 7.000000000000001 in doubles; the drop must still be step 7. */
static void test_fractional_milestone(void) {
    rt_lr_config c = { .base = 1.0, .steps_per_epoch = 10, .epochs = 2, .kind = RT_LR_MULTISTEP,
        .multistep = { .milestones = {0.7}, .count = 1, .gamma = 0.5 } };
    CHECK_NEAR(rt_lr_at(&c, 6), 1.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 7), 0.5, TOL);
    CHECK(rt_lr_step_of_epoch(&c, 0.7) == 7);
}

static void test_key_points(void) {
    rt_lr_config c = goyal();
    rt_lr_point p[8];
    int n = rt_lr_key_points(p, 8, &c);
    CHECK(n == 6);
    const long steps[] = {0, 50, 300, 600, 800, 899};
    const double lrs[] = {0.1, 3.2, 0.32, 0.032, 0.0032, 0.0032};
    const char *what[] = {"start", "warmup end", "drop", "drop", "drop", "end"};
    for (int i = 0; i < 6 && i < n; i++) {
        CHECK(p[i].step == steps[i]);
        CHECK_NEAR(p[i].lr, lrs[i], TOL);
        CHECK(strcmp(p[i].what, what[i]) == 0);
    }
    CHECK_NEAR(p[2].epoch, 30.0, TOL);
    rt_lr_point few[2] = {{0}};
    CHECK(rt_lr_key_points(few, 2, &c) == 6);     /* the count, though only 2 fit */
    CHECK(few[1].step == 50);

    rt_lr_config oc = { .steps_per_epoch = 35, .epochs = 10, .kind = RT_LR_ONE_CYCLE,
        .one_cycle = { .max_lr = 3e-3, .pct_start = 0.25, .div_factor = 25,
                       .final_div_factor = 1e4 } };
    n = rt_lr_key_points(p, 8, &oc);
    CHECK(n == 3);
    CHECK(p[1].step == 87 && strcmp(p[1].what, "peak") == 0);
    CHECK(p[2].step == 349);

    rt_lr_config st = per_epoch(0.1, 90, RT_LR_STEP);
    st.step.every = 30; st.step.gamma = 0.1;
    n = rt_lr_key_points(p, 8, &st);
    CHECK(n == 4);
    CHECK(p[1].step == 3000 && p[2].step == 6000 && p[3].step == 8999);
}

static void check_rejects(const rt_lr_config *c, rt_status code, const char *needle) {
    rt_err err = {0};
    CHECK(rt_lr_validate(c, &err) == code);
    CHECK(strstr(err.msg, needle) != NULL);
    if (!strstr(err.msg, needle)) fprintf(stderr, "  message was: %s\n", err.msg);
}

static void test_validate(void) {
    rt_lr_config c = goyal();
    c.multistep.milestones[0] = 4;
    check_rejects(&c, RT_E_RANGE, "inside the 5-epoch warmup");
    c = goyal(); c.multistep.milestones[1] = 20;
    check_rejects(&c, RT_E_RANGE, "milestones must increase");
    c = goyal(); c.steps_per_epoch = 0;
    check_rejects(&c, RT_E_RANGE, "steps_per_epoch");
    c = goyal(); c.global_batch = 0;
    check_rejects(&c, RT_E_RANGE, "global batch");
    c = goyal(); c.warmup.length = 90;
    check_rejects(&c, RT_E_RANGE, "leaves nothing");
    rt_lr_config oc = { .steps_per_epoch = 35, .epochs = 10, .kind = RT_LR_ONE_CYCLE,
        .one_cycle = { .max_lr = 3e-3, .pct_start = 0.25, .div_factor = 25,
                       .final_div_factor = 1e4 }, .warmup = { .length = 1 } };
    check_rejects(&oc, RT_E_ARG, "one_cycle");
    oc.warmup.length = 0; oc.one_cycle.pct_start = 1.0;
    check_rejects(&oc, RT_E_RANGE, "pct_start");
    CHECK(strcmp(rt_lr_kind_name(RT_LR_COSINE), "cosine") == 0);
}

int main(void) {
    test_step_lr();
    test_multistep_lr();
    test_exponential_lr();
    test_cosine_lr();
    test_polynomial_lr();
    test_linear_warmup();
    test_linear_decay();
    test_one_cycle();
    test_goyal_warmup();
    test_warmup_then_cosine();
    test_warmup_then_linear_decay();
    test_constant_warmup_and_exponential();
    test_scaling_rules();
    test_fractional_milestone();
    test_key_points();
    test_validate();
    return test_finish("test_schedule");
}
