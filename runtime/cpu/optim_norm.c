/* Sums of squares in a fixed order (so runs repeat bit for bit at any thread count), the
 * global gradient norm over a list of tensors, and clipping by it (torch clip_grad_norm_). */
#include <math.h>
#include "rt_optim.h"

/* The sum is split into NORM_CHUNKS fixed slices whatever the thread count, and the slices'
 * partial sums are added in order: OpenMP's own reduction combines in arrival order. */
#define NORM_CHUNKS 64
#define NORM_SERIAL_MAX 65536

static double sumsq_serial(const float *x, long n) {
    double s = 0.0;
    #pragma omp simd reduction(+ : s)
    for (long i = 0; i < n; i++) s += (double)x[i] * (double)x[i];
    return s;
}

static long chunk_start(long n, int c) { return (long)((double)n * c / NORM_CHUNKS); }

double rt_sum_squares(const float *x, long n) {
    if (n < NORM_SERIAL_MAX) return sumsq_serial(x, n);
    double part[NORM_CHUNKS];
    #pragma omp parallel for schedule(static)
    for (int c = 0; c < NORM_CHUNKS; c++) {
        long lo = chunk_start(n, c), hi = c + 1 == NORM_CHUNKS ? n : chunk_start(n, c + 1);
        part[c] = sumsq_serial(x + lo, hi - lo);
    }
    double s = 0.0;
    for (int c = 0; c < NORM_CHUNKS; c++) s += part[c];
    return s;
}

static void sumsq_pair_serial(double *sx, double *sy, const float *x, const float *y, long n) {
    double a = 0.0, b = 0.0;
    #pragma omp simd reduction(+ : a, b)
    for (long i = 0; i < n; i++) {
        a += (double)x[i] * (double)x[i];
        b += (double)y[i] * (double)y[i];
    }
    *sx = a;
    *sy = b;
}

void rt_sum_squares_pair(double *sum_x, double *sum_y, const float *x, const float *y, long n) {
    if (n < NORM_SERIAL_MAX) { sumsq_pair_serial(sum_x, sum_y, x, y, n); return; }
    double px[NORM_CHUNKS], py[NORM_CHUNKS];
    #pragma omp parallel for schedule(static)
    for (int c = 0; c < NORM_CHUNKS; c++) {
        long lo = chunk_start(n, c), hi = c + 1 == NORM_CHUNKS ? n : chunk_start(n, c + 1);
        sumsq_pair_serial(&px[c], &py[c], x + lo, y + lo, hi - lo);
    }
    double a = 0.0, b = 0.0;
    for (int c = 0; c < NORM_CHUNKS; c++) { a += px[c]; b += py[c]; }
    *sum_x = a;
    *sum_y = b;
}

double rt_grad_global_norm(const float *const *grads, const long *counts, int ntensors) {
    double s = 0.0;
    for (int t = 0; t < ntensors; t++) s += rt_sum_squares(grads[t], counts[t]);
    return sqrt(s);
}

float rt_grad_clip_coef(double norm, double max_norm) {
    if (!isfinite(norm)) return 1.0f;
    double coef = max_norm / (norm + 1e-6);
    return coef < 1.0 ? (float)coef : 1.0f;
}

void rt_grad_scale(float *const *grads, const long *counts, int ntensors, float scale) {
    for (int t = 0; t < ntensors; t++) {
        float *g = grads[t];
        long n = counts[t];
        #pragma omp parallel for simd schedule(static) if (n >= NORM_SERIAL_MAX)
        for (long i = 0; i < n; i++) g[i] *= scale;
    }
}

double rt_grad_clip_global_norm(float *const *grads, const long *counts, int ntensors,
                                double max_norm) {
    double norm = rt_grad_global_norm((const float *const *)grads, counts, ntensors);
    float coef = rt_grad_clip_coef(norm, max_norm);
    if (coef < 1.0f) rt_grad_scale(grads, counts, ntensors, coef);
    return norm;
}
