/* The token ops: attention (multi-head self-attention, blocked on the CPU) against a direct
 * reference that holds the whole softmax matrix (torch's nn.MultiheadAttention written out),
 * with one block of tokens and with several, a partial one among them; its input, weight and
 * bias gradients against central differences in double; the float build against the double
 * build; the learned tensor's forward and gradient; space_to_depth against torchvision's
 * PatchMerging order and its gradient. */
#include <math.h>
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* ---------- attention ---------- */
typedef struct { double *x, *w, *b, *out, *saved, *r; int n, c, t, heads; } attn_ctx;

static double attn_loss(void *p) {
    attn_ctx *a = p;
    attention_forward_f64(a->out, a->saved, a->x, a->w, a->b, a->n, a->c, a->t, a->heads);
    return gc_dot(a->out, a->r, (long)a->n * a->c * a->t);
}

/* out[i, :, r] = W_o concat_h(softmax(Q_h K_h^T / sqrt(dh)) V_h)[r] + b_o, x as [N, C, T]. */
static void attn_reference(double *out, const double *x, const double *w, const double *b, int n, int c, int t,
                           int heads) {
    int dh = c / heads;
    double *qkv = gc_alloc((long)t * 3 * c), *o = gc_alloc((long)t * c), *p = gc_alloc(t);
    for (int i = 0; i < n; i++) {
        for (int r = 0; r < t; r++)
            for (int j = 0; j < 3 * c; j++) {
                double s = b[j];
                for (int d = 0; d < c; d++) s += x[((long)i * c + d) * t + r] * w[(long)j * c + d];
                qkv[(long)r * 3 * c + j] = s;
            }
        for (int h = 0; h < heads; h++)
            for (int r = 0; r < t; r++) {
                double mx = -INFINITY, sum = 0;
                for (int k = 0; k < t; k++) {
                    double s = 0;
                    for (int d = 0; d < dh; d++) s += qkv[(long)r * 3 * c + h * dh + d] * qkv[(long)k * 3 * c + c + h * dh + d];
                    p[k] = s / sqrt((double)dh);
                    mx = fmax(mx, p[k]);
                }
                for (int k = 0; k < t; k++) sum += p[k] = exp(p[k] - mx);
                for (int d = 0; d < dh; d++) {
                    double s = 0;
                    for (int k = 0; k < t; k++) s += p[k] / sum * qkv[(long)k * 3 * c + 2 * c + h * dh + d];
                    o[(long)r * c + h * dh + d] = s;
                }
            }
        for (int ch = 0; ch < c; ch++)
            for (int r = 0; r < t; r++) {
                double s = b[3 * c + ch];
                for (int j = 0; j < c; j++) s += w[3L * c * c + (long)ch * c + j] * o[(long)r * c + j];
                out[((long)i * c + ch) * t + r] = s;
            }
    }
    free(qkv); free(o); free(p);
}

