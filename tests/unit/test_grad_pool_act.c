/* relu, gelu, max/avg/global-average pooling and LRN: forward vs direct references,
 * backward vs central differences (double, inputs chosen away from kinks and ties), and
 * the float build vs the double build. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* ---------- relu and gelu ---------- */
typedef struct { double *in, *out, *r; long n; int gelu; } act_ctx;

static double act_loss(void *p) {
    act_ctx *c = p;
    if (c->gelu) gelu_forward_f64(c->out, c->in, c->n);
    else relu_forward_f64(c->out, c->in, c->n);
    return gc_dot(c->out, c->r, c->n);
}

static void test_activation(int gelu, long n) {
    /* relu has a kink at 0: keep |x| >= 0.01, far beyond the difference step */
    act_ctx c = { gelu ? gc_rand(n, -4, 4) : gc_rand_away_from_zero(n, 0.01), gc_alloc(n),
                  gc_rand(n, -1, 1), n, gelu };
    const char *name = gelu ? "gelu" : "relu";
    char what[80];
    act_loss(&c);
    double *ref = gc_alloc(n);
    for (long i = 0; i < n; i++)
        ref[i] = gelu ? 0.5 * c.in[i] * (1 + erf(c.in[i] / sqrt(2.0))) : fmax(c.in[i], 0);
    snprintf(what, sizeof what, "%s forward vs direct", name);
    gc_compare(what, c.out, ref, n, 1e-14);
    double *din = gc_alloc(n);
    if (gelu) gelu_backward_f64(din, c.r, c.in, n);
    else relu_backward_f64(din, c.r, c.out, n);
    snprintf(what, sizeof what, "%s dinput", name);
    gc_check(what, c.in, n, din, act_loss, &c);

    float *fi = gc_to_f32(c.in, n), *fr = gc_to_f32(c.r, n);
    float *fo = malloc(sizeof(float) * n), *fd = malloc(sizeof(float) * n);
    if (gelu) { gelu_forward(fo, fi, n); gelu_backward(fd, fr, fi, n); }
    else { relu_forward(fo, fi, n); relu_backward(fd, fr, fo, n); }
    snprintf(what, sizeof what, "%s float forward", name);
    gc_compare_f32(what, fo, ref, n);
    snprintf(what, sizeof what, "%s float dinput", name);
    gc_compare_f32(what, fd, din, n);
    /* in place: out == in and din == dout */
    if (!gelu) {
        relu_forward(fi, fi, n);
        relu_backward(fr, fr, fi, n);
        gc_compare_f32("relu in-place forward", fi, ref, n);
        gc_compare_f32("relu in-place backward", fr, din, n);
    }
    free(fi); free(fr); free(fo); free(fd); free(c.in); free(c.out); free(c.r); free(ref); free(din);
}

/* ---------- max and average pooling ---------- */
typedef struct { const rt_pool_shape *s; double *in, *out, *r; int32_t *am; long out_n; int max; } pool_ctx;

static double pool_loss(void *p) {
    pool_ctx *c = p;
    if (c->max) maxpool2d_forward_f64(c->out, c->am, c->in, c->s);
    else avgpool2d_forward_f64(c->out, c->in, c->s);
    return gc_dot(c->out, c->r, c->out_n);
}

static void pool_ref(double *out, const double *in, const rt_pool_shape *s, int max) {
    for (long pl = 0; pl < (long)s->n * s->c; pl++)
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                double acc = max ? -INFINITY : 0;
                int area = 0;   /* window positions inside the padded input (Caffe's pool_size) */
                for (int ki = 0; ki < s->kh; ki++)
                    for (int kj = 0; kj < s->kw; kj++) {
                        int iy = oy * s->sh - s->ph + ki, ix = ox * s->sw - s->pw + kj;
                        area += iy < s->h + s->ph && ix < s->w + s->pw;
                        if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) continue;
                        double v = in[(pl * s->h + iy) * s->w + ix];
                        acc = max ? fmax(acc, v) : acc + v;
                    }
                out[(pl * s->oh + oy) * s->ow + ox] = max ? acc : acc / area;
            }
}

