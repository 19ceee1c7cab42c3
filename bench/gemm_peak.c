/* `make bench-gemm`: single-precision and BF16 matrix-multiply rates of the libraries the CPU
 * runtime can call (OpenBLAS under the core type it picked, oneDNN's sgemm and bf16 GEMM), on
 * the GEMM shapes of the example nets' convolutions, with 1 and all threads each running its
 * own GEMMs as the conv ops do. Prints GFLOP/s per shape and library, and the largest
 * relative difference of each library's product from OpenBLAS's on the first call.
 * With --peak: only the FP32 libraries on all threads, and one line "sgemm peak: R GFLOP/s"
 * with the best rate of any shape and library (the ceiling bench-cpu compares the convs to);
 * then, where the CPU has avx512_bf16, "bf16 peak: R GFLOP/s": oneDNN's bf16 GEMM on operands
 * already in BF16 (no conversion counted), the ceiling of a BF16 step's dot products; then
 * "memory: R GB/s": a streaming triad on all threads (--bandwidth prints only that line). The
 * 2-core host has slow spells (bench/RESULTS.md, session 16) in which this falls from ~33 to
 * ~23 GB/s and the memory-bound parts of a step slow down with it: bench-cpu prints the line
 * at its start and end, so a run says which state it saw.
 * usage: gemm_peak [--peak | --bandwidth] [SECONDS per cell]  (OPENBLAS_CORETYPE picks OpenBLAS's kernels) */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_gemm.h"

typedef struct { const char *what; int m, n, k; } shape;

/* Winograd F(4x4,3x3) GEMMs of the ResNet example per transformed position (oc x c x tiles of
 * one block), its stem, LeNet's F(2x2,5x5) GEMMs and im2col shapes, and two big squares (the peaks). */
static const shape shapes[] = {
    { "resnet wino 32ch 28x28 (fwd)", 32, 64, 32 },
    { "resnet wino 64ch 14x14 (fwd)", 64, 48, 64 },
    { "resnet wino 128ch 7x7 (fwd)", 128, 32, 128 },
    { "resnet wino 64ch dW (oc x c x tiles)", 64, 64, 32 },
    { "lenet wino 64x32 5x5 (fwd)", 64, 64, 32 },
    { "im2col 64x784x288", 64, 784, 288 },
    { "im2col 128x196x576", 128, 196, 576 },
    { "square 512", 512, 512, 512 },
    { "square 1024", 1024, 1024, 1024 },
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

typedef enum { LIB_OPENBLAS, LIB_DNNL_F32, LIB_DNNL_BF16 } lib;

/* One thread's product through `which`. */
static void one(lib which, const shape *s, const float *a, const float *b, float *c) {
    if (which == LIB_OPENBLAS)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1, a, s->k, b,
                    s->n, 0, c, s->n);
    else
        rt_gemm_library_call(which == LIB_DNNL_BF16 ? RT_GEMM_DNNL_BF16 : RT_GEMM_DNNL_F32, 0, 0,
                             s->m, s->n, s->k, 1, a, s->k, b, s->n, 0, c, s->n);
}

/* GFLOP/s of `threads` threads each multiplying its own matrices for `secs` seconds. */
static double rate(lib which, const shape *s, int threads, double secs, float *const *bufs) {
    double flops = 0;
    double t0 = now(), t1 = t0;
    #pragma omp parallel num_threads(threads) reduction(+:flops)
    {
        int t = omp_get_thread_num();
        const float *a = bufs[3 * t], *b = bufs[3 * t + 1];
        float *c = bufs[3 * t + 2];
        one(which, s, a, b, c);   /* warm-up */
        #pragma omp barrier
        #pragma omp single
        t0 = now();
        long reps = 0;
        while (now() - t0 < secs) { one(which, s, a, b, c); reps++; }
        flops = 2.0 * s->m * s->n * s->k * reps;
        #pragma omp barrier
        #pragma omp single
        t1 = now();
    }
    return flops / (t1 - t0) / 1e9;
}

/* oneDNN's bf16 GEMM (exported by libdnnl.so.2, not declared in its headers) on BF16
 * operands, for the BF16 peak: the runtime's RT_GEMM_DNNL_BF16 converts float operands first,
 * which is not what a BF16 dot-product ceiling should count. */