static void test_attention(const char *name, int n, int c, int t, int heads) {
    long nx = (long)n * c * t, nw = 4L * c * c, nb = 4L * c, ns = attention_saved_elems(n, c, t, heads);
    attn_ctx a = { gc_rand(nx, -1, 1), gc_rand(nw, -0.5, 0.5), gc_rand(nb, -0.2, 0.2), gc_alloc(nx), gc_alloc(ns),
                   gc_rand(nx, -1, 1), n, c, t, heads };
    char what[96];
    attn_loss(&a);
    double *ref = gc_alloc(nx);
    attn_reference(ref, a.x, a.w, a.b, n, c, t, heads);
    snprintf(what, sizeof what, "%s forward vs whole-matrix reference", name);
    gc_compare(what, a.out, ref, nx, 1e-12);
    long nk = attention_work_elems(n, c, t);
    double *dx = gc_alloc(nx), *dw = gc_alloc(nw), *db = gc_alloc(nb), *work = gc_alloc(nk);
    attention_backward_f64(dx, dw, db, a.r, a.x, a.w, a.saved, work, n, c, t, heads);
    snprintf(what, sizeof what, "%s dx", name);
    gc_check(what, a.x, nx, dx, attn_loss, &a);
    snprintf(what, sizeof what, "%s dweight", name);
    gc_check(what, a.w, nw, dw, attn_loss, &a);
    snprintf(what, sizeof what, "%s dbias", name);
    gc_check(what, a.b, nb, db, attn_loss, &a);
    /* dx NULL: the parameter gradients alone, the same */
    double *dw2 = gc_alloc(nw), *db2 = gc_alloc(nb);
    attn_loss(&a);
    attention_backward_f64(NULL, dw2, db2, a.r, a.x, a.w, a.saved, work, n, c, t, heads);
    snprintf(what, sizeof what, "%s dweight without dx", name);
    gc_compare(what, dw2, dw, nw, 0);

    float *fx = gc_to_f32(a.x, nx), *fw = gc_to_f32(a.w, nw), *fb = gc_to_f32(a.b, nb), *fr = gc_to_f32(a.r, nx);
    float *fo = malloc(sizeof(float) * nx), *fs = malloc(sizeof(float) * ns), *fdx = malloc(sizeof(float) * nx);
    float *fdw = malloc(sizeof(float) * nw), *fdb = malloc(sizeof(float) * nb), *fk = malloc(sizeof(float) * nk);
    attention_forward(fo, fs, fx, fw, fb, n, c, t, heads);
    attention_backward(fdx, fdw, fdb, fr, fx, fw, fs, fk, n, c, t, heads);
    snprintf(what, sizeof what, "%s float forward", name);
    gc_compare_f32(what, fo, ref, nx);
    snprintf(what, sizeof what, "%s float dx", name);
    gc_compare_f32(what, fdx, dx, nx);
    snprintf(what, sizeof what, "%s float dweight", name);
    gc_compare_f32(what, fdw, dw, nw);
    snprintf(what, sizeof what, "%s float dbias", name);
    gc_compare_f32(what, fdb, db, nb);
    free(fx); free(fw); free(fb); free(fr); free(fo); free(fs); free(fdx); free(fdw); free(fdb); free(fk);
    free(a.x); free(a.w); free(a.b); free(a.out); free(a.saved); free(a.r); free(ref); free(dx); free(dw); free(db);
    free(dw2); free(db2); free(work);
}

/* ---------- learned ---------- */
typedef struct { double *w, *out, *r; int n; long count; } learned_ctx;

static double learned_loss(void *p) {
    learned_ctx *l = p;
    learned_forward_f64(l->out, l->w, l->n, l->count);
    return gc_dot(l->out, l->r, l->n * l->count);
}

static void test_learned(int n, long count) {
    learned_ctx l = { gc_rand(count, -1, 1), gc_alloc(n * count), gc_rand(n * count, -1, 1), n, count };
    learned_loss(&l);
    double *ref = gc_alloc(n * count), *dw = gc_alloc(count);
    for (long k = 0; k < n * count; k++) ref[k] = l.w[k % count];
    gc_compare("learned forward: every image the tensor", l.out, ref, n * count, 0);
    learned_backward_f64(dw, l.r, n, count);
    gc_check("learned dweight", l.w, count, dw, learned_loss, &l);
    free(l.w); free(l.out); free(l.r); free(ref); free(dw);
}

/* ---------- space_to_depth ---------- */
typedef struct { double *in, *out, *r; int n, c, h, w, b; } s2d_ctx;

static double s2d_loss(void *p) {
    s2d_ctx *q = p;
    space_to_depth_forward_f64(q->out, q->in, q->n, q->c, q->h, q->w, q->b);
    return gc_dot(q->out, q->r, (long)q->n * q->c * q->h * q->w);
}

/* torchvision's PatchMerging (block 2): cat(x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2],
 * x[1::2, 1::2]) along channels; a larger block continues the pattern, rows fastest. */