/* Caffe's pooled size (pooling_layer.cpp): ceil((in + 2p - k) / s) + 1, less one when the
 * last window would start at or past in + p. */
static int caffe_pooled(int in, int k, int st, int p) {
    int out = (int)ceil((double)(in + 2 * p - k) / st) + 1;
    return (out - 1) * st >= in + p ? out - 1 : out;
}

/* ceil: Caffe's ceil-mode output size, whose last windows run past the input. */
static void test_pool_mode(const char *name, rt_pool_shape s, int max, int ceil_mode) {
    s.oh = ceil_mode ? caffe_pooled(s.h, s.kh, s.sh, s.ph) : rt_conv_out_dim(s.h, s.kh, s.sh, s.ph, 1);
    s.ow = ceil_mode ? caffe_pooled(s.w, s.kw, s.sw, s.pw) : rt_conv_out_dim(s.w, s.kw, s.sw, s.pw, 1);
    long in_n = (long)s.n * s.c * s.h * s.w, out_n = (long)s.n * s.c * s.oh * s.ow;
    /* distinct values 1e-3 apart: no ties, so the argmax cannot flip under the step */
    pool_ctx c = { &s, max ? gc_rand_distinct(in_n, 1e-3) : gc_rand(in_n, -1, 1), gc_alloc(out_n),
                   gc_rand(out_n, -1, 1), malloc(sizeof(int32_t) * out_n), out_n, max };
    char what[120];
    pool_loss(&c);
    double *ref = gc_alloc(out_n);
    pool_ref(ref, c.in, &s, max);
    snprintf(what, sizeof what, "%s forward vs direct", name);
    gc_compare(what, c.out, ref, out_n, 1e-14);
    double *din = gc_alloc(in_n);
    if (max) maxpool2d_backward_f64(din, c.r, c.am, &s);
    else avgpool2d_backward_f64(din, c.r, &s);
    snprintf(what, sizeof what, "%s dinput", name);
    gc_check(what, c.in, in_n, din, pool_loss, &c);

    float *fi = gc_to_f32(c.in, in_n), *fr = gc_to_f32(c.r, out_n);
    float *fo = malloc(sizeof(float) * out_n), *fd = malloc(sizeof(float) * in_n);
    int32_t *fam = malloc(sizeof(int32_t) * out_n);
    if (max) { maxpool2d_forward(fo, fam, fi, &s); maxpool2d_backward(fd, fr, fam, &s); }
    else { avgpool2d_forward(fo, fi, &s); avgpool2d_backward(fd, fr, &s); }
    snprintf(what, sizeof what, "%s float forward", name);
    gc_compare_f32(what, fo, ref, out_n);
    snprintf(what, sizeof what, "%s float dinput", name);
    gc_compare_f32(what, fd, din, in_n);
    free(fi); free(fr); free(fo); free(fd); free(fam);
    free(c.in); free(c.out); free(c.r); free(c.am); free(ref); free(din);
}

static void test_pool(const char *name, rt_pool_shape s, int max) { test_pool_mode(name, s, max, 0); }

/* ---------- global average pool ---------- */
typedef struct { double *in, *out, *r; int n, c, hw; } gap_ctx;

static double gap_loss(void *p) {
    gap_ctx *c = p;
    global_avgpool_forward_f64(c->out, c->in, c->n, c->c, c->hw);
    return gc_dot(c->out, c->r, (long)c->n * c->c);
}