typedef int (*bf16_gemm_fn)(char, char, int64_t, int64_t, int64_t, float, const uint16_t *, int64_t,
                            const uint16_t *, int64_t, float, float *, int64_t);

/* GFLOP/s of all threads each running bf16 GEMMs of shape s for `secs` seconds, 0 if unusable. */
static double bf16_rate(const shape *s, int threads, double secs) {
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_GLOBAL);
    bf16_gemm_fn gemm = h ? (bf16_gemm_fn)dlsym(h, "dnnl_gemm_bf16bf16f32") : NULL;
    if (!gemm || !rt_gemm_library_available(RT_GEMM_DNNL_BF16)) return 0;
    double flops = 0, t0 = now(), t1 = t0;
    #pragma omp parallel num_threads(threads) reduction(+:flops)
    {
        long na = (long)s->m * s->k, nb = (long)s->k * s->n;
        uint16_t *a = malloc(sizeof *a * (na + nb)), *b = a + na;
        float *c = malloc(sizeof *c * s->m * s->n);
        for (long e = 0; e < na + nb; e++)   /* BF16 of values in [-1, 1] */
            a[e] = rt_float_to_bf16((float)(e % 2001) / 1000.0f - 1);
        gemm('N', 'N', s->m, s->n, s->k, 1, a, s->k, b, s->n, 0, c, s->n);   /* warm-up */
        #pragma omp barrier
        #pragma omp single
        t0 = now();
        long reps = 0;
        while (now() - t0 < secs) { gemm('N', 'N', s->m, s->n, s->k, 1, a, s->k, b, s->n, 0, c, s->n); reps++; }
        flops = 2.0 * s->m * s->n * s->k * reps;
        #pragma omp barrier
        #pragma omp single
        t1 = now();
        free(a), free(c);
    }
    return flops / (t1 - t0) / 1e9;
}

/* Largest |lib - OpenBLAS| / max |OpenBLAS| of one product. */
static double rel_diff(lib which, const shape *s, float *const *bufs) {
    long mn = (long)s->m * s->n;
    float *ref = malloc(sizeof(float) * mn);
    one(LIB_OPENBLAS, s, bufs[0], bufs[1], ref);
    one(which, s, bufs[0], bufs[1], bufs[2]);
    double worst = 0, scale = 0;
    for (long i = 0; i < mn; i++) {
        scale = fmax(scale, fabs(ref[i]));
        worst = fmax(worst, fabs(bufs[2][i] - ref[i]));
    }
    free(ref);
    return worst / scale;
}

/* Each thread's A, B and C, filled with values in [-1, 1]. */
static void alloc_bufs(float **bufs, const shape *s, int threads) {
    for (int t = 0; t < threads && t < 64; t++) {
        long sz[3] = { (long)s->m * s->k, (long)s->k * s->n, (long)s->m * s->n };
        for (int j = 0; j < 3; j++) {
            bufs[3 * t + j] = aligned_alloc(64, (sz[j] * sizeof(float) + 63) / 64 * 64);
            for (long e = 0; e < sz[j]; e++) bufs[3 * t + j][e] = (float)((e * 7919 + t) % 2001) / 1000.0f - 1;
        }
    }
}
static void free_bufs(float **bufs, int threads) {
    for (int t = 0; t < threads && t < 64; t++)
        for (int j = 0; j < 3; j++) free(bufs[3 * t + j]);
}

/* GB/s of a = b + 1.5 c over three arrays of 128 MiB (far past the 32 MiB L3), all threads,
 * best of 5 sweeps (read b and c, write a: 3 x 128 MiB counted per sweep). */
