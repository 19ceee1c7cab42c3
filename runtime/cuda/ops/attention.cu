/* Multi-head self-attention on the device (attention.c's contract: x [N, C, T] channel-major,
 * weights FP32 as torch lays them out, `saved` FP32: [N, T, 3C] q/k/v, [N, T, C] the heads'
 * outputs, [N, heads, T] log-sum-exp). The runtime's own kernels, for every precision: the
 * projections one output a thread; the core one query row (forward, dQ) or one key row (dK,
 * dV) a thread, walking the other side's rows with an online softmax in registers, so no T x T
 * matrix is ever stored, and the backward recomputes each weight from the saved log-sum-exp.
 * Sums run in a fixed order (no atomics): the parameter gradients one value a thread over the
 * batch and the tokens, in double. */
#include "../cuda_common.cuh"
#include "attention_proj.cuh"

#define MAX_DH RT_ATTN_CUDA_MAX_HEAD   /* a head's width (ViT-B/L/S, DeiT, Swin: 32 or 64) */
#define CORE_THREADS 64   /* the forward's and dQ's blocks: 64 x 64 floats, 16 KiB (the budget) */
#define KV_THREADS 32     /* dK and dV's blocks: two rows of accumulators a thread, 16 KiB */
/* The core kernels' second launch bound (16 blocks of 64, 32 of 32) holds them to 64 registers,
 * the budget (tests/cuda/kernel_budget_test.sh). */

/* qkv[i, r, j] = sum_d x[i, d, r] W_in[j, d] + b_in[j] */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_in_proj(float *qkv, const T *x, const float *w, const float *b, long total, int c, int t) {
    GRID_STRIDE(e, total) {
        long c3 = 3L * c;
        int j = (int)(e % c3), r = (int)(e / c3 % t);
        long i = e / (c3 * t);
        const T *xi = x + i * c * t + r;
        const float *wj = w + (long)j * c;
        float s = b[j];
        for (int d = 0; d < c; d++) s += rt_ld(xi[(long)d * t]) * wj[d];
        qkv[e] = s;
    }
}

/* One (image, head, query row): o and the row's log-sum-exp. */
__global__ void __launch_bounds__(CORE_THREADS, 16)
attn_core_forward(float *o, float *lse, const float *qkv, long total, int c, int t, int heads, float scale) {
    __shared__ float acc[CORE_THREADS][MAX_DH];   /* row threadIdx.x: this thread's own */
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        int dh = c / heads, r = (int)(e % t), h = (int)(e / t % heads);
        long i = e / ((long)t * heads), c3 = 3L * c;
        const float *base = qkv + i * t * c3, *q = base + r * c3 + h * dh;
        float m = -INFINITY, l = 0;
        for (int d = 0; d < dh; d++) acc[me][d] = 0;
        for (int k = 0; k < t; k++) {
            const float *kk = base + k * c3 + c + h * dh, *v = kk + c;
            float s = 0;
            for (int d = 0; d < dh; d++) s += q[d] * kk[d];
            s *= scale;
            float mx = s > m ? s : m, corr = expf(m - mx), p = expf(s - mx);
            l = l * corr + p;
            for (int d = 0; d < dh; d++) acc[me][d] = acc[me][d] * corr + p * v[d];
            m = mx;
        }
        float *op = o + (i * t + r) * c + h * dh;
        for (int d = 0; d < dh; d++) op[d] = acc[me][d] / l;
        lse[e] = m + logf(l);   /* e is (i * heads + h) * t + r */
    }
}

/* y[i, ch, r] = sum_j W_out[ch, j] o[i, r, j] + b_out[ch] */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_out_proj(T *y, const float *o, const float *wo, const float *bo, long total, int c, int t) {
    GRID_STRIDE(e, total) {
        int r = (int)(e % t), ch = (int)(e / t % c);
        long i = e / ((long)t * c);
        const float *or_ = o + (i * t + r) * c, *w = wo + (long)ch * c;
        float s = bo[ch];
        for (int j = 0; j < c; j++) s += w[j] * or_[j];
        y[e] = rt_st<T>(s);
    }
}