static void test_global_avgpool(int n, int ch, int hw) {
    long in_n = (long)n * ch * hw, out_n = (long)n * ch;
    gap_ctx c = { gc_rand(in_n, -1, 1), gc_alloc(out_n), gc_rand(out_n, -1, 1), n, ch, hw };
    gap_loss(&c);
    double *ref = gc_alloc(out_n);
    for (long pl = 0; pl < out_n; pl++) {
        for (int i = 0; i < hw; i++) ref[pl] += c.in[pl * hw + i];
        ref[pl] /= hw;
    }
    gc_compare("global_avgpool forward vs direct", c.out, ref, out_n, 1e-14);
    double *din = gc_alloc(in_n);
    global_avgpool_backward_f64(din, c.r, n, ch, hw);
    gc_check("global_avgpool dinput", c.in, in_n, din, gap_loss, &c);
    float *fi = gc_to_f32(c.in, in_n), *fr = gc_to_f32(c.r, out_n);
    float *fo = malloc(sizeof(float) * out_n), *fd = malloc(sizeof(float) * in_n);
    global_avgpool_forward(fo, fi, n, ch, hw);
    global_avgpool_backward(fd, fr, n, ch, hw);
    gc_compare_f32("global_avgpool float forward", fo, ref, out_n);
    gc_compare_f32("global_avgpool float dinput", fd, din, in_n);
    free(fi); free(fr); free(fo); free(fd); free(c.in); free(c.out); free(c.r); free(ref); free(din);
}

/* ---------- LRN ---------- */
typedef struct { double *in, *out, *r, *scale; int n, c, hw, size; double alpha, beta, k; } lrn_ctx;

static double lrn_loss(void *p) {
    lrn_ctx *c = p;
    lrn_forward_f64(c->out, c->scale, c->in, c->n, c->c, c->hw, c->size, c->alpha, c->beta, c->k);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->hw);
}

static void test_lrn(int n, int ch, int hw, int size, double alpha, double beta, double k) {
    long tn = (long)n * ch * hw;
    lrn_ctx c = { gc_rand(tn, -3, 3), gc_alloc(tn), gc_rand(tn, -1, 1), gc_alloc(tn),
                  n, ch, hw, size, alpha, beta, k };
    char what[120];
    lrn_loss(&c);
    /* torch: x / (k + alpha * avg over the zero-padded window of x^2)^beta, window of
     * channel j is [j - size/2, j + (size-1)/2] */
    double *ref = gc_alloc(tn);
    for (int b = 0; b < n; b++)
        for (int j = 0; j < ch; j++)
            for (int p = 0; p < hw; p++) {
                double sq = 0;
                for (int t = j - size / 2; t <= j + (size - 1) / 2; t++)
                    if (t >= 0 && t < ch) sq += pow(c.in[((long)b * ch + t) * hw + p], 2);
                long q = ((long)b * ch + j) * hw + p;
                ref[q] = c.in[q] / pow(k + alpha * sq / size, beta);
            }
    snprintf(what, sizeof what, "lrn size %d forward vs direct", size);
    gc_compare(what, c.out, ref, tn, 1e-13);
    double *din = gc_alloc(tn);
    lrn_backward_f64(din, c.r, c.in, c.out, c.scale, n, ch, hw, size, alpha, beta);
    snprintf(what, sizeof what, "lrn size %d dinput", size);
    gc_check(what, c.in, tn, din, lrn_loss, &c);
    float *fi = gc_to_f32(c.in, tn), *fr = gc_to_f32(c.r, tn);
    float *fo = malloc(sizeof(float) * tn), *fs = malloc(sizeof(float) * tn), *fd = malloc(sizeof(float) * tn);
    lrn_forward(fo, fs, fi, n, ch, hw, size, (float)alpha, (float)beta, (float)k);
    lrn_backward(fd, fr, fi, fo, fs, n, ch, hw, size, (float)alpha, (float)beta);
    snprintf(what, sizeof what, "lrn size %d float forward", size);
    gc_compare_f32(what, fo, ref, tn);
    snprintf(what, sizeof what, "lrn size %d float dinput", size);
    gc_compare_f32(what, fd, din, tn);
    free(fi); free(fr); free(fo); free(fs); free(fd); free(c.in); free(c.out); free(c.r);
    free(c.scale); free(ref); free(din);
}

