/* `make bench-bn`: milliseconds of the batch norm, residual add and ReLU ops between a ResNet
 * block's convolutions, at the example ResNet's shapes (batch 128), as the trainer calls them:
 * bn1 (bn + ReLU) forward and backward, and the block's closing bn2 + add + ReLU, both as
 * separate ops (batchnorm_forward_train, add_act_forward; relu_backward, batchnorm_backward)
 * and fused (batchnorm_add_*). Each cell is the fastest of REPS calls after a warm-up (on a
 * shared host, the one least disturbed by other work; compare by ratios, never across hosts).
 * Below each shape's times, the same cells in GB/s of the least traffic each op needs (every
 * tensor it must read or write, once), and three plain streaming loops over tensors of that
 * shape as the ceiling to compare with: read (a sum), copy, and read two + write one.
 * BN_RATE_CLOCK=cpu times by the process's CPU time (with OMP_NUM_THREADS=1: what survives a
 * loaded host). usage: bn_rate [REPS] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_ops.h"

typedef struct { const char *what; int c, hw; } bn_case;

static const bn_case cases[] = {
    { "layer1 32ch 28x28", 32, 784 },
    { "layer2 64ch 14x14", 64, 196 },
    { "layer3 128ch 7x7", 128, 49 },
};
enum { BATCH = 128 };

static int cpu_clock;

static double now(void) {
    struct timespec t;
    clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 64-byte aligned, as the trainers' arena places tensors (malloc's large blocks start 16 bytes
 * into a page, which would split every vector of a 28x28 plane across two cache lines). */
static float *filled(long n, unsigned seed) {
    float *p = aligned_alloc(64, (sizeof(float) * n + 63) / 64 * 64);
    for (long i = 0; i < n; i++) p[i] = (float)((i * 7919 + seed) % 2001) / 1000.0f - 1;
    return p;
}

/* The tensors of one block's bn at one shape: x the conv output, r the residual, y the
 * output, t the normalized tensor of the unfused path, dy and dx the gradients. */
typedef struct {
    int c, hw;
    long n;
    float *x, *r, *y, *t, *dy, *dx, *gamma, *beta, *mean, *inv, *rm, *rv, *dg, *db;
} block;

static void bn1_fwd(block *b) {
    batchnorm_forward_train(b->y, b->mean, b->inv, b->rm, b->rv, b->x, b->gamma, b->beta, BATCH, b->c, b->hw,
                            0.1f, 1e-5f, RT_ACT_RELU);
}
static void bn1_bwd(block *b) {
    batchnorm_backward(b->dx, b->dg, b->db, b->dy, b->x, b->gamma, b->beta, b->mean, b->inv, BATCH, b->c, b->hw,
                       RT_ACT_RELU);
}
static void sep_fwd(block *b) {
    batchnorm_forward_train(b->t, b->mean, b->inv, b->rm, b->rv, b->x, b->gamma, b->beta, BATCH, b->c, b->hw,
                            0.1f, 1e-5f, RT_ACT_NONE);
    add_act_forward(b->y, b->t, b->r, b->n, RT_ACT_RELU);
}
static void sep_bwd(block *b) {
    relu_backward(b->dy, b->dy, b->y, b->n);
    batchnorm_backward(b->dx, b->dg, b->db, b->dy, b->x, b->gamma, b->beta, b->mean, b->inv, BATCH, b->c, b->hw,
                       RT_ACT_NONE);
}
static void fused_fwd(block *b) {
    batchnorm_add_forward_train(b->y, b->mean, b->inv, b->rm, b->rv, b->x, b->r, b->gamma, b->beta, BATCH, b->c,
                                b->hw, 0.1f, 1e-5f, RT_ACT_RELU);
}
static void fused_bwd(block *b) {
    batchnorm_add_backward(b->dx, b->dg, b->db, b->dy, b->y, b->x, b->gamma, b->beta, b->mean, b->inv, BATCH, b->c,
                           b->hw);
}

