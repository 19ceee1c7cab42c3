/* Batch norm of the runtime as the trainers link it (-march=native: AVX-512 masked loads for a
 * plane's partial vector) against a textbook double-precision reference: forward, saved and
 * running statistics, and backward with and without the fused ReLU. The unit tests check the
 * portable build; this one checks the vector code the trainers run. */
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

static void test_case(int n, int c, int hw, rt_act act) {
    long tn = (long)n * c * hw;
    double *x = gc_rand(tn, -2, 3), *dy = gc_rand(tn, -1, 1), *g = gc_rand(c, 0.5, 1.5);
    double *beta = gc_rand(c, -1, 1), *y = gc_alloc(tn), *dx = gc_alloc(tn);
    double *dg = gc_alloc(c), *db = gc_alloc(c), *mean = gc_alloc(c), *rv = gc_alloc(c);
    float *fx = gc_to_f32(x, tn), *fdy = gc_to_f32(dy, tn), *fg = gc_to_f32(g, c);
    float *fb = gc_to_f32(beta, c), *fy = malloc(sizeof(float) * tn);
    float *fdx = malloc(sizeof(float) * tn);
    float *fm = malloc(sizeof(float) * c), *fs = malloc(sizeof(float) * c);
    float *frm = calloc(c, sizeof(float)), *frv = malloc(sizeof(float) * c);
    float *fdg = malloc(sizeof(float) * c), *fdb = malloc(sizeof(float) * c);
    for (int k = 0; k < c; k++) frv[k] = 1.0f;
    batchnorm_forward_train(fy, fm, fs, frm, frv, fx, fg, fb, n, c, hw, 0.1f, 1e-5f, act);
    batchnorm_backward(fdx, fdg, fdb, fdy, fx, fg, fb, fm, fs, n, c, hw, act);

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
    free(rv); free(fx); free(fdy); free(fg); free(fb); free(fy); free(fdx); free(fm); free(fs);
    free(frm); free(frv); free(fdg); free(fdb);
}

int main(void) {
    gc_seed(20);
    for (int act = 0; act <= 1; act++) {
        test_case(6, 3, 49, (rt_act)act);    /* 3 full vectors and 1 value per plane */
        test_case(4, 5, 196, (rt_act)act);   /* 12 full vectors and 4 values */
        test_case(3, 2, 784, (rt_act)act);   /* whole vectors only */
        test_case(2, 2, 5000, (rt_act)act);  /* planes longer than a float span */
        test_case(40, 4, 1, (rt_act)act);    /* [N, C] after a linear layer */
    }
    return test_finish("bn_native");
}
