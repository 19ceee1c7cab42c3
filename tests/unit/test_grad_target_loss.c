/* The loss against dense targets (runtime/cpu/ops/target_loss.c): softmax CE and sigmoid BCE
 * on label-smoothed, mixed targets; backward vs central differences (double build), the
 * unmixed CE vs softmax_xent_forward, the float build vs the double build. (Its values
 * against torch's cross_entropy and binary_cross_entropy_with_logits: tests/augment/.) */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"
#include "testlib.h"

typedef struct { double *z; int32_t *t; int mixed, n, k, bce; double eps, thr; } loss_ctx;

static double loss_of(void *p) {
    loss_ctx *c = p;
    return target_loss_forward_f64(NULL, c->z, c->t, c->mixed, c->n, c->k, c->bce, c->eps, c->thr, 0);
}

static void test_case(int n, int k, int mixed, int bce, double eps, double thr) {
    loss_ctx c = { gc_rand((long)n * k, -4, 4), malloc(sizeof(int32_t) * 3 * n), mixed, n, k, bce, eps, thr };
    for (int b = 0; b < 2 * n; b++) c.t[b] = (int32_t)(gc_next() % (uint64_t)k);
    for (int b = 0; b < n; b++) {
        float w = (float)gc_uniform(0, 1);
        memcpy(&c.t[2 * n + b], &w, sizeof w);
    }
    double *dz = gc_alloc((long)n * k);
    double loss = target_loss_forward_f64(dz, c.z, c.t, mixed, n, k, bce, eps, thr, 1.0 / n);
    char what[100];
    snprintf(what, sizeof what, "%s mixed=%d eps=%g thr=%g dlogits", bce ? "BCE" : "CE", mixed, eps, thr);
    if (thr == 0) gc_check(what, c.z, (long)n * k, dz, loss_of, &c);   /* a threshold is flat in z: no check */
    if (!bce && !mixed) {
        double want = softmax_xent_forward_f64(NULL, c.z, c.t, n, k, eps, 0);
        gc_compare("unmixed CE equals softmax_xent", &loss, &want, 1, 1e-12);
    }
    float *fz = gc_to_f32(c.z, (long)n * k), *fdz = malloc(sizeof(float) * n * k);
    double floss = target_loss_forward(fdz, fz, c.t, mixed, n, k, bce, (float)eps, (float)thr, 1.0f / n);
    snprintf(what, sizeof what, "%s mixed=%d float loss", bce ? "BCE" : "CE", mixed);
    gc_compare(what, &floss, &loss, 1, GC_F32_TOL);
    snprintf(what, sizeof what, "%s mixed=%d float dlogits", bce ? "BCE" : "CE", mixed);
    gc_compare_f32(what, fdz, dz, (long)n * k);
    free(fz), free(fdz), free(c.z), free(c.t), free(dz);
}

int main(void) {
    gc_seed(19);
    test_case(5, 7, 0, 0, 0.0, 0);
    test_case(6, 10, 0, 0, 0.1, 0);
    test_case(6, 10, 1, 0, 0.1, 0);
    test_case(3, 1000, 1, 0, 0.2, 0);
    test_case(5, 7, 0, 1, 0.0, 0);
    test_case(6, 10, 1, 1, 0.1, 0);
    test_case(3, 1000, 1, 1, 0.1, 0);
    test_case(6, 10, 1, 1, 0.1, 0.2);
    return test_finish("test_grad_target_loss");
}
