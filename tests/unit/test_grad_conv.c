/* conv2d and the GEMM under it: forward vs a direct 7-loop convolution, backward vs central
 * differences (double), and the float build vs the double build, over stride, padding,
 * dilation, groups, depthwise and the 1x1 no-im2col path. */
#include <string.h>
#include "gradcheck.h"
#include "rt_gemm.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"
#include "../../runtime/cpu/ops/conv2d_strided_winograd.h"   /* ..._winograd_fits */

typedef struct { const char *name; rt_conv_shape s; int bias; } conv_case;

/* Direct convolution, straight from the definition, as the independent reference. */
static void conv_ref(double *out, const double *in, const double *w, const double *bias,
                     const rt_conv_shape *s) {
    int cg = s->c / s->groups, ocg = s->oc / s->groups;
    for (int b = 0; b < s->n; b++)
        for (int oc = 0; oc < s->oc; oc++)
            for (int oy = 0; oy < s->oh; oy++)
                for (int ox = 0; ox < s->ow; ox++) {
                    double acc = bias ? bias[oc] : 0;
                    int g = oc / ocg;
                    for (int ci = 0; ci < cg; ci++)
                        for (int ki = 0; ki < s->kh; ki++)
                            for (int kj = 0; kj < s->kw; kj++) {
                                int iy = oy * s->sh - s->ph + ki * s->dh;
                                int ix = ox * s->sw - s->pw + kj * s->dw;
                                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) continue;
                                acc += in[((long)(b * s->c + g * cg + ci) * s->h + iy) * s->w + ix] *
                                       w[((long)(oc * cg + ci) * s->kh + ki) * s->kw + kj];
                            }
                    out[((long)(b * s->oc + oc) * s->oh + oy) * s->ow + ox] = acc;
                }
}

typedef struct {
    const rt_conv_shape *s;
    double *in, *w, *bias, *out, *r, *work;
    long out_n;
} conv_ctx;

static double conv_loss(void *p) {
    conv_ctx *c = p;
    conv2d_forward_f64(c->out, c->in, c->w, c->bias, c->work, c->s);
    return gc_dot(c->out, c->r, c->out_n);
}

