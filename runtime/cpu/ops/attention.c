/* Multi-head self-attention (torch's nn.MultiheadAttention, batch_first, no dropout, no mask)
 * over token sequences stored channel-major, x [N, C, T] (rt_ops.h). The core is blocked as
 * FlashAttention is: each block of RT_ATTN_BLOCK queries walks the keys a block at a time with
 * an online softmax (a running maximum and sum per row, the partial output rescaled when the
 * maximum grows), so only a block x block tile of scores exists at any time, never the T x T
 * matrix; the forward keeps each row's log-sum-exp, from which the backward recomputes the
 * weights of each tile. Threads take (image, head, query block) in the forward and (image,
 * head) in the backward, whose tasks own disjoint columns of the gradients they write. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"

#define BLK RT_ATTN_BLOCK
/* Below this many multiply-adds in the core, one thread: a parallel region costs more (on a
 * loaded machine a barrier can wait a whole time slice for a descheduled thread). */
#define PARALLEL_MIN_MACS (1L << 18)

void RT_FN(attention_forward)(real_t *out /*N,C,T*/, real_t *saved, const real_t *x /*N,C,T*/, const real_t *w,
                              const real_t *b, int n, int c, int t, int heads) {
    long c3 = 3L * c, per = (long)t * c3;
    int dh = c / heads, qblocks = (t + BLK - 1) / BLK;
    real_t *qkv = saved, *o = saved + (long)n * per, *lse = o + (long)n * t * c;
    const real_t *wo = w + c3 * c, *bo = b + c3;
    real_t scale = (real_t)(1.0 / sqrt((double)dh));
    for (int i = 0; i < n; i++) {   /* qkv[t, 3C] = x^T W_in^T + b_in */
        real_t *q = qkv + i * per;
        RT_FN(rt_gemm)(1, 1, t, (int)c3, c, 1, x + (long)i * c * t, t, w, c, 0, q, (int)c3);
        for (int r = 0; r < t; r++)
            for (long j = 0; j < c3; j++) q[r * c3 + j] += b[j];
    }
    long tasks = (long)n * heads * qblocks;
    #pragma omp parallel if ((long)n * t * t * c > PARALLEL_MIN_MACS)
    {
        real_t *s = malloc(sizeof(real_t) * (BLK * BLK + BLK * (size_t)dh + 2 * BLK));
        if (!s) rt_die("attention: out of memory for a tile");
        real_t *acc = s + BLK * BLK, *m = acc + BLK * dh, *l = m + BLK;
        #pragma omp for schedule(dynamic)
        for (long task = 0; task < tasks; task++) {
            int i = (int)(task / (heads * qblocks)), h = (int)(task / qblocks % heads), qb = (int)(task % qblocks);
            int q0 = qb * BLK, bq = t - q0 < BLK ? t - q0 : BLK;
            const real_t *base = qkv + i * per, *qp = base + q0 * c3 + h * dh;
            for (int r = 0; r < bq; r++) m[r] = -INFINITY, l[r] = 0;
            memset(acc, 0, sizeof(real_t) * (size_t)(bq * dh));
            for (int k0 = 0; k0 < t; k0 += BLK) {
                int bk = t - k0 < BLK ? t - k0 : BLK;
                const real_t *kp = base + k0 * c3 + c + h * dh, *vp = kp + c;
                RT_FN(rt_gemm)(0, 1, bq, bk, dh, scale, qp, (int)c3, kp, (int)c3, 0, s, bk);
                for (int r = 0; r < bq; r++) {
                    real_t *row = s + r * bk, mx = m[r];
                    for (int j = 0; j < bk; j++) mx = row[j] > mx ? row[j] : mx;
                    real_t corr = rt_exp(m[r] - mx), sum = 0;   /* exp(-inf) = 0 on the first block */
                    for (int j = 0; j < bk; j++) sum += row[j] = rt_exp(row[j] - mx);
                    l[r] = l[r] * corr + sum;
                    m[r] = mx;
                    for (int d = 0; d < dh; d++) acc[r * dh + d] *= corr;
                }
                RT_FN(rt_gemm)(0, 0, bq, dh, bk, 1, s, bk, vp, (int)c3, 1, acc, dh);
            }
            real_t *op = o + ((long)i * t + q0) * c + h * dh;
            for (int r = 0; r < bq; r++) {
                for (int d = 0; d < dh; d++) op[(long)r * c + d] = acc[r * dh + d] / l[r];
                lse[((long)i * heads + h) * t + q0 + r] = m[r] + rt_log(l[r]);
            }
        }
        free(s);
    }
    for (int i = 0; i < n; i++) {   /* out[C, T] = W_out o^T + b_out */
        real_t *y = out + (long)i * c * t;
        RT_FN(rt_gemm)(0, 1, c, t, c, 1, wo, c, o + (long)i * t * c, c, 0, y, t);
        for (int ch = 0; ch < c; ch++)
            for (int r = 0; r < t; r++) y[(long)ch * t + r] += bo[ch];
    }
}

