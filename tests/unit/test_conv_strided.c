/* conv2d's strided paths (conv2d_strided.c: GEMMs on polyphase planes; for 3x3/2 pad 1,
 * conv2d_strided_winograd.c: Winograd F(7x7,2x2) on the phase planes) on batches large enough
 * for several images per thread: forward and all three gradients against a direct
 * convolution and its adjoint written from the definition (double), with bias, fused ReLU,
 * din_add, odd sizes, stride 3, dilation and a 7x7/2 stem; and the float build against it.
 * (test_grad_conv.c checks the same paths' small strided shapes by central differences.) */
#include <string.h>
#include "gradcheck.h"
#include "rt_conv_choice.h"
#include "rt_ops.h"
#include "../../runtime/cpu/ops/conv2d_strided.h"            /* conv2d_strided_fits */
#include "../../runtime/cpu/ops/conv2d_strided_winograd.h"   /* ..._winograd_fits */

static long in_at(const rt_conv_shape *s, int b, int ci, int iy, int ix) {
    return (((long)b * s->c + ci) * s->h + iy) * s->w + ix;
}
static long out_at(const rt_conv_shape *s, int b, int oc, int oy, int ox) {
    return (((long)b * s->oc + oc) * s->oh + oy) * s->ow + ox;
}
static long w_at(const rt_conv_shape *s, int oc, int ci, int ki, int kj) {
    return (((long)oc * s->c + ci) * s->kh + ki) * s->kw + kj;
}

/* Calls f(b, oc, oy, ox, ci, ki, kj, iy, ix) for every product of the convolution. */
#define FOR_EACH_PRODUCT(s, BODY)                                                           \
    for (int b = 0; b < (s)->n; b++)                                                        \
        for (int oc = 0; oc < (s)->oc; oc++)                                                \
            for (int oy = 0; oy < (s)->oh; oy++)                                            \
                for (int ox = 0; ox < (s)->ow; ox++)                                        \
                    for (int ci = 0; ci < (s)->c; ci++)                                     \
                        for (int ki = 0; ki < (s)->kh; ki++)                                \
                            for (int kj = 0; kj < (s)->kw; kj++) {                          \
                                int iy = oy * (s)->sh - (s)->ph + ki * (s)->dh;             \
                                int ix = ox * (s)->sw - (s)->pw + kj * (s)->dw;             \
                                if (iy < 0 || iy >= (s)->h || ix < 0 || ix >= (s)->w)       \
                                    continue;                                               \
                                BODY                                                        \
                            }

/* y = act(conv(x, w) + bias) */
static void forward_ref(double *y, const double *x, const double *w, const double *bias,
                        const rt_conv_shape *s) {
    long out_n = (long)s->n * s->oc * s->oh * s->ow;
    for (int b = 0; b < s->n; b++)
        for (int oc = 0; oc < s->oc; oc++)
            for (long i = 0; i < (long)s->oh * s->ow; i++)
                y[out_at(s, b, oc, 0, 0) + i] = bias[oc];
    FOR_EACH_PRODUCT(s, y[out_at(s, b, oc, oy, ox)] += x[in_at(s, b, ci, iy, ix)] *
                                                       w[w_at(s, oc, ci, ki, kj)];)
    if (s->act == RT_ACT_RELU)
        for (long i = 0; i < out_n; i++) y[i] = y[i] > 0 ? y[i] : 0;
}

