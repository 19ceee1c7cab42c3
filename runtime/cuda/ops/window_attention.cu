/* Swin's shifted-window attention on the device (window_attention.c's contract: x [N, C, H, W]
 * channel-major, w = qkv.weight, proj.weight, relative_position_bias_table [(2 window - 1)^2,
 * heads], saved FP32 as attention's at T = H*W, work attention's and the score gradients of
 * every window and head). The projections are attention.cu's (attention_proj.cuh); the core
 * takes one query row (forward, dQ) or key row (dK, dV) of one window and head a thread, as
 * attention.cu's does, and walks that window's window^2 tokens with an online softmax: a
 * token's place in the map, its region of the rolled map (for the -100 mask between regions)
 * and the relative-position bias entry are computed from the indices, nothing is gathered.
 * The dQ pass writes each window's score gradients (the bias table's gradient), which the dK/dV
 * pass reads; the table's gradient is then one value a thread, summed over images, windows and
 * token pairs in window_attention.c's order, in double. */
#include "../cuda_common.cuh"
#include "attention_proj.cuh"

#define MAX_DH RT_ATTN_CUDA_MAX_HEAD
#define CORE_THREADS 64   /* as attention.cu: 64 x 64 floats of shared accumulators, 16 KiB */
#define KV_THREADS 32

struct win_geom {
    int c, h, w, heads, win, shift, dh, ntok, nwx, nwin;
};

/* Token i of window k: its position in the map, and (rolled map) its region of 3 x 3. */
__device__ __forceinline__ long win_token(const win_geom &g, int k, int i, int *region) {
    int ys = (k / g.nwx) * g.win + i / g.win, xs = (k % g.nwx) * g.win + i % g.win;
    int ry = ys < g.h - g.win ? 0 : ys < g.h - g.shift ? 1 : 2;
    int rx = xs < g.w - g.win ? 0 : xs < g.w - g.shift ? 1 : 2;
    *region = 3 * ry + rx;
    return (long)((ys + g.shift) % g.h) * g.w + (xs + g.shift) % g.w;
}

/* What a score adds to q.k * scale: the bias of the pair's relative position, and the mask. */
__device__ __forceinline__ float win_bias(const win_geom &g, const float *table, int hh, int i, int j, int ri,
                                          int rj) {
    int rel = (i / g.win - j / g.win + g.win - 1) * (2 * g.win - 1) + i % g.win - j % g.win + g.win - 1;
    return table[rel * g.heads + hh] + (g.shift && ri != rj ? -100.0f : 0.0f);
}

__device__ __forceinline__ float win_dot(const float *a, const float *b, int dh) {
    float s = 0;
    for (int d = 0; d < dh; d++) s += a[d] * b[d];
    return s;
}

/* Row e = ((image * windows + window) * heads + head) * window^2 + token. */
struct win_row {
    int r, hh, k;
    long i, task;
};
__device__ __forceinline__ win_row win_row_of(const win_geom &g, long e) {
    win_row w;
    w.r = (int)(e % g.ntok), w.task = e / g.ntok;
    w.hh = (int)(w.task % g.heads), w.k = (int)(w.task / g.heads % g.nwin), w.i = w.task / ((long)g.heads * g.nwin);
    return w;
}

/* One query row: o and the row's log-sum-exp (at its map position, as attention's). */
__global__ void __launch_bounds__(CORE_THREADS, 16)
win_core_forward(float *o, float *lse, const float *qkv, const float *table, long total, win_geom g, float scale) {
    __shared__ float acc[CORE_THREADS][MAX_DH];   /* row threadIdx.x: this thread's own */
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        win_row w = win_row_of(g, e);
        long t = (long)g.h * g.w, c3 = 3L * g.c;
        int rreg, jreg;
        long rpos = win_token(g, w.k, w.r, &rreg);
        const float *base = qkv + w.i * t * c3, *q = base + rpos * c3 + w.hh * g.dh;
        float m = -INFINITY, l = 0;
        for (int d = 0; d < g.dh; d++) acc[me][d] = 0;
        for (int j = 0; j < g.ntok; j++) {
            long jpos = win_token(g, w.k, j, &jreg);
            const float *kk = base + jpos * c3 + g.c + w.hh * g.dh, *v = kk + g.c;
            float s = win_dot(q, kk, g.dh) * scale + win_bias(g, table, w.hh, w.r, j, rreg, jreg);
            float mx = s > m ? s : m, corr = expf(m - mx), p = expf(s - mx);
            l = l * corr + p;
            for (int d = 0; d < g.dh; d++) acc[me][d] = acc[me][d] * corr + p * v[d];
            m = mx;
        }
        float *op = o + (w.i * t + rpos) * g.c + w.hh * g.dh;
        for (int d = 0; d < g.dh; d++) op[d] = acc[me][d] / l;
        lse[(w.i * g.heads + w.hh) * t + rpos] = m + logf(l);
    }
}