static void run_case(conv_case *cc) {
    rt_conv_shape *s = &cc->s;
    s->oh = rt_conv_out_dim(s->h, s->kh, s->sh, s->ph, s->dh);
    s->ow = rt_conv_out_dim(s->w, s->kw, s->sw, s->pw, s->dw);
    *s = rt_conv_chosen(*s, 0);   /* as the compiler records it (rt_conv_choice.h) */
    long in_n = (long)s->n * s->c * s->h * s->w, out_n = (long)s->n * s->oc * s->oh * s->ow;
    long w_n = (long)s->oc * (s->c / s->groups) * s->kh * s->kw;
    long work_n = conv2d_workspace_elems_f64(s);
    CHECK(work_n == conv2d_workspace_elems(s));
    conv_ctx c = { s, gc_rand(in_n, -1, 1), gc_rand(w_n, -1, 1),
                   cc->bias ? gc_rand(s->oc, -1, 1) : NULL, gc_alloc(out_n),
                   gc_rand(out_n, -1, 1), work_n ? gc_alloc(work_n) : NULL, out_n };
    char what[200];

    double *ref = gc_alloc(out_n);
    conv_ref(ref, c.in, c.w, c.bias, s);
    if (s->act == RT_ACT_RELU)
        for (long i = 0; i < out_n; i++) ref[i] = ref[i] > 0 ? ref[i] : 0;
    conv_loss(&c);
    snprintf(what, sizeof what, "%s forward vs direct", cc->name);
    gc_compare(what, c.out, ref, out_n, 1e-12);

    double *din = gc_alloc(in_n), *dw = gc_alloc(w_n), *db = gc_alloc(s->oc);
    double *act_out = s->act ? gc_alloc(out_n) : NULL;   /* the forward's output, kept */
    if (act_out) memcpy(act_out, c.out, sizeof(double) * out_n);
    for (long i = 0; i < w_n; i++) dw[i] = 1e9;   /* backward must overwrite, not add */
    for (int i = 0; i < s->oc; i++) db[i] = 1e9;
    conv2d_backward_f64(din, dw, cc->bias ? db : NULL, c.r, act_out, c.in, c.w, c.work, s);
    snprintf(what, sizeof what, "%s dinput", cc->name);
    gc_check(what, c.in, in_n, din, conv_loss, &c);
    snprintf(what, sizeof what, "%s dweight", cc->name);
    gc_check(what, c.w, w_n, dw, conv_loss, &c);
    if (cc->bias) {
        snprintf(what, sizeof what, "%s dbias", cc->name);
        gc_check(what, c.bias, s->oc, db, conv_loss, &c);
    }
    /* dinput = NULL skips it but still yields dweight */
    double *dw2 = gc_alloc(w_n);
    conv2d_backward_f64(NULL, dw2, NULL, c.r, act_out, c.in, c.w, c.work, s);
    snprintf(what, sizeof what, "%s dweight with din=NULL", cc->name);
    gc_compare(what, dw2, dw, w_n, 1e-12);

    /* din_add: the same input gradient, added onto what din held */
    rt_conv_shape sa = *s;
    sa.din_add = 1;
    long work_a = conv2d_workspace_elems_f64(&sa);
    CHECK(work_a == conv2d_workspace_elems(&sa));
    double *work_add = gc_alloc(work_a ? work_a : 1), *held = gc_rand(in_n, -1, 1);
    double *din_sum = gc_alloc(in_n);
    memcpy(din_sum, held, sizeof(double) * in_n);
    conv2d_backward_f64(din_sum, dw2, NULL, c.r, act_out, c.in, c.w, work_add, &sa);
    for (long i = 0; i < in_n; i++) din_sum[i] -= held[i];
    snprintf(what, sizeof what, "%s dinput added to din", cc->name);
    gc_compare(what, din_sum, din, in_n, 1e-12);
    free(work_add); free(held); free(din_sum);

    /* float build agrees with the double build */
    float *fin = gc_to_f32(c.in, in_n), *fw = gc_to_f32(c.w, w_n), *fr = gc_to_f32(c.r, out_n);
    float *fb = c.bias ? gc_to_f32(c.bias, s->oc) : NULL;
    float *fout = malloc(sizeof(float) * out_n), *fdin = malloc(sizeof(float) * in_n);
    float *fdw = malloc(sizeof(float) * w_n), *fdb = malloc(sizeof(float) * s->oc);
    float *fwork = work_n ? malloc(sizeof(float) * work_n) : NULL;
    conv2d_forward(fout, fin, fw, fb, fwork, s);
    conv2d_backward(fdin, fdw, fb ? fdb : NULL, fr, s->act ? fout : NULL, fin, fw, fwork, s);
    /* F(7x7,2x2) on the phase planes: 8x8 transforms, 5x like F(4x4,3x3) below */
    double ftol = conv2d_strided_winograd_fits(s) ? 5 * GC_F32_TOL : GC_F32_TOL;
    const float *fgot[4] = { fout, fdin, fdw, fdb };
    const double *fwant[4] = { ref, din, dw, db };
    long fcount[4] = { out_n, in_n, w_n, fb ? s->oc : 0 };
    const char *fpart[4] = { "forward", "dinput", "dweight", "dbias" };
    for (int i = 0; i < 4; i++) {
        if (!fcount[i]) continue;
        double *g = gc_alloc(fcount[i]);
        for (long e = 0; e < fcount[i]; e++) g[e] = fgot[i][e];
        snprintf(what, sizeof what, "%s float %s vs double", cc->name, fpart[i]);
        gc_compare(what, g, fwant[i], fcount[i], ftol);
        free(g);
    }
    free(fin); free(fw); free(fr); free(fb); free(fout); free(fdin); free(fdw); free(fdb);
    free(fwork); free(c.in); free(c.w); free(c.bias); free(c.out); free(c.r); free(c.work);
    free(ref); free(din); free(dw); free(db); free(dw2); free(act_out);
}

/* rt_gemm against a triple loop, all four transpose combinations, with alpha and beta. */
static void test_gemm(void) {
    int m = 5, n = 7, k = 4;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            double *a = gc_rand(m * k, -1, 1), *b = gc_rand(k * n, -1, 1);
            double *c = gc_rand(m * n, -1, 1), *ref = gc_alloc(m * n);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int p = 0; p < k; p++)
                        acc += (ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
                    ref[i * n + j] = 0.5 * acc + 2 * c[i * n + j];
                }
            rt_gemm_f64(ta, tb, m, n, k, 0.5, a, ta ? m : k, b, tb ? k : n, 2, c, n);
            char what[64];
            snprintf(what, sizeof what, "rt_gemm ta=%d tb=%d", ta, tb);
            gc_compare(what, c, ref, m * n, 1e-13);
            free(a); free(b); free(c); free(ref);
        }
}

