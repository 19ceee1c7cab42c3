/* linear, batchnorm (train and eval, NCHW and [N,C]), layernorm (channels_first and last
 * dim) and layer scale: forward vs direct references, backward vs central differences
 * (double), float build vs double build. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* ---------- linear ---------- */
typedef struct { double *in, *w, *b, *out, *r; int n, i, o; } lin_ctx;

static double lin_loss(void *p) {
    lin_ctx *c = p;
    linear_forward_f64(c->out, c->in, c->w, c->b, c->n, c->i, c->o);
    return gc_dot(c->out, c->r, (long)c->n * c->o);
}

static void test_linear(int n, int in_f, int out_f, int bias) {
    lin_ctx c = { gc_rand((long)n * in_f, -1, 1), gc_rand((long)out_f * in_f, -1, 1),
                  bias ? gc_rand(out_f, -1, 1) : NULL, gc_alloc((long)n * out_f),
                  gc_rand((long)n * out_f, -1, 1), n, in_f, out_f };
    long on = (long)n * out_f, inn = (long)n * in_f, wn = (long)out_f * in_f;
    double *ref = gc_alloc(on);
    for (int b = 0; b < n; b++)
        for (int o = 0; o < out_f; o++) {
            double acc = bias ? c.b[o] : 0;
            for (int i = 0; i < in_f; i++) acc += c.in[b * in_f + i] * c.w[o * in_f + i];
            ref[b * out_f + o] = acc;
        }
    lin_loss(&c);
    gc_compare("linear forward vs direct", c.out, ref, on, 1e-12);
    double *din = gc_alloc(inn), *dw = gc_alloc(wn), *db = gc_alloc(out_f);
    for (int o = 0; o < out_f; o++) db[o] = 1e9;   /* must be overwritten */
    linear_backward_f64(din, dw, bias ? db : NULL, c.r, c.in, c.w, n, in_f, out_f);
    gc_check("linear dinput", c.in, inn, din, lin_loss, &c);
    gc_check("linear dweight", c.w, wn, dw, lin_loss, &c);
    if (bias) gc_check("linear dbias", c.b, out_f, db, lin_loss, &c);

    float *fi = gc_to_f32(c.in, inn), *fw = gc_to_f32(c.w, wn), *fr = gc_to_f32(c.r, on);
    float *fb = bias ? gc_to_f32(c.b, out_f) : NULL;
    float *fo = malloc(sizeof(float) * on), *fdi = malloc(sizeof(float) * inn);
    float *fdw = malloc(sizeof(float) * wn), *fdb = malloc(sizeof(float) * out_f);
    linear_forward(fo, fi, fw, fb, n, in_f, out_f);
    linear_backward(fdi, fdw, fb ? fdb : NULL, fr, fi, fw, n, in_f, out_f);
    gc_compare_f32("linear float forward", fo, ref, on);
    gc_compare_f32("linear float dinput", fdi, din, inn);
    gc_compare_f32("linear float dweight", fdw, dw, wn);
    if (bias) gc_compare_f32("linear float dbias", fdb, db, out_f);
    free(fi); free(fw); free(fr); free(fb); free(fo); free(fdi); free(fdw); free(fdb);
    free(c.in); free(c.w); free(c.b); free(c.out); free(c.r); free(ref); free(din); free(dw); free(db);
}

/* ---------- batchnorm ---------- */
typedef struct { double *in, *g, *b, *out, *r, *mean, *istd, *rm, *rv; int n, c, hw; rt_act act; } bn_ctx;
#define BN_EPS 1e-5
#define BN_MOM 0.1