/* The streaming ceilings: what the memory system gives a plain loop over the same tensors. */
static volatile float sink;
typedef float lanes16 __attribute__((vector_size(64)));
static void stream_read(block *b) {   /* 16 lanes, so that it is not bound by the add latency */
    lanes16 total = { 0 };
    #pragma omp parallel
    {
        lanes16 part = { 0 }, v;
        #pragma omp for schedule(static)
        for (long i = 0; i < b->n / 16; i++) {
            memcpy(&v, b->x + 16 * i, sizeof v);
            part += v;
        }
        #pragma omp critical
        total += part;
    }
    sink = total[0];
}
static void stream_copy(block *b) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < b->n; i++) b->y[i] = b->x[i];
}
static void stream_r2w1(block *b) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < b->n; i++) b->dx[i] = b->x[i] + b->dy[i];
}

typedef void (*op_fn)(block *);

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 20;
    cpu_clock = getenv("BN_RATE_CLOCK") && strcmp(getenv("BN_RATE_CLOCK"), "cpu") == 0;
    /* bn1: bn + ReLU; sep: bn2 then add + ReLU (backward: relu, then bn2); fused: batchnorm_add */
    static const char *names[] = { "bn1 fwd", "bn1 bwd",   "sep fwd",     "sep bwd",    "fused fwd",
                                   "fused bwd", "read",    "copy",        "read2 write1" };
    static const op_fn fns[] = { bn1_fwd,   bn1_bwd,     sep_fwd,     sep_bwd,    fused_fwd,
                                 fused_bwd, stream_read, stream_copy, stream_r2w1 };
    /* tensors each op reads or writes at least once: bn 2 (fwd) or 3 (bwd), add + relu 3,
     * relu_backward 3, batchnorm_add 3 (fwd) or 5 (bwd: dy, y, x; dy masked, dx) */
    static const int tensors[] = { 2, 3, 5, 6, 3, 5, 1, 2, 3 };
    enum { OPS = sizeof fns / sizeof fns[0] };
    printf("fastest of %d calls (%s clock), ms (batch %d); bn1: bn + relu, sep: bn2 then add + relu (backward:\n"
           "relu, then bn2), fused: bn2 + add + relu in one op (batchnorm_add_*)\n%-22s", reps, cpu_clock ? "CPU" : "wall", BATCH, "");
    for (int o = 0; o < OPS; o++) printf(" %12.12s", names[o]);
    printf("\n");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        block b = { .c = cases[k].c, .hw = cases[k].hw, .n = (long)BATCH * cases[k].c * cases[k].hw };
        b.x = filled(b.n, 1), b.r = filled(b.n, 2), b.y = filled(b.n, 3), b.t = filled(b.n, 4);
        b.dy = filled(b.n, 5), b.dx = filled(b.n, 6);
        b.gamma = filled(b.c, 7), b.beta = filled(b.c, 8), b.mean = filled(b.c, 9), b.inv = filled(b.c, 10);
        b.rm = filled(b.c, 11), b.rv = filled(b.c, 12), b.dg = filled(b.c, 13), b.db = filled(b.c, 14);
        double best[OPS];
        for (int o = 0; o < OPS; o++) best[o] = 1e30;
        /* the ops alternate, so that load from other work spreads over all of them */
        for (int r = 0; r <= reps; r++)
            for (int o = 0; o < OPS; o++) {
                double t0 = now();
                fns[o](&b);
                double dt = now() - t0;
                if (r > 0 && dt < best[o]) best[o] = dt;   /* call 0 warms up */
            }
        printf("%-22s", cases[k].what);
        for (int o = 0; o < OPS; o++) printf(" %12.3f", 1e3 * best[o]);
        printf("\n%-22s", "  GB/s");
        for (int o = 0; o < OPS; o++) printf(" %12.1f", 1e-9 * sizeof(float) * b.n * tensors[o] / best[o]);
        printf("\n");
        float *bufs[] = { b.x, b.r, b.y, b.t, b.dy, b.dx, b.gamma, b.beta, b.mean, b.inv, b.rm, b.rv, b.dg, b.db };
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    }
    return 0;
}
