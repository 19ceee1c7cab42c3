/* Strided convolutions as GEMMs on the input's polyphase planes, with no im2col.
 *
 * With stride s, the input row s*oy - ph + ki*dh read for output row oy lies in phase plane
 * p = (ki*dh - ph) mod s (the input rows p, p+s, p+2s, ...), at that plane's row oy + q with
 * q = floor((ki*dh - ph) / s); columns likewise. So after one pass that splits each channel
 * of an image into its phase planes, zero-padded around, kernel tap (ki, kj) reads a
 * stride-1 shift of one plane; and if the output rows are given the padded planes' row
 * width rw (ow plus the spread of the column shifts), that shift is a plain matrix: C rows
 * (one per channel, a plane apart) of oh*rw consecutive values. The convolution is then one
 * GEMM per tap, W_tap (oc x c) . shift_tap (c x oh*rw), summed, with no im2col copy at all
 * (the generic im2col gathers every value with a stride: measured, a quarter of a 3x3/2
 * conv's time and col2im another 6%); the input gradient is the transposed GEMMs added into
 * shifted planes, and the weight gradient dY . shift_tap^T per tap. The rw - ow "junk"
 * columns of each output row (1 in 15 on the ResNet example's 3x3/2 at 14x14 output)
 * cost GEMM work and are dropped from the output; backward zeroes them in its copy of dout,
 * so that they add exact zeros to the weight gradient and to the input gradient's planes.
 *
 * Images go to OpenMP threads as in conv2d.c: each thread has its own workspace slice and
 * single-threaded GEMMs, and sums its own weight gradient; those are added in thread order,
 * so results do not depend on timing. */
#include <omp.h>
#include <string.h>
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"
#include "conv2d_bias_grad.h"
#include "conv2d_strided.h"

enum { MAX_TAPS = 64 };   /* kernel extent and stride along an axis: conv2d_strided_fits */

/* Where kernel tap k of one axis reads: phase plane `rank` (among the phases used), shifted
 * by `q` rows (or columns). */
typedef struct { int rank, q; } tap;

/* One axis: the taps, which phases they use, and the padded planes' extent along it. */
typedef struct {
    tap taps[MAX_TAPS];
    int phase_of_rank[MAX_TAPS], rank_of_phase[MAX_TAPS];   /* -1: phase unused */
    int used;              /* phases used */
    int qmin, qmax;        /* shifts of the first and last tap */
} axis_taps;

static int floor_div(int a, int b) { return a / b - (a % b != 0 && a < 0); }

static void axis_of(axis_taps *a, int k, int stride, int pad, int dil) {
    for (int p = 0; p < stride; p++) a->rank_of_phase[p] = -1;
    for (int t = 0; t < k; t++) {
        int r = t * dil - pad, q = floor_div(r, stride);
        a->taps[t].q = q;
        a->rank_of_phase[r - q * stride] = 0;   /* marked used; ranked below */
    }
    a->used = 0;
    for (int p = 0; p < stride; p++) {
        if (a->rank_of_phase[p] < 0) continue;
        a->phase_of_rank[a->used] = p;
        a->rank_of_phase[p] = a->used++;
    }
    for (int t = 0; t < k; t++) {
        int r = t * dil - pad;
        a->taps[t].rank = a->rank_of_phase[r - a->taps[t].q * stride];
    }
    a->qmin = a->taps[0].q;
    a->qmax = a->taps[k - 1].q;
}

typedef struct {
    axis_taps y, x;
    int rows, rw;          /* a padded phase plane: rows (the last a spare zero row) x rw */
    long plane;            /* rows * rw */
    long cols;             /* columns of the GEMMs (one image's output, junk included): oh * rw */
    int taps;              /* kh * kw */
    int threads;
} strided_geom;

static long round16(long n) { return (n + 15) / 16 * 16; }

static strided_geom geom_of(const rt_conv_shape *s) {
    strided_geom g;
    axis_of(&g.y, s->kh, s->sh, s->ph, s->dh);
    axis_of(&g.x, s->kw, s->sw, s->pw, s->dw);
    g.rows = s->oh + g.y.qmax - g.y.qmin + 1;
    g.rw = s->ow + g.x.qmax - g.x.qmin;
    g.plane = (long)g.rows * g.rw;
    g.cols = (long)s->oh * g.rw;
    g.taps = s->kh * s->kw;
    int t = omp_get_max_threads();   /* the forward's images over threads, GEMMs whole */
    g.threads = s->n >= t ? t : s->n > 0 ? s->n : 1;
    return g;
}

