/* `make bench-conv`: milliseconds and GFLOP/s of conv2d forward, input gradient and weight
 * gradient on the example ResNet's Winograd (3x3 stride 1), strided and 1x1 shapes, LeNet's
 * Winograd 5x5 and the published ResNet-50's stem, strided and 1x1 shapes, batch 128
 * (ResNet-50: 32, its stem 16), as the trainer calls them. Each cell is the fastest of REPS
 * timed calls after a warm-up (on a shared host, the one least disturbed by other work;
 * compare runs by ratios, never across hosts). "data" is backward with the input gradient
 * less backward without it.
 * usage: conv_rate [REPS] [FILTER]   (FILTER: run only shapes whose name contains it)
 * CONV_RATE_CLOCK=cpu times by the process's CPU time instead of the wall clock: with
 * OMP_NUM_THREADS=1 on a busy host, that leaves out the time other processes held the core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_core.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"

typedef struct {
    const char *what;
    int n, c, h, oc, k, stride, pad, din_add;
    rt_conv_algo algo;   /* Winograd where the trainers pick it (the compiler's choice) */
    rt_act act;          /* fused activation: the backward masks dy by the output's sign */
} conv_case;

static const conv_case cases[] = {
    { "resnet layer1 3x3 32 28x28", 128, 32, 28, 32, 3, 1, 1, 0, RT_CONV_WINOGRAD_F4, RT_ACT_NONE },
    { "resnet layer2 3x3 64 14x14", 128, 64, 14, 64, 3, 1, 1, 0, RT_CONV_WINOGRAD_F4, RT_ACT_NONE },
    { "resnet layer3 3x3 128 7x7", 128, 128, 7, 128, 3, 1, 1, 0, RT_CONV_WINOGRAD_F4, RT_ACT_NONE },
    { "lenet conv2 5x5 32->64 14x14", 128, 32, 14, 64, 5, 1, 2, 0, RT_CONV_WINOGRAD, RT_ACT_RELU },
    { "resnet layer2_0_conv1 3x3/2", 128, 32, 28, 64, 3, 2, 1, 1, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet layer3_0_conv1 3x3/2", 128, 64, 14, 128, 3, 2, 1, 1, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet layer2_0_down 1x1/2", 128, 32, 28, 64, 1, 2, 0, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet layer3_0_down 1x1/2", 128, 64, 14, 128, 1, 2, 0, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 stem 7x7/2 3->64", 16, 3, 224, 64, 7, 2, 3, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 3x3/2 128 56->28", 32, 128, 56, 128, 3, 2, 1, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 3x3/2 256 28->14", 32, 256, 28, 256, 3, 2, 1, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 3x3/2 512 14->7", 32, 512, 14, 512, 3, 2, 1, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 1x1 256->64 56x56", 32, 256, 56, 64, 1, 1, 0, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 1x1 64->256 56x56", 32, 64, 56, 256, 1, 1, 0, 1, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 1x1/2 512->1024 28", 32, 512, 28, 1024, 1, 2, 0, 0, RT_CONV_IM2COL, RT_ACT_NONE },
    { "resnet50 1x1 1024->256 14x14", 32, 1024, 14, 256, 1, 1, 0, 0, RT_CONV_IM2COL, RT_ACT_NONE },
};

static rt_conv_shape shape_of(const conv_case *cc) {
    rt_conv_shape s = { .n = cc->n, .c = cc->c, .h = cc->h, .w = cc->h, .oc = cc->oc,
                        .kh = cc->k, .kw = cc->k, .sh = cc->stride, .sw = cc->stride,
                        .ph = cc->pad, .pw = cc->pad, .dh = 1, .dw = 1, .groups = 1,
                        .din_add = cc->din_add, .algo = cc->algo, .act = cc->act };
    s.oh = rt_conv_out_dim(s.h, s.kh, s.sh, s.ph, 1);
    s.ow = rt_conv_out_dim(s.w, s.kw, s.sw, s.pw, 1);
    return rt_conv_chosen(s, 0);   /* as the compiler records it for an FP32 trainer */
}

static float *filled(long n, unsigned seed) {
    float *p = malloc(sizeof(float) * n);
    for (long i = 0; i < n; i++) p[i] = (float)((i * 7919 + seed) % 2001) / 1000.0f - 1;
    return p;
}

static int cpu_clock;

static double now(void) {
    if (!cpu_clock) return rt_time_s();
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double fastest(const double *v, int n) {
    double best = v[0];
    for (int i = 1; i < n; i++) best = v[i] < best ? v[i] : best;
    return best;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 9;
    const char *filter = argc > 2 ? argv[2] : "";
    if (reps < 1 || reps > 1000) reps = 9;
    cpu_clock = getenv("CONV_RATE_CLOCK") && strcmp(getenv("CONV_RATE_CLOCK"), "cpu") == 0;
    printf("%-30s %9s %9s %9s %9s  GFLOP/s fwd / data / weights\n", "shape", "fwd ms", "data ms",
           "wgt ms", "total");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (!strstr(cases[i].what, filter)) continue;
        rt_conv_shape s = shape_of(&cases[i]);
        long in_n = (long)s.n * s.c * s.h * s.w, out_n = (long)s.n * s.oc * s.oh * s.ow;
        long w_n = (long)s.oc * s.c * s.kh * s.kw;
        float *in = filled(in_n, 1), *out = filled(out_n, 2), *w = filled(w_n, 3);
        float *dout = filled(out_n, 4), *din = filled(in_n, 5), *dw = filled(w_n, 6);
        float *work = malloc(sizeof(float) * (conv2d_workspace_elems(&s) + 16));
        double tf[1000], tb[1000], tw[1000];
        for (int r = -1; r < reps; r++) {   /* r = -1: warm-up */
            double t0 = now();
            conv2d_forward(out, in, w, NULL, work, &s);
            double t1 = now();
            conv2d_backward(din, dw, NULL, dout, out, in, w, work, &s);
            double t2 = now();
            conv2d_backward(NULL, dw, NULL, dout, out, in, w, work, &s);
            double t3 = now();
            if (r < 0) continue;
            tf[r] = t1 - t0, tw[r] = t3 - t2, tb[r] = (t2 - t1) - (t3 - t2);
        }
        double f = fastest(tf, reps), d = fastest(tb, reps), g = fastest(tw, reps);
        double flops = 2.0 * s.n * s.oc * s.c * s.kh * s.kw * s.oh * s.ow / 1e9;
        printf("%-30s %9.3f %9.3f %9.3f %9.3f  %6.1f / %6.1f / %6.1f\n", cases[i].what, 1e3 * f,
               1e3 * d, 1e3 * g, 1e3 * (f + d + g), flops / f, flops / d, flops / g);
        free(in), free(out), free(w), free(dout), free(din), free(dw), free(work);
    }
    return 0;
}
