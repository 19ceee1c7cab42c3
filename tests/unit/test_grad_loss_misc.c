/* softmax cross-entropy with label smoothing and top-k, dropout and drop path (stateless
 * masks), residual add, channel concat and gradient accumulation: forward vs direct
 * references, backward vs central differences (double), float build vs double build. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* ---------- softmax cross-entropy ---------- */
typedef struct { double *z; int32_t *y; int n, k; double eps; } xent_ctx;

static double xent_loss(void *p) {
    xent_ctx *c = p;
    return softmax_xent_forward_f64(NULL, c->z, c->y, c->n, c->k, c->eps, 0);
}

static void test_xent(int n, int k, double eps) {
    xent_ctx c = { gc_rand((long)n * k, -3, 3), malloc(sizeof(int32_t) * n), n, k, eps };
    for (int b = 0; b < n; b++) c.y[b] = (int32_t)(gc_next() % (uint64_t)k);
    /* torch: mean_b [ (1-eps) * -log p_y + eps/K * sum_j -log p_j ], log p by direct sums */
    double ref = 0;
    for (int b = 0; b < n; b++) {
        const double *z = c.z + (long)b * k;
        double s = 0, smooth = 0;
        for (int j = 0; j < k; j++) s += exp(z[j]);
        for (int j = 0; j < k; j++) smooth += -(z[j] - log(s));
        ref += (1 - eps) * -(z[c.y[b]] - log(s)) + eps * smooth / k;
    }
    ref /= n;
    double *dz = gc_alloc((long)n * k);
    double loss = softmax_xent_forward_f64(dz, c.z, c.y, n, k, eps, 1.0 / n);
    char what[120];
    snprintf(what, sizeof what, "softmax_xent eps=%g loss vs direct", eps);
    gc_compare(what, &loss, &ref, 1, 1e-12);
    snprintf(what, sizeof what, "softmax_xent eps=%g dlogits", eps);
    gc_check(what, c.z, (long)n * k, dz, xent_loss, &c);
    /* a loss scale only scales the gradient */
    double *dz8 = gc_alloc((long)n * k), *want8 = gc_alloc((long)n * k);
    softmax_xent_forward_f64(dz8, c.z, c.y, n, k, eps, 8.0 / n);
    for (long i = 0; i < (long)n * k; i++) want8[i] = 8 * dz[i];
    gc_compare("softmax_xent loss-scaled dlogits", dz8, want8, (long)n * k, 1e-13);

    float *fz = gc_to_f32(c.z, (long)n * k), *fdz = malloc(sizeof(float) * n * k);
    double floss = softmax_xent_forward(fdz, fz, c.y, n, k, (float)eps, 1.0f / n);
    gc_compare("softmax_xent float loss", &floss, &ref, 1, GC_F32_TOL);
    gc_compare_f32("softmax_xent float dlogits", fdz, dz, (long)n * k);
    /* large logits must not overflow (max subtraction) */
    for (long i = 0; i < (long)n * k; i++) fz[i] += 500.0f;
    floss = softmax_xent_forward(fdz, fz, c.y, n, k, (float)eps, 1.0f / n);
    CHECK(isfinite(floss) && fabs(floss - ref) < 1e-2);
    free(fz); free(fdz); free(c.z); free(c.y); free(dz); free(dz8); free(want8);
}

static void test_topk(void) {
    /* 6 classes, 3 samples: label ranks 0, 3 and 5 */
    double z[18] = { 5, 1, 2, 3, 0, -1,    1, 2, 3, 4, 0.5, 0,    0, 1, 2, 3, 4, 5 };
    int32_t y[3] = { 0, 1, 0 };
    int t1 = -1, t5 = -1;
    topk_correct_f64(&t1, &t5, z, y, 3, 6);
    CHECK(t1 == 1);
    CHECK(t5 == 2);
    float fz[18];
    for (int i = 0; i < 18; i++) fz[i] = (float)z[i];
    topk_correct(&t1, &t5, fz, y, 3, 6);
    CHECK(t1 == 1 && t5 == 2);
    /* all logits equal: ties go to the lower class index, as a stable argmax would */
    float flat[12] = { 0 };
    int32_t y2[2] = { 3, 0 };
    topk_correct(&t1, &t5, flat, y2, 2, 6);
    CHECK(t1 == 1 && t5 == 2);   /* label 0 ranks first, label 3 ranks fourth */
}

/* ---------- dropout and drop path ---------- */
typedef struct { double *in, *out, *r; long n; int samples; double p; uint64_t seed; } mask_ctx;

static double dropout_loss(void *p) {
    mask_ctx *c = p;
    dropout_forward_f64(c->out, c->in, c->n, c->p, c->seed, 0, 1);
    return gc_dot(c->out, c->r, c->n);
}
static double drop_path_loss(void *p) {
    mask_ctx *c = p;
    drop_path_forward_f64(c->out, c->in, c->samples, c->n / c->samples, c->p, c->seed, 0, 1);
    return gc_dot(c->out, c->r, c->n);
}

