/* batchnorm_add (a residual block's closing bn + add + relu in one pass): forward against
 * batchnorm then add, backward against central differences in double for the input, gamma,
 * beta and the residual (the masked gradient it leaves in dout), and the float build against
 * the separate float ops (batchnorm_forward_train, add_act_forward; relu_backward,
 * batchnorm_backward) bit for bit, which the generated trainers' params_hash relies on. */
#include <math.h>
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

#define BN_EPS 1e-5
#define BN_MOM 0.1

typedef struct { double *in, *res, *g, *b, *out, *r, *mean, *istd, *rm, *rv; int n, c, hw; rt_act act; } bn_add_ctx;

static double bn_add_loss(void *p) {
    bn_add_ctx *c = p;
    batchnorm_add_forward_train_f64(c->out, c->mean, c->istd, c->rm, c->rv, c->in, c->res, c->g, c->b,
                                    c->n, c->c, c->hw, BN_MOM, BN_EPS, c->act);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

static int bits_differ(const char *what, const float *got, const float *want, long n) {
    for (long i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(float))) {
            fprintf(stderr, "FAIL %s: not bit for bit the separate ops' at [%ld]: %.9g vs %.9g\n", what, i,
                    got[i], want[i]);
            test_failures++;
            return 1;
        }
    return 0;
}

/* The float build, fused against separate: forward, running statistics, and every gradient. */
static void check_float_matches_separate(const bn_add_ctx *c, const char *tag) {
    int n = c->n, ch = c->c, hw = c->hw;
    long tn = (long)n * ch * hw;
    float *in = gc_to_f32(c->in, tn), *res = gc_to_f32(c->res, tn), *g = gc_to_f32(c->g, ch);
    float *b = gc_to_f32(c->b, ch), *dy[2] = { gc_to_f32(c->r, tn), gc_to_f32(c->r, tn) };
    float *out[2] = { malloc(sizeof(float) * tn), malloc(sizeof(float) * tn) }, *t = malloc(sizeof(float) * tn);
    float *din[2] = { malloc(sizeof(float) * tn), malloc(sizeof(float) * tn) };
    float st[2][6][64];   /* mean, inv_std, running mean, running var, dgamma, dbeta */
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < ch; k++) st[s][2][k] = 0.5f, st[s][3][k] = 2.0f;
    batchnorm_add_forward_train(out[0], st[0][0], st[0][1], st[0][2], st[0][3], in, res, g, b, n, ch, hw, 0.1f,
                                1e-5f, c->act);
    batchnorm_add_backward(din[0], st[0][4], st[0][5], dy[0], c->act ? out[0] : NULL, in, g, b, st[0][0],
                           st[0][1], n, ch, hw);
    batchnorm_forward_train(t, st[1][0], st[1][1], st[1][2], st[1][3], in, g, b, n, ch, hw, 0.1f, 1e-5f,
                            RT_ACT_NONE);
    add_act_forward(out[1], t, res, tn, c->act);
    if (c->act) relu_backward(dy[1], dy[1], out[1], tn);
    batchnorm_backward(din[1], st[1][4], st[1][5], dy[1], in, g, b, st[1][0], st[1][1], n, ch, hw, RT_ACT_NONE);
    char what[128];
    static const char *const names[] = { "mean", "inv_std", "running mean", "running var", "dgamma", "dbeta" };
    snprintf(what, sizeof what, "%s float forward", tag);
    bits_differ(what, out[0], out[1], tn);
    for (int k = 0; k < 6; k++) {
        snprintf(what, sizeof what, "%s float %s", tag, names[k]);
        bits_differ(what, st[0][k], st[1][k], ch);
    }
    snprintf(what, sizeof what, "%s float dinput", tag);
    bits_differ(what, din[0], din[1], tn);
    snprintf(what, sizeof what, "%s float masked dout (the residual's gradient)", tag);
    bits_differ(what, dy[0], dy[1], tn);
    /* evaluation */
    batchnorm_add_forward_eval(out[0], in, res, g, b, st[0][2], st[0][3], n, ch, hw, 1e-5f, c->act);
    batchnorm_forward_eval(t, in, g, b, st[0][2], st[0][3], n, ch, hw, 1e-5f, RT_ACT_NONE);
    add_act_forward(out[1], t, res, tn, c->act);
    snprintf(what, sizeof what, "%s float eval forward", tag);
    bits_differ(what, out[0], out[1], tn);
    float *bufs[] = { in, res, g, b, dy[0], dy[1], out[0], out[1], t, din[0], din[1] };
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
}