static double bn_loss(void *p) {
    bn_ctx *c = p;
    batchnorm_forward_train_f64(c->out, c->mean, c->istd, c->rm, c->rv, c->in, c->g, c->b,
                                c->n, c->c, c->hw, BN_MOM, BN_EPS, c->act);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

/* With act = RT_ACT_RELU the ReLU is fused: forward and backward are checked through it. */
static void test_batchnorm(int n, int ch, int hw, rt_act act) {
    const char *tag = act ? "batchnorm+relu" : "batchnorm";
    char what[96];
    long tn = (long)n * ch * hw;
    bn_ctx c = { gc_rand(tn, -2, 3), gc_rand(ch, 0.5, 1.5), gc_rand(ch, -1, 1), gc_alloc(tn),
                 gc_rand(tn, -1, 1), gc_alloc(ch), gc_alloc(ch), gc_alloc(ch), gc_alloc(ch),
                 n, ch, hw, act };
    for (int k = 0; k < ch; k++) { c.rm[k] = 0.5; c.rv[k] = 2.0; }
    bn_loss(&c);
    /* reference: textbook batch statistics and running-stat update */
    double *ref = gc_alloc(tn), *rm_ref = gc_alloc(ch), *rv_ref = gc_alloc(ch);
    for (int k = 0; k < ch; k++) {
        double s = 0, sq = 0, m = (double)n * hw;
        for (int b = 0; b < n; b++) for (int i = 0; i < hw; i++) s += c.in[((long)b * ch + k) * hw + i];
        double mean = s / m;
        for (int b = 0; b < n; b++) for (int i = 0; i < hw; i++) {
            double d = c.in[((long)b * ch + k) * hw + i] - mean; sq += d * d;
        }
        for (int b = 0; b < n; b++) for (int i = 0; i < hw; i++) {
            long q = ((long)b * ch + k) * hw + i;
            ref[q] = (c.in[q] - mean) / sqrt(sq / m + BN_EPS) * c.g[k] + c.b[k];
            if (act && ref[q] < 0) ref[q] = 0;
        }
        rm_ref[k] = 0.9 * 0.5 + 0.1 * mean;
        rv_ref[k] = 0.9 * 2.0 + 0.1 * sq / (m - 1);
    }
    snprintf(what, sizeof what, "%s train forward vs direct", tag);
    gc_compare(what, c.out, ref, tn, 1e-12);
    gc_compare("batchnorm running_mean", c.rm, rm_ref, ch, 1e-12);
    gc_compare("batchnorm running_var (unbiased)", c.rv, rv_ref, ch, 1e-12);

    /* eval uses the running statistics */
    double *eo = gc_alloc(tn), *eref = gc_alloc(tn);
    batchnorm_forward_eval_f64(eo, c.in, c.g, c.b, c.rm, c.rv, n, ch, hw, BN_EPS, act);
    for (long q = 0; q < tn; q++) {
        int k = (int)((q / hw) % ch);
        eref[q] = (c.in[q] - c.rm[k]) / sqrt(c.rv[k] + BN_EPS) * c.g[k] + c.b[k];
        if (act && eref[q] < 0) eref[q] = 0;
    }
    snprintf(what, sizeof what, "%s eval forward vs direct", tag);
    gc_compare(what, eo, eref, tn, 1e-12);

    double *din = gc_alloc(tn), *dg = gc_alloc(ch), *db = gc_alloc(ch);
    bn_loss(&c);
    batchnorm_backward_f64(din, dg, db, c.r, c.in, c.g, c.b, c.mean, c.istd, n, ch, hw, act);
    snprintf(what, sizeof what, "%s dinput", tag);
    gc_check(what, c.in, tn, din, bn_loss, &c);
    snprintf(what, sizeof what, "%s dgamma", tag);
    gc_check(what, c.g, ch, dg, bn_loss, &c);
    snprintf(what, sizeof what, "%s dbeta", tag);
    gc_check(what, c.b, ch, db, bn_loss, &c);

    float *fi = gc_to_f32(c.in, tn), *fg = gc_to_f32(c.g, ch), *fb = gc_to_f32(c.b, ch);
    float *fr = gc_to_f32(c.r, tn), *fo = malloc(sizeof(float) * tn), *fdi = malloc(sizeof(float) * tn);
    float fm[64], fs[64], frm[64], frv[64], fdg[64], fdb[64];
    for (int k = 0; k < ch; k++) { frm[k] = 0.5f; frv[k] = 2.0f; }
    batchnorm_forward_train(fo, fm, fs, frm, frv, fi, fg, fb, n, ch, hw, 0.1f, 1e-5f, act);
    batchnorm_backward(fdi, fdg, fdb, fr, fi, fg, fb, fm, fs, n, ch, hw, act);
    gc_compare_f32("batchnorm float forward", fo, ref, tn);
    gc_compare_f32("batchnorm float running_var", frv, rv_ref, ch);
    gc_compare_f32("batchnorm float dinput", fdi, din, tn);
    gc_compare_f32("batchnorm float dgamma", fdg, dg, ch);
    gc_compare_f32("batchnorm float dbeta", fdb, db, ch);
    free(fi); free(fg); free(fb); free(fr); free(fo); free(fdi);
    free(c.in); free(c.g); free(c.b); free(c.out); free(c.r); free(c.mean); free(c.istd);
    free(c.rm); free(c.rv); free(ref); free(rm_ref); free(rv_ref); free(eo); free(eref);
    free(din); free(dg); free(db);
}

/* ---------- batchnorm with frozen statistics (Caffe's use_global_stats) ---------- */
static double bn_frozen_loss(void *p) {
    bn_ctx *c = p;   /* training forward = eval forward: the running statistics, untouched */
    batchnorm_forward_eval_f64(c->out, c->in, c->g, c->b, c->rm, c->rv, c->n, c->c, c->hw, BN_EPS, c->act);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

static void test_batchnorm_frozen(int n, int ch, int hw, rt_act act) {
    long tn = (long)n * ch * hw;
    bn_ctx c = { gc_rand(tn, -2, 3), gc_rand(ch, 0.5, 1.5), gc_rand(ch, -1, 1), gc_alloc(tn),
                 gc_rand(tn, -1, 1), NULL, NULL, gc_rand(ch, -0.5, 0.5), gc_rand(ch, 0.5, 2.0), n, ch, hw, act };
    double *din = gc_alloc(tn), *dg = gc_alloc(ch), *db = gc_alloc(ch), *act_out = gc_alloc(tn);
    bn_frozen_loss(&c);
    memcpy(act_out, c.out, sizeof(double) * tn);
    batchnorm_backward_frozen_f64(din, dg, db, c.r, act ? act_out : NULL, c.in, c.g, c.rm, c.rv, n, ch, hw, BN_EPS);
    const char *tag = act ? "batchnorm frozen+relu" : "batchnorm frozen";
    char what[96];
    snprintf(what, sizeof what, "%s dinput", tag);
    gc_check(what, c.in, tn, din, bn_frozen_loss, &c);
    snprintf(what, sizeof what, "%s dgamma", tag);
    gc_check(what, c.g, ch, dg, bn_frozen_loss, &c);
    snprintf(what, sizeof what, "%s dbeta", tag);
    gc_check(what, c.b, ch, db, bn_frozen_loss, &c);
    float *fi = gc_to_f32(c.in, tn), *fg = gc_to_f32(c.g, ch), *fr = gc_to_f32(c.r, tn);
    float *frm = gc_to_f32(c.rm, ch), *frv = gc_to_f32(c.rv, ch), *fo = gc_to_f32(act_out, tn);
    float *fdi = malloc(sizeof(float) * tn), fdg[64], fdb[64];
    batchnorm_backward_frozen(fdi, fdg, fdb, fr, act ? fo : NULL, fi, fg, frm, frv, n, ch, hw, 1e-5f);
    snprintf(what, sizeof what, "%s float dinput", tag);
    gc_compare_f32(what, fdi, din, tn);
    snprintf(what, sizeof what, "%s float dgamma", tag);
    gc_compare_f32(what, fdg, dg, ch);
    free(fi); free(fg); free(fr); free(frm); free(frv); free(fo); free(fdi);
    free(c.in); free(c.g); free(c.b); free(c.out); free(c.r); free(c.rm); free(c.rv);
    free(din); free(dg); free(db); free(act_out);
}

/* ---------- layernorm ---------- */
typedef struct { double *in, *g, *b, *out, *r, *mean, *rstd; int n, c, hw; } ln_ctx;
#define LN_EPS 1e-6

static double ln_loss(void *p) {
    ln_ctx *c = p;
    layernorm_forward_f64(c->out, c->mean, c->rstd, c->in, c->g, c->b, c->n, c->c, c->hw, LN_EPS);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

static void test_layernorm(int n, int ch, int hw) {
    long tn = (long)n * ch * hw, pn = (long)n * hw;
    ln_ctx c = { gc_rand(tn, -2, 3), gc_rand(ch, 0.5, 1.5), gc_rand(ch, -1, 1), gc_alloc(tn),
                 gc_rand(tn, -1, 1), gc_alloc(pn), gc_alloc(pn), n, ch, hw };
    ln_loss(&c);
    double *ref = gc_alloc(tn);
    for (int b = 0; b < n; b++)
        for (int p = 0; p < hw; p++) {
            double s = 0, sq = 0;
            for (int k = 0; k < ch; k++) s += c.in[((long)b * ch + k) * hw + p];
            double mean = s / ch;
            for (int k = 0; k < ch; k++) {
                double d = c.in[((long)b * ch + k) * hw + p] - mean; sq += d * d;
            }
            for (int k = 0; k < ch; k++) {
                long q = ((long)b * ch + k) * hw + p;
                ref[q] = (c.in[q] - mean) / sqrt(sq / ch + LN_EPS) * c.g[k] + c.b[k];
            }
        }
    char what[120];
    snprintf(what, sizeof what, "layernorm hw=%d forward vs direct", hw);
    gc_compare(what, c.out, ref, tn, 1e-12);
    double *din = gc_alloc(tn), *dg = gc_alloc(ch), *db = gc_alloc(ch);
    layernorm_backward_f64(din, dg, db, c.r, c.in, c.g, c.mean, c.rstd, n, ch, hw);
    snprintf(what, sizeof what, "layernorm hw=%d dinput", hw);
    gc_check(what, c.in, tn, din, ln_loss, &c);
    snprintf(what, sizeof what, "layernorm hw=%d dgamma", hw);
    gc_check(what, c.g, ch, dg, ln_loss, &c);
    snprintf(what, sizeof what, "layernorm hw=%d dbeta", hw);
    gc_check(what, c.b, ch, db, ln_loss, &c);

    float *fi = gc_to_f32(c.in, tn), *fg = gc_to_f32(c.g, ch), *fb = gc_to_f32(c.b, ch);
    float *fr = gc_to_f32(c.r, tn), *fo = malloc(sizeof(float) * tn), *fdi = malloc(sizeof(float) * tn);
    float *fm = malloc(sizeof(float) * pn), *fs = malloc(sizeof(float) * pn), fdg[64], fdb[64];
    layernorm_forward(fo, fm, fs, fi, fg, fb, n, ch, hw, 1e-6f);
    layernorm_backward(fdi, fdg, fdb, fr, fi, fg, fm, fs, n, ch, hw);
    snprintf(what, sizeof what, "layernorm hw=%d float forward", hw);
    gc_compare_f32(what, fo, ref, tn);
    snprintf(what, sizeof what, "layernorm hw=%d float dinput", hw);
    gc_compare_f32(what, fdi, din, tn);
    snprintf(what, sizeof what, "layernorm hw=%d float dgamma", hw);
    gc_compare_f32(what, fdg, dg, ch);
    free(fi); free(fg); free(fb); free(fr); free(fo); free(fdi); free(fm); free(fs);
    free(c.in); free(c.g); free(c.b); free(c.out); free(c.r); free(c.mean); free(c.rstd);
    free(ref); free(din); free(dg); free(db);
}

/* ---------- layer scale ---------- */
typedef struct { double *in, *g, *out, *r; int n, c, hw; } ls_ctx;

static double ls_loss(void *p) {
    ls_ctx *c = p;
    layer_scale_forward_f64(c->out, c->in, c->g, c->n, c->c, c->hw);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

static void test_layer_scale(int n, int ch, int hw) {
    long tn = (long)n * ch * hw;
    ls_ctx c = { gc_rand(tn, -1, 1), gc_rand(ch, -1, 1), gc_alloc(tn), gc_rand(tn, -1, 1), n, ch, hw };
    ls_loss(&c);
    double *ref = gc_alloc(tn);
    for (long q = 0; q < tn; q++) ref[q] = c.in[q] * c.g[(q / hw) % ch];
    gc_compare("layer_scale forward vs direct", c.out, ref, tn, 1e-15);
    double *din = gc_alloc(tn), *dg = gc_alloc(ch);
    layer_scale_backward_f64(din, dg, c.r, c.in, c.g, n, ch, hw);
    gc_check("layer_scale dinput", c.in, tn, din, ls_loss, &c);
    gc_check("layer_scale dgamma", c.g, ch, dg, ls_loss, &c);
    float *fi = gc_to_f32(c.in, tn), *fg = gc_to_f32(c.g, ch), *fr = gc_to_f32(c.r, tn);
    float *fdi = malloc(sizeof(float) * tn), fdg[64];
    layer_scale_backward(fdi, fdg, fr, fi, fg, n, ch, hw);
    gc_compare_f32("layer_scale float dinput", fdi, din, tn);
    gc_compare_f32("layer_scale float dgamma", fdg, dg, ch);
    free(fi); free(fg); free(fr); free(fdi);
    free(c.in); free(c.g); free(c.out); free(c.r); free(ref); free(din); free(dg);
}

int main(void) {
    gc_seed(2);
    test_linear(4, 7, 5, 1);
    test_linear(3, 12, 9, 0);
    test_batchnorm(3, 4, 10, RT_ACT_NONE);   /* NCHW */
    test_batchnorm(8, 6, 1, RT_ACT_NONE);    /* [N,C] */
    test_batchnorm(3, 4, 10, RT_ACT_RELU);   /* fused ReLU */
    test_batchnorm(3, 2, 37, RT_ACT_RELU);   /* 16-lane vectors and a partial one per plane */
    test_batchnorm(2, 1, 4100, RT_ACT_NONE); /* a plane longer than one float span */
    test_batchnorm_frozen(3, 4, 10, RT_ACT_NONE);   /* use_global_stats */
    test_batchnorm_frozen(3, 4, 10, RT_ACT_RELU);
    test_layernorm(2, 5, 6);    /* channels_first */
    test_layernorm(4, 8, 1);    /* last dim of [N,C] */
    test_layer_scale(2, 5, 7);
    return test_finish("test_grad_linear_norm");
}