/* dO[i, r, j] = sum_ch dy[i, ch, r] W_out[ch, j] */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_dout_proj(float *dO, const T *dy, const float *wo, long total, int c, int t) {
    GRID_STRIDE(e, total) {
        int j = (int)(e % c), r = (int)(e / c % t);
        long i = e / ((long)c * t);
        const T *d = dy + i * c * t + r;
        float s = 0;
        for (int ch = 0; ch < c; ch++) s += rt_ld(d[(long)ch * t]) * wo[(long)ch * c + j];
        dO[e] = s;
    }
}

/* dW_out[ch, j] = sum_{i, r} dy[i, ch, r] o[i, r, j]; j == c: db_out[ch] = sum dy */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_dw_out(float *dwo, float *dbo, const T *dy, const float *o, int n, int c, int t) {
    GRID_STRIDE(e, (long)c * (c + 1)) {
        int ch = (int)(e / (c + 1)), j = (int)(e % (c + 1));
        double s = 0;
        for (int i = 0; i < n; i++)
            for (int r = 0; r < t; r++)
                s += (double)rt_ld(dy[((long)i * c + ch) * t + r]) * (j < c ? o[((long)i * t + r) * c + j] : 1.0f);
        if (j < c) dwo[(long)ch * c + j] = (float)s;
        else dbo[ch] = (float)s;
    }
}

__device__ static float row_dot(const float *a, const float *b, int dh) {
    float s = 0;
    for (int d = 0; d < dh; d++) s += a[d] * b[d];
    return s;
}

/* One (image, head, query row r): dQ_r = scale sum_k P_rk (dP_rk - D_r) K_k. */
__global__ void __launch_bounds__(CORE_THREADS, 16)
attn_core_dq(float *dqkv, const float *qkv, const float *o, const float *dO, const float *lse, long total, int c,
             int t, int heads, float scale) {
    __shared__ float acc[CORE_THREADS][MAX_DH];
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        int dh = c / heads, r = (int)(e % t), h = (int)(e / t % heads);
        long i = e / ((long)t * heads), c3 = 3L * c;
        const float *base = qkv + i * t * c3, *q = base + r * c3 + h * dh;
        const float *dor = dO + (i * t + r) * c + h * dh;
        float dd = row_dot(dor, o + (i * t + r) * c + h * dh, dh), l = lse[e];
        for (int d = 0; d < dh; d++) acc[me][d] = 0;
        for (int k = 0; k < t; k++) {
            const float *kk = base + k * c3 + c + h * dh, *v = kk + c;
            float p = expf(scale * row_dot(q, kk, dh) - l), ds = p * (row_dot(dor, v, dh) - dd);
            for (int d = 0; d < dh; d++) acc[me][d] += ds * kk[d];
        }
        float *dq = dqkv + (i * t + r) * c3 + h * dh;
        for (int d = 0; d < dh; d++) dq[d] = scale * acc[me][d];
    }
}