/* The gradient of one (image, head): dQ, dK, dV into its columns of dqkv, tile by tile. */
static void head_backward(real_t *dqkv, const real_t *qkv, const real_t *o, const real_t *dout, const real_t *lse,
                          real_t *s, int c, int t, int dh, int h, real_t scale) {
    long c3 = 3L * c;
    real_t *dp = s + BLK * BLK, *dd = dp + BLK * BLK;   /* dd[r]: rowsum(dO . O), t of them */
    for (int r = 0; r < t; r++) {
        real_t v = 0;
        for (int d = 0; d < dh; d++) v += dout[(long)r * c + h * dh + d] * o[(long)r * c + h * dh + d];
        dd[r] = v;
    }
    for (int k0 = 0; k0 < t; k0 += BLK) {
        int bk = t - k0 < BLK ? t - k0 : BLK;
        const real_t *kp = qkv + k0 * c3 + c + h * dh, *vp = kp + c;
        real_t *dk = dqkv + k0 * c3 + c + h * dh, *dv = dk + c;
        for (int q0 = 0; q0 < t; q0 += BLK) {
            int bq = t - q0 < BLK ? t - q0 : BLK;
            const real_t *qp = qkv + q0 * c3 + h * dh, *dop = dout + (long)q0 * c + h * dh;
            real_t *dq = dqkv + q0 * c3 + h * dh;
            RT_FN(rt_gemm)(0, 1, bq, bk, dh, scale, qp, (int)c3, kp, (int)c3, 0, s, bk);
            for (int r = 0; r < bq; r++)
                for (int j = 0; j < bk; j++) s[r * bk + j] = rt_exp(s[r * bk + j] - lse[q0 + r]);
            RT_FN(rt_gemm)(1, 0, bk, dh, bq, 1, s, bk, dop, c, 1, dv, (int)c3);       /* dV += P^T dO */
            RT_FN(rt_gemm)(0, 1, bq, bk, dh, 1, dop, c, vp, (int)c3, 0, dp, bk);      /* dP = dO V^T */
            for (int r = 0; r < bq; r++)                                               /* dS = P (dP - D) */
                for (int j = 0; j < bk; j++) dp[r * bk + j] = s[r * bk + j] * (dp[r * bk + j] - dd[q0 + r]) * scale;
            RT_FN(rt_gemm)(0, 0, bq, dh, bk, 1, dp, bk, kp, (int)c3, 1, dq, (int)c3); /* dQ += dS K */
            RT_FN(rt_gemm)(1, 0, bk, dh, bq, 1, dp, bk, qp, (int)c3, 1, dk, (int)c3); /* dK += dS^T Q */
        }
    }
}

void RT_FN(attention_backward)(real_t *dx /*N,C,T or NULL*/, real_t *dw, real_t *db, const real_t *dout,
                               const real_t *x, const real_t *w, const real_t *saved, real_t *work, int n, int c,
                               int t, int heads) {
    long c3 = 3L * c, per = (long)t * c3;
    int dh = c / heads;
    const real_t *qkv = saved, *o = saved + (long)n * per, *lse = o + (long)n * t * c;
    const real_t *wo = w + c3 * c;
    real_t *dwo = dw + c3 * c, *dbo = db + c3;
    real_t scale = (real_t)(1.0 / sqrt((double)dh));
    real_t *dqkv = work, *dO = dqkv + (long)n * per;
    memset(dbo, 0, sizeof(real_t) * (size_t)c);
    for (int i = 0; i < n; i++) {   /* the out-projection: dW_out, db_out, dO = dout^T W_out */
        const real_t *dy = dout + (long)i * c * t;
        for (int ch = 0; ch < c; ch++)
            for (int r = 0; r < t; r++) dbo[ch] += dy[(long)ch * t + r];
        RT_FN(rt_gemm)(0, 0, c, c, t, 1, dy, t, o + (long)i * t * c, c, i ? 1 : 0, dwo, c);
        RT_FN(rt_gemm)(1, 0, t, c, c, 1, dy, t, wo, c, 0, dO + (long)i * t * c, c);
    }
    memset(dqkv, 0, sizeof(real_t) * (size_t)(n * per));
    long tasks = (long)n * heads;
    #pragma omp parallel if ((long)n * t * t * c > PARALLEL_MIN_MACS)
    {
        real_t *s = malloc(sizeof(real_t) * (2 * BLK * BLK + (size_t)t));
        if (!s) rt_die("attention: out of memory for a tile");
        #pragma omp for schedule(dynamic)
        for (long task = 0; task < tasks; task++) {
            int i = (int)(task / heads), h = (int)(task % heads);
            head_backward(dqkv + i * per, qkv + i * per, o + (long)i * t * c, dO + (long)i * t * c,
                          lse + ((long)i * heads + h) * t, s, c, t, dh, h, scale);
        }
        free(s);
    }
    memset(db, 0, sizeof(real_t) * (size_t)c3);
    for (int i = 0; i < n; i++) {   /* the in-projection: dW_in, db_in, dx = W_in^T dqkv^T */
        const real_t *g = dqkv + i * per;
        for (int r = 0; r < t; r++)
            for (long j = 0; j < c3; j++) db[j] += g[r * c3 + j];
        RT_FN(rt_gemm)(1, 1, (int)c3, c, t, 1, g, (int)c3, x + (long)i * c * t, t, i ? 1 : 0, dw, c);
        if (dx) RT_FN(rt_gemm)(1, 1, c, t, (int)c3, 1, w, c, g, (int)c3, 0, dx + (long)i * c * t, t);
    }
}