/* No junk columns: the GEMMs' output is laid out as the output itself. */
static int junk_free(const strided_geom *g, const rt_conv_shape *s) { return g->rw == s->ow; }

/* The workspace: the weights tap by tap, W_tap[oc][ci] (shared); then per thread the phase
 * planes of one image (or their gradient), the padded output (forward) or padded, masked
 * dout (backward), and partial weight (tap by tap) and bias gradients. */
typedef struct { real_t *planes, *ypad, *dw, *db; } strided_slice;

static long wtaps_elems(const strided_geom *g, const rt_conv_shape *s) {
    return round16((long)g->taps * s->oc * s->c);
}
static long planes_elems(const strided_geom *g, const rt_conv_shape *s) {
    return round16((long)g->y.used * g->x.used * s->c * g->plane);
}
static long ypad_elems(const strided_geom *g, const rt_conv_shape *s) {
    return round16((long)s->oc * g->cols);
}
static long slice_elems(const strided_geom *g, const rt_conv_shape *s) {
    return planes_elems(g, s) + ypad_elems(g, s) + wtaps_elems(g, s) + round16(s->oc);
}
static long dw_at(const strided_geom *g, const rt_conv_shape *s) {   /* within a slice */
    return planes_elems(g, s) + ypad_elems(g, s);
}
static strided_slice slice_of(real_t *work, int t, const strided_geom *g, const rt_conv_shape *s) {
    real_t *base = work + wtaps_elems(g, s) + (long)t * slice_elems(g, s);
    strided_slice sl;
    sl.planes = base;
    sl.ypad = base + planes_elems(g, s);
    sl.dw = base + dw_at(g, s);
    sl.db = sl.dw + wtaps_elems(g, s);
    return sl;
}

long RT_FN(conv2d_strided_workspace_elems)(const rt_conv_shape *s) {
    strided_geom g = geom_of(s);
    return wtaps_elems(&g, s) + (long)rt_slot_slices() * slice_elems(&g, s);
}

/* W (oc, c, kh, kw) tap by tap: wt[tap][oc][ci]. */
static const real_t *weight_taps(real_t *wt, const real_t *w, const strided_geom *g,
                                 const rt_conv_shape *s) {
    long per_tap = (long)s->oc * s->c;
    for (long i = 0; i < per_tap; i++)
        for (int t = 0; t < g->taps; t++) wt[t * per_tap + i] = w[i * g->taps + t];
    return wt;
}

/* First and last+1 padded column of phase px that hold input columns (the rest are zero). */
static void data_cols(const strided_geom *g, const rt_conv_shape *s, int px, int *lo, int *hi) {
    int in_phase = px < s->w ? (s->w - px + s->sw - 1) / s->sw : 0;   /* columns px, px+sw, ... */
    int a = -g->x.qmin, b = in_phase - g->x.qmin;
    *lo = a < 0 ? 0 : a > g->rw ? g->rw : a;
    *hi = b > g->rw ? g->rw : b < *lo ? *lo : b;
}

/* Where channel ci's plane of row phase rank ry and column phase rank rx starts. */
static long plane_index(int ry, int rx, int ci, const strided_geom *g, const rt_conv_shape *s) {
    return (((long)ry * g->x.used + rx) * s->c + ci) * g->plane;
}

/* Padded rows [*lo, *hi) of row phase p's planes that hold input rows (the rest are zero). */
static void data_rows(const strided_geom *g, const rt_conv_shape *s, int p, int *lo, int *hi) {
    int in_phase = p < s->h ? (s->h - p + s->sh - 1) / s->sh : 0;   /* rows p, p+sh, ... */
    int a = -g->y.qmin, b = in_phase - g->y.qmin;
    *lo = a < 0 ? 0 : a > g->rows - 1 ? g->rows - 1 : a;
    *hi = b > g->rows - 1 ? g->rows - 1 : b < *lo ? *lo : b;
}

/* Input columns j*step of a row, and for stride 2 both phases at once (GCC vectorizes this
 * one with two-vector shuffles; the gather loop alone ran at a value per cycle or so). */
