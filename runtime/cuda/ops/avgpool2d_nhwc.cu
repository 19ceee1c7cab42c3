/* 2-D average pooling on channels-last tensors (avgpool and adaptive_avgpool, which lowering
 * makes a plain pool): each thread takes V neighbouring channels of one position as one
 * 16-byte vector (act_vec.cuh; V = 1 when the vector does not divide C), so a warp reads a
 * position's channels coalesced. Same rule as avgpool2d.cu (count_include_pad, Caffe's
 * ceil-mode divisor); the backward gathers per input vector from the windows that hold it (no
 * atomics: the CPU's order, deterministic). 64-bit indices: AlexNet's tensors stay far below
 * 2^31 vectors, but nothing here has to refuse a larger one. */
#include "act_vec.cuh"
#include "pool_window.cuh"

/* Vector t's channel-vector q and position (n, y, x) of a [n][h][w][c / V] grid. */
struct pool_nhwc_at {
    long n;
    int q, y, x;
};
__device__ static inline pool_nhwc_at pool_nhwc_at_of(long t, int cv, int h, int w) {
    long pos = t / cv;
    return { pos / ((long)w * h), (int)(t - pos * cv), (int)(pos / w % h), (int)(pos % w) };
}

/* At least 6 resident blocks, ~40 registers: with the block size alone ptxas capped the FP32
 * one-channel forward at 32 and spilled (as avgpool2d.cu's backward). */
template <typename T, int V>
__global__ void __launch_bounds__(RT_THREADS, 6)
avgpool_forward_nhwc_kernel(T *__restrict__ out, const T *__restrict__ in, rt_pool_shape s, long total) {
    int cv = s.c / V;
    GRID_STRIDE(t, total) {
        pool_nhwc_at o = pool_nhwc_at_of(t, cv, s.oh, s.ow);
        const T *x = in + o.n * s.h * s.w * s.c + o.q * V;   /* (n, 0, 0, vector q) */
        float acc[V] = {};
        for (int ki = 0; ki < s.kh; ki++) {
            int iy = o.y * s.sh - s.ph + ki;
            if (iy < 0 || iy >= s.h) continue;
#pragma unroll 1
            for (int kj = 0; kj < s.kw; kj++) {
                int ix = o.x * s.sw - s.pw + kj;
                if (ix < 0 || ix >= s.w) continue;
                act_vec<T, V> v = vec_load<T, V>(x + ((long)iy * s.w + ix) * s.c);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += rt_ld(v.e[j]);
            }
        }
        float inv = pool_window_inv(s, o.y, o.x);
        act_vec<T, V> y;
#pragma unroll
        for (int j = 0; j < V; j++) y.e[j] = rt_st<T>(acc[j] * inv);
        vec_store<T, V>(out + t * V, y);
    }
}

template <typename T, int V>
__global__ void __launch_bounds__(RT_THREADS, 6)
avgpool_backward_nhwc_kernel(T *__restrict__ din, const T *__restrict__ dout, rt_pool_shape s, long total) {
    int cv = s.c / V;
    GRID_STRIDE(t, total) {
        pool_nhwc_at i = pool_nhwc_at_of(t, cv, s.h, s.w);
        int y0, y1, x0, x1;
        pool_window_range(i.y, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
        pool_window_range(i.x, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
        const T *dy = dout + i.n * s.oh * s.ow * s.c + i.q * V;   /* output (n, 0, 0, vector q) */
        float acc[V] = {};
        for (int oy = y0; oy <= y1; oy++)
#pragma unroll 1
            for (int ox = x0; ox <= x1; ox++) {
                float inv = pool_window_inv(s, oy, ox);
                act_vec<T, V> g = vec_load<T, V>(dy + ((long)oy * s.ow + ox) * s.c);
#pragma unroll
                for (int j = 0; j < V; j++) acc[j] += rt_ld(g.e[j]) * inv;
            }
        act_vec<T, V> d;
#pragma unroll
        for (int j = 0; j < V; j++) d.e[j] = rt_st<T>(acc[j]);
        vec_store<T, V>(din + t * V, d);
    }
}

/* Whether a 16-byte vector fits these tensors: it divides C and the pointers are aligned. */
static int avgpool_vec(const rt_pool_shape *s, const void *a, const void *b) {
    return s->c % (int)(16 / rt_cuda_act_bytes()) == 0 && vec_aligned(a, b);
}

void cuda_avgpool2d_forward_nhwc(void *out, const void *in, const rt_pool_shape *s) {
    int vec = avgpool_vec(s, out, in);
    long positions = (long)s->n * s->oh * s->ow;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, act_vec_width<T>(), {
        long total = positions * (s->c / V);
        avgpool_forward_nhwc_kernel<T, V><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                              *s, total);
    }));
    CUDA_LAUNCHED();
}

void cuda_avgpool2d_backward_nhwc(void *din, const void *dout, const rt_pool_shape *s) {
    int vec = avgpool_vec(s, din, dout);
    long positions = (long)s->n * s->h * s->w;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, act_vec_width<T>(), {
        long total = positions * (s->c / V);
        avgpool_backward_nhwc_kernel<T, V><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)din,
                                                                                               (const T *)dout, *s,
                                                                                               total);
    }));
    CUDA_LAUNCHED();
}
