/* The activation family (relu6, sigmoid, silu, hardswish, hardsigmoid): forward vs torch's
 * formulas written out directly, backward vs central differences in double (inputs kept away
 * from the kinks: relu6 at 0 and 6, the hard ones at -3 and 3), the one-sided slopes torch
 * takes at the kinks themselves, the float build vs the double build, and in-place use. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

static const char *const names[] = { "relu6", "sigmoid", "silu", "hardswish", "hardsigmoid" };

/* torch's definitions (torch.nn.functional), in double */
static double ref_act(double x, int fn) {
    double s = 1 / (1 + exp(-x)), r6 = fmin(fmax(x + 3, 0), 6);
    switch (fn) {
    case RT_ACTIVATION_RELU6: return fmin(fmax(x, 0), 6);
    case RT_ACTIVATION_SIGMOID: return s;
    case RT_ACTIVATION_SILU: return x * s;
    case RT_ACTIVATION_HARDSWISH: return x * r6 / 6;
    default: return r6 / 6;
    }
}

/* Values over [-9, 9] (past both saturations) at least gap from every kink. */
static double *rand_off_kinks(long n, double gap) {
    static const double kinks[] = { -3, 0, 3, 6 };
    double *x = gc_alloc(n);
    for (long i = 0; i < n; i++) {
        for (;;) {
            double v = gc_uniform(-9, 9);
            int near = 0;
            for (int k = 0; k < 4; k++) near |= fabs(v - kinks[k]) < gap;
            if (!near) { x[i] = v; break; }
        }
    }
    return x;
}

typedef struct { double *in, *out, *r; long n; rt_activation fn; } act_ctx;

static double act_loss(void *p) {
    act_ctx *c = p;
    activation_forward_f64(c->out, c->in, c->n, c->fn);
    return gc_dot(c->out, c->r, c->n);
}

/* grad: check the backward against central differences (each point is a forward over all n:
 * the large, threaded size is checked against the small size's verified double build). */
static void test_one(rt_activation fn, long n, int grad) {
    act_ctx c = { rand_off_kinks(n, 0.01), gc_alloc(n), gc_rand(n, -1, 1), n, fn };
    char what[80];
    act_loss(&c);
    double *ref = gc_alloc(n);
    for (long i = 0; i < n; i++) ref[i] = ref_act(c.in[i], fn);
    snprintf(what, sizeof what, "%s forward vs direct", names[fn]);
    gc_compare(what, c.out, ref, n, 1e-14);
    double *din = gc_alloc(n);
    activation_backward_f64(din, c.r, c.in, n, fn);
    snprintf(what, sizeof what, "%s dinput", names[fn]);
    if (grad) gc_check(what, c.in, n, din, act_loss, &c);

    float *fi = gc_to_f32(c.in, n), *fr = gc_to_f32(c.r, n);
    float *fo = malloc(sizeof(float) * n), *fd = malloc(sizeof(float) * n);
    activation_forward(fo, fi, n, fn);
    activation_backward(fd, fr, fi, n, fn);
    snprintf(what, sizeof what, "%s float forward", names[fn]);
    gc_compare_f32(what, fo, ref, n);
    snprintf(what, sizeof what, "%s float dinput", names[fn]);
    gc_compare_f32(what, fd, din, n);
    /* in place, as the elementwise ops allow: backward first (it reads the input), into dout */
    activation_backward(fr, fr, fi, n, fn);
    activation_forward(fi, fi, n, fn);
    snprintf(what, sizeof what, "%s in-place forward", names[fn]);
    gc_compare_f32(what, fi, ref, n);
    snprintf(what, sizeof what, "%s in-place backward", names[fn]);
    gc_compare_f32(what, fr, din, n);
    free(fi); free(fr); free(fo); free(fd); free(c.in); free(c.out); free(c.r); free(ref); free(din);
}

/* At the kinks torch's autograd takes one side; so must we (CPU and, through
 * test_ops_gpu.c, CUDA): relu6 (hardtanh) passes only strictly inside (0, 6), hardsigmoid
 * only inside (-3, 3), hardswish takes (2x+3)/6 on the closed [-3, 3]. Extreme inputs stay
 * finite (sigmoid's exp never overflows). */
static void test_kinks(void) {
    static const struct { rt_activation fn; double x, slope, y; } cases[] = {
        { RT_ACTIVATION_RELU6, 0, 0, 0 },        { RT_ACTIVATION_RELU6, 6, 0, 6 },
        { RT_ACTIVATION_HARDSIGMOID, -3, 0, 0 }, { RT_ACTIVATION_HARDSIGMOID, 3, 0, 1 },
        { RT_ACTIVATION_HARDSWISH, -3, -0.5, 0 }, { RT_ACTIVATION_HARDSWISH, 3, 1.5, 3 },
        { RT_ACTIVATION_SIGMOID, -800, 0, 0 },   { RT_ACTIVATION_SIGMOID, 800, 0, 1 },
        { RT_ACTIVATION_SILU, -800, 0, 0 },      { RT_ACTIVATION_SILU, 800, 1, 800 },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double x = cases[k].x, y, one = 1, d;
        activation_forward_f64(&y, &x, 1, cases[k].fn);
        activation_backward_f64(&d, &one, &x, 1, cases[k].fn);
        char what[80];
        snprintf(what, sizeof what, "%s at %g: value", names[cases[k].fn], x);
        gc_compare(what, &y, &cases[k].y, 1, 1e-300);
        snprintf(what, sizeof what, "%s at %g: slope", names[cases[k].fn], x);
        gc_compare(what, &d, &cases[k].slope, 1, 1e-300);
        float fx = (float)x, fy, fone = 1, fd;
        activation_forward(&fy, &fx, 1, cases[k].fn);
        activation_backward(&fd, &fone, &fx, 1, cases[k].fn);
        snprintf(what, sizeof what, "%s at %g: float value, slope", names[cases[k].fn], x);
        if (!(isfinite(fy) && isfinite(fd) && fabs(fy - cases[k].y) <= 1e-6 * fmax(1, fabs(cases[k].y)) &&
              fabs(fd - cases[k].slope) <= 1e-6)) {
            fprintf(stderr, "FAIL %s: %g, %g\n", what, fy, fd);
            test_failures++;
        }
    }
}

int main(void) {
    gc_seed(31);
    for (int fn = 0; fn < RT_ACTIVATION_COUNT; fn++) {
        test_one((rt_activation)fn, 257, 1);
        test_one((rt_activation)fn, 70001, 0);   /* the threaded, vectorized path and its odd tail */
    }
    test_kinks();
    return test_finish("test_grad_activation");
}
