/* Batch norm of the runtime as the trainers link it (-march=native: AVX-512 masked loads for a
 * plane's partial vector) against a textbook double-precision reference: forward, saved and
 * running statistics, and backward with and without the fused ReLU, and the same bits at 1, 2
 * and 3 threads. The unit tests check the portable build; this one checks the vector code the
 * trainers run. */
#include <omp.h>
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

typedef struct { double mean, var; } stats;

static stats channel_stats(const double *x, int n, int c, int hw, int k) {
    double s = 0, sq = 0, m = (double)n * hw;
    for (int b = 0; b < n; b++) for (int i = 0; i < hw; i++) s += x[((long)b * c + k) * hw + i];
    for (int b = 0; b < n; b++)
        for (int i = 0; i < hw; i++) {
            double d = x[((long)b * c + k) * hw + i] - s / m;
            sq += d * d;
        }
    return (stats){ s / m, sq / m };
}

/* The float ops' outputs at a given thread count, into fresh buffers. */
typedef struct { float *y, *mean, *inv, *rv, *dx, *dg, *db; } f32_run;

static f32_run run_f32(const float *x, const float *dy, const float *g, const float *beta, int n, int c,
                       int hw, rt_act act, int threads) {
    long tn = (long)n * c * hw;
    f32_run r = { malloc(sizeof(float) * tn), malloc(sizeof(float) * c), malloc(sizeof(float) * c),
                  malloc(sizeof(float) * c), malloc(sizeof(float) * tn), malloc(sizeof(float) * c),
                  malloc(sizeof(float) * c) };
    float *rm = calloc(c, sizeof(float));
    for (int k = 0; k < c; k++) r.rv[k] = 1.0f;
    int was = omp_get_max_threads();
    omp_set_num_threads(threads);
    batchnorm_forward_train(r.y, r.mean, r.inv, rm, r.rv, x, g, beta, n, c, hw, 0.1f, 1e-5f, act);
    batchnorm_backward(r.dx, r.dg, r.db, dy, x, g, beta, r.mean, r.inv, n, c, hw, act);
    omp_set_num_threads(was);
    free(rm);
    return r;
}

static void f32_run_free(f32_run *r) {
    free(r->y); free(r->mean); free(r->inv); free(r->rv); free(r->dx); free(r->dg); free(r->db);
}

/* The same bits at another thread count: each channel's sums run in an order fixed by the
 * shapes alone, whichever thread sweeps it. */
static void check_thread_independent(const f32_run *a, const f32_run *b, int n, int c, int hw, rt_act act,
                                     int threads) {
    long tn = (long)n * c * hw;
    const char *names[] = { "forward", "saved mean", "saved inv_std", "running var", "dinput", "dgamma",
                            "dbeta" };
    const float *x[] = { a->y, a->mean, a->inv, a->rv, a->dx, a->dg, a->db };
    const float *z[] = { b->y, b->mean, b->inv, b->rv, b->dx, b->dg, b->db };
    for (int k = 0; k < 7; k++) {
        long len = k == 0 || k == 4 ? tn : c, at = 0;
        while (at < len && memcmp(&x[k][at], &z[k][at], sizeof(float)) == 0) at++;
        if (at < len) {
            fprintf(stderr, "FAIL: bn%s n=%d c=%d hw=%d %s differs at %d threads from the default's: "
                    "[%ld] %.9g against %.9g\n", act ? "+relu" : "", n, c, hw, names[k], threads, at,
                    (double)z[k][at], (double)x[k][at]);
            test_failures++;
        }
    }
}

