/* precision.compute BF16 on the CPU: rt_gemm, conv2d (oneDNN's BF16 convolutions in their
 * blocked and padded layouts, with bias, fused ReLU and din_add; im2col + BF16 GEMM for
 * grouped and dilated shapes) and linear, forward and backward, with BF16 products against the double build (whose
 * gradients test_grad_conv / test_grad_linear_norm check against central differences), to a
 * BF16 tolerance; the same ops in FP32 must be far closer, which shows that BF16 really ran.
 * TRAINC_CONV_BF16=gemm runs every conv case again on im2col + BF16 GEMM (and Winograd
 * F(2x2,3x3), as conv2d.c's effective_shape says).
 * Also the start-up refusal where the CPU has no avx512_bf16 (TRAINC_CPU_NO_BF16 pretends). */
#include <string.h>
#include "gradcheck.h"
#include "rt_conv_bf16.h"
#include "rt_env.h"
#include "rt_gemm.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"
#include "../../runtime/cpu/ops/conv2d_strided_winograd.h"   /* ..._winograd_fits */

/* Bounds of max |got - want| / max |want| over a tensor: BF16 keeps 8 significant bits
 * (relative rounding 2^-9 per input) and sums in FP32. */
#define BF16_TOL 2e-2
#define FP32_TOL 1e-5

static double rel_err(const float *got, const double *want, long n) {
    double worst = 0, scale = 0;
    for (long i = 0; i < n; i++) {
        scale = fmax(scale, fabs(want[i]));
        worst = fmax(worst, fabs(got[i] - want[i]));
    }
    return worst / fmax(scale, 1e-30);
}

/* One tensor under both precisions: BF16 within its tolerance, FP32 within fp32_tol, and BF16
 * visibly less exact than FP32 (it really rounded the inputs). */
static void expect(const char *what, const float *bf16, const float *fp32, const double *want, long n,
                   double fp32_tol) {
    double eb = rel_err(bf16, want, n), ef = rel_err(fp32, want, n);
    if (!(eb <= BF16_TOL) || !(ef <= fp32_tol) || !(eb > 8 * ef)) {
        fprintf(stderr, "FAIL %s: BF16 rel. error %.3g (tol %g), FP32 %.3g (tol %g; BF16 must exceed 8x it)\n"
                        "  first values, bf16/fp32/double:", what, eb, BF16_TOL, ef, fp32_tol);
        for (long i = 0; i < n && i < 4; i++) fprintf(stderr, " %.6g/%.6g/%.6g", bf16[i], fp32[i], want[i]);
        fprintf(stderr, "\n");
        test_failures++;
    }
}

static void set_compute(rt_compute c) {
    char why[256];
    CHECK(rt_gemm_set_compute(c, why, sizeof why) == 0);
}

/* rt_gemm, all four transposes, alpha and beta, leading dimensions wider than the rows. */
static void test_gemm(void) {
    int m = 37, n = 29, k = 70, pad = 3;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            int lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
            long an = (long)(ta ? k : m) * lda, bn = (long)(tb ? n : k) * ldb, cn = (long)m * ldc;
            double *a = gc_rand(an, -1, 1), *b = gc_rand(bn, -1, 1), *c = gc_rand(cn, -1, 1);
            double *ref = gc_alloc(cn);
            memcpy(ref, c, sizeof(double) * cn);
            rt_gemm_f64(ta, tb, m, n, k, 0.5, a, lda, b, ldb, 2, ref, ldc);
            float *fa = gc_to_f32(a, an), *fb = gc_to_f32(b, bn);
            float *c16 = gc_to_f32(c, cn), *c32 = gc_to_f32(c, cn);
            set_compute(RT_COMPUTE_BF16);
            rt_gemm(ta, tb, m, n, k, 0.5f, fa, lda, fb, ldb, 2, c16, ldc);
            set_compute(RT_COMPUTE_FP32);
            rt_gemm(ta, tb, m, n, k, 0.5f, fa, lda, fb, ldb, 2, c32, ldc);
            /* beta*C dominates C: compare the product part only */
            for (long i = 0; i < cn; i++) { c16[i] -= 2 * (float)c[i]; c32[i] -= 2 * (float)c[i]; ref[i] -= 2 * c[i]; }
            char what[64];
            snprintf(what, sizeof what, "rt_gemm bf16 ta=%d tb=%d", ta, tb);
            expect(what, c16, c32, ref, cn, FP32_TOL);
            /* oneDNN's sgemm, which FP32 uses where OpenBLAS lacks AVX-512 kernels */
            float *cd = gc_to_f32(c, cn);
            rt_gemm_library_call(RT_GEMM_DNNL_F32, ta, tb, m, n, k, 0.5f, fa, lda, fb, ldb, 2, cd, ldc);
            for (long i = 0; i < cn; i++) cd[i] -= 2 * (float)c[i];
            snprintf(what, sizeof what, "oneDNN sgemm ta=%d tb=%d", ta, tb);
            CHECK(rel_err(cd, ref, cn) <= FP32_TOL);
            free(cd);
            free(a); free(b); free(c); free(ref); free(fa); free(fb); free(c16); free(c32);
        }
}

