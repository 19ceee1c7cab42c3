/* conv2d_relu_maxpool (a 1-channel conv with its ReLU and the 2x2 max pooling after it as one
 * op) as the trainers link it, against the two ops it replaces: the pooled output and argmax,
 * and the weight and bias gradients, bit for bit, in FP32 and (where the CPU has avx512_bf16)
 * BF16; and the fused path really ran: the conv's output and output gradient buffers, filled
 * with NaN, are untouched. A shape the fused path does not take (3x3 stride-2 pooling) runs
 * the two ops through those buffers. */
#include <string.h>
#include "gradcheck.h"
#include "rt_gemm.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"

/* got against want (n 4-byte values), bit for bit; what = case name + which output. */
static void same_bits(const char *name, const char *which, const void *got, const void *want,
                      long n, const char *mode) {
    if (memcmp(got, want, (size_t)n * 4) == 0) return;
    const float *g = got, *w = want;
    long i = 0;
    while (memcmp(g + i, w + i, 4) == 0) i++;
    fprintf(stderr, "FAIL %s %s (%s): differs from the two ops at [%ld]: %.9g vs %.9g\n", name,
            which, mode, i, g[i], w[i]);
    test_failures++;
}

static int untouched(const float *buf, long n) {
    for (long i = 0; i < n; i++)
        if (buf[i] == buf[i]) return 0;   /* not NaN: written */
    return 1;
}

static void test_case(const char *name, rt_conv_shape cs, rt_pool_shape ps, int fused, const char *mode) {
    cs.oh = cs.h + 2 * cs.ph - cs.kh + 1, cs.ow = cs.w + 2 * cs.pw - cs.kw + 1;
    cs = rt_conv_chosen(cs, rt_gemm_compute() == RT_COMPUTE_BF16);   /* as the compiler records it */
    ps.n = cs.n, ps.c = cs.oc, ps.h = cs.oh, ps.w = cs.ow;
    ps.oh = (ps.h - ps.kh) / ps.sh + 1, ps.ow = (ps.w - ps.kw) / ps.sw + 1;
    long in_n = (long)cs.n * cs.h * cs.w, w_n = (long)cs.oc * cs.kh * cs.kw;
    long conv_n = (long)cs.n * cs.oc * cs.oh * cs.ow, pool_n = (long)ps.n * ps.c * ps.oh * ps.ow;
    double *x = gc_rand(in_n, -1, 1), *w = gc_rand(w_n, -0.5, 0.5), *b = gc_rand(cs.oc, -0.2, 0.2);
    double *r = gc_rand(pool_n, -1, 1);
    float *fx = gc_to_f32(x, in_n), *fw = gc_to_f32(w, w_n), *fb = gc_to_f32(b, cs.oc), *fr = gc_to_f32(r, pool_n);
    float *work = malloc(sizeof(float) * conv2d_workspace_elems(&cs));
    float *conv = malloc(sizeof(float) * conv_n), *dconv = malloc(sizeof(float) * conv_n);
    float *pool = malloc(sizeof(float) * pool_n), *pool2 = malloc(sizeof(float) * pool_n);
    int32_t *am = malloc(sizeof(int32_t) * pool_n), *am2 = malloc(sizeof(int32_t) * pool_n);
    float *dw = malloc(sizeof(float) * w_n), *dw2 = malloc(sizeof(float) * w_n);
    float *db = malloc(sizeof(float) * cs.oc), *db2 = malloc(sizeof(float) * cs.oc);

    /* the two ops */
    conv2d_forward(conv, fx, fw, fb, work, &cs);
    maxpool2d_forward(pool, am, conv, &ps);
    maxpool2d_backward(dconv, fr, am, &ps);
    conv2d_backward(NULL, dw, db, dconv, conv, fx, fw, work, &cs);
    /* the fused op, its conv buffers NaN */
    for (long i = 0; i < conv_n; i++) conv[i] = dconv[i] = NAN;
    conv2d_relu_maxpool_forward(pool2, am2, conv, fx, fw, fb, work, &cs, &ps);
    conv2d_relu_maxpool_backward(dw2, db2, fr, pool2, am2, dconv, conv, fx, fw, work, &cs, &ps);

    same_bits(name, "pooled output", pool2, pool, pool_n, mode);
    same_bits(name, "argmax", am2, am, pool_n, mode);
    same_bits(name, "dweight", dw2, dw, w_n, mode);
    same_bits(name, "dbias", db2, db, cs.oc, mode);
    int kept = untouched(conv, conv_n) && untouched(dconv, conv_n);
    if (kept != fused) {
        fprintf(stderr, "FAIL %s (%s): the conv's buffers were %s, expected the %s path\n", name, mode,
                kept ? "untouched" : "written", fused ? "fused" : "two ops'");
        test_failures++;
    }
    free(x); free(w); free(b); free(r); free(fx); free(fw); free(fb); free(fr); free(work);
    free(conv); free(dconv); free(pool); free(pool2); free(am); free(am2); free(dw); free(dw2);
    free(db); free(db2);
}

static void all_cases(const char *mode) {
    rt_pool_shape p2 = { .kh = 2, .kw = 2, .sh = 2, .sw = 2 }, p3 = { .kh = 3, .kw = 3, .sh = 2, .sw = 2 };
    /*                                        n  c  h   w   oc kh kw sh sw ph pw dh dw g  oh ow act */
    test_case("lenet conv1+pool1", (rt_conv_shape){ 6, 1, 28, 28, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, p2, 1, mode);
    test_case("3x3 p1 on 15x13, 5 oc", (rt_conv_shape){ 3, 1, 15, 13, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, p2, 1, mode);
    test_case("5x5 p2 on 9x37, 13 oc", (rt_conv_shape){ 2, 1, 9, 37, 13, 5, 5, 1, 1, 2, 2, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, p2, 1, mode);
    test_case("3x3 p1 on 2x3, 9 oc", (rt_conv_shape){ 5, 1, 2, 3, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, p2, 1, mode);
    test_case("3x3/2 pooling: two ops", (rt_conv_shape){ 2, 1, 12, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 }, p3, 0, mode);
}

int main(void) {
    gc_seed(22);
    if (!__builtin_cpu_supports("avx512f")) {
        printf("conv_pool_native: skipped (no AVX-512F: the 1-channel kernel does not run)\n");
        return 0;
    }
    all_cases("FP32");
    char why[256];
    if (rt_gemm_set_compute(RT_COMPUTE_BF16, why, sizeof why) == 0) all_cases("BF16");
    else printf("conv_pool_native: BF16 part skipped: %s\n", why);
    return test_finish("conv_pool_native");
}
