/* Whole-model gradient check: the generated model.c of a small spec (MODEL_C), compiled in
 * double precision through model_f64.h, against central differences of its own loss, for a
 * sample of every parameter tensor and of the input. Caffe-style: a fixed seed, one relative
 * tolerance, and points where a ReLU or max-pool kink lies within the step are skipped
 * (detected by the two one-sided slopes disagreeing) but counted and capped. */
#include "model_f64.h"
#include MODEL_C
#undef main
#undef float
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define STEP 1e-5          /* finite-difference step */
#define TOL 1e-6           /* on |analytic - numeric| / max(|analytic|, |numeric|, FLOOR) */
#define FLOOR 1e-4         /* below this a gradient is compared in absolute terms */
#define SAMPLES 10         /* points per tensor (all of them for smaller tensors) */

static gc_model_ctx ctx;
static double *x;
static int32_t *y;

static double loss_at(void) { return model.train_step(&ctx, x, y); }

typedef struct { int checked, skipped, failed; double worst; } tally;

/* Checks d(loss)/d(v[i]) == analytic; prints failures with both values. */
static void check_point(const char *what, double *v, long i, double analytic, tally *t) {
    double keep = v[i];
    v[i] = keep + STEP; double up = loss_at();
    v[i] = keep - STEP; double down = loss_at();
    v[i] = keep;        double mid = loss_at();
    double numeric = (up - down) / (2 * STEP);
    double scale = fmax(fmax(fabs(analytic), fabs(numeric)), FLOOR);
    double rel = fabs(analytic - numeric) / scale;
    t->checked++;
    if (rel <= TOL) {
        if (rel > t->worst) t->worst = rel;
        return;
    }
    /* A kink inside [-STEP, STEP] makes the one-sided slopes differ by far more than the
     * curvature of a smooth loss could (STEP * |f''| is ~1e-5 here). */
    double right = (up - mid) / STEP, left = (mid - down) / STEP;
    if (fabs(right - left) > 1e-2 * scale) {
        t->skipped++;
        printf("  skip %s[%ld]: kink (one-sided slopes %.6g, %.6g)\n", what, i, left, right);
        return;
    }
    t->failed++;
    printf("  FAIL %s[%ld]: analytic %.12g numeric %.12g rel %.3g\n", what, i, analytic, numeric, rel);
}

/* The tensors whose every path to the loss passes a stop_gradient: the test script passes
 * them from the spec's "# gradcheck zero:" line, space-separated. */
#ifndef GC_ZERO_OK
#define GC_ZERO_OK ""
#endif
static int zero_ok(const char *name) {
    const char *all = GC_ZERO_OK;
    size_t n = strlen(name);
    for (const char *p = all; (p = strstr(p, name)); p += n)
        if ((p == all || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
    return 0;
}

static long pick(long count, int k, uint64_t *s) {
    if (count <= SAMPLES) return k;
    if (k == 0) return 0;
    if (k == 1) return count - 1;
    *s = rt_mix64(*s + 1);
    return (long)(*s % (uint64_t)count);
}

static void check_tensor(const char *name, double *v, const double *grad, long count, tally *all) {
    tally t = {0};
    uint64_t s = rt_hash_u64(7, (uint64_t)count, (uint64_t)(v - ctx.params));
    int n = count < SAMPLES ? (int)count : SAMPLES;
    double biggest = 0;
    for (long i = 0; i < count; i++) biggest = fmax(biggest, fabs(grad[i]));
    for (int k = 0; k < n; k++) {
        long i = pick(count, k, &s);
        check_point(name, v, i, grad[i], &t);
    }
    /* A tensor whose gradient is all zero would pass trivially: the net must reach it, unless
     * the spec says no gradient may (every path from it stopped: GC_ZERO_OK), and then none must. */
    if (biggest == 0 && !zero_ok(name)) {
        t.failed++;
        printf("  FAIL %s: its gradient is identically zero\n", name);
    } else if (biggest != 0 && zero_ok(name)) {
        t.failed++;
        printf("  FAIL %s: every path from it is stopped, yet its gradient is not zero\n", name);
    }
    printf("%-14s %6ld elems  %2d checked  %d skipped  max |g| %.3g  worst rel err %.2g%s\n", name,
           count, t.checked, t.skipped, biggest, t.worst, t.failed ? "  FAILED" : "");
    all->checked += t.checked, all->skipped += t.skipped, all->failed += t.failed;
    if (t.worst > all->worst) all->worst = t.worst;
}

int main(void) {
    const gc_model *m = &model;
    long in_n = (long)m->batch * m->in_c * m->in_h * m->in_w;
    ctx.params = rt_alloc_aligned((size_t)m->n_params * sizeof(double));
    ctx.grads = rt_alloc_aligned((size_t)m->n_params * sizeof(double));
    ctx.buffers = rt_alloc_aligned((size_t)(m->n_buffers + 1) * sizeof(double));
    ctx.arena = rt_alloc_aligned((size_t)m->arena_bytes * 2);   /* offsets doubled by the test */
    ctx.training = 1;
    ctx.step_seed = 12345;   /* fixed dropout / drop-path masks for every evaluation */
    x = rt_alloc_aligned((size_t)in_n * sizeof(double));
    y = rt_alloc_aligned((size_t)m->batch * sizeof(int32_t));
    gc_dx = rt_alloc_aligned((size_t)in_n * sizeof(double));
    gc_x = x;
    /* NaN where no backward writes: a gradient the step leaves unwritten (a dead layer's) shows */
    for (long i = 0; i < m->n_params; i++) ctx.grads[i] = NAN;

    m->init(ctx.params, ctx.buffers, 1);
    rt_rng r;
    rt_rng_init(&r, 2, RT_STREAM_INIT);
    for (long i = 0; i < in_n; i++) x[i] = rt_rng_normal(&r);
    for (int i = 0; i < m->batch; i++) y[i] = (int32_t)rt_rng_below(&r, (uint32_t)m->classes);
    /* Move BN/LN/bias/scale tensors off their identity init so every term matters. */
    for (int t = 0; t < m->n_tensors; t++)
        if (m->tensors[t].no_decay)
            for (long i = 0; i < m->tensors[t].count; i++)
                ctx.params[m->tensors[t].offset + i] += 0.3 * rt_rng_normal(&r);

    double loss = loss_at();
    gc_stops_frozen = 1;   /* from here on every stop replays its recorded output */
    double *grads = malloc((size_t)m->n_params * sizeof(double));
    double *dx = malloc((size_t)in_n * sizeof(double));
    memcpy(grads, ctx.grads, (size_t)m->n_params * sizeof(double));
    memcpy(dx, gc_dx, (size_t)in_n * sizeof(double));
    printf("model %s: %ld params in %d tensors, batch %d, loss %.9f\n", m->name, m->n_params,
           m->n_tensors, m->batch, loss);

    tally all = {0};
    for (int t = 0; t < m->n_tensors; t++) {
        const rt_param_tensor *p = &m->tensors[t];
        check_tensor(p->name, ctx.params + p->offset, grads + p->offset, p->count, &all);
    }
    check_tensor("input", x, dx, in_n, &all);
    printf("%d points checked, %d skipped at kinks, %d failed; worst relative error %.2g "
           "(tolerance %g)\n", all.checked, all.skipped, all.failed, all.worst, TOL);
    free(grads);
    free(dx);
    if (all.skipped * 10 > all.checked) {
        printf("FAIL: more than 10%% of the points were skipped as kinks\n");
        return 1;
    }
    return all.failed ? 1 : 0;
}