/* The adjoint: gradients of sum(dy . y) (dy masked where a fused ReLU cut y to zero). */
static void backward_ref(double *dx, double *dw, double *db, const double *dy, const double *y,
                         const double *x, const double *w, const rt_conv_shape *s) {
    long out_n = (long)s->n * s->oc * s->oh * s->ow;
    double *g = gc_alloc(out_n);
    for (long i = 0; i < out_n; i++) g[i] = s->act == RT_ACT_RELU && !(y[i] > 0) ? 0 : dy[i];
    memset(dx, 0, sizeof(double) * s->n * s->c * s->h * s->w);
    memset(dw, 0, sizeof(double) * s->oc * s->c * s->kh * s->kw);
    memset(db, 0, sizeof(double) * s->oc);
    for (int b = 0; b < s->n; b++)
        for (int oc = 0; oc < s->oc; oc++)
            for (long i = 0; i < (long)s->oh * s->ow; i++) db[oc] += g[out_at(s, b, oc, 0, 0) + i];
    FOR_EACH_PRODUCT(s, {
        double go = g[out_at(s, b, oc, oy, ox)];
        dx[in_at(s, b, ci, iy, ix)] += go * w[w_at(s, oc, ci, ki, kj)];
        dw[w_at(s, oc, ci, ki, kj)] += go * x[in_at(s, b, ci, iy, ix)];
    })
    free(g);
}

static void check_shape(const char *name, rt_conv_shape s) {
    s.oh = rt_conv_out_dim(s.h, s.kh, s.sh, s.ph, s.dh);
    s.ow = rt_conv_out_dim(s.w, s.kw, s.sw, s.pw, s.dw);
    s = rt_conv_chosen(s, 0);   /* as the compiler records it (rt_conv_choice.h) */
    int winograd = conv2d_strided_winograd_fits(&s);
    if (!conv2d_strided_fits(&s) && !winograd) {   /* the shapes below are chosen to take them */
        fprintf(stderr, "FAIL %s: conv2d_strided_fits() refuses it\n", name);
        test_failures++;
        return;
    }
    long in_n = (long)s.n * s.c * s.h * s.w, out_n = (long)s.n * s.oc * s.oh * s.ow;
    long w_n = (long)s.oc * s.c * s.kh * s.kw;
    double *x = gc_rand(in_n, -1, 1), *w = gc_rand(w_n, -1, 1), *bias = gc_rand(s.oc, -1, 1);
    double *dy = gc_rand(out_n, -1, 1), *held = gc_rand(in_n, -1, 1);
    double *y_ref = gc_alloc(out_n), *dx_ref = gc_alloc(in_n), *dw_ref = gc_alloc(w_n);
    double *db_ref = gc_alloc(s.oc);
    forward_ref(y_ref, x, w, bias, &s);
    backward_ref(dx_ref, dw_ref, db_ref, dy, y_ref, x, w, &s);
    if (s.din_add)   /* the op adds its gradient onto what din held */
        for (long i = 0; i < in_n; i++) dx_ref[i] += held[i];

    double *y = gc_alloc(out_n), *dx = gc_alloc(in_n), *dw = gc_alloc(w_n), *db = gc_alloc(s.oc);
    double *work = gc_alloc(conv2d_workspace_elems_f64(&s));
    memcpy(dx, held, sizeof(double) * in_n);
    conv2d_forward_f64(y, x, w, bias, work, &s);
    conv2d_backward_f64(dx, dw, db, dy, s.act ? y : NULL, x, w, work, &s);
    char what[200];
#define CHECK_PART(part, got, want, n, tol) \
    (snprintf(what, sizeof what, "%s %s", name, part), gc_compare(what, got, want, n, tol))
    /* Winograd's transforms round in double too: 1e-12 of sums over a few thousand terms */
    double dtol = winograd ? 1e-11 : 1e-12;
    CHECK_PART("forward vs direct", y, y_ref, out_n, dtol);
    CHECK_PART("dinput vs direct adjoint", dx, dx_ref, in_n, dtol);
    CHECK_PART("dweight vs direct adjoint", dw, dw_ref, w_n, dtol);
    CHECK_PART("dbias vs direct adjoint", db, db_ref, s.oc, 1e-12);

    float *fx = gc_to_f32(x, in_n), *fw = gc_to_f32(w, w_n), *fb = gc_to_f32(bias, s.oc);
    float *fdy = gc_to_f32(dy, out_n), *fdx = gc_to_f32(held, in_n);
    float *fy = malloc(sizeof(float) * out_n), *fdw = malloc(sizeof(float) * w_n);
    float *fdb = malloc(sizeof(float) * s.oc);
    float *fwork = malloc(sizeof(float) * conv2d_workspace_elems(&s));
    conv2d_forward(fy, fx, fw, fb, fwork, &s);
    /* the fused ReLU's mask from the double forward: the float one flips where an output lies
     * within rounding of zero, which moves dinput and dweight by whole products */
    float *fmask = gc_to_f32(y_ref, out_n);
    conv2d_backward(fdx, fdw, fdb, fdy, s.act ? fmask : NULL, fx, fw, fwork, &s);
    free(fmask);
    const float *got[4] = { fy, fdx, fdw, fdb };
    const double *want[4] = { y_ref, dx_ref, dw_ref, db_ref };
    long count[4] = { out_n, in_n, w_n, s.oc };
    const char *part[4] = { "forward", "dinput", "dweight", "dbias" };
    /* F(7x7,2x2)'s 8x8 transforms amplify float rounding like F(4x4,3x3)'s (test_grad_conv.c
     * gives those the same 5x) */
    double tol = winograd ? 5 * GC_F32_TOL : GC_F32_TOL;
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "%s float %s vs double", name, part[i]);
        double *g = gc_alloc(count[i]);
        for (long e = 0; e < count[i]; e++) g[e] = got[i][e];
        gc_compare(what, g, want[i], count[i], tol);
        free(g);
    }
