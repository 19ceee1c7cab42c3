/* Synchronized batch norm in a world of 1: the all-reduce path of batchnorm.c (statistics of
 * every channel first, a sum over processes, then normalization), driven by a sync of one
 * process whose sum is the identity, and sync_batchnorm with comm == NULL must both equal the
 * per-rank op bit for bit, with and without the fused ReLU, since the trainer uses them for
 * every world size of a sync_bn spec. Their all-reduced form is checked end to end by
 * tests/mpi/equivalence_test.sh. */
#include <string.h>
#include "rt_comm.h"
#include "rt_ops.h"
#include "testlib.h"

static float *rand_floats(long n, unsigned *seed, float scale) {
    float *p = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; i < n; i++) p[i] = scale * ((float)rand_r(seed) / (float)RAND_MAX - 0.5f);
    return p;
}

static int same(const float *a, const float *b, long n, const char *what) {
    for (long i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float))) {
            fprintf(stderr, "%s: element %ld differs: %.9g vs %.9g\n", what, i, a[i], b[i]);
            return 0;
        }
    return 1;
}

/* One process: the sum over processes is the value itself; counts calls. */
static int sums_taken;
static void sum_one_process(void *ctx, double *v, int n, const char *what) {
    (void)ctx, (void)v, (void)n, (void)what;
    sums_taken++;
}

static void test_case(int n, int c, int hw, rt_act act) {
    unsigned seed = (unsigned)(n * 131 + c * 7 + hw);
    long total = (long)n * c * hw;
    float *in = rand_floats(total, &seed, 4.0f), *dout = rand_floats(total, &seed, 1.0f);
    float *gamma = rand_floats(c, &seed, 2.0f), *beta = rand_floats(c, &seed, 1.0f);
    float *out[2], *mean[2], *inv[2], *rm[2], *rv[2], *din[2], *dg[2], *db[2];
    for (int k = 0; k < 2; k++) {
        out[k] = calloc((size_t)total, sizeof(float));
        din[k] = calloc((size_t)total, sizeof(float));
        mean[k] = calloc((size_t)c, sizeof(float)), inv[k] = calloc((size_t)c, sizeof(float));
        rm[k] = calloc((size_t)c, sizeof(float)), rv[k] = calloc((size_t)c, sizeof(float));
        dg[k] = calloc((size_t)c, sizeof(float)), db[k] = calloc((size_t)c, sizeof(float));
        for (int i = 0; i < c; i++) rv[k][i] = 1.0f;
    }
    rt_bn_sync one = { sum_one_process, NULL, 1 };
    batchnorm_forward_train(out[0], mean[0], inv[0], rm[0], rv[0], in, gamma, beta, n, c, hw, 0.1f, 1e-5f, act);
    batchnorm_forward_train_sync(out[1], mean[1], inv[1], rm[1], rv[1], in, gamma, beta, n, c, hw,
                                 0.1f, 1e-5f, act, &one);
    CHECK(sums_taken == 2);
    batchnorm_backward(din[0], dg[0], db[0], dout, in, gamma, beta, mean[0], inv[0], n, c, hw, act);
    batchnorm_backward_sync(din[1], dg[1], db[1], dout, in, gamma, beta, mean[1], inv[1], n, c, hw,
                            act, &one);
    CHECK(sums_taken == 3);
    sums_taken = 0;
    CHECK(same(out[0], out[1], total, "forward"));
    CHECK(same(mean[0], mean[1], c, "saved mean"));
    CHECK(same(inv[0], inv[1], c, "saved inv_std"));
    CHECK(same(rm[0], rm[1], c, "running mean"));
    CHECK(same(rv[0], rv[1], c, "running var"));
    CHECK(same(din[0], din[1], total, "dinput"));
    CHECK(same(dg[0], dg[1], c, "dgamma"));
    CHECK(same(db[0], db[1], c, "dbeta"));
    /* sync_batchnorm in a world of one (comm == NULL) is the per-rank op. */
    memset(out[1], 0, sizeof(float) * (size_t)total);
    for (int i = 0; i < c; i++) rm[1][i] = 0, rv[1][i] = 1.0f;
    sync_batchnorm_forward_train(NULL, out[1], mean[1], inv[1], rm[1], rv[1], in, gamma, beta, n, c,
                                 hw, 0.1f, 1e-5f, act);
    CHECK(same(out[0], out[1], total, "sync_batchnorm forward, comm NULL"));
    CHECK(same(rv[0], rv[1], c, "sync_batchnorm running var, comm NULL"));
    /* Without din (the first layer) the parameter gradients are still written. */
    memset(dg[1], 0, sizeof(float) * (size_t)c);
    sync_batchnorm_backward(NULL, NULL, dg[1], db[1], dout, in, gamma, beta, mean[1], inv[1], n, c,
                            hw, act);
    CHECK(same(dg[0], dg[1], c, "dgamma without dinput"));
    /* The backward recomputes a fused ReLU's mask from the input: it must be the forward
     * output's sign bit for bit, so the fused backward equals the plain one on dout masked
     * by that output. */
    if (act) {
        float *masked = calloc((size_t)total, sizeof(float));
        for (long i = 0; i < total; i++) masked[i] = out[0][i] > 0 ? dout[i] : 0;
        batchnorm_backward(din[1], dg[1], db[1], masked, in, gamma, beta, mean[0], inv[0], n, c, hw,
                           RT_ACT_NONE);
        CHECK(same(din[0], din[1], total, "dinput through the recomputed ReLU mask"));
        CHECK(same(dg[0], dg[1], c, "dgamma through the recomputed ReLU mask"));
        CHECK(same(db[0], db[1], c, "dbeta through the recomputed ReLU mask"));
        free(masked);
    }
    for (int k = 0; k < 2; k++) {
        free(out[k]), free(din[k]), free(mean[k]), free(inv[k]);
        free(rm[k]), free(rv[k]), free(dg[k]), free(db[k]);
    }
    free(in), free(dout), free(gamma), free(beta);
}

int main(void) {
    CHECK(rt_comm_size(NULL) == 1 && rt_comm_rank(NULL) == 0);
    for (int act = RT_ACT_NONE; act <= RT_ACT_RELU; act++) {
        test_case(8, 3, 25, (rt_act)act);    /* NCHW */
        test_case(16, 5, 1, (rt_act)act);    /* [N, C] after a linear layer */
        test_case(2, 64, 49, (rt_act)act);   /* more channels than threads */
    }
    return test_finish("test_sync_bn");
}
