/* 2-D max pooling on channels-last tensors, the default kernels: each thread takes V
 * neighbouring channels of one position as one 16-byte vector (act_vec.cuh), the argmax too
 * (16 or 32 bytes), with 32-bit index arithmetic. The forward reads each window's vectors and
 * writes the output and the winning positions (iy * w + ix, as maxpool2d.cu); the backward
 * gathers per input vector the gradients of the outputs whose argmax is it (no atomics, the
 * CPU's order), reading an output's dy only when one of its V channels won there.
 * TRAINC_CUDA_POOL=old runs maxpool2d.cu's one-element kernels. */
#include <limits.h>
#include "act_vec.cuh"
#include "pool_window.cuh"

static int pool_old_kernels(void) {
    static int cached = -1;
    return rt_cuda_env_old(RT_ENV_TRAINC_CUDA_POOL, &cached);
}

/* Thread t's vector q of channels at position pos (n, y, x) of a [n][h][w][c / V] grid. */
struct pool_at {
    int q, n, y, x;
};
__device__ static inline pool_at pool_at_of(int t, int cv, int h, int w) {
    int pos = t / cv;
    return { t - pos * cv, pos / (w * h), pos / w % h, pos % w };
}

template <typename T, int V>
__global__ void __launch_bounds__(RT_THREADS)
maxpool_forward_nhwc_vec_kernel(T *__restrict__ out, int32_t *__restrict__ argmax, const T *__restrict__ in,
                                rt_pool_shape s, int total) {
    int cv = s.c / V;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        pool_at o = pool_at_of(t, cv, s.oh, s.ow);
        const T *x = in + (long)o.n * s.h * s.w * s.c + o.q * V;   /* (n, 0, 0, vector q) */
        float best_v[V];
        int best[V];
#pragma unroll
        for (int j = 0; j < V; j++) best_v[j] = 0.0f, best[j] = -1;
        for (int ki = 0; ki < s.kh; ki++) {
            int iy = o.y * s.sh - s.ph + ki;
            if (iy < 0 || iy >= s.h) continue;
#pragma unroll 1   /* unrolled, ptxas spills the 16-bit variants at 40 registers */
            for (int kj = 0; kj < s.kw; kj++) {
                int ix = o.x * s.sw - s.pw + kj, me = iy * s.w + ix;
                if (ix < 0 || ix >= s.w) continue;
                act_vec<T, V> v = vec_load<T, V>(x + (long)me * s.c);
#pragma unroll
                for (int j = 0; j < V; j++) {   /* pool_window_max's rule: the first of equal maxima wins */
                    float f = rt_ld(v.e[j]);
                    if (best[j] < 0 || f > best_v[j]) best_v[j] = f, best[j] = me;
                }
            }
        }
        act_vec<T, V> y;
        act_vec<int32_t, V> won;
#pragma unroll
        for (int j = 0; j < V; j++) y.e[j] = rt_st<T>(best_v[j]), won.e[j] = best[j];
        vec_store<T, V>(out + (long)t * V, y);
        vec_store<int32_t, V>(argmax + (long)t * V, won);
    }
}

template <typename T, int V>
__global__ void __launch_bounds__(RT_THREADS)
maxpool_backward_nhwc_vec_kernel(T *__restrict__ din, const T *__restrict__ dout, const int32_t *__restrict__ argmax,
                                 rt_pool_shape s, int total) {
    int cv = s.c / V;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        pool_at i = pool_at_of(t, cv, s.h, s.w);
        int y0, y1, x0, x1, me = i.y * s.w + i.x;
        pool_window_range(i.y, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
        pool_window_range(i.x, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
        long at = (long)i.n * s.oh * s.ow * s.c + i.q * V;   /* output (n, 0, 0, vector q) */
        float acc[V] = {};
        for (int oy = y0; oy <= y1; oy++)
            for (int ox = x0; ox <= x1; ox++) {
                long o = at + ((long)oy * s.ow + ox) * s.c;
                act_vec<int32_t, V> won = vec_load<int32_t, V>(argmax + o);
                int any = 0;
#pragma unroll
                for (int j = 0; j < V; j++) any |= won.e[j] == me;
                if (!any) continue;
                act_vec<T, V> dy = vec_load<T, V>(dout + o);
#pragma unroll
                for (int j = 0; j < V; j++)
                    if (won.e[j] == me) acc[j] += rt_ld(dy.e[j]);
            }
        act_vec<T, V> d;
#pragma unroll
        for (int j = 0; j < V; j++) d.e[j] = rt_st<T>(acc[j]);
        vec_store<T, V>(din + (long)t * V, d);
    }
}

/* The vector width for these tensors (0: none fits, or the index arithmetic would pass
 * 32 bits: the old kernels then run) and the vector count. */
static int pool_vec(const rt_pool_shape *s, long positions, const void *a, const void *b, const void *c, int *total) {
    int v = (int)(16 / rt_cuda_act_bytes());
    if (s->c % v || !vec_aligned(a, b, c)) v = 1;
    long vectors = positions * (s->c / v);
    if (vectors + 65535L * 8 * RT_THREADS > INT_MAX) return 0;
    *total = (int)vectors;
    return v;
}

void cuda_maxpool2d_forward_nhwc(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s) {
    int total, v = pool_vec(s, (long)s->n * s->oh * s->ow, out, argmax, in, &total);
    if (pool_old_kernels() || !v) return cuda_maxpool2d_forward_nhwc_old(out, argmax, in, s);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(v > 1, act_vec_width<T>(), maxpool_forward_nhwc_vec_kernel<T, V><<<rt_blocks(total), RT_THREADS, 0,
                                                                                rt_stream()>>>(
                                                (T *)out, argmax, (const T *)in, *s, total)));
    CUDA_LAUNCHED();
}

void cuda_maxpool2d_backward_nhwc(void *din, const void *dout, const int32_t *argmax, const rt_pool_shape *s) {
    int total, v = pool_vec(s, (long)s->n * s->h * s->w, din, dout, argmax, &total);
    if (pool_old_kernels() || !v) return cuda_maxpool2d_backward_nhwc_old(din, dout, argmax, s);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(v > 1, act_vec_width<T>(), maxpool_backward_nhwc_vec_kernel<T, V><<<rt_blocks(total), RT_THREADS, 0,
                                                                                 rt_stream()>>>(
                                                (T *)din, (const T *)dout, argmax, *s, total)));
    CUDA_LAUNCHED();
}