static void test_bn_add(int n, int ch, int hw, rt_act act) {
    const char *tag = act ? "batchnorm_add+relu" : "batchnorm_add";
    char what[96];
    long tn = (long)n * ch * hw;
    bn_add_ctx c = { gc_rand(tn, -2, 3), gc_rand(tn, -1, 1), gc_rand(ch, 0.5, 1.5), gc_rand(ch, -1, 1),
                     gc_alloc(tn), gc_rand(tn, -1, 1), gc_alloc(ch), gc_alloc(ch), gc_alloc(ch), gc_alloc(ch),
                     n, ch, hw, act };
    for (int k = 0; k < ch; k++) { c.rm[k] = 0.5; c.rv[k] = 2.0; }
    bn_add_loss(&c);
    /* reference: batchnorm alone, then the add and the ReLU */
    double *ref = gc_alloc(tn), *m = gc_alloc(ch), *s = gc_alloc(ch), *rm = gc_alloc(ch), *rv = gc_alloc(ch);
    for (int k = 0; k < ch; k++) { rm[k] = 0.5; rv[k] = 2.0; }
    batchnorm_forward_train_f64(ref, m, s, rm, rv, c.in, c.g, c.b, n, ch, hw, BN_MOM, BN_EPS, RT_ACT_NONE);
    for (long q = 0; q < tn; q++) {
        ref[q] += c.res[q];
        if (act && ref[q] < 0) ref[q] = 0;
    }
    snprintf(what, sizeof what, "%s train forward vs batchnorm then add", tag);
    gc_compare(what, c.out, ref, tn, 1e-12);
    gc_compare("batchnorm_add running_var", c.rv, rv, ch, 1e-12);

    double *eo = gc_alloc(tn);
    batchnorm_add_forward_eval_f64(eo, c.in, c.res, c.g, c.b, c.rm, c.rv, n, ch, hw, BN_EPS, act);
    batchnorm_forward_eval_f64(ref, c.in, c.g, c.b, c.rm, c.rv, n, ch, hw, BN_EPS, RT_ACT_NONE);
    for (long q = 0; q < tn; q++) {
        ref[q] += c.res[q];
        if (act && ref[q] < 0) ref[q] = 0;
    }
    snprintf(what, sizeof what, "%s eval forward vs batchnorm then add", tag);
    gc_compare(what, eo, ref, tn, 1e-12);

    double *din = gc_alloc(tn), *dg = gc_alloc(ch), *db = gc_alloc(ch), *dres = gc_alloc(tn);
    bn_add_loss(&c);
    memcpy(dres, c.r, sizeof(double) * tn);   /* masked in place: then the residual's gradient */
    batchnorm_add_backward_f64(din, dg, db, dres, act ? c.out : NULL, c.in, c.g, c.b, c.mean, c.istd, n, ch, hw);
    snprintf(what, sizeof what, "%s dinput", tag);
    gc_check(what, c.in, tn, din, bn_add_loss, &c);
    snprintf(what, sizeof what, "%s dgamma", tag);
    gc_check(what, c.g, ch, dg, bn_add_loss, &c);
    snprintf(what, sizeof what, "%s dbeta", tag);
    gc_check(what, c.b, ch, db, bn_add_loss, &c);
    snprintf(what, sizeof what, "%s dresidual (dout masked in place)", tag);
    gc_check(what, c.res, tn, dres, bn_add_loss, &c);
    check_float_matches_separate(&c, tag);
    double *bufs[] = { c.in, c.res, c.g, c.b, c.out, c.r, c.mean, c.istd, c.rm, c.rv, ref, m, s, rm, rv, eo,
                       din, dg, db, dres };
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
}

int main(void) {
    gc_seed(5);
    test_bn_add(3, 4, 10, RT_ACT_RELU);
    test_bn_add(3, 4, 10, RT_ACT_NONE);
    test_bn_add(3, 2, 37, RT_ACT_RELU);    /* 16-lane vectors and a partial one per plane */
    test_bn_add(2, 1, 4100, RT_ACT_RELU);  /* a plane longer than one float span */
    test_bn_add(8, 6, 1, RT_ACT_RELU);     /* [N,C] */
    return test_finish("test_grad_bn_add");
}