/* Winograd (`algo`: F(2x2) or F(4x4) on 3x3 kernels, F(2x2,5x5) on 5x5) against im2col (both
 * precisions): forward and all three gradients. */
static void test_winograd_vs_im2col(rt_conv_shape s, rt_conv_algo algo) {
    rt_conv_shape w = s;
    w.algo = algo;
    s = rt_conv_chosen(s, 0), w = rt_conv_chosen(w, 0);   /* as the compiler records them */
    long in_n = (long)s.n * s.c * s.h * s.w, out_n = (long)s.n * s.oc * s.oh * s.ow;
    long w_n = (long)s.oc * s.c * s.kh * s.kw;
    double *x = gc_rand(in_n, -1, 1), *k = gc_rand(w_n, -1, 1), *b = gc_rand(s.oc, -1, 1);
    double *r = gc_rand(out_n, -1, 1);
    double *out[2], *din[2], *dw[2], *db[2];
    for (int a = 0; a < 2; a++) {
        const rt_conv_shape *sa = a ? &w : &s;
        double *work = gc_alloc(conv2d_workspace_elems_f64(sa));
        out[a] = gc_alloc(out_n); din[a] = gc_alloc(in_n); dw[a] = gc_alloc(w_n);
        db[a] = gc_alloc(s.oc);
        conv2d_forward_f64(out[a], x, k, b, work, sa);
        conv2d_backward_f64(din[a], dw[a], db[a], r, out[a], x, k, work, sa);
        free(work);
    }
    char what[160];
#define WHAT(part) (snprintf(what, sizeof what, "winograd F(%d,%d) %dx%d %s", \
                           algo == RT_CONV_WINOGRAD_F4 ? 4 : 2, s.kh, s.h, s.w, part), what)
    gc_compare(WHAT("vs im2col forward"), out[1], out[0], out_n, 1e-12);
    gc_compare(WHAT("vs im2col dinput"), din[1], din[0], in_n, 1e-12);
    gc_compare(WHAT("vs im2col dweight"), dw[1], dw[0], w_n, 1e-12);
    gc_compare(WHAT("vs im2col dbias"), db[1], db[0], s.oc, 1e-12);
    /* din_add on planes of many tiles: the same input gradient, added onto what din held */
    rt_conv_shape wa = w;
    wa.din_add = 1;
    double *work_a = gc_alloc(conv2d_workspace_elems_f64(&wa)), *held = gc_rand(in_n, -1, 1);
    double *din_sum = gc_alloc(in_n), *dw_a = gc_alloc(w_n);
    memcpy(din_sum, held, sizeof(double) * in_n);
    conv2d_backward_f64(din_sum, dw_a, NULL, r, out[1], x, k, work_a, &wa);
    for (long i = 0; i < in_n; i++) din_sum[i] -= held[i];
    gc_compare(WHAT("dinput added to din"), din_sum, din[1], in_n, 1e-12);
    free(work_a); free(held); free(din_sum); free(dw_a);

    float *fx = gc_to_f32(x, in_n), *fk = gc_to_f32(k, w_n), *fb = gc_to_f32(b, s.oc);
    float *fr = gc_to_f32(r, out_n), *fout = malloc(sizeof(float) * out_n);
    float *fdin = malloc(sizeof(float) * in_n), *fdw = malloc(sizeof(float) * w_n);
    float *fdb = malloc(sizeof(float) * s.oc);
    float *fwork = malloc(sizeof(float) * conv2d_workspace_elems(&w));
    conv2d_forward(fout, fx, fk, fb, fwork, &w);
    conv2d_backward(fdin, fdw, fdb, fr, fout, fx, fk, fwork, &w);
    /* The 6x6 tiles' transforms scale values by up to 8 and 1/24 both ways, so float rounding
     * errors grow about 5x over F(2x2,3x3)'s (cuDNN and oneDNN accept the same for speed). */
    double tol = algo == RT_CONV_WINOGRAD_F4 || s.kh == 5 ? 5 * GC_F32_TOL : GC_F32_TOL;
    float *fgot[4] = { fout, fdin, fdw, fdb };
    const double *want[4] = { out[0], din[0], dw[0], db[0] };
    long count[4] = { out_n, in_n, w_n, s.oc };
    const char *part[4] = { "float forward vs double", "float dinput vs double",
                            "float dweight vs double", "float dbias vs double" };
    for (int i = 0; i < 4; i++) {
        double *g = gc_alloc(count[i]);
        for (long e = 0; e < count[i]; e++) g[e] = fgot[i][e];
        gc_compare(WHAT(part[i]), g, want[i], count[i], tol);
        free(g);
    }
