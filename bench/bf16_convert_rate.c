/* The BF16 convolutions' layout conversions (runtime/cpu/conv2d_dnnl_bf16_layout.c) at the
 * ResNet example's activation shapes, one thread: NCHW floats -> nChw16c BF16 and nChw16c
 * FP32 -> NCHW, of a batch of 128 from cold memory (a 64 MiB pass evicts the caches first) and
 * of one chunk of 32 images (the driver's unit) hot,
 * beside a plain streaming pass over the same floats (read, scale, write): how near the
 * conversions run to what the memory moves. Then the kernels' gather-table conversion per
 * ResNet step (forward and backward kernels) on the OpenMP threads. Wall times, least of the
 * repetitions; a shared host only adds. Not part of `make test`: `make bench-bf16-convert`. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conv2d_dnnl_bf16_internal.h"
#include "rt_conv_bf16.h"
#include "rt_gemm.h"

#ifdef BF16_CONV_KERNELS
static char *junk;
static const long junk_bytes = 64L << 20;

static void evict(void) {
    for (long i = 0; i < junk_bytes; i += 64) junk[i]++;
}

typedef struct { double to_bf16, from_f32, copy; } pass_times;

static pass_times time_passes(long n, long c, long hw, int cold, int reps) {
    tensor t;
    memset(&t, 0, sizeof t);
    t.md.ndims = 4;
    t.md.dims[0] = n; t.md.dims[1] = c; t.md.dims[2] = hw; t.md.dims[3] = 1;
    t.kind = LAYOUT_BLOCK16;
    long e = n * c * hw;
    t.elems = e;
    float *plain = aligned_alloc(64, sizeof(float) * e), *blocked = aligned_alloc(64, sizeof(float) * e);
    float *out = aligned_alloc(64, sizeof(float) * e);
    uint16_t *bf16 = aligned_alloc(64, sizeof(uint16_t) * e);
    for (long i = 0; i < e; i++) plain[i] = blocked[i] = out[i] = (float)(i % 1000) * 1e-3f - 0.5f;
    pass_times best = { 1e9, 1e9, 1e9 };
    for (int r = 0; r < reps; r++) {
        if (cold) evict();
        double t0 = omp_get_wtime();
        bf16conv_to_layout(&t, bf16, plain, NULL, NULL);
        double t1 = omp_get_wtime();
        if (cold) evict();
        double t2 = omp_get_wtime();
        bf16conv_from_layout(&t, out, blocked, NULL, 0, 0);
        double t3 = omp_get_wtime();
        if (cold) evict();
        double t4 = omp_get_wtime();
        for (long i = 0; i < e; i++) out[i] = plain[i] * 1.5f;
        double t5 = omp_get_wtime();
        if (t1 - t0 < best.to_bf16) best.to_bf16 = t1 - t0;
        if (t3 - t2 < best.from_f32) best.from_f32 = t3 - t2;
        if (t5 - t4 < best.copy) best.copy = t5 - t4;
    }
    free(plain); free(blocked); free(out); free(bf16);
    return best;
}

/* The kernels of the example's BF16 convolutions (all but the 1-channel stem). */
typedef struct { int c, hw, oc, k, stride, count; } conv_kind;
static const conv_kind resnet[] = { { 32, 28, 32, 3, 1, 4 }, { 32, 28, 64, 3, 2, 1 }, { 32, 28, 64, 1, 2, 1 },
                                    { 64, 14, 64, 3, 1, 3 }, { 64, 14, 128, 3, 2, 1 }, { 64, 14, 128, 1, 2, 1 },
                                    { 128, 7, 128, 3, 1, 3 } };

static void time_kernel_tables(void) {
    double total = 0;
    for (size_t i = 0; i < sizeof resnet / sizeof resnet[0]; i++) {
        const conv_kind *k = &resnet[i];
        rt_conv_shape s = { .n = 128, .c = k->c, .h = k->hw, .w = k->hw, .oc = k->oc, .kh = k->k, .kw = k->k,
                            .sh = k->stride, .sw = k->stride, .ph = k->k / 2, .pw = k->k / 2, .dh = 1, .dw = 1,
                            .groups = 1 };
        s.oh = s.ow = rt_conv_out_dim(k->hw, k->k, k->stride, k->k / 2, 1);
        if (!conv2d_dnnl_bf16_fits(&s)) { printf("  %d->%d k%d: not on oneDNN\n", k->c, k->oc, k->k); continue; }
        plan *p = bf16conv_plan_for(&s);
        long wn = (long)k->oc * k->c * k->k * k->k;
        float *w = malloc(sizeof(float) * wn);
        uint16_t *d = malloc(sizeof(uint16_t) * p->wei.elems);
        for (long j = 0; j < wn; j++) w[j] = (float)j * 1e-4f;
        double best = 1e9;
        for (int r = 0; r < 200; r++) {
            double t0 = omp_get_wtime();
            bf16conv_weights_to_layout(&p->wei, d, w);
            double t = omp_get_wtime() - t0;
            if (t < best) best = t;
        }
        printf("  %3d->%3d k%d (%ld elements): %.1f us\n", k->c, k->oc, k->k, p->wei.elems, best * 1e6);
        total += 2 * k->count * best;   /* the forward's and the backward-data's layout */
        free(w); free(d);
    }
    printf("kernel conversions per ResNet step: %.2f ms on %d threads\n", total * 1e3, omp_get_max_threads());
}

int main(void) {
    char why[256];
    if (rt_gemm_set_compute(RT_COMPUTE_BF16, why, sizeof why) != 0) {
        printf("bf16_convert_rate: skipped: %s\n", why);
        return 0;
    }
    junk = malloc(junk_bytes);
    memset(junk, 1, junk_bytes);
    int shapes[][2] = { { 32, 28 * 28 }, { 64, 14 * 14 }, { 128, 7 * 7 } };
    printf("conversion passes, one thread (ms; 'copy' reads, scales and writes the same floats):\n");
    for (int cold = 1; cold >= 0; cold--)
        for (int i = 0; i < 3; i++) {
            int n = cold ? 128 : 32;
            pass_times t = time_passes(n, shapes[i][0], shapes[i][1], cold, cold ? 10 : 30);
            printf("  %-4s %3d x %3d x %3d: to_bf16 %.3f  from_f32 %.3f  copy %.3f  (to/copy %.2f, from/copy %.2f)\n",
                   cold ? "cold" : "hot", n, shapes[i][0], shapes[i][1], t.to_bf16 * 1e3, t.from_f32 * 1e3,
                   t.copy * 1e3, t.to_bf16 / t.copy, t.from_f32 / t.copy);
        }
    time_kernel_tables();
    return 0;
}
#else
int main(void) {
    printf("bf16_convert_rate: skipped: BF16 convolutions are not built into this runtime\n");
    return 0;
}
#endif