/* One query row r: dS_rj = P_rj (dP_rj - D_r) into ds (the bias's gradient), dQ_r = scale sum_j dS_rj K_j. */
__global__ void __launch_bounds__(CORE_THREADS, 16)
win_core_dq(float *dqkv, float *ds_all, const float *qkv, const float *o, const float *dO, const float *lse,
            const float *table, long total, win_geom g, float scale) {
    __shared__ float acc[CORE_THREADS][MAX_DH];
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        win_row w = win_row_of(g, e);
        long t = (long)g.h * g.w, c3 = 3L * g.c;
        int rreg, jreg;
        long rpos = win_token(g, w.k, w.r, &rreg);
        const float *base = qkv + w.i * t * c3, *q = base + rpos * c3 + w.hh * g.dh;
        const float *dor = dO + (w.i * t + rpos) * g.c + w.hh * g.dh;
        float dd = win_dot(dor, o + (w.i * t + rpos) * g.c + w.hh * g.dh, g.dh);
        float l = lse[(w.i * g.heads + w.hh) * t + rpos];
        float *ds = ds_all + e * g.ntok;   /* [task][r][j] */
        for (int d = 0; d < g.dh; d++) acc[me][d] = 0;
        for (int j = 0; j < g.ntok; j++) {
            long jpos = win_token(g, w.k, j, &jreg);
            const float *kk = base + jpos * c3 + g.c + w.hh * g.dh, *v = kk + g.c;
            float p = expf(win_dot(q, kk, g.dh) * scale + win_bias(g, table, w.hh, w.r, j, rreg, jreg) - l);
            float dsv = p * (win_dot(dor, v, g.dh) - dd);
            ds[j] = dsv;
            for (int d = 0; d < g.dh; d++) acc[me][d] += dsv * kk[d];
        }
        float *dq = dqkv + (w.i * t + rpos) * c3 + w.hh * g.dh;
        for (int d = 0; d < g.dh; d++) dq[d] = scale * acc[me][d];
    }
}

/* One key row j: dK_j = scale sum_r dS_rj Q_r (dS from win_core_dq), dV_j = sum_r P_rj dO_r. */
__global__ void __launch_bounds__(KV_THREADS, 32)
win_core_dkv(float *dqkv, const float *ds_all, const float *qkv, const float *dO, const float *lse,
             const float *table, long total, win_geom g, float scale) {
    __shared__ float dk[KV_THREADS][MAX_DH], dv[KV_THREADS][MAX_DH];
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        win_row w = win_row_of(g, e);   /* w.r: the key token */
        long t = (long)g.h * g.w, c3 = 3L * g.c;
        int jreg, rreg;
        long jpos = win_token(g, w.k, w.r, &jreg);
        const float *base = qkv + w.i * t * c3, *kk = base + jpos * c3 + g.c + w.hh * g.dh;
        const float *ds = ds_all + w.task * g.ntok * g.ntok + w.r;   /* column j of [r][j] */
        for (int d = 0; d < g.dh; d++) dk[me][d] = dv[me][d] = 0;
        for (int r = 0; r < g.ntok; r++) {
            long rpos = win_token(g, w.k, r, &rreg);
            const float *q = base + rpos * c3 + w.hh * g.dh, *dor = dO + (w.i * t + rpos) * g.c + w.hh * g.dh;
            float p = expf(win_dot(q, kk, g.dh) * scale + win_bias(g, table, w.hh, r, w.r, rreg, jreg) -
                           lse[(w.i * g.heads + w.hh) * t + rpos]);
            float dsv = ds[(long)r * g.ntok];
            for (int d = 0; d < g.dh; d++) dk[me][d] += dsv * q[d], dv[me][d] += p * dor[d];
        }
        float *gk = dqkv + (w.i * t + jpos) * c3 + g.c + w.hh * g.dh;
        for (int d = 0; d < g.dh; d++) gk[d] = scale * dk[me][d], gk[g.c + d] = dv[me][d];
    }
}

/* The bias table's gradient, one (entry, head) a thread: the score gradients of every pair at
 * that relative position, images and windows outer, query then key token inner. */
