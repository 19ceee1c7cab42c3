/* Swin's shifted-window attention (torchvision's shifted_window_attention, no padding, no
 * dropout) over x [N, C, H, W] channel-major: the map cyclically shifted by -shift, cut into
 * window x window windows whose N = window^2 positions attend to each other, with a learned
 * relative-position bias per head and, when shifted, -100 between positions of different
 * regions of the rolled map; the result rolled back. Parameters: w holds qkv.weight [3C, C],
 * proj.weight [C, C] and relative_position_bias_table [(2 window - 1)^2, heads]; b holds
 * qkv.bias [3C] and proj.bias [C]. A window's N x N weights are small and held whole; saved and
 * work as attention.c's with T = H*W, work also [N, windows, heads, N, N] of score gradients,
 * from which the bias table's gradient is summed head by head in a fixed order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"

typedef struct { int c, h, w, heads, win, shift, dh, n_tok, nwx, nwin; } geom;

static geom geom_of(int c, int h, int w, int heads, int win, int shift) {
    return (geom){ c, h, w, heads, win, shift, c / heads, win * win, w / win, (h / win) * (w / win) };
}

/* The original position of token i of window k, and its region of the rolled map (for the mask). */
static void token_at(const geom *g, int k, int i, long *pos, int *region) {
    int ys = (k / g->nwx) * g->win + i / g->win, xs = (k % g->nwx) * g->win + i % g->win;
    *pos = (long)((ys + g->shift) % g->h) * g->w + (xs + g->shift) % g->w;
    int ry = ys < g->h - g->win ? 0 : ys < g->h - g->shift ? 1 : 2;
    int rx = xs < g->w - g->win ? 0 : xs < g->w - g->shift ? 1 : 2;
    *region = 3 * ry + rx;
}

/* relative_position_index of tokens i, j (torchvision's). */
static int rel_index(const geom *g, int i, int j) {
    int dy = i / g->win - j / g->win + g->win - 1, dx = i % g->win - j % g->win + g->win - 1;
    return dy * (2 * g->win - 1) + dx;
}

/* The scores of window k, head h: s[i*N + j] = q_i.k_j / sqrt(dh) + bias + mask. */
static void scores(const geom *g, const real_t *qkv, const real_t *table, int h, const long *pos,
                   const int *region, real_t *s) {
    long c3 = 3L * g->c;
    real_t scale = (real_t)(1.0 / sqrt((double)g->dh));
    for (int i = 0; i < g->n_tok; i++)
        for (int j = 0; j < g->n_tok; j++) {
            const real_t *q = qkv + pos[i] * c3 + h * g->dh, *kk = qkv + pos[j] * c3 + g->c + h * g->dh;
            real_t d = 0;
            for (int e = 0; e < g->dh; e++) d += q[e] * kk[e];
            d = d * scale + table[rel_index(g, i, j) * g->heads + h];
            if (g->shift && region[i] != region[j]) d += (real_t)-100.0;
            s[i * g->n_tok + j] = d;
        }
}

static void project_in(real_t *qkv, const real_t *x, const real_t *w, const real_t *b, int n, int c, long t) {
    long c3 = 3L * c;
    for (int i = 0; i < n; i++) {
        real_t *q = qkv + i * t * c3;
        RT_FN(rt_gemm)(1, 1, (int)t, (int)c3, c, 1, x + (long)i * c * t, (int)t, w, c, 0, q, (int)c3);
        for (long r = 0; r < t; r++)
            for (long j = 0; j < c3; j++) q[r * c3 + j] += b[j];
    }
}