static void test_case(int n, int c, int hw, rt_act act) {
    long tn = (long)n * c * hw;
    double *x = gc_rand(tn, -2, 3), *dy = gc_rand(tn, -1, 1), *g = gc_rand(c, 0.5, 1.5);
    double *beta = gc_rand(c, -1, 1), *y = gc_alloc(tn), *dx = gc_alloc(tn);
    double *dg = gc_alloc(c), *db = gc_alloc(c), *mean = gc_alloc(c), *rv = gc_alloc(c);
    float *fx = gc_to_f32(x, tn), *fdy = gc_to_f32(dy, tn), *fg = gc_to_f32(g, c);
    float *fb = gc_to_f32(beta, c);
    f32_run run = run_f32(fx, fdy, fg, fb, n, c, hw, act, 2);
    float *fy = run.y, *fdx = run.dx, *fm = run.mean, *frv = run.rv, *fdg = run.dg, *fdb = run.db;
    for (int threads = 1; threads <= 3; threads += 2) {
        f32_run other = run_f32(fx, fdy, fg, fb, n, c, hw, act, threads);
        check_thread_independent(&run, &other, n, c, hw, act, threads);
        f32_run_free(&other);
    }

    double m = (double)n * hw;
    for (int k = 0; k < c; k++) {
        stats st = channel_stats(x, n, c, hw, k);
        double istd = 1 / sqrt(st.var + 1e-5), sd = 0, sdx = 0;
        mean[k] = st.mean;
        rv[k] = 0.9 + 0.1 * st.var * m / (m - 1);
        for (int b = 0; b < n; b++)   /* forward; the mask is the float forward's output sign */
            for (int i = 0; i < hw; i++) {
                long q = ((long)b * c + k) * hw + i;
                double xhat = (x[q] - st.mean) * istd, d = act && !(fy[q] > 0) ? 0 : dy[q];
                y[q] = act && xhat * g[k] + beta[k] < 0 ? 0 : xhat * g[k] + beta[k];
                sd += d;
                sdx += d * xhat;
            }
        dg[k] = sdx;
        db[k] = sd;
        for (int b = 0; b < n; b++)
            for (int i = 0; i < hw; i++) {
                long q = ((long)b * c + k) * hw + i;
                double xhat = (x[q] - st.mean) * istd, d = act && !(fy[q] > 0) ? 0 : dy[q];
                dx[q] = g[k] * istd / m * (m * d - sd - xhat * sdx);
            }
    }
    const char *names[] = { "forward", "saved mean", "running var", "dinput", "dgamma", "dbeta" };
    const float *got[] = { fy, fm, frv, fdx, fdg, fdb };
    const double *want[] = { y, mean, rv, dx, dg, db };
    for (int k = 0; k < 6; k++) {
        char what[96];
        snprintf(what, sizeof what, "bn%s n=%d c=%d hw=%d %s", act ? "+relu" : "", n, c, hw,
                 names[k]);
        gc_compare_f32(what, got[k], want[k], k == 0 || k == 3 ? tn : c);
    }
    free(x); free(dy); free(g); free(beta); free(y); free(dx); free(dg); free(db); free(mean);
    free(rv); free(fx); free(fdy); free(fg); free(fb);
    f32_run_free(&run);
}

int main(void) {
    gc_seed(20);
    for (int act = 0; act <= 1; act++) {
        test_case(6, 3, 49, (rt_act)act);    /* 3 full vectors and 1 value per plane */
        test_case(4, 5, 196, (rt_act)act);   /* 12 full vectors and 4 values */
        test_case(3, 2, 784, (rt_act)act);   /* whole vectors only */
        test_case(2, 2, 5000, (rt_act)act);  /* planes longer than a float span */
        test_case(40, 4, 1, (rt_act)act);    /* [N, C] after a linear layer */
        test_case(6, 70, 49, (rt_act)act);   /* more channels than a thread's sweep carries */
        /* channels too big for the statistics' blocks: two whole sweeps, a span and a half
         * a plane, and 40 channels on fewer threads than blocks of 32 */
        test_case(8, 3, 5000, (rt_act)act);
        test_case(48, 40, 784, (rt_act)act);
    }
    return test_finish("bn_native");
}