static void gather_cols(real_t *dst, const real_t *src, int n, int step) {
    for (int j = 0; j < n; j++) dst[j] = src[(long)j * step];
}
static void split_pairs(real_t *even, real_t *odd, const real_t *src, int n) {
    for (int j = 0; j < n; j++) {
        even[j] = src[2 * j];
        odd[j] = src[2 * j + 1];
    }
}

/* Zero the rows of one plane outside [rlo, rhi) and the columns outside phase px's data. */
static void zero_margins(real_t *plane, int rlo, int rhi, int px, const strided_geom *g,
                         const rt_conv_shape *s) {
    int lo, hi;
    data_cols(g, s, px, &lo, &hi);
    memset(plane, 0, sizeof(real_t) * rlo * g->rw);
    memset(plane + (long)rhi * g->rw, 0, sizeof(real_t) * (g->rows - rhi) * g->rw);
    if (lo == 0 && hi == g->rw) return;
    for (int R = rlo; R < rhi; R++) {
        real_t *row = plane + (long)R * g->rw;
        for (int C = 0; C < lo; C++) row[C] = 0;
        for (int C = hi; C < g->rw; C++) row[C] = 0;
    }
}

/* Split one image (c,h,w) into its used phase planes, zero-padded. */
static void split_phases(real_t *planes, const real_t *x, const strided_geom *g,
                         const rt_conv_shape *s) {
    int both = s->sw == 2 && g->x.used == 2, lo0, hi0, lo1 = 0, hi1 = 0;
    data_cols(g, s, g->x.phase_of_rank[0], &lo0, &hi0);
    if (both) data_cols(g, s, 1, &lo1, &hi1);
    for (int ry = 0; ry < g->y.used; ry++) {
        int p = g->y.phase_of_rank[ry], rlo, rhi;
        data_rows(g, s, p, &rlo, &rhi);
        for (int ci = 0; ci < s->c; ci++) {
            for (int rx = 0; rx < g->x.used; rx++)   /* zero what no input value lands on */
                zero_margins(planes + plane_index(ry, rx, ci, g, s), rlo, rhi,
                             g->x.phase_of_rank[rx], g, s);
            for (int R = rlo; R < rhi; R++) {
                long iy = (long)(R + g->y.qmin) * s->sh + p;
                const real_t *src = x + ((long)ci * s->h + iy) * s->w;
                long at = (long)R * g->rw;   /* column C of the row is input (C+qmin)*sw+px */
                if (both) {   /* the two phases' shared columns, then the even one's last */
                    real_t *even = planes + plane_index(ry, 0, ci, g, s) + at;
                    real_t *odd = planes + plane_index(ry, 1, ci, g, s) + at;
                    int n = hi1 - lo0, ix = 2 * (lo0 + g->x.qmin);
                    split_pairs(even + lo0, odd + lo0, src + ix, n);
                    if (hi0 > hi1) even[hi1] = src[ix + 2 * n];
                    continue;
                }
                for (int rx = 0; rx < g->x.used; rx++) {
                    int px = g->x.phase_of_rank[rx], lo, hi;
                    data_cols(g, s, px, &lo, &hi);
                    gather_cols(planes + plane_index(ry, rx, ci, g, s) + at + lo,
                                src + (long)(lo + g->x.qmin) * s->sw + px, hi - lo, s->sw);
                }
            }
        }
    }
}

/* Where tap (ki, kj) reads channel 0 in the planes: its GEMM operand is c rows of cols
 * values from there, a plane apart. */
static long tap_offset(int ki, int kj, const strided_geom *g, const rt_conv_shape *s) {
    const tap *ty = &g->y.taps[ki], *tx = &g->x.taps[kj];
    return plane_index(ty->rank, tx->rank, 0, g, s) + (long)(ty->q - g->y.qmin) * g->rw +
           (tx->q - g->x.qmin);
}

static void add_pairs(real_t *dst, const real_t *even, const real_t *odd, int n) {
    for (int j = 0; j < n; j++) {
        dst[2 * j] += even[j];
        dst[2 * j + 1] += odd[j];
    }
}

/* Adjoint of split_phases: din (c,h,w) gets (or, with din_add, adds) the planes' values;
 * input values no tap reads get zero. */
