#include <stdlib.h>
/* conv2d on a 1-channel input (the direct AVX-512 kernel of runtime/cpu/conv2d_c1.c, reached
 * through conv2d.c's dispatch): forward, and backward's dweight and dbias with din NULL,
 * against a direct double-precision convolution; reruns bit-identical; a backward that wants
 * din still gets it (from the other paths) next to the same dweight. Then under compute BF16
 * (where the CPU has avx512_bf16): within BF16's tolerance, and visibly less exact than FP32. */
#include <string.h>
#include "gradcheck.h"
#include "rt_conv_c1.h"
#include "rt_gemm.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"

static int bf16_mode;   /* compute BF16: compare with bf16_compare */

/* max |got - want| / max |want| within 2e-2 (BF16 keeps 8 significant bits, sums in FP32),
 * and above 1e-5 (FP32 stays far below it: BF16 really rounded). */
static void bf16_compare(const char *what, const float *got, const double *want, long n) {
    double worst = 0, scale = 0;
    for (long i = 0; i < n; i++) {
        scale = fmax(scale, fabs(want[i]));
        worst = fmax(worst, fabs(got[i] - want[i]));
    }
    double rel = worst / fmax(scale, 1e-30);
    if (!(rel <= 2e-2) || !(rel > 1e-5)) {
        fprintf(stderr, "FAIL %s (BF16): rel. error %.3g, not within (1e-5, 2e-2]\n  got/want:", what, rel);
        for (long i = 0; i < n && i < 4; i++) fprintf(stderr, " %.6g/%.6g", got[i], want[i]);
        fprintf(stderr, "\n");
        test_failures++;
    }
}
#define COMPARE(what, got, want, n) \
    (bf16_mode ? bf16_compare(what, got, want, n) : (void)gc_compare_f32(what, got, want, n))

typedef struct { const char *name; rt_conv_shape s; int bias; } c1_case;

/* Direct forward (with bias and ReLU) and the weight and bias gradients of sum(out * r),
 * straight from the definition; with a ReLU the gradient passes where act_out > 0 (the op's
 * contract: the output it computed, so that BF16's flips of the values near 0 agree). */
static void reference(double *out, double *dw, double *db, const double *in, const double *w,
                      const double *bias, const double *r, const float *act_out,
                      const rt_conv_shape *s) {
    long ohw = (long)s->oh * s->ow;
    memset(dw, 0, sizeof(double) * s->oc * s->kh * s->kw);
    memset(db, 0, sizeof(double) * s->oc);
    for (int b = 0; b < s->n; b++)
        for (int oc = 0; oc < s->oc; oc++)
            for (int oy = 0; oy < s->oh; oy++)
                for (int ox = 0; ox < s->ow; ox++) {
                    double acc = bias ? bias[oc] : 0;
                    for (int ki = 0; ki < s->kh; ki++)
                        for (int kj = 0; kj < s->kw; kj++) {
                            int iy = oy - s->ph + ki, ix = ox - s->pw + kj;
                            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w)
                                acc += in[((long)b * s->h + iy) * s->w + ix] * w[(oc * s->kh + ki) * s->kw + kj];
                        }
                    long at = ((long)b * s->oc + oc) * ohw + (long)oy * s->ow + ox;
                    if (s->act == RT_ACT_RELU && !(acc > 0)) acc = 0;
                    out[at] = acc;
                    double g = s->act == RT_ACT_RELU && !(act_out[at] > 0) ? 0 : r[at];
                    db[oc] += g;
                    for (int ki = 0; ki < s->kh; ki++)
                        for (int kj = 0; kj < s->kw; kj++) {
                            int iy = oy - s->ph + ki, ix = ox - s->pw + kj;
                            if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w)
                                dw[(oc * s->kh + ki) * s->kw + kj] += g * in[((long)b * s->h + iy) * s->w + ix];
                        }
                }
}