typedef struct { const char *name; rt_conv_shape s; int bias; } conv_case;

/* Float forward and backward of one conv case under the current compute precision. */
typedef struct { float *out, *din, *dw, *db; } conv_run;

/* act_out: the double forward's output, so that every run masks with the same ReLU. */
static conv_run run_conv_f32(const rt_conv_shape *asked, const float *in, const float *w, const float *bias,
                             const float *dout, const float *act_out, const float *din_init) {
    /* the shape as the compiler records it under the compute precision now set */
    rt_conv_shape chosen = rt_conv_chosen(*asked, rt_gemm_compute() == RT_COMPUTE_BF16);
    const rt_conv_shape *s = &chosen;
    long in_n = (long)s->n * s->c * s->h * s->w, out_n = (long)s->n * s->oc * s->oh * s->ow;
    long w_n = (long)s->oc * (s->c / s->groups) * s->kh * s->kw, work_n = conv2d_workspace_elems(s);
    conv_run r = { malloc(sizeof(float) * out_n), malloc(sizeof(float) * in_n), malloc(sizeof(float) * w_n),
                   malloc(sizeof(float) * s->oc) };
    float *work = malloc(sizeof(float) * (work_n ? work_n : 1));
    memcpy(r.din, din_init, sizeof(float) * in_n);
    conv2d_forward(r.out, in, w, bias, work, s);
    conv2d_backward(r.din, r.dw, bias ? r.db : NULL, dout, s->act ? act_out : NULL, in, w, work, s);
    /* a second step: on oneDNN, backward-weights now reads the forward's BF16 copy of the
     * input rather than converting it anew; the same values to the bit */
    float *out2 = malloc(sizeof(float) * out_n), *din2 = malloc(sizeof(float) * in_n), *dw2 = malloc(sizeof(float) * w_n);
    memcpy(din2, din_init, sizeof(float) * in_n);
    conv2d_forward(out2, in, w, bias, work, s);
    conv2d_backward(din2, dw2, NULL, dout, s->act ? act_out : NULL, in, w, work, s);
    CHECK(memcmp(din2, r.din, sizeof(float) * in_n) == 0 && memcmp(dw2, r.dw, sizeof(float) * w_n) == 0);
    free(out2); free(din2); free(dw2);
    free(work);
    return r;
}