__global__ void __launch_bounds__(RT_THREADS)
win_dtable(float *dtable, const float *ds_all, long windows, win_geom g) {
    int side = 2 * g.win - 1;
    GRID_STRIDE(e, (long)side * side * g.heads) {
        int hh = (int)(e % g.heads), ent = (int)(e / g.heads);
        int dy = ent / side - (g.win - 1), dx = ent % side - (g.win - 1);
        double s = 0;
        for (long iw = 0; iw < windows; iw++) {
            const float *ds = ds_all + (iw * g.heads + hh) * g.ntok * g.ntok;
            for (int r = 0; r < g.ntok; r++) {
                int jy = r / g.win - dy, jx = r % g.win - dx;
                if (jy >= 0 && jy < g.win && jx >= 0 && jx < g.win) s += ds[(long)r * g.ntok + jy * g.win + jx];
            }
        }
        dtable[e] = (float)s;   /* e is ent * heads + hh */
    }
}

static unsigned core_blocks(long rows, int threads) {
    long b = (rows + threads - 1) / threads;
    return (unsigned)(b < 65535 * 32 ? b : 65535 * 32);   /* the grid-stride loop takes the rest */
}

static win_geom geom_of(int c, int h, int w, int heads, int win, int shift) {
    if (c / heads > MAX_DH)
        rt_die_hint("use more heads, or the CPU backend", "window attention: heads of %d channels; the CUDA kernels take at most %d",
                    c / heads, MAX_DH);
    if (win <= 0 || h % win || w % win || shift < 0 || shift >= win)
        rt_die("window attention: window %d, shift %d do not tile a %dx%d map", win, shift, h, w);
    return (win_geom){ c, h, w, heads, win, shift, c / heads, win * win, w / win, (h / win) * (w / win) };
}

void cuda_window_attention_forward(void *out, float *saved, const void *x, const float *w, const float *b, int n,
                                   int c, int h, int wd, int heads, int window, int shift) {
    win_geom g = geom_of(c, h, wd, heads, window, shift);
    int t = h * wd;
    long c3 = 3L * c, nq = (long)n * t * c3;
    float *qkv = saved, *o = saved + nq, *lse = o + (long)n * t * c;
    float scale = (float)(1.0 / sqrt((double)g.dh));
    attn_launch_in_proj(qkv, x, w, b, n, c, t);
    long rows = (long)n * heads * t;
    win_core_forward<<<core_blocks(rows, CORE_THREADS), CORE_THREADS, 0, rt_stream()>>>(o, lse, qkv, w + 4L * c * c,
                                                                                      rows, g, scale);
    CUDA_LAUNCHED();
    attn_launch_out_proj(out, o, w + c3 * c, b + c3, n, c, t);
}

void cuda_window_attention_backward(void *dx, float *dw, float *db, const void *dout, const void *x, const float *w,
                                    const float *saved, float *work, int n, int c, int h, int wd, int heads,
                                    int window, int shift) {
    win_geom g = geom_of(c, h, wd, heads, window, shift);
    int t = h * wd;
    long c3 = 3L * c, nq = (long)n * t * c3, no = (long)n * t * c;
    const float *qkv = saved, *o = saved + nq, *lse = o + no, *table = w + 4L * c * c;
    float scale = (float)(1.0 / sqrt((double)g.dh));
    float *dqkv = work, *dO = dqkv + nq, *ds_all = dO + no;   /* window_attention_work_elems */
    attn_launch_out_backward(dO, dw + c3 * c, db + c3, dout, o, w + c3 * c, n, c, t);
    long rows = (long)n * heads * t;
    win_core_dq<<<core_blocks(rows, CORE_THREADS), CORE_THREADS, 0, rt_stream()>>>(dqkv, ds_all, qkv, o, dO, lse, table,
                                                                                 rows, g, scale);
    CUDA_LAUNCHED();
    win_core_dkv<<<core_blocks(rows, KV_THREADS), KV_THREADS, 0, rt_stream()>>>(dqkv, ds_all, qkv, dO, lse, table, rows,
                                                                              g, scale);
    CUDA_LAUNCHED();
    long entries = (long)(2 * window - 1) * (2 * window - 1) * heads;
    win_dtable<<<rt_blocks(entries), RT_THREADS, 0, rt_stream()>>>(dw + 4L * c * c, ds_all, (long)n * g.nwin, g);
    CUDA_LAUNCHED();
    attn_launch_in_backward(dx, dw, db, dqkv, x, w, n, c, t);
}
