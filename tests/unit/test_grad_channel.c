/* The channel ops: mul (a per-channel SE gate, and elementwise), channel_shuffle and
 * channel_slice: forward vs direct references (torch's definitions), backward vs central
 * differences in double, the float build vs the double build. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* ---------- mul ---------- */
typedef struct { double *x, *g, *out, *r; int n, c; long hw; } mul_ctx;

static double mul_loss(void *p) {
    mul_ctx *m = p;
    channel_mul_forward_f64(m->out, m->x, m->g, m->n, m->c, m->hw);
    return gc_dot(m->out, m->r, (long)m->n * m->c * m->hw);
}

static void test_mul(const char *name, int n, int c, long hw) {
    long total = (long)n * c * hw, planes = (long)n * c;
    mul_ctx m = { gc_rand(total, -2, 2), gc_rand(planes, 0, 1), gc_alloc(total), gc_rand(total, -1, 1), n, c, hw };
    char what[96];
    mul_loss(&m);
    double *ref = gc_alloc(total);
    for (long i = 0; i < total; i++) ref[i] = m.x[i] * m.g[i / hw];
    snprintf(what, sizeof what, "%s forward vs direct", name);
    gc_compare(what, m.out, ref, total, 1e-15);
    double *dx = gc_alloc(total), *dg = gc_alloc(planes);
    channel_mul_backward_f64(dx, dg, m.r, m.x, m.g, n, c, hw);
    snprintf(what, sizeof what, "%s dx", name);
    gc_check(what, m.x, total, dx, mul_loss, &m);
    snprintf(what, sizeof what, "%s dgate", name);
    gc_check(what, m.g, planes, dg, mul_loss, &m);
    /* NULL gradients are skipped; dx may be dout */
    double *dg2 = gc_alloc(planes), *dx2 = gc_alloc(total);
    memcpy(dx2, m.r, sizeof(double) * (size_t)total);
    channel_mul_backward_f64(NULL, dg2, m.r, m.x, m.g, n, c, hw);
    channel_mul_backward_f64(dx2, NULL, dx2, m.x, m.g, n, c, hw);
    snprintf(what, sizeof what, "%s dgate alone", name);
    gc_compare(what, dg2, dg, planes, 0);
    snprintf(what, sizeof what, "%s dx in place", name);
    gc_compare(what, dx2, dx, total, 0);

    float *fx = gc_to_f32(m.x, total), *fg = gc_to_f32(m.g, planes), *fr = gc_to_f32(m.r, total);
    float *fo = malloc(sizeof(float) * total), *fdx = malloc(sizeof(float) * total), *fdg = malloc(sizeof(float) * planes);
    channel_mul_forward(fo, fx, fg, n, c, hw);
    channel_mul_backward(fdx, fdg, fr, fx, fg, n, c, hw);
    snprintf(what, sizeof what, "%s float forward", name);
    gc_compare_f32(what, fo, ref, total);
    snprintf(what, sizeof what, "%s float dx", name);
    gc_compare_f32(what, fdx, dx, total);
    snprintf(what, sizeof what, "%s float dgate", name);
    gc_compare_f32(what, fdg, dg, planes);
    free(fx); free(fg); free(fr); free(fo); free(fdx); free(fdg);
    free(m.x); free(m.g); free(m.out); free(m.r); free(ref); free(dx); free(dg); free(dg2); free(dx2);
}

/* ---------- channel_shuffle and channel_slice ---------- */
typedef struct { double *in, *out, *r; int n, c, groups, start, count; long hw, out_n; int slice; } perm_ctx;

static double perm_loss(void *p) {
    perm_ctx *q = p;
    if (q->slice) channel_slice_forward_f64(q->out, q->in, q->n, q->c, q->hw, q->start, q->count);
    else channel_shuffle_forward_f64(q->out, q->in, q->n, q->c, q->hw, q->groups);
    return gc_dot(q->out, q->r, q->out_n);
}

/* slice: groups unused; shuffle: start/count unused. */
static void test_perm(const char *name, int slice, int n, int c, long hw, int groups, int start, int count) {
    long total = (long)n * c * hw, out_n = (long)n * (slice ? count : c) * hw;
    perm_ctx q = { gc_rand(total, -1, 1), gc_alloc(out_n), gc_rand(out_n, -1, 1), n, c, groups, start, count, hw,
                   out_n, slice };
    char what[96];
    perm_loss(&q);
    /* torch: x.view(n, groups, c/groups, hw).transpose(1, 2); x[:, start:start+count] */
    double *ref = gc_alloc(out_n);
    int oc = slice ? count : c;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < oc; j++)
            for (long p = 0; p < hw; p++) {
                int from = slice ? start + j : (j % groups) * (c / groups) + j / groups;
                ref[((long)i * oc + j) * hw + p] = q.in[((long)i * c + from) * hw + p];
            }
    snprintf(what, sizeof what, "%s forward vs direct", name);
    gc_compare(what, q.out, ref, out_n, 0);
    double *din = gc_alloc(total);
    for (long i = 0; i < total; i++) din[i] = 99;   /* backward writes every value */
    if (slice) channel_slice_backward_f64(din, q.r, n, c, hw, start, count);
    else channel_shuffle_backward_f64(din, q.r, n, c, hw, groups);
    snprintf(what, sizeof what, "%s dinput", name);
    gc_check(what, q.in, total, din, perm_loss, &q);
    float *fi = gc_to_f32(q.in, total), *fr = gc_to_f32(q.r, out_n);
    float *fo = malloc(sizeof(float) * out_n), *fd = malloc(sizeof(float) * total);
    if (slice) {
        channel_slice_forward(fo, fi, n, c, hw, start, count);
        channel_slice_backward(fd, fr, n, c, hw, start, count);
    } else {
        channel_shuffle_forward(fo, fi, n, c, hw, groups);
        channel_shuffle_backward(fd, fr, n, c, hw, groups);
    }
    snprintf(what, sizeof what, "%s float forward", name);
    gc_compare_f32(what, fo, ref, out_n);
    snprintf(what, sizeof what, "%s float dinput", name);
    gc_compare_f32(what, fd, din, total);
    free(fi); free(fr); free(fo); free(fd); free(q.in); free(q.out); free(q.r); free(ref); free(din);
}

int main(void) {
    gc_seed(33);
    test_mul("mul gate", 2, 5, 12);
    test_mul("mul gate 1x1", 3, 4, 1);
    test_mul("mul elementwise", 2, 4 * 6, 1);      /* [4,2,3] x [4,2,3] as 24 channels at hw 1 */
    test_mul("mul gate threaded", 4, 16, 400);    /* past the OpenMP threshold */
    test_perm("channel_shuffle g2", 0, 2, 8, 6, 2, 0, 0);
    test_perm("channel_shuffle g3", 0, 2, 12, 5, 3, 0, 0);
    test_perm("channel_shuffle g=c", 0, 1, 6, 4, 6, 0, 0);
    test_perm("channel_slice first half", 1, 2, 8, 6, 0, 0, 4);
    test_perm("channel_slice second half", 1, 2, 8, 6, 0, 4, 4);
    test_perm("channel_slice middle", 1, 3, 7, 5, 0, 2, 3);
    return test_finish("test_grad_channel");
}