static void run_case(c1_case *cc) {
    rt_conv_shape *s = &cc->s;
    s->oh = rt_conv_out_dim(s->h, s->kh, s->sh, s->ph, s->dh);
    s->ow = rt_conv_out_dim(s->w, s->kw, s->sw, s->pw, s->dw);
    s->algo = RT_CONV_IM2COL;
    rt_conv_choose(s, bf16_mode);   /* as the compiler records it: RT_CONV_C1 first */
    if (s->algo != RT_CONV_C1 || !conv2d_c1_fits(s)) {
        fprintf(stderr, "FAIL %s: the 1-channel kernel does not take the shape\n", cc->name);
        test_failures++;
        return;
    }
    long in_n = (long)s->n * s->h * s->w, out_n = (long)s->n * s->oc * s->oh * s->ow;
    long w_n = (long)s->oc * s->kh * s->kw;
    double *in = gc_rand(in_n, -1, 1), *w = gc_rand(w_n, -1, 1), *r = gc_rand(out_n, -1, 1);
    double *bias = cc->bias ? gc_rand(s->oc, -1, 1) : NULL;
    double *out = gc_alloc(out_n), *dw = gc_alloc(w_n), *db = gc_alloc(s->oc);

    float *fin = gc_to_f32(in, in_n), *fw = gc_to_f32(w, w_n), *fr = gc_to_f32(r, out_n);
    float *fb = bias ? gc_to_f32(bias, s->oc) : NULL;
    float *fout = malloc(sizeof(float) * out_n), *fout2 = malloc(sizeof(float) * out_n);
    float *fdw = malloc(sizeof(float) * w_n), *fdb = malloc(sizeof(float) * s->oc);
    float *fdw2 = malloc(sizeof(float) * w_n), *fdb2 = malloc(sizeof(float) * s->oc);
    float *fdin = malloc(sizeof(float) * in_n);
    float *work = malloc(sizeof(float) * conv2d_workspace_elems(s));
    for (long i = 0; i < out_n; i++) fout[i] = 1e9f;   /* every output must be written */
    for (long i = 0; i < w_n; i++) fdw[i] = 1e9f;      /* backward overwrites, not adds */
    for (int i = 0; i < s->oc; i++) fdb[i] = 1e9f;
    const float *act_out = s->act ? fout : NULL;
    char what[160];

    conv2d_forward(fout, fin, fw, fb, work, s);
    conv2d_backward(NULL, fdw, fb ? fdb : NULL, fr, act_out, fin, fw, work, s);
    reference(out, dw, db, in, w, bias, r, fout, s);
    snprintf(what, sizeof what, "%s forward vs direct double", cc->name);
    COMPARE(what, fout, out, out_n);
    snprintf(what, sizeof what, "%s dweight vs direct double", cc->name);
    COMPARE(what, fdw, dw, w_n);
    if (fb) {   /* from the unrounded dout under BF16 too */
        snprintf(what, sizeof what, "%s dbias vs direct double", cc->name);
        gc_compare_f32(what, fdb, db, s->oc);
    }

    /* a rerun is bit-identical */
    conv2d_forward(fout2, fin, fw, fb, work, s);
    conv2d_backward(NULL, fdw2, fb ? fdb2 : NULL, fr, act_out, fin, fw, work, s);
    snprintf(what, sizeof what, "%s rerun bit-identical", cc->name);
    if (memcmp(fout, fout2, sizeof(float) * out_n) != 0 || memcmp(fdw, fdw2, sizeof(float) * w_n) != 0 ||
        (fb && memcmp(fdb, fdb2, sizeof(float) * s->oc) != 0)) {
        fprintf(stderr, "FAIL %s\n", what);
        test_failures++;
    }

    /* with an input gradient: the other paths, and the same dweight within float rounding */
    conv2d_backward(fdin, fdw2, fb ? fdb2 : NULL, fr, act_out, fin, fw, work, s);
    snprintf(what, sizeof what, "%s dweight next to a din", cc->name);
    COMPARE(what, fdw2, dw, w_n);

    free(in); free(w); free(r); free(bias); free(out); free(dw); free(db);
    free(fin); free(fw); free(fr); free(fb); free(fout); free(fout2); free(fdw); free(fdb);
    free(fdw2); free(fdb2); free(fdin); free(work);
}

int main(void) {
    gc_seed(3);
    /* this tests the 1-channel kernel itself: make test-cpu-paths may switch it off elsewhere */
    setenv("TRAINC_CONV_C1", "on", 1);
    if (!__builtin_cpu_supports("avx512f")) {
        printf("test_conv_c1: skipped (no AVX-512F on this CPU; conv2d keeps im2col)\n");
        return 0;
    }
    /*                                     n  c  h  w  oc kh kw sh sw ph pw dh dw g oh ow act */
    c1_case cases[] = {
        { "lenet conv1 5x5 p2 +relu",    { 5, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "stem 3x3 p1",                 { 4, 1, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
        { "5x5 p2 wide row 37, 13 oc",   { 3, 1, 9, 37, 13, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "5x5 valid, 5 oc",             { 2, 1, 11, 6, 5, 5, 5, 1, 1, 0, 0, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x3 pad 1x0, 1 image",        { 1, 1, 7, 17, 9, 3, 3, 1, 1, 1, 0, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "3x3 p1 on a 1-pixel image",   { 3, 1, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 }, 1 },
        { "5x5 p2, 33-pixel rows, 16 oc",{ 2, 1, 5, 33, 16, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
    char why[256];
    if (rt_gemm_set_compute(RT_COMPUTE_BF16, why, sizeof why) == 0) {
        bf16_mode = 1;
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i]);
        rt_gemm_set_compute(RT_COMPUTE_FP32, why, sizeof why);
    } else {
        printf("test_conv_c1: BF16 part skipped: %s\n", why);
    }
    return test_finish("test_conv_c1");
}