static double triad_rate(void) {
    enum { VALUES = 32 << 20 };
    float *a = malloc(sizeof(float) * VALUES), *b = malloc(sizeof(float) * VALUES),
          *c = malloc(sizeof(float) * VALUES);
    if (!a || !b || !c) {
        free(a), free(b), free(c);
        return 0;
    }
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < VALUES; i++) a[i] = 0, b[i] = 1, c[i] = 2;   /* pages placed by their threads */
    double best = 0;
    for (int sweep = 0; sweep < 5; sweep++) {
        double t0 = omp_get_wtime();
        #pragma omp parallel for schedule(static)
        for (long i = 0; i < VALUES; i++) a[i] = b[i] + 1.5f * c[i];
        double gbs = 3.0 * sizeof(float) * VALUES / (omp_get_wtime() - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    volatile float keep = a[VALUES / 2];   /* the sweeps' result is used */
    (void)keep;
    free(a), free(b), free(c);
    return best;
}

static void print_bandwidth(void) {
    printf("memory: %.1f GB/s (streaming triad over 3 x 128 MiB, %d threads)\n", triad_rate(),
           omp_get_max_threads());
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--bandwidth") == 0) {
        print_bandwidth();
        return 0;
    }
    int peak_only = argc > 1 && strcmp(argv[1], "--peak") == 0;
    if (peak_only) argc--, argv++;
    double secs = argc > 1 ? atof(argv[1]) : 0.4;
    openblas_set_num_threads(1);   /* as rt_gemm: one OpenBLAS thread per calling thread */
    int maxt = omp_get_max_threads();
    const char *names[] = { NULL, "oneDNN sgemm", "oneDNN bf16 (vdpbf16ps)" };
    static char blas_name[64];
    snprintf(blas_name, sizeof blas_name, "OpenBLAS %s", openblas_get_corename());
    names[0] = blas_name;
    int have_dnnl = rt_gemm_library_available(RT_GEMM_DNNL_F32);
    int have_bf16 = rt_gemm_library_available(RT_GEMM_DNNL_BF16);
    if (peak_only) {
        double best = 0;
        const char *best_lib = "", *best_shape = "";
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            const shape *s = &shapes[i];
            float *bufs[3 * 64];
            alloc_bufs(bufs, s, maxt);
            for (lib l = LIB_OPENBLAS; l <= LIB_DNNL_F32; l++) {
                if (l == LIB_DNNL_F32 && !have_dnnl) continue;
                double r = rate(l, s, maxt, secs, bufs);
                if (r > best) best = r, best_lib = names[l], best_shape = s->what;
            }
            free_bufs(bufs, maxt);
        }
        printf("sgemm peak: %.1f GFLOP/s (%s, %s, %d threads)\n", best, best_lib, best_shape, maxt);
        double bf16_best = 0;
        const char *bf16_shape = "";
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            double r = bf16_rate(&shapes[i], maxt, secs);
            if (r > bf16_best) bf16_best = r, bf16_shape = shapes[i].what;
        }
        if (bf16_best > 0)
            printf("bf16 peak: %.1f GFLOP/s (oneDNN bf16 GEMM on BF16 operands, %s, %d threads)\n",
                   bf16_best, bf16_shape, maxt);
        print_bandwidth();
        return 0;
    }
    printf("gemm-peak: %.2f s per cell, OPENBLAS_CORETYPE=%s; oneDNN %s, bf16 GEMM %s\n", secs,
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "(unset)",
           have_dnnl ? "found" : "not found", have_bf16 ? "on this CPU" : "not usable here");
    printf("%-38s %-26s %10s %10s %9s\n", "shape (M x N x K)", "library", "1 thread", "all", "rel.diff");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const shape *s = &shapes[i];
        float *bufs[3 * 64];
        alloc_bufs(bufs, s, maxt);
        char label[96];
        snprintf(label, sizeof label, "%s %dx%dx%d", s->what, s->m, s->n, s->k);
        for (lib l = LIB_OPENBLAS; l <= LIB_DNNL_BF16; l++) {
            if ((l == LIB_DNNL_F32 && !have_dnnl) || (l == LIB_DNNL_BF16 && !have_bf16)) continue;
            double r1 = rate(l, s, 1, secs, bufs), ra = rate(l, s, maxt, secs, bufs);
            printf("%-38s %-26s %10.1f %10.1f %9.1e\n", l == LIB_OPENBLAS ? label : "", names[l],
                   r1, ra, l == LIB_OPENBLAS ? 0.0 : rel_diff(l, s, bufs));
        }
        free_bufs(bufs, maxt);
    }
    return 0;
}