void RT_FN(window_attention_forward)(real_t *out, real_t *saved, const real_t *x, const real_t *w, const real_t *b,
                                     int n, int c, int h, int wd, int heads, int win, int shift) {
    geom g = geom_of(c, h, wd, heads, win, shift);
    long t = (long)h * wd, c3 = 3L * c;
    real_t *qkv = saved, *o = saved + n * t * c3, *lse = o + n * t * c;
    const real_t *table = w + 4L * c * c;
    project_in(qkv, x, w, b, n, c, t);
    long tasks = (long)n * g.nwin * heads;
    #pragma omp parallel if (tasks > 1 && (long)n * t * g.n_tok * c > (1L << 18))
    {
        long *pos = malloc(sizeof(long) * g.n_tok);
        int *region = malloc(sizeof(int) * g.n_tok);
        real_t *s = malloc(sizeof(real_t) * (size_t)g.n_tok * g.n_tok);
        if (!pos || !region || !s) rt_die("window attention: out of memory for a window");
        #pragma omp for schedule(static)
        for (long task = 0; task < tasks; task++) {
            int i = (int)(task / ((long)g.nwin * heads)), k = (int)(task / heads % g.nwin), hh = (int)(task % heads);
            const real_t *base = qkv + i * t * c3;
            for (int p = 0; p < g.n_tok; p++) token_at(&g, k, p, &pos[p], &region[p]);
            scores(&g, base, table, hh, pos, region, s);
            for (int r = 0; r < g.n_tok; r++) {
                real_t *row = s + r * g.n_tok, mx = row[0], sum = 0;
                for (int j = 1; j < g.n_tok; j++) mx = row[j] > mx ? row[j] : mx;
                for (int j = 0; j < g.n_tok; j++) sum += row[j] = rt_exp(row[j] - mx);
                real_t *op = o + (i * t + pos[r]) * c + hh * g.dh;
                for (int e = 0; e < g.dh; e++) {
                    real_t v = 0;
                    for (int j = 0; j < g.n_tok; j++) v += row[j] * base[pos[j] * c3 + 2 * c + hh * g.dh + e];
                    op[e] = v / sum;
                }
                lse[((long)i * heads + hh) * t + pos[r]] = mx + rt_log(sum);
            }
        }
        free(pos), free(region), free(s);
    }
    const real_t *wo = w + c3 * c, *bo = b + c3;
    for (int i = 0; i < n; i++) {
        real_t *y = out + (long)i * c * t;
        RT_FN(rt_gemm)(0, 1, c, (int)t, c, 1, wo, c, o + i * t * c, c, 0, y, (int)t);
        for (int ch = 0; ch < c; ch++)
            for (long r = 0; r < t; r++) y[ch * t + r] += bo[ch];
    }
}

