/* Run length and milestones in iterations (Caffe solvers' max_iter and stepvalue): the LR
 * against closed forms written here, and the key points. IntelCaffe's 448-node run is the
 * example: 89 steps per epoch, 446 warmup iterations, linear decay over 7,594 more. */
#include <math.h>
#include "rt_schedule.h"
#include "testlib.h"

#define TOL 1e-12

static rt_lr_config intelcaffe(void) {
    return (rt_lr_config){ .base = 0.1, .per_batch = 256, .scaling = RT_LR_SCALE_LINEAR,
                           .global_batch = 14336, .steps_per_epoch = 89, .epochs = 91,
                           .iterations = 8040, .stepping = RT_LR_PER_ITERATION,
                           .warmup = { .length = 446, .unit = RT_LR_UNIT_ITERATIONS },
                           .kind = RT_LR_POLYNOMIAL, .polynomial = { .power = 1, .end_lr = 0 } };
}

static void test_decay_spans_the_iterations(void) {
    rt_lr_config c = intelcaffe();
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK(rt_lr_total_steps(&c) == 8040);
    CHECK(rt_lr_warmup_steps(&c) == 446);
    double peak = 0.1 * 14336 / 256;
    CHECK_NEAR(rt_lr_at(&c, 0), 0.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 223), peak * 223 / 446, TOL);
    CHECK_NEAR(rt_lr_at(&c, 446), peak, TOL);
    /* u steps into the decay the LR is peak (1 - u / 7594). */
    for (long u = 0; u < 7594; u += 1000) CHECK_NEAR(rt_lr_at(&c, 446 + u), peak * (1.0 - u / 7594.0), 1e-12);
    CHECK_NEAR(rt_lr_at(&c, 8039), peak / 7594.0, 1e-12);
    CHECK_NEAR(rt_lr_total_epochs(&c), 8040.0 / 89.0, TOL);
}

static void test_milestones_in_iterations(void) {
    rt_lr_config c = { .base = 1.0, .steps_per_epoch = 89, .epochs = 3, .iterations = 250,
                       .stepping = RT_LR_PER_ITERATION, .milestone_unit = RT_LR_UNIT_ITERATIONS,
                       .kind = RT_LR_MULTISTEP,
                       .multistep = { .milestones = { 100, 200 }, .count = 2, .gamma = 0.5 } };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_at(&c, 99), 1.0, TOL);
    CHECK_NEAR(rt_lr_at(&c, 100), 0.5, TOL);
    CHECK_NEAR(rt_lr_at(&c, 199), 0.5, TOL);
    CHECK_NEAR(rt_lr_at(&c, 200), 0.25, TOL);
    rt_lr_point pts[8];
    int n = rt_lr_key_points(pts, 8, &c);
    CHECK(n == 4);
    CHECK(pts[1].step == 100 && pts[2].step == 200 && pts[3].step == 249);

    rt_lr_config s = c;
    s.kind = RT_LR_STEP;
    s.step = (rt_lr_step_params){ .every = 60, .gamma = 0.1 };
    CHECK(rt_lr_validate(&s, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_at(&s, 59), 1.0, TOL);
    CHECK_NEAR(rt_lr_at(&s, 60), 0.1, TOL);
    CHECK_NEAR(rt_lr_at(&s, 239), 0.1 * 0.1 * 0.1, 1e-15);
    n = rt_lr_key_points(pts, 8, &s);
    CHECK(n == 6 && pts[1].step == 60 && pts[4].step == 240);
}

static void test_milestone_inside_warmup_refused(void) {
    rt_lr_config c = intelcaffe();
    c.kind = RT_LR_MULTISTEP;
    c.milestone_unit = RT_LR_UNIT_ITERATIONS;
    c.multistep = (rt_lr_multistep_params){ .milestones = { 400 }, .count = 1, .gamma = 0.1 };
    rt_err err;
    CHECK(rt_lr_validate(&c, &err) == RT_E_RANGE);
}

/* Caffe's inv and sigmoid policies (sgd_solver.cpp GetLearningRate), in iterations from the
 * start: LeNet's solver (base 0.01, gamma 1e-4, power 0.75) and a sigmoid rising at 300. */
static void test_caffe_inv_sigmoid(void) {
    rt_lr_config c = { .base = 0.01, .steps_per_epoch = 100, .epochs = 100, .iterations = 10001,
                       .stepping = RT_LR_PER_ITERATION, .kind = RT_LR_INV, .inv = { .gamma = 1e-4, .power = 0.75 } };
    CHECK(rt_lr_validate(&c, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_at(&c, 0), 0.01, TOL);
    CHECK_NEAR(rt_lr_at(&c, 5000), 0.01 * pow(1.5, -0.75), TOL);
    CHECK_NEAR(rt_lr_at(&c, 10000), 0.01 * pow(2.0, -0.75), TOL);   /* 0.00594604 */
    c.stepping = RT_LR_PER_EPOCH;   /* sampled at epoch starts, still in iterations */
    CHECK_NEAR(rt_lr_at(&c, 5050), 0.01 * pow(1.5, -0.75), TOL);

    rt_lr_config g = { .base = 0.1, .steps_per_epoch = 100, .epochs = 6, .stepping = RT_LR_PER_ITERATION,
                       .kind = RT_LR_SIGMOID, .sigmoid = { .gamma = -0.01, .step_iterations = 300 } };
    CHECK(rt_lr_validate(&g, NULL) == RT_OK);
    CHECK_NEAR(rt_lr_at(&g, 300), 0.05, TOL);
    CHECK_NEAR(rt_lr_at(&g, 0), 0.1 / (1.0 + exp(-0.01 * 300)), TOL);
    CHECK_NEAR(rt_lr_at(&g, 500), 0.1 / (1.0 + exp(0.01 * 200)), TOL);
    rt_lr_point pts[8];
    int n = rt_lr_key_points(pts, 8, &g);
    CHECK(n == 3 && pts[1].step == 300 && pts[2].step == 599);
    g.sigmoid.gamma = NAN;
    rt_err err;
    CHECK(rt_lr_validate(&g, &err) == RT_E_RANGE);
}

int main(void) {
    test_caffe_inv_sigmoid();
    test_decay_spans_the_iterations();
    test_milestones_in_iterations();
    test_milestone_inside_warmup_refused();
    return test_finish("test_schedule_iterations");
}