static void merge_phases(real_t *dx, const real_t *planes, const strided_geom *g,
                         const rt_conv_shape *s) {
    int both = s->sw == 2 && g->x.used == 2, lo0, hi0, lo1, hi1;
    data_cols(g, s, g->x.phase_of_rank[0], &lo0, &hi0);
    if (both) data_cols(g, s, 1, &lo1, &hi1);
    for (int ci = 0; ci < s->c; ci++)
        for (int iy = 0; iy < s->h; iy++) {
            real_t *row = dx + ((long)ci * s->h + iy) * s->w;
            if (!s->din_add) memset(row, 0, sizeof(real_t) * s->w);
            int p = iy % s->sh, ry = g->y.rank_of_phase[p], R = iy / s->sh - g->y.qmin, rlo, rhi;
            if (ry < 0) continue;
            data_rows(g, s, p, &rlo, &rhi);
            if (R < rlo || R >= rhi) continue;
            long at = (long)R * g->rw;
            if (both) {
                const real_t *even = planes + plane_index(ry, 0, ci, g, s) + at;
                const real_t *odd = planes + plane_index(ry, 1, ci, g, s) + at;
                int n = hi1 - lo0, ix = 2 * (lo0 + g->x.qmin);
                add_pairs(row + ix, even + lo0, odd + lo0, n);
                if (hi0 > hi1) row[ix + 2 * n] += even[hi1];
                continue;
            }
            for (int rx = 0; rx < g->x.used; rx++) {
                int px = g->x.phase_of_rank[rx], lo, hi;
                data_cols(g, s, px, &lo, &hi);
                const real_t *src = planes + plane_index(ry, rx, ci, g, s) + at;
                long ix = (long)(lo + g->x.qmin) * s->sw + px;
                for (int C = lo; C < hi; C++, ix += s->sw) row[ix] += src[C];
            }
        }
}

void RT_FN(conv2d_strided_forward)(real_t *out, const real_t *in, const real_t *weight,
                                   const real_t *bias, real_t *work, const rt_conv_shape *s) {
    strided_geom g = geom_of(s);
    long in_img = (long)s->c * s->h * s->w, ohw = (long)s->oh * s->ow;
    const real_t *wt = weight_taps(work, weight, &g, s);
    int direct = junk_free(&g, s), c = s->c, oc_n = s->oc, cols = (int)g.cols, ld = (int)g.plane;
    #pragma omp parallel for schedule(static) num_threads(g.threads)
    for (int b = 0; b < s->n; b++) {
        strided_slice sl = slice_of(work, omp_get_thread_num(), &g, s);
        real_t *ob = out + (long)b * oc_n * ohw, *y = direct ? ob : sl.ypad;
        split_phases(sl.planes, in + b * in_img, &g, s);
        for (int ki = 0, t = 0; ki < s->kh; ki++)
            for (int kj = 0; kj < s->kw; kj++, t++)   /* y (+)= W_tap . shift_tap */
                RT_FN(rt_gemm)(0, 0, oc_n, cols, c, 1, wt + (long)t * oc_n * c, c,
                               sl.planes + tap_offset(ki, kj, &g, s), ld, t ? 1 : 0, y, cols);
        if (direct && !bias && s->act != RT_ACT_RELU) continue;
        for (int oc = 0; oc < oc_n; oc++) {   /* drop the junk columns; bias and ReLU */
            real_t add = bias ? bias[oc] : 0, *o = ob + oc * ohw;
            const real_t *yo = y + (long)oc * cols;
            for (int oy = 0; oy < s->oh; oy++, o += s->ow, yo += g.rw)
                for (int ox = 0; ox < s->ow; ox++) {
                    real_t v = yo[ox] + add;
                    o[ox] = s->act == RT_ACT_RELU && !(v > 0) ? 0 : v;
                }
        }
    }
}

/* One image's dout in the padded layout, masked by a fused ReLU, with zero junk columns
 * (dout itself where that changes nothing); with a ReLU and db, the masked sums go to db. */
static const real_t *pad_dout(real_t *ypad, real_t *db, const real_t *dy, const real_t *y,
                              const strided_geom *g, const rt_conv_shape *s) {
    long ohw = (long)s->oh * s->ow;
    if (!y && junk_free(g, s)) return dy;
    for (int oc = 0; oc < s->oc; oc++, dy += ohw) {
        if (y && db) db[oc] += masked_plane_sum(dy, y, ohw);
        real_t *row = ypad + oc * g->cols;
        const real_t *d = dy;
        for (int oy = 0; oy < s->oh; oy++, row += g->rw, d += s->ow) {
            if (y) {
                for (int ox = 0; ox < s->ow; ox++) row[ox] = y[ox] > 0 ? d[ox] : 0;
                y += s->ow;
            } else {
                memcpy(row, d, sizeof(real_t) * s->ow);
            }
            for (int ox = s->ow; ox < g->rw; ox++) row[ox] = 0;
        }
    }
    return ypad;
}