void RT_FN(window_attention_backward)(real_t *dx, real_t *dw, real_t *db, const real_t *dout, const real_t *x,
                                      const real_t *w, const real_t *saved, real_t *work, int n, int c, int h,
                                      int wd, int heads, int win, int shift) {
    geom g = geom_of(c, h, wd, heads, win, shift);
    long t = (long)h * wd, c3 = 3L * c, per = t * c3;
    const real_t *qkv = saved, *o = saved + n * per, *lse = o + n * t * c;
    const real_t *wo = w + c3 * c, *table = w + 4L * c * c;
    real_t *dwo = dw + c3 * c, *dbo = db + c3, *dtable = dw + 4L * c * c;
    real_t scale = (real_t)(1.0 / sqrt((double)g.dh));
    long nn = (long)g.n_tok * g.n_tok;
    real_t *dqkv = work, *dO = dqkv + n * per, *ds_all = dO + n * t * c;   /* ds_all: [n, windows, heads, N, N] */
    memset(dbo, 0, sizeof(real_t) * (size_t)c);
    for (int i = 0; i < n; i++) {
        const real_t *dy = dout + (long)i * c * t;
        for (int ch = 0; ch < c; ch++)
            for (long r = 0; r < t; r++) dbo[ch] += dy[ch * t + r];
        RT_FN(rt_gemm)(0, 0, c, c, (int)t, 1, dy, (int)t, o + i * t * c, c, i ? 1 : 0, dwo, c);
        RT_FN(rt_gemm)(1, 0, (int)t, c, c, 1, dy, (int)t, wo, c, 0, dO + i * t * c, c);
    }
    memset(dqkv, 0, sizeof(real_t) * (size_t)(n * per));
    long tasks = (long)n * g.nwin * heads;
    /* A window's tokens are its own (the windows tile the map), so tasks write disjoint rows. */
    #pragma omp parallel if (tasks > 1 && (long)n * t * g.n_tok * c > (1L << 18))
    {
        long *pos = malloc(sizeof(long) * g.n_tok);
        int *region = malloc(sizeof(int) * g.n_tok);
        real_t *p = malloc(sizeof(real_t) * (size_t)(nn + g.n_tok));
        if (!pos || !region || !p) rt_die("window attention: out of memory for a window");
        real_t *dd = p + nn;
        #pragma omp for schedule(static)
        for (long task = 0; task < tasks; task++) {
            int i = (int)(task / ((long)g.nwin * heads)), k = (int)(task / heads % g.nwin), hh = (int)(task % heads);
            const real_t *base = qkv + i * per;
            real_t *gbase = dqkv + i * per, *ds = ds_all + task * nn;
            for (int q = 0; q < g.n_tok; q++) token_at(&g, k, q, &pos[q], &region[q]);
            scores(&g, base, table, hh, pos, region, p);
            for (int r = 0; r < g.n_tok; r++) {
                real_t l = lse[((long)i * heads + hh) * t + pos[r]], v = 0;
                for (int j = 0; j < g.n_tok; j++) p[r * g.n_tok + j] = rt_exp(p[r * g.n_tok + j] - l);
                const real_t *dor = dO + (i * t + pos[r]) * c + hh * g.dh, *orow = o + (i * t + pos[r]) * c + hh * g.dh;
                for (int e = 0; e < g.dh; e++) v += dor[e] * orow[e];
                dd[r] = v;
            }
            for (int r = 0; r < g.n_tok; r++) {
                const real_t *dor = dO + (i * t + pos[r]) * c + hh * g.dh;
                for (int j = 0; j < g.n_tok; j++) {
                    const real_t *vj = base + pos[j] * c3 + 2 * c + hh * g.dh;
                    real_t dp = 0, pij = p[r * g.n_tok + j];
                    for (int e = 0; e < g.dh; e++) dp += dor[e] * vj[e];
                    real_t dsv = pij * (dp - dd[r]);
                    ds[r * g.n_tok + j] = dsv;
                    real_t *dq = gbase + pos[r] * c3 + hh * g.dh, *dk = gbase + pos[j] * c3 + c + hh * g.dh;
                    const real_t *q = base + pos[r] * c3 + hh * g.dh, *kk = base + pos[j] * c3 + c + hh * g.dh;
                    for (int e = 0; e < g.dh; e++) {
                        dq[e] += scale * dsv * kk[e];
                        dk[e] += scale * dsv * q[e];
                        dk[c + e] += pij * dor[e];   /* dV */
                    }
                }
            }
        }
        free(pos), free(region), free(p);
    }
    /* The bias table's gradient: each head its own column, summed in a fixed order. */
    long entries = (long)(2 * win - 1) * (2 * win - 1);
    for (long e = 0; e < entries * heads; e++) dtable[e] = 0;
    for (int hh = 0; hh < heads; hh++)
        for (long img_win = 0; img_win < (long)n * g.nwin; img_win++) {
            const real_t *ds = ds_all + (img_win * heads + hh) * nn;
            for (int r = 0; r < g.n_tok; r++)
                for (int j = 0; j < g.n_tok; j++) dtable[rel_index(&g, r, j) * heads + hh] += ds[r * g.n_tok + j];
        }
    memset(db, 0, sizeof(real_t) * (size_t)c3);
    for (int i = 0; i < n; i++) {
        const real_t *gq = dqkv + i * per;
        for (long r = 0; r < t; r++)
            for (long j = 0; j < c3; j++) db[j] += gq[r * c3 + j];
        RT_FN(rt_gemm)(1, 1, (int)c3, c, (int)t, 1, gq, (int)c3, x + (long)i * c * t, (int)t, i ? 1 : 0, dw, c);
        if (dx) RT_FN(rt_gemm)(1, 1, c, (int)t, (int)c3, 1, w, c, gq, (int)c3, 0, dx + (long)i * c * t, (int)t);
    }
}