/* One (image, head, key row k): dK_k = scale sum_r P_rk (dP_rk - D_r) Q_r, dV_k = sum_r P_rk dO_r. */
__global__ void __launch_bounds__(KV_THREADS, 32)
attn_core_dkv(float *dqkv, const float *qkv, const float *o, const float *dO, const float *lse, long total, int c,
              int t, int heads, float scale) {
    __shared__ float dk[KV_THREADS][MAX_DH], dv[KV_THREADS][MAX_DH];
    int me = threadIdx.x;
    GRID_STRIDE(e, total) {
        int dh = c / heads, k = (int)(e % t), h = (int)(e / t % heads);
        long i = e / ((long)t * heads), c3 = 3L * c;
        const float *base = qkv + i * t * c3, *kk = base + k * c3 + c + h * dh, *v = kk + c;
        for (int d = 0; d < dh; d++) dk[me][d] = dv[me][d] = 0;
        for (int r = 0; r < t; r++) {
            const float *q = base + r * c3 + h * dh, *dor = dO + (i * t + r) * c + h * dh;
            float dd = row_dot(dor, o + (i * t + r) * c + h * dh, dh);
            float p = expf(scale * row_dot(q, kk, dh) - lse[(i * heads + h) * t + r]);
            float ds = p * (row_dot(dor, v, dh) - dd);
            for (int d = 0; d < dh; d++) dk[me][d] += ds * q[d], dv[me][d] += p * dor[d];
        }
        float *g = dqkv + (i * t + k) * c3 + c + h * dh;
        for (int d = 0; d < dh; d++) g[d] = scale * dk[me][d], g[c + d] = dv[me][d];
    }
}

/* dW_in[j, d] = sum_{i, r} dqkv[i, r, j] x[i, d, r]; d == c: db_in[j] = sum dqkv */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_dw_in(float *dw, float *db, const float *dqkv, const T *x, int n, int c, int t) {
    long c3 = 3L * c;
    GRID_STRIDE(e, c3 * (c + 1)) {
        int j = (int)(e / (c + 1)), d = (int)(e % (c + 1));
        double s = 0;
        for (int i = 0; i < n; i++)
            for (int r = 0; r < t; r++)
                s += (double)dqkv[((long)i * t + r) * c3 + j] * (d < c ? rt_ld(x[((long)i * c + d) * t + r]) : 1.0f);
        if (d < c) dw[(long)j * c + d] = (float)s;
        else db[j] = (float)s;
    }
}

/* dx[i, d, r] = sum_j W_in[j, d] dqkv[i, r, j] */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
attn_dx(T *dx, const float *dqkv, const float *w, long total, int c, int t) {
    GRID_STRIDE(e, total) {
        int r = (int)(e % t), d = (int)(e / t % c);
        long i = e / ((long)t * c), c3 = 3L * c;
        const float *g = dqkv + (i * t + r) * c3;
        float s = 0;
        for (long j = 0; j < c3; j++) s += w[j * c + d] * g[j];
        dx[e] = rt_st<T>(s);
    }
}

static unsigned core_blocks(long rows, int threads) {
    long b = (rows + threads - 1) / threads;
    return (unsigned)(b < 65535 * 32 ? b : 65535 * 32);   /* the grid-stride loop takes the rest */
}

static void check_heads(int c, int heads) {
    if (c / heads > MAX_DH)
        rt_die_hint("use more heads, or the CPU backend", "attention: heads of %d channels; the CUDA kernels take at most %d",
                    c / heads, MAX_DH);
}

/* The projections around a core (attention_proj.cuh), shared with window_attention.cu. */
void attn_launch_in_proj(float *qkv, const void *x, const float *w, const float *b, int n, int c, int t) {
    long nq = (long)n * t * 3 * c;
    RT_ACT_DISPATCH(attn_in_proj<T><<<rt_blocks(nq), RT_THREADS, 0, rt_stream()>>>(qkv, (const T *)x, w, b, nq, c, t));
    CUDA_LAUNCHED();
}

void attn_launch_out_proj(void *out, const float *o, const float *wo, const float *bo, int n, int c, int t) {
    long ny = (long)n * c * t;
    RT_ACT_DISPATCH(attn_out_proj<T><<<rt_blocks(ny), RT_THREADS, 0, rt_stream()>>>((T *)out, o, wo, bo, ny, c, t));
    CUDA_LAUNCHED();
}