static void test_space_to_depth(int n, int c, int h, int w, int b) {
    long total = (long)n * c * h * w;
    s2d_ctx q = { gc_rand(total, -1, 1), gc_alloc(total), gc_rand(total, -1, 1), n, c, h, w, b };
    s2d_loss(&q);
    double *ref = gc_alloc(total), *din = gc_alloc(total);
    int oh = h / b, ow = w / b;
    static const int torch_order[4][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 } };   /* (dh, dw) of x0..x3 */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < b * b; k++)
            for (int ch = 0; ch < c; ch++)
                for (int y = 0; y < oh; y++)
                    for (int x = 0; x < ow; x++) {
                        int dh = b == 2 ? torch_order[k][0] : k % b, dw = b == 2 ? torch_order[k][1] : k / b;
                        ref[(((long)i * b * b * c + (long)k * c + ch) * oh + y) * ow + x] =
                            q.in[(((long)i * c + ch) * h + b * y + dh) * w + b * x + dw];
                    }
    char what[96];
    snprintf(what, sizeof what, "space_to_depth b%d forward vs PatchMerging", b);
    gc_compare(what, q.out, ref, total, 0);
    space_to_depth_backward_f64(din, q.r, n, c, h, w, b);
    snprintf(what, sizeof what, "space_to_depth b%d dinput", b);
    gc_check(what, q.in, total, din, s2d_loss, &q);
    free(q.in); free(q.out); free(q.r); free(ref); free(din);
}

/* ---------- window_attention (Swin) ---------- */
typedef struct { double *x, *w, *b, *out, *saved, *r; int n, c, h, wd, heads, win, shift; } win_ctx;

static double win_loss(void *p) {
    win_ctx *a = p;
    window_attention_forward_f64(a->out, a->saved, a->x, a->w, a->b, a->n, a->c, a->h, a->wd, a->heads, a->win, a->shift);
    return gc_dot(a->out, a->r, (long)a->n * a->c * a->h * a->wd);
}

/* torchvision's shifted_window_attention written out on one image at a time: roll the map by
 * -shift, partition into windows, q/sqrt(dh) k^T + the table's bias (+ -100 between regions
 * labelled by the slices (0, -window), (-window, -shift), (-shift, None) of the rolled map),
 * softmax, times v, proj, and roll back. */
static void win_reference(double *out, const double *x, const double *w, const double *b, int n, int c, int h,
                          int wd, int heads, int win, int shift) {
    int dh = c / heads, nt = win * win, side = 2 * win - 1;
    long t = (long)h * wd;
    const double *wo = w + 3L * c * c, *table = w + 4L * c * c;
    double *qkv = gc_alloc(t * 3 * c), *o = gc_alloc(t * c), *p = gc_alloc(nt);
    for (int i = 0; i < n; i++) {
        for (long pos = 0; pos < t; pos++)
            for (int j = 0; j < 3 * c; j++) {
                double v = b[j];
                for (int d = 0; d < c; d++) v += w[(long)j * c + d] * x[((long)i * c + d) * t + pos];
                qkv[pos * 3 * c + j] = v;
            }
        for (int wy = 0; wy < h / win; wy++)
            for (int wx = 0; wx < wd / win; wx++)
                for (int hh = 0; hh < heads; hh++)
                    for (int a = 0; a < nt; a++) {
                        int ya = wy * win + a / win, xa = wx * win + a % win;   /* in the rolled map */
                        long pa = (long)((ya + shift) % h) * wd + (xa + shift) % wd;
                        int la = 3 * (ya < h - win ? 0 : ya < h - shift ? 1 : 2) + (xa < wd - win ? 0 : xa < wd - shift ? 1 : 2);
                        double mx = -INFINITY, sum = 0;
                        for (int bb = 0; bb < nt; bb++) {
                            int yb = wy * win + bb / win, xb = wx * win + bb % win;
                            long pb = (long)((yb + shift) % h) * wd + (xb + shift) % wd;
                            int lb = 3 * (yb < h - win ? 0 : yb < h - shift ? 1 : 2) + (xb < wd - win ? 0 : xb < wd - shift ? 1 : 2);
                            double sc = 0;
                            for (int e = 0; e < dh; e++) sc += qkv[pa * 3 * c + hh * dh + e] / sqrt((double)dh) * qkv[pb * 3 * c + c + hh * dh + e];
                            int rel = (a / win - bb / win + win - 1) * side + (a % win - bb % win + win - 1);
                            sc += table[rel * heads + hh] + (shift && la != lb ? -100.0 : 0.0);
                            p[bb] = sc;
                            mx = fmax(mx, sc);
                        }
                        for (int bb = 0; bb < nt; bb++) sum += p[bb] = exp(p[bb] - mx);
                        for (int e = 0; e < dh; e++) {
                            double v = 0;
                            for (int bb = 0; bb < nt; bb++) {
                                int yb = wy * win + bb / win, xb = wx * win + bb % win;
                                long pb = (long)((yb + shift) % h) * wd + (xb + shift) % wd;
                                v += p[bb] / sum * qkv[pb * 3 * c + 2 * c + hh * dh + e];
                            }
                            o[pa * c + hh * dh + e] = v;
                        }
                    }
        for (int ch = 0; ch < c; ch++)
            for (long pos = 0; pos < t; pos++) {
                double v = b[3 * c + ch];
                for (int j = 0; j < c; j++) v += wo[(long)ch * c + j] * o[pos * c + j];
                out[((long)i * c + ch) * t + pos] = v;
            }
    }
    free(qkv); free(o); free(p);
}