/* ---------- LRN within channel (Caffe) ---------- */
typedef struct { double *in, *out, *r, *scale; int n, c, h, w, size; double alpha, beta, k; } lrnw_ctx;

static double lrnw_loss(void *p) {
    lrnw_ctx *c = p;
    lrn_within_forward_f64(c->out, c->scale, c->in, c->n, c->c, c->h, c->w, c->size, c->alpha, c->beta, c->k);
    return gc_dot(c->out, c->r, (long)c->n * c->c * c->h * c->w);
}

static void test_lrn_within(int n, int ch, int h, int w, int size, double alpha, double beta) {
    long tn = (long)n * ch * h * w;
    lrnw_ctx c = { gc_rand(tn, -3, 3), gc_alloc(tn), gc_rand(tn, -1, 1), gc_alloc(tn), n, ch, h, w, size,
                   alpha, beta, 1.0 };
    char what[120];
    lrnw_loss(&c);
    /* Caffe's composition: AVE pool of x^2 (size x size, stride 1, pad (size-1)/2, the padding
     * counted: every window divides by size^2), then (1 + alpha * avg)^-beta, times x */
    double *ref = gc_alloc(tn);
    int pad = (size - 1) / 2;
    for (long pl = 0; pl < (long)n * ch; pl++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double avg = 0;
                for (int dy = 0; dy < size; dy++)
                    for (int dx = 0; dx < size; dx++) {
                        int iy = y - pad + dy, ix = x - pad + dx;
                        if (iy >= 0 && iy < h && ix >= 0 && ix < w) avg += pow(c.in[(pl * h + iy) * w + ix], 2);
                    }
                avg /= size * size;
                long q = (pl * h + y) * w + x;
                ref[q] = c.in[q] * pow(1.0 + alpha * avg, -beta);
            }
    snprintf(what, sizeof what, "lrn within size %d forward vs Caffe's pool+power", size);
    gc_compare(what, c.out, ref, tn, 1e-13);
    double *din = gc_alloc(tn);
    lrn_within_backward_f64(din, c.r, c.in, c.out, c.scale, n, ch, h, w, size, alpha, beta);
    snprintf(what, sizeof what, "lrn within size %d dinput", size);
    gc_check(what, c.in, tn, din, lrnw_loss, &c);
    float *fi = gc_to_f32(c.in, tn), *fr = gc_to_f32(c.r, tn);
    float *fo = malloc(sizeof(float) * tn), *fs = malloc(sizeof(float) * tn), *fd = malloc(sizeof(float) * tn);
    lrn_within_forward(fo, fs, fi, n, ch, h, w, size, (float)alpha, (float)beta, 1.0f);
    lrn_within_backward(fd, fr, fi, fo, fs, n, ch, h, w, size, (float)alpha, (float)beta);
    snprintf(what, sizeof what, "lrn within size %d float forward", size);
    gc_compare_f32(what, fo, ref, tn);
    snprintf(what, sizeof what, "lrn within size %d float dinput", size);
    gc_compare_f32(what, fd, din, tn);
    free(fi); free(fr); free(fo); free(fs); free(fd); free(c.in); free(c.out); free(c.r);
    free(c.scale); free(ref); free(din);
}