static void test_dropout(void) {
    long n = 20000;
    double p = 0.25;
    mask_ctx c = { gc_rand(n, 0.5, 1.5), gc_alloc(n), gc_rand(n, -1, 1), n, 1, p, 42 };
    dropout_loss(&c);
    long dropped = 0;
    double *ref = gc_alloc(n);
    for (long i = 0; i < n; i++) {
        int keep = rt_hash_uniform(42, (uint64_t)i) >= p;
        ref[i] = keep ? c.in[i] / (1 - p) : 0;
        dropped += !keep;
    }
    gc_compare("dropout forward vs mask from (seed, index)", c.out, ref, n, 1e-15);
    CHECK(fabs((double)dropped / n - p) < 0.02);
    /* same seed, same mask; another seed, another mask */
    double *again = gc_alloc(n), *other = gc_alloc(n);
    dropout_forward_f64(again, c.in, n, p, 42, 0, 1);
    dropout_forward_f64(other, c.in, n, p, 43, 0, 1);
    CHECK(memcmp(again, c.out, sizeof(double) * n) == 0);
    long same = 0;
    for (long i = 0; i < n; i++) same += (other[i] == 0) == (c.out[i] == 0);
    CHECK(same < n * 0.8);
    /* eval is the identity, in place too */
    dropout_forward_f64(again, c.in, n, p, 42, 0, 0);
    CHECK(memcmp(again, c.in, sizeof(double) * n) == 0);
    /* backward recomputes the forward's mask */
    double *din = gc_alloc(n);
    dropout_backward_f64(din, c.r, n, p, 42, 0, 1);
    for (long i = 0; i < n; i++) ref[i] = c.out[i] != 0 ? c.r[i] / (1 - p) : 0;
    gc_compare("dropout backward vs forward mask", din, ref, n, 1e-15);
    c.n = 300;   /* the difference check needs only a few points */
    gc_check("dropout dinput", c.in, c.n, din, dropout_loss, &c);
    float *fi = gc_to_f32(c.in, n), *fo = malloc(sizeof(float) * n);
    dropout_forward(fi, fi, n, (float)p, 42, 0, 1);   /* in place */
    double *want = gc_alloc(n);
    dropout_forward_f64(want, c.in, n, p, 42, 0, 1);
    gc_compare_f32("dropout float (in place) vs double", fi, want, n);
    /* a rank's slice keyed by its global offset draws the whole batch's mask for that slice */
    dropout_forward_f64(want, c.in + 5000, 7000, p, 42, 5000, 1);
    gc_compare("dropout of a slice at its global offset", want, c.out + 5000, 7000, 0);
    free(fi); free(fo); free(want); free(c.in); free(c.out); free(c.r); free(ref);
    free(again); free(other); free(din);
}

static void test_drop_path(void) {
    int samples = 64;
    long per = 30, n = samples * per;
    double p = 0.5;
    mask_ctx c = { gc_rand(n, -1, 1), gc_alloc(n), gc_rand(n, -1, 1), n, samples, p, 7 };
    drop_path_loss(&c);
    int kept = 0;
    double *ref = gc_alloc(n);
    for (int b = 0; b < samples; b++) {
        int keep = rt_hash_uniform(7, (uint64_t)b) >= p;
        kept += keep;
        for (long i = 0; i < per; i++) ref[b * per + i] = keep ? c.in[b * per + i] / (1 - p) : 0;
    }
    gc_compare("drop_path forward (whole samples)", c.out, ref, n, 1e-15);
    CHECK(kept > 16 && kept < 48);
    double *din = gc_alloc(n);
    drop_path_backward_f64(din, c.r, samples, per, p, 7, 0, 1);
    gc_check("drop_path dinput", c.in, n, din, drop_path_loss, &c);
    double *ev = gc_alloc(n);
    drop_path_forward_f64(ev, c.in, samples, per, p, 7, 0, 0);
    CHECK(memcmp(ev, c.in, sizeof(double) * n) == 0);
    float *fi = gc_to_f32(c.in, n), *fo = malloc(sizeof(float) * n);
    drop_path_forward(fo, fi, samples, per, (float)p, 7, 0, 1);
    gc_compare_f32("drop_path float vs double", fo, c.out, n);
    /* samples 16..47 as a rank holding them would see them: the same samples dropped */
    drop_path_forward_f64(ev, c.in + 16 * per, 32, per, p, 7, 16, 1);
    gc_compare("drop_path of a slice at its global offset", ev, c.out + 16 * per, 32 * per, 0);
    free(fi); free(fo); free(c.in); free(c.out); free(c.r); free(ref); free(din); free(ev);
}

/* ---------- add, concat, accumulate ---------- */
typedef struct { double *a, *b, *out, *r; long n; } add_ctx;

static double add_loss(void *p) {
    add_ctx *c = p;
    add_forward_f64(c->out, c->a, c->b, c->n);
    return gc_dot(c->out, c->r, c->n);
}

