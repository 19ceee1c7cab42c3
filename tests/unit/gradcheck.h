/* Shared helpers for the op gradient checks: seeded random fills, array comparison that
 * prints the first values and the largest difference, and a Caffe-style central-difference
 * checker (relative tolerance max(|analytic|, |numeric|, 1)) over the _f64 ops. */
#ifndef GRADCHECK_H
#define GRADCHECK_H
#include <stdint.h>
#include <stdlib.h>
#include "testlib.h"

#define GC_STEP 1e-6          /* central-difference step */
#define GC_TOL 1e-6           /* double-precision analytic vs numeric */
#define GC_F32_TOL 1e-4       /* float build vs double build */
#define GC_MAX_POINTS 400     /* larger tensors are checked at a seeded sample of points */

static uint64_t gc_state = 0x243F6A8885A308D3ull;
static inline void gc_seed(uint64_t s) { gc_state = s * 0x9E3779B97F4A7C15ull + 1; }
static inline uint64_t gc_next(void) {
    uint64_t z = (gc_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static inline double gc_uniform(double lo, double hi) {
    return lo + (hi - lo) * ((double)(gc_next() >> 11) * 0x1.0p-53);
}

static inline double *gc_alloc(long n) {
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    return p;
}
static inline double *gc_rand(long n, double lo, double hi) {
    double *p = gc_alloc(n);
    for (long i = 0; i < n; i++) p[i] = gc_uniform(lo, hi);
    return p;
}
/* Values whose magnitude is at least `gap`, for ops with a kink at 0 (relu). */
static inline double *gc_rand_away_from_zero(long n, double gap) {
    double *p = gc_alloc(n);
    for (long i = 0; i < n; i++) {
        double v = gc_uniform(gap, 1.0);
        p[i] = (gc_next() & 1) ? v : -v;
    }
    return p;
}
/* A shuffled grid with spacing `gap`: no two values tie (max pooling argmax stays put). */
static inline double *gc_rand_distinct(long n, double gap) {
    double *p = gc_alloc(n);
    for (long i = 0; i < n; i++) p[i] = (i - n / 2) * gap;
    for (long i = n - 1; i > 0; i--) {
        long j = (long)(gc_next() % (uint64_t)(i + 1));
        double t = p[i]; p[i] = p[j]; p[j] = t;
    }
    return p;
}
static inline float *gc_to_f32(const double *x, long n) {
    float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (long i = 0; i < n; i++) p[i] = (float)x[i];
    return p;
}
static inline double gc_dot(const double *a, const double *b, long n) {
    double s = 0;
    for (long i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Compares got against want elementwise with tolerance tol * max(|got|, |want|, 1).
 * On failure prints the first values of both and the largest difference. */
static inline int gc_compare(const char *what, const double *got, const double *want, long n,
                             double tol) {
    long worst = -1, bad = 0;
    double worst_err = 0;
    for (long i = 0; i < n; i++) {
        double err = fabs(got[i] - want[i]) / fmax(1.0, fmax(fabs(got[i]), fabs(want[i])));
        if (!(err <= tol)) bad++;
        if (!(err <= worst_err)) { worst_err = err; worst = i; }
    }
    if (!bad) return 0;
    fprintf(stderr, "FAIL %s: %ld of %ld values off (tol %g)\n  got: ", what, bad, n, tol);
    for (long i = 0; i < n && i < 6; i++) fprintf(stderr, " %.8g", got[i]);
    fprintf(stderr, "\n  want:");
    for (long i = 0; i < n && i < 6; i++) fprintf(stderr, " %.8g", want[i]);
    fprintf(stderr, "\n  largest difference at [%ld]: %.10g vs %.10g (rel %.3g)\n", worst,
            got[worst], want[worst], worst_err);
    test_failures++;
    return 1;
}
static inline int gc_compare_f32(const char *what, const float *got, const double *want, long n) {
    double *g = gc_alloc(n);
    for (long i = 0; i < n; i++) g[i] = got[i];
    int r = gc_compare(what, g, want, n, GC_F32_TOL);
    free(g);
    return r;
}

/* The objective as a function of the current contents of the tensors in ctx. */
typedef double (*gc_loss_fn)(void *ctx);

/* Checks analytic = dL/dx against central differences, perturbing x in place (restored).
 * Every point is checked when x is small, else GC_MAX_POINTS seeded ones. */
static inline int gc_check(const char *what, double *x, long n, const double *analytic,
                           gc_loss_fn loss, void *ctx) {
    long points = n <= GC_MAX_POINTS ? n : GC_MAX_POINTS;
    double *num = gc_alloc(points), *ana = gc_alloc(points);
    for (long t = 0; t < points; t++) {
        long i = n <= GC_MAX_POINTS ? t : (long)(gc_next() % (uint64_t)n);
        double saved = x[i];
        x[i] = saved + GC_STEP;
        double lp = loss(ctx);
        x[i] = saved - GC_STEP;
        double lm = loss(ctx);
        x[i] = saved;
        num[t] = (lp - lm) / (2 * GC_STEP);
        ana[t] = analytic[i];
    }
    char label[160];
    snprintf(label, sizeof label, "%s (analytic vs numeric, %ld points)", what, points);
    int r = gc_compare(label, ana, num, points, GC_TOL);
    free(num);
    free(ana);
    return r;
}
#endif