static void test_window_attention(const char *name, int n, int c, int h, int wd, int heads, int win, int shift) {
    long nx = (long)n * c * h * wd, entries = (long)(2 * win - 1) * (2 * win - 1) * heads, nw = 4L * c * c + entries;
    long nb = 4L * c, ns = attention_saved_elems(n, c, h * wd, heads), nk = window_attention_work_elems(n, c, h, wd, heads, win);
    win_ctx a = { gc_rand(nx, -1, 1), gc_rand(nw, -0.5, 0.5), gc_rand(nb, -0.2, 0.2), gc_alloc(nx), gc_alloc(ns),
                  gc_rand(nx, -1, 1), n, c, h, wd, heads, win, shift };
    char what[96];
    win_loss(&a);
    double *ref = gc_alloc(nx);
    win_reference(ref, a.x, a.w, a.b, n, c, h, wd, heads, win, shift);
    snprintf(what, sizeof what, "%s forward vs torchvision's algorithm", name);
    gc_compare(what, a.out, ref, nx, 1e-12);
    double *dx = gc_alloc(nx), *dw = gc_alloc(nw), *db = gc_alloc(nb), *work = gc_alloc(nk);
    window_attention_backward_f64(dx, dw, db, a.r, a.x, a.w, a.saved, work, n, c, h, wd, heads, win, shift);
    snprintf(what, sizeof what, "%s dx", name);
    gc_check(what, a.x, nx, dx, win_loss, &a);
    snprintf(what, sizeof what, "%s dweight (bias table included)", name);
    gc_check(what, a.w, nw, dw, win_loss, &a);
    snprintf(what, sizeof what, "%s dbias table alone", name);
    gc_check(what, a.w + 4L * c * c, entries, dw + 4L * c * c, win_loss, &a);
    snprintf(what, sizeof what, "%s dbias", name);
    gc_check(what, a.b, nb, db, win_loss, &a);
    free(a.x); free(a.w); free(a.b); free(a.out); free(a.saved); free(a.r); free(ref); free(dx); free(dw); free(db);
    free(work);
}

int main(void) {
    gc_seed(16);
    test_attention("attention one block", 2, 8, 5, 2);
    test_attention("attention blocks", 1, 8, RT_ATTN_BLOCK + 7, 2);   /* two query and key blocks, the second partial */
    test_attention("attention one head", 1, 6, RT_ATTN_BLOCK + 1, 1);
    test_learned(3, 40);
    test_space_to_depth(2, 3, 4, 6, 2);
    test_space_to_depth(1, 2, 6, 3, 3);
    test_window_attention("window attention", 2, 4, 6, 6, 2, 3, 0);
    test_window_attention("shifted window attention", 1, 4, 6, 9, 2, 3, 1);
    return test_finish("test_grad_token");
}