void attn_launch_out_backward(float *dO, float *dwo, float *dbo, const void *dout, const float *o, const float *wo,
                              int n, int c, int t) {
    long no = (long)n * t * c, cw = (long)c * (c + 1);
    RT_ACT_DISPATCH(attn_dout_proj<T><<<rt_blocks(no), RT_THREADS, 0, rt_stream()>>>(dO, (const T *)dout, wo, no, c, t));
    CUDA_LAUNCHED();
    RT_ACT_DISPATCH(attn_dw_out<T><<<rt_blocks(cw), RT_THREADS, 0, rt_stream()>>>(dwo, dbo, (const T *)dout, o, n, c, t));
    CUDA_LAUNCHED();
}

void attn_launch_in_backward(void *dx, float *dw, float *db, const float *dqkv, const void *x, const float *w, int n,
                             int c, int t) {
    long c3 = 3L * c;
    RT_ACT_DISPATCH(attn_dw_in<T><<<rt_blocks(c3 * (c + 1)), RT_THREADS, 0, rt_stream()>>>(dw, db, dqkv, (const T *)x, n,
                                                                                          c, t));
    CUDA_LAUNCHED();
    if (dx) {
        long nx = (long)n * c * t;
        RT_ACT_DISPATCH(attn_dx<T><<<rt_blocks(nx), RT_THREADS, 0, rt_stream()>>>((T *)dx, dqkv, w, nx, c, t));
        CUDA_LAUNCHED();
    }
}

/* The cores (attention_proj.cuh): attention_sdpa.cu's path where cuDNN refuses. */
void attn_launch_core_forward(float *o, float *lse, const float *qkv, int n, int c, int t, int heads) {
    check_heads(c, heads);
    long rows = (long)n * heads * t;
    float scale = (float)(1.0 / sqrt((double)(c / heads)));
    attn_core_forward<<<core_blocks(rows, CORE_THREADS), CORE_THREADS, 0, rt_stream()>>>(o, lse, qkv, rows, c, t, heads, scale);
    CUDA_LAUNCHED();
}

void attn_launch_core_backward(float *dqkv, const float *qkv, const float *o, const float *dO, const float *lse, int n,
                               int c, int t, int heads) {
    check_heads(c, heads);
    long rows = (long)n * heads * t;
    float scale = (float)(1.0 / sqrt((double)(c / heads)));
    attn_core_dq<<<core_blocks(rows, CORE_THREADS), CORE_THREADS, 0, rt_stream()>>>(dqkv, qkv, o, dO, lse, rows, c, t, heads, scale);
    CUDA_LAUNCHED();
    attn_core_dkv<<<core_blocks(rows, KV_THREADS), KV_THREADS, 0, rt_stream()>>>(dqkv, qkv, o, dO, lse, rows, c, t, heads, scale);
    CUDA_LAUNCHED();
}

void cuda_attention_forward(void *out, float *saved, const void *x, const float *w, const float *b, int n, int c, int t,
                            int heads) {
    check_heads(c, heads);
    long c3 = 3L * c, nq = (long)n * t * c3;
    float *qkv = saved, *o = saved + nq, *lse = o + (long)n * t * c;
    attn_launch_in_proj(qkv, x, w, b, n, c, t);
    attn_launch_core_forward(o, lse, qkv, n, c, t, heads);
    attn_launch_out_proj(out, o, w + c3 * c, b + c3, n, c, t);
}

void cuda_attention_backward(void *dx, float *dw, float *db, const void *dout, const void *x, const float *w,
                             const float *saved, float *work, int n, int c, int t, int heads) {
    check_heads(c, heads);
    long c3 = 3L * c, nq = (long)n * t * c3, no = (long)n * t * c;
    const float *qkv = saved, *o = saved + nq, *lse = o + no;
    float *dqkv = work;   /* attention_work_elems: dQKV, then dO */
    float *dO = dqkv + nq;
    attn_launch_out_backward(dO, dw + c3 * c, db + c3, dout, o, w + c3 * c, n, c, t);
    attn_launch_core_backward(dqkv, qkv, o, dO, lse, n, c, t, heads);
    attn_launch_in_backward(dx, dw, db, dqkv, x, w, n, c, t);
}