int main(void) {
    gc_seed(3);
    test_activation(0, 300);
    test_activation(1, 300);
    /*                                 n  c  h  w kh kw sh sw ph pw */
    test_pool("maxpool 2x2 s2",        (rt_pool_shape){ 2, 3, 6, 8, 2, 2, 2, 2, 0, 0, 0, 0 }, 1);
    /* the 2x2 path's vectors: LeNet's planes, odd widths (the last column left out), rows
     * of more than 16 outputs, and one of exactly 16 */
    test_pool("maxpool 2x2 s2 28x28",  (rt_pool_shape){ 2, 3, 28, 28, 2, 2, 2, 2, 0, 0, 0, 0 }, 1);
    test_pool("maxpool 2x2 s2 15x13",  (rt_pool_shape){ 2, 3, 15, 13, 2, 2, 2, 2, 0, 0, 0, 0 }, 1);
    test_pool("maxpool 2x2 s2 6x70",   (rt_pool_shape){ 1, 2, 6, 70, 2, 2, 2, 2, 0, 0, 0, 0 }, 1);
    test_pool("maxpool 2x2 s2 4x32",   (rt_pool_shape){ 1, 3, 4, 32, 2, 2, 2, 2, 0, 0, 0, 0 }, 1);
    test_pool("maxpool 3x3 s2 p1",     (rt_pool_shape){ 2, 2, 7, 9, 3, 3, 2, 2, 1, 1, 0, 0 }, 1);
    test_pool("maxpool 3x3 s1 p1",     (rt_pool_shape){ 1, 2, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0 }, 1);
    test_pool("maxpool 3x2 s(2,1)",    (rt_pool_shape){ 1, 3, 7, 6, 3, 2, 2, 1, 0, 1, 0, 0 }, 1);
    test_pool("avgpool 2x2 s2",        (rt_pool_shape){ 2, 3, 6, 8, 2, 2, 2, 2, 0, 0, 0, 0 }, 0);
    test_pool("avgpool 3x3 s2 p1",     (rt_pool_shape){ 2, 2, 7, 9, 3, 3, 2, 2, 1, 1, 0, 0 }, 0);
    test_pool("avgpool 3x3 s1 p1",     (rt_pool_shape){ 1, 2, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0 }, 0);
    /* ceil mode (Caffe): AlexNet/GoogLeNet's 3x3 s2, the 2x2 fast path's guard, and avg
     * windows that run past the padding (divided by their part inside it) */
    test_pool_mode("maxpool 3x3 s2 ceil",     (rt_pool_shape){ 2, 2, 6, 8, 3, 3, 2, 2, 0, 0, 0, 0 }, 1, 1);
    test_pool_mode("maxpool 2x2 s2 ceil",     (rt_pool_shape){ 1, 2, 7, 9, 2, 2, 2, 2, 0, 0, 0, 0 }, 1, 1);
    test_pool_mode("maxpool 3x3 s2 p1 ceil",  (rt_pool_shape){ 1, 2, 8, 6, 3, 3, 2, 2, 1, 1, 0, 0 }, 1, 1);
    test_pool_mode("avgpool 3x3 s2 ceil",     (rt_pool_shape){ 2, 2, 6, 8, 3, 3, 2, 2, 0, 0, 0, 0 }, 0, 1);
    test_pool_mode("avgpool 3x3 s2 p1 ceil",  (rt_pool_shape){ 1, 2, 8, 6, 3, 3, 2, 2, 1, 1, 0, 0 }, 0, 1);
    test_pool_mode("avgpool 5x5 s3 ceil",     (rt_pool_shape){ 1, 1, 15, 14, 5, 5, 3, 3, 0, 0, 0, 0 }, 0, 1);
    test_global_avgpool(3, 4, 9);
    test_lrn(2, 7, 6, 5, 1e-4 * 400, 0.75, 2.0);   /* AlexNet-like, alpha enlarged to matter */
    test_lrn(1, 6, 4, 4, 0.5, 0.75, 1.0);          /* even size: asymmetric window */
    test_lrn(1, 3, 5, 5, 0.3, 0.6, 1.0);           /* window wider than the channels */
    test_lrn_within(1, 2, 5, 6, 3, 2.0, 0.75);     /* alpha enlarged to matter */
    test_lrn_within(1, 2, 4, 7, 5, 5.0, 0.75);     /* window wider than the image */
    return test_finish("test_grad_pool_act");
}