int RT_FN(conv2d_strided_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                   const real_t *dout, const real_t *act_out, const real_t *in,
                                   const real_t *weight, real_t *work, const rt_conv_shape *s,
                                   int timing, double *data_s) {
    strided_geom g = geom_of(s);
    long in_img = (long)s->c * s->h * s->w, ohw = (long)s->oh * s->ow;
    long per_tap = (long)s->oc * s->c, wn = per_tap * g.taps, per_slot = slice_elems(&g, s);
    int slots = rt_slots();   /* partial sums per reduction slot, in slot order (rt_slots.h) */
    int act = s->act != RT_ACT_NONE, c = s->c, oc_n = s->oc, cols = (int)g.cols;
    int ld = (int)g.plane;
    if (dbias && !act) {
        #pragma omp parallel for schedule(static)
        for (int oc = 0; oc < oc_n; oc++) {
            real_t acc = 0;   /* one thread per channel: the sum order is fixed */
            for (int b = 0; b < s->n; b++)
                acc += masked_plane_sum(dout + ((long)b * oc_n + oc) * ohw, NULL, ohw);
            dbias[oc] = acc;
        }
    }
    const real_t *wt = din ? weight_taps(work, weight, &g, s) : NULL;
    #pragma omp parallel num_threads(rt_slot_threads())
    {
        #pragma omp for schedule(static)
        for (int k = 0; k < slots; k++) {
            strided_slice sl = slice_of(work, k, &g, s);
            memset(sl.dw, 0, sizeof(real_t) * wn);
            memset(sl.db, 0, sizeof(real_t) * oc_n);
            for (int b = rt_slot_begin(s->n, k, slots); b < rt_slot_begin(s->n, k + 1, slots); b++) {
                long at = (long)b * oc_n * ohw;
                const real_t *dy = pad_dout(sl.ypad, act && dbias ? sl.db : NULL, dout + at,
                                            act ? act_out + at : NULL, &g, s);
                split_phases(sl.planes, in + b * in_img, &g, s);
                for (int ki = 0, t = 0; ki < s->kh; ki++)
                    for (int kj = 0; kj < s->kw; kj++, t++)   /* dW_tap += dY . shift_tap^T */
                        RT_FN(rt_gemm)(0, 1, oc_n, c, cols, 1, dy, cols,
                                       sl.planes + tap_offset(ki, kj, &g, s), ld, 1,
                                       sl.dw + t * per_tap, c);
                if (!din) continue;
                double t0 = timing ? omp_get_wtime() : 0;
                /* the planes again, now for the input's gradient: shift_tap += W_tap^T . dY */
                memset(sl.planes, 0, sizeof(real_t) * planes_elems(&g, s));
                for (int ki = 0, t = 0; ki < s->kh; ki++)
                    for (int kj = 0; kj < s->kw; kj++, t++)
                        RT_FN(rt_gemm)(1, 0, c, cols, oc_n, 1, wt + t * per_tap, c, dy, cols, 1,
                                       sl.planes + tap_offset(ki, kj, &g, s), ld);
                merge_phases(din + b * in_img, sl.planes, &g, s);
                if (timing) {
                    double spent = omp_get_wtime() - t0;
                    #pragma omp atomic
                    *data_s += spent;
                }
            }
            }
        /* implicit barrier: every partial is complete before the sums below */
        long at = wtaps_elems(&g, s) + dw_at(&g, s);
        #pragma omp for schedule(static)
        for (long i = 0; i < per_tap; i++)   /* tap by tap back to (oc, c, kh, kw) */
            for (int t = 0; t < g.taps; t++) {
                real_t acc = 0;
                for (int u = 0; u < slots; u++)
                    acc += work[at + u * per_slot + t * per_tap + i];
                dweight[i * g.taps + t] = acc;
            }
        if (act && dbias) {
            long db_at = at + wtaps_elems(&g, s);
            #pragma omp for schedule(static)
            for (int oc = 0; oc < oc_n; oc++) {
                real_t acc = 0;
                for (int u = 0; u < slots; u++) acc += work[db_at + u * per_slot + oc];
                dbias[oc] = acc;
            }
        }
    }
    return rt_slot_threads();
}