static void test_add(void) {
    long n = 50;
    add_ctx c = { gc_rand(n, -1, 1), gc_rand(n, -1, 1), gc_alloc(n), gc_rand(n, -1, 1), n };
    add_loss(&c);
    double *ref = gc_alloc(n), *da = gc_alloc(n), *db = gc_alloc(n);
    for (long i = 0; i < n; i++) ref[i] = c.a[i] + c.b[i];
    gc_compare("add forward", c.out, ref, n, 0);
    add_backward_f64(da, db, c.r, n);
    gc_check("add da", c.a, n, da, add_loss, &c);
    gc_check("add db", c.b, n, db, add_loss, &c);
    free(c.a); free(c.b); free(c.out); free(c.r); free(ref); free(da); free(db);
}

/* The add with a fused ReLU: its backward is relu_backward in place on dout, then the add's. */
static double add_relu_loss(void *p) {
    add_ctx *c = p;
    add_act_forward_f64(c->out, c->a, c->b, c->n, RT_ACT_RELU);
    return gc_dot(c->out, c->r, c->n);
}

static void test_add_relu(void) {
    long n = 50;
    add_ctx c = { gc_rand(n, -1, 1), gc_rand(n, -1, 1), gc_alloc(n), gc_rand(n, -1, 1), n };
    add_relu_loss(&c);
    double *ref = gc_alloc(n), *d = gc_alloc(n), *da = gc_alloc(n), *db = gc_alloc(n);
    for (long i = 0; i < n; i++) ref[i] = c.a[i] + c.b[i] > 0 ? c.a[i] + c.b[i] : 0;
    gc_compare("add+relu forward", c.out, ref, n, 0);
    add_act_forward_f64(c.out, c.a, c.b, c.n, RT_ACT_NONE);
    for (long i = 0; i < n; i++) ref[i] = c.a[i] + c.b[i];
    gc_compare("add, no activation", c.out, ref, n, 0);
    add_relu_loss(&c);
    memcpy(d, c.r, sizeof(double) * n);
    relu_backward_f64(d, d, c.out, n);
    add_backward_f64(da, db, d, n);
    gc_check("add+relu da", c.a, n, da, add_relu_loss, &c);
    gc_check("add+relu db", c.b, n, db, add_relu_loss, &c);
    free(c.a); free(c.b); free(c.out); free(c.r); free(ref); free(d); free(da); free(db);
}

typedef struct { double *ins[3], *out, *r; int ch[3], n, hw; long out_n; } cat_ctx;

static double cat_loss(void *p) {
    cat_ctx *c = p;
    concat_forward_f64(c->out, (const double *const *)c->ins, c->ch, 3, c->n, c->hw);
    return gc_dot(c->out, c->r, c->out_n);
}

static void test_concat(void) {
    int n = 2, hw = 5, ch[3] = { 2, 3, 1 }, total = 6;
    cat_ctx c = { { 0 }, NULL, NULL, { 2, 3, 1 }, n, hw, (long)n * total * hw };
    for (int i = 0; i < 3; i++) c.ins[i] = gc_rand((long)n * ch[i] * hw, -1, 1);
    c.out = gc_alloc(c.out_n);
    c.r = gc_rand(c.out_n, -1, 1);
    cat_loss(&c);
    double *ref = gc_alloc(c.out_n);
    for (int b = 0; b < n; b++)
        for (int k = 0, off = 0; k < 3; off += ch[k], k++)
            for (int j = 0; j < ch[k]; j++)
                for (int p = 0; p < hw; p++)
                    ref[((long)b * total + off + j) * hw + p] = c.ins[k][((long)b * ch[k] + j) * hw + p];
    gc_compare("concat forward vs direct", c.out, ref, c.out_n, 0);
    double *d[3];
    for (int i = 0; i < 3; i++) d[i] = gc_alloc((long)n * ch[i] * hw);
    concat_backward_f64(d, c.r, ch, 3, n, hw);
    char what[40];
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof what, "concat dinput %d", i);
        gc_check(what, c.ins[i], (long)n * ch[i] * hw, d[i], cat_loss, &c);
    }
    double *skip[3] = { d[0], NULL, d[2] };   /* NULL entries are skipped */
    concat_backward_f64(skip, c.r, ch, 3, n, hw);
    for (int i = 0; i < 3; i++) { free(c.ins[i]); free(d[i]); }
    free(c.out); free(c.r); free(ref);
}

static void test_accumulate(void) {
    double a[4] = { 1, 2, 3, 4 }, b[4] = { 0.5, -2, 0, 1 }, want[4] = { 1.5, 0, 3, 5 };
    tensor_accumulate_f64(a, b, 4);
    gc_compare("tensor_accumulate", a, want, 4, 0);
    float fa[4] = { 1, 2, 3, 4 }, fb[4] = { 0.5f, -2, 0, 1 };
    tensor_accumulate(fa, fb, 4);
    gc_compare_f32("tensor_accumulate float", fa, want, 4);
}

int main(void) {
    gc_seed(4);
    test_xent(5, 7, 0.0);
    test_xent(6, 10, 0.1);
    test_xent(3, 1000, 0.2);
    test_topk();
    test_dropout();
    test_drop_path();
    test_add();
    test_add_relu();
    test_concat();
    test_accumulate();
    return test_finish("test_grad_loss_misc");
}