#undef WHAT
    free(fx); free(fk); free(fb); free(fr); free(fout); free(fdin); free(fdw); free(fdb);
    free(fwork); free(x); free(k); free(b); free(r);
    for (int a = 0; a < 2; a++) { free(out[a]); free(din[a]); free(dw[a]); free(db[a]); }
}

int main(void) {
    gc_seed(1);
    test_gemm();
    /*                                  n  c  h  w oc kh kw sh sw ph pw dh dw  g oh ow act   bias */
    conv_case cases[] = {
        { "3x3 s1 p1",          { 2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x3 s2 p1",          { 2, 4, 9, 8, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "3x3 dilation 2",     { 1, 3, 9, 9, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x2 groups 2",       { 2, 4, 6, 7, 6, 3, 2, 1, 2, 1, 0, 1, 1, 2, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "depthwise 3x3",      { 2, 4, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "depthwise x2 s2",    { 1, 3, 8, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, 3, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "7x7 s2 p3 stem",     { 1, 3, 11, 10, 4, 7, 7, 2, 2, 3, 3, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "5x5 valid",          { 3, 2, 8, 8, 3, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "1x1 pointwise",      { 2, 5, 4, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "1x1 groups 2",       { 2, 4, 3, 3, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "1x1 s2 downsample",  { 2, 4, 6, 5, 3, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        /* strides past 2: a padding past the stride, a kernel smaller than the stride, a
         * plane smaller than the kernel */
        { "3x3 s3 p2",          { 2, 3, 10, 11, 4, 3, 3, 3, 3, 2, 2, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "2x2 s3 p0",          { 1, 2, 8, 7, 3, 2, 2, 3, 3, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "3x3 s2 p1 2x1 image",{ 2, 2, 2, 1, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        /* 3x3/2 pad 1 on 16 channels or more: Winograd F(7x7,2x2) on the phase planes
         * (conv2d_strided_winograd.c); partial tiles (13x20 outputs), channels padded to 16s */
        { "3x3 s2 p1 phases",   { 1, 16, 26, 40, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x3 s2 p1 phases 14x13 +relu",
                                { 2, 18, 14, 13, 17, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "asym s/p/d",         { 2, 2, 9, 7, 2, 2, 3, 2, 1, 0, 2, 1, 2, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        /* fused ReLU (last field): masked dout, per-thread dbias */
        { "5x5 p2 +relu",       { 3, 2, 8, 8, 4, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x3 s2 groups +relu",{ 2, 4, 7, 7, 6, 3, 3, 2, 2, 1, 1, 1, 1, 2, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "1x1 +relu",          { 2, 5, 4, 5, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        /* Winograd F(2x2,3x3) (last field): even and odd extents (partial edge tiles) */
        { "winograd 6x8",       { 2, 3, 6, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 1 },
        { "winograd 7x5 +relu", { 3, 4, 7, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 1 },
        { "winograd 1x1 image", { 2, 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 0 },
        /* Winograd F(4x4,3x3): extents 1..3 past a multiple of 4, a row wider than the
         * shuffles' 7 tiles (scalar path) */
        { "winograd4 6x8",      { 2, 3, 6, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD_F4, 0, 0, 0 }, 1 },
        { "winograd4 7x5 +relu",{ 3, 4, 7, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU,
                                  RT_CONV_WINOGRAD_F4, 0, 0, 0 }, 1 },
        { "winograd4 5x33",     { 1, 2, 5, 33, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU,
                                  RT_CONV_WINOGRAD_F4, 0, 0, 0 }, 0 },
        { "winograd4 1x1 image",{ 2, 2, 1, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD_F4, 0, 0, 0 }, 0 },
        /* Winograd F(2x2,5x5): odd extents, a row wider than the shuffles' 14 tiles (scalar
         * path), an image smaller than the kernel */
        { "winograd5 6x7",      { 2, 3, 6, 7, 4, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 1 },
        { "winograd5 5x9 +relu",{ 3, 4, 5, 9, 5, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 1 },
        { "winograd5 4x31",     { 1, 2, 4, 31, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 0 },
        { "winograd5 2x3 image",{ 2, 2, 2, 3, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_NONE,
                                  RT_CONV_WINOGRAD, 0, 0, 0 }, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    /* Batches large enough for several blocks of images and all threads, bias and a fused
     * ReLU; planes one 16-tile chunk wide (15x15), two chunks (9x35), and two tile rows per
     * vector (14x14, 7x7, odd tile-row counts). */
    /*                      n   c   h   w  oc kh kw sh sw ph pw dh dw g  oh  ow */
    rt_conv_shape wide  = { 8, 24, 15, 15, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 15, 15, RT_ACT_RELU, 0, 0, 0, 0 };
    rt_conv_shape wider = { 3, 20,  9, 35, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1,  9, 35, RT_ACT_RELU, 0, 0, 0, 0 };
    rt_conv_shape pair  = { 9, 64, 14, 14, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 14, 14, RT_ACT_RELU, 0, 0, 0, 0 };
    rt_conv_shape small = { 40, 32, 7, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1,  7,  7, RT_ACT_NONE, 0, 0, 0, 0 };
    rt_conv_shape full  = { 6, 16, 28, 28, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 28, 28, RT_ACT_RELU, 0, 0, 0, 0 };
    /* channels in sixteens on narrow planes: the 6x6 tiles run 16 channels per vector
     * (conv2d_winograd.c channel_lanes), the 7x7 input gradient too */
    rt_conv_shape lanes28 = { 2, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 28, 28, RT_ACT_RELU, 0, 0, 0, 0 };
    rt_conv_shape lanes7 = { 11, 32, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 7, 7, RT_ACT_NONE, 0, 0, 0, 0 };
    rt_conv_shape lanes9 = { 4, 16, 9, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 9, 6, RT_ACT_RELU, 0, 0, 0, 0 };
    rt_conv_algo algos[] = { RT_CONV_WINOGRAD, RT_CONV_WINOGRAD_F4, 0 };
    test_winograd_vs_im2col(lanes28, RT_CONV_WINOGRAD_F4);
    test_winograd_vs_im2col(lanes7, RT_CONV_WINOGRAD_F4);
    test_winograd_vs_im2col(lanes9, RT_CONV_WINOGRAD_F4);
    for (int a = 0; a < 2; a++) {
        test_winograd_vs_im2col(wide, algos[a]);
        test_winograd_vs_im2col(wider, algos[a]);
        test_winograd_vs_im2col(pair, algos[a]);
        test_winograd_vs_im2col(small, algos[a]);
        test_winograd_vs_im2col(full, algos[a]);
    }
    /* F(2x2,5x5) on the same kinds of planes: one vector's worth of tiles per row (LeNet's
     * 14x14, 28x28), a wide row on the scalar path (9x35), several blocks */
    rt_conv_shape five[] = {
        { 9, 32, 14, 14, 24, 5, 5, 1, 1, 2, 2, 1, 1, 1, 14, 14, RT_ACT_RELU, 0, 0, 0, 0 },
        { 4, 16, 28, 28, 8, 5, 5, 1, 1, 2, 2, 1, 1, 1, 28, 28, RT_ACT_RELU, 0, 0, 0, 0 },
        { 3, 20, 9, 35, 12, 5, 5, 1, 1, 2, 2, 1, 1, 1, 9, 35, RT_ACT_NONE, 0, 0, 0, 0 },
        { 40, 24, 7, 7, 16, 5, 5, 1, 1, 2, 2, 1, 1, 1, 7, 7, RT_ACT_NONE, 0, 0, 0, 0 },
        /* 16 channels per vector (as LeNet's 32 -> 64 on 14x14) */
        { 3, 32, 14, 14, 16, 5, 5, 1, 1, 2, 2, 1, 1, 1, 14, 14, RT_ACT_RELU, 0, 0, 0, 0 },
        { 7, 16, 7, 5, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 7, 5, RT_ACT_NONE, 0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof five / sizeof five[0]; i++)
        test_winograd_vs_im2col(five[i], RT_CONV_WINOGRAD);
    return test_finish("test_grad_conv");
}