#undef CHECK_PART
    free(x); free(w); free(bias); free(dy); free(held); free(y_ref); free(dx_ref); free(dw_ref);
    free(db_ref); free(y); free(dx); free(dw); free(db); free(work);
    free(fx); free(fw); free(fb); free(fdy); free(fdx); free(fy); free(fdw); free(fdb); free(fwork);
}

int main(void) {
    gc_seed(7);
    struct { const char *name; rt_conv_shape s; } cases[] = {
        /*                               n   c   h   w  oc kh kw sh sw ph pw dh dw g  oh ow */
        { "resnet-like 3x3/2 +relu",   { 6, 16, 14, 14, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 } },
        { "3x3/2 odd 15x13 din_add",   { 5, 17, 15, 13, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 1, 0, 0 } },
        { "7x7/2 p3",                  { 3, 16, 17, 18, 5, 7, 7, 2, 2, 3, 3, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 } },
        { "3x2 s3x2 dilated +relu",    { 4, 16, 16, 19, 5, 3, 2, 3, 2, 1, 0, 2, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 1, 0, 0 } },
        { "3x3/2 pad 0, one image",    { 1, 16, 9, 10, 3, 3, 3, 2, 2, 0, 0, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 } },
        { "2x2 s4 (rows skipped)",     { 3, 16, 11, 9, 3, 2, 2, 4, 4, 0, 0, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 } },
        { "3x3/2 28x28 32->24 +relu",  { 9, 32, 28, 28, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 1, 0, 0 } },
        /* partial tiles (13x20 outputs on 2x3 tiles), channels padded to 16s */
        { "3x3/2 26x39 18->40",        { 4, 18, 26, 39, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 } },
        { "3x3/2 odd 29x27 18->40",    { 4, 18, 29, 27, 40, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 0, 0, 0 } },
        /* planes too small for the 7x7 tiles (the ResNet on 8x8 inputs): polyphase */
        { "3x3/2 4x4 32->64",          { 4, 32, 4, 4, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_NONE, RT_CONV_IM2COL, 1, 0, 0 } },
        { "3x3/2 8x8 16->32 +relu",    { 4, 16, 8, 8, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 } },
        /* 16 tiles an image, 82 Ki values of V and M: 12 images a chunk (CHUNK_VALUES 1 Mi),
         * so two chunks (the second's split must see zeros outside the image again) */
        { "3x3/2 56x56 16->16 two chunks", { 14, 16, 56, 56, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 1, 0, 0 } },
        { "3x3/2 pad 2 +relu",         { 3, 16, 7, 8, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 0, 0,
                                         RT_ACT_RELU, RT_CONV_IM2COL, 0, 0, 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_shape(cases[i].name, cases[i].s);
    return test_finish("test_conv_strided");
}