static void test_conv(conv_case *cc) {
    rt_conv_shape *s = &cc->s;
    s->oh = rt_conv_out_dim(s->h, s->kh, s->sh, s->ph, s->dh);
    s->ow = rt_conv_out_dim(s->w, s->kw, s->sw, s->pw, s->dw);
    long in_n = (long)s->n * s->c * s->h * s->w, out_n = (long)s->n * s->oc * s->oh * s->ow;
    long w_n = (long)s->oc * (s->c / s->groups) * s->kh * s->kw;
    double *in = gc_rand(in_n, -1, 1), *w = gc_rand(w_n, -1, 1), *dout = gc_rand(out_n, -1, 1);
    double *bias = cc->bias ? gc_rand(s->oc, -1, 1) : NULL, *db = gc_alloc(s->oc);
    /* din_add: the input gradient lands on top of what another consumer wrote */
    double *din_init = s->din_add ? gc_rand(in_n, -1, 1) : gc_alloc(in_n);
    double *out = gc_alloc(out_n), *din = gc_alloc(in_n), *dw = gc_alloc(w_n);
    double *work = gc_alloc(conv2d_workspace_elems_f64(s) + 1);
    memcpy(din, din_init, sizeof(double) * in_n);
    conv2d_forward_f64(out, in, w, bias, work, s);
    conv2d_backward_f64(din, dw, bias ? db : NULL, dout, s->act ? out : NULL, in, w, work, s);
    float *fin = gc_to_f32(in, in_n), *fw = gc_to_f32(w, w_n), *fdout = gc_to_f32(dout, out_n);
    float *fact = gc_to_f32(out, out_n), *fdin = gc_to_f32(din_init, in_n);
    float *fbias = bias ? gc_to_f32(bias, s->oc) : NULL;
    set_compute(RT_COMPUTE_BF16);
    /* oneDNN's JIT kernels take the ungrouped, undilated shapes with whole blocks of 16
     * channels (or one input channel); others may fall back (they do with 6 or 8) */
    int blocks16 = s->oc % 16 == 0 && (s->c % 16 == 0 || s->c == 1);
    if (!rt_env_is(RT_ENV_TRAINC_CONV_BF16, "gemm") && s->groups == 1 && s->dh == 1 && blocks16)
        CHECK(conv2d_dnnl_bf16_fits(s));
    if (s->groups != 1 || s->dh != 1) CHECK(!conv2d_dnnl_bf16_fits(s));
    conv_run b = run_conv_f32(s, fin, fw, fbias, fdout, fact, fdin);
    set_compute(RT_COMPUTE_FP32);
    conv_run f = run_conv_f32(s, fin, fw, fbias, fdout, fact, fdin);
    /* FP32 on a 3x3/2 runs Winograd F(7x7,2x2), whose 8x8 transforms round more (measured
     * 1.8e-5 on the ResNet case); BF16 still has to be 8x less exact */
    double ftol = conv2d_strided_winograd_fits(s) ? 5 * FP32_TOL : FP32_TOL;
    char what[128];
    snprintf(what, sizeof what, "%s forward", cc->name);
    expect(what, b.out, f.out, out, out_n, ftol);
    snprintf(what, sizeof what, "%s dinput", cc->name);
    expect(what, b.din, f.din, din, in_n, ftol);
    snprintf(what, sizeof what, "%s dweight", cc->name);
    expect(what, b.dw, f.dw, dw, w_n, ftol);
    if (bias) {   /* a plain FP32 sum (under the ReLU's mask) in both precisions */
        snprintf(what, sizeof what, "%s dbias (FP32 sum)", cc->name);
        gc_compare_f32(what, b.db, db, s->oc);
    }
    free(in); free(w); free(dout); free(out); free(din); free(dw); free(work); free(din_init);
    free(bias); free(db); free(fbias); free(fdin);
    free(fin); free(fw); free(fdout); free(fact);
    free(b.out); free(b.din); free(b.dw); free(b.db); free(f.out); free(f.din); free(f.dw); free(f.db);
}

static void test_linear(void) {
    int n = 16, fi = 200, fo = 24;
    double *in = gc_rand((long)n * fi, -1, 1), *w = gc_rand((long)fo * fi, -1, 1), *bias = gc_rand(fo, -1, 1);
    double *dout = gc_rand((long)n * fo, -1, 1), *out = gc_alloc((long)n * fo);
    double *din = gc_alloc((long)n * fi), *dw = gc_alloc((long)fo * fi), *db = gc_alloc(fo);
    linear_forward_f64(out, in, w, bias, n, fi, fo);
    linear_backward_f64(din, dw, db, dout, in, w, n, fi, fo);
    float *fin = gc_to_f32(in, (long)n * fi), *fw = gc_to_f32(w, (long)fo * fi);
    float *fbias = gc_to_f32(bias, fo), *fdout = gc_to_f32(dout, (long)n * fo);
    float *o[2], *dx[2], *dwt[2], *dbt[2];
    for (int p = 0; p < 2; p++) {   /* p = 0: BF16, 1: FP32 */
        set_compute(p == 0 ? RT_COMPUTE_BF16 : RT_COMPUTE_FP32);
        o[p] = malloc(sizeof(float) * n * fo); dx[p] = malloc(sizeof(float) * n * fi);
        dwt[p] = malloc(sizeof(float) * fo * fi); dbt[p] = malloc(sizeof(float) * fo);
        linear_forward(o[p], fin, fw, fbias, n, fi, fo);
        linear_backward(dx[p], dwt[p], dbt[p], fdout, fin, fw, n, fi, fo);
    }
    expect("linear forward", o[0], o[1], out, (long)n * fo, FP32_TOL);
    expect("linear dinput", dx[0], dx[1], din, (long)n * fi, FP32_TOL);
    expect("linear dweight", dwt[0], dwt[1], dw, (long)fo * fi, FP32_TOL);
    /* the bias gradient is a plain FP32 sum in both precisions */
    gc_compare_f32("linear dbias (FP32 sum)", dbt[0], db, fo);
    for (int p = 0; p < 2; p++) { free(o[p]); free(dx[p]); free(dwt[p]); free(dbt[p]); }
    free(in); free(w); free(bias); free(dout); free(out); free(din); free(dw); free(db);
    free(fin); free(fw); free(fbias); free(fdout);
}

int main(void) {
    gc_seed(20);
    char why[256];
    /* the refusal on a CPU without avx512_bf16, and FP32 left in place */
    setenv("TRAINC_CPU_NO_BF16", "1", 1);
    CHECK(rt_gemm_set_compute(RT_COMPUTE_BF16, why, sizeof why) == -1);
    CHECK(strstr(why, "avx512_bf16") != NULL);
    CHECK(rt_gemm_compute() == RT_COMPUTE_FP32);
    unsetenv("TRAINC_CPU_NO_BF16");
    if (rt_gemm_set_compute(RT_COMPUTE_BF16, why, sizeof why) != 0) {
        printf("test_grad_bf16: SKIP the BF16 ops: %s\n", why);
        return test_finish("test_grad_bf16");
    }
    test_gemm();
    conv_case cases[] = {
        { "im2col 3x3 stride 2 relu", { 2, 6, 9, 9, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "pointwise 1x1", { 2, 16, 5, 5, 12, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "winograd F2 3x3", { 2, 8, 10, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_WINOGRAD, 0, 0, 0 }, 0 },
        { "winograd F2 5x5", { 2, 6, 12, 12, 8, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_WINOGRAD, 0, 0, 0 }, 0 },
        { "winograd F4 3x3 relu", { 3, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_WINOGRAD_F4, 0, 0, 0 }, 0 },
        /* the example nets' kinds of shapes, channels in whole blocks of 16 (the fast layouts) */
        { "lenet 5x5 from 1 channel, bias relu", { 4, 1, 12, 12, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_WINOGRAD, 0, 0, 0 }, 1 },
        { "resnet 3x3 32->32 relu din_add", { 3, 32, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_WINOGRAD_F4, 1, 0, 0 }, 0 },
        { "resnet 3x3 stride 2 32->64 bias", { 2, 32, 10, 10, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "resnet 1x1 stride 2 16->32", { 2, 16, 9, 9, 32, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        /* oneDNN sees the sampled pixels only; the input gradient lands on what is there */
        { "1x1 stride 2 16->32 bias relu din_add", { 3, 16, 8, 10, 32, 1, 1, 2, 2, 0, 0, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 1, 0, 0 }, 1 },
        { "1x1 stride 3x2 16->16", { 2, 16, 11, 7, 16, 1, 1, 3, 2, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        /* grouped and dilated: im2col + BF16 GEMM */
        { "grouped 3x3 groups 2", { 2, 8, 7, 7, 12, 3, 3, 1, 1, 1, 1, 1, 1, 2, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "dilated 3x3", { 2, 6, 9, 9, 8, 3, 3, 1, 1, 2, 2, 2, 2, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_conv(&cases[i]);
    setenv("TRAINC_CONV_BF16", "gemm", 1);   /* the same cases on im2col + BF16 GEMM */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_conv(&cases[i]);
    unsetenv("TRAINC_CONV_BF16");
    test_linear();
    set_compute(RT_COMPUTE_FP32);
    return test_finish("test_grad_bf16");
}
