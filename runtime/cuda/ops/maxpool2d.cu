/* 2-D max pooling, NCHW and channels-last (NHWC): the forward saves the winning input
 * position (iy * w + ix) per output (padding never wins); the backward gathers, per input,
 * the gradients of the outputs it won. */
#include "../cuda_common.cuh"
#include "pool_window.cuh"

template <typename T> __global__ void maxpool_forward_kernel(T *out, int32_t *argmax, const T *in, rt_pool_shape s) {
    GRID_STRIDE(o, (long)s.n * s.c * s.oh * s.ow) {
        long pl = o / ((long)s.oh * s.ow);
        int oy = (int)(o / s.ow % s.oh), ox = (int)(o % s.ow);
        const T *x = in + pl * s.h * s.w;
        int best = -1;
        float bv = 0.0f;
        for (int ki = 0; ki < s.kh; ki++) {
            int iy = oy * s.sh - s.ph + ki;
            if (iy < 0 || iy >= s.h) continue;
            for (int kj = 0; kj < s.kw; kj++) {
                int ix = ox * s.sw - s.pw + kj;
                if (ix < 0 || ix >= s.w) continue;
                float v = rt_ld(x[iy * s.w + ix]);
                if (best < 0 || v > bv) { bv = v; best = iy * s.w + ix; }
            }
        }
        out[o] = rt_st<T>(bv);
        argmax[o] = best;
    }
}

template <typename T>
__global__ void maxpool_backward_kernel(T *din, const T *dout, const int32_t *argmax, rt_pool_shape s) {
    GRID_STRIDE(i, (long)s.n * s.c * s.h * s.w) {
        long pl = i / ((long)s.h * s.w);
        int iy = (int)(i / s.w % s.h), ix = (int)(i % s.w), me = iy * s.w + ix;
        int y0, y1, x0, x1;
        pool_window_range(iy, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
        pool_window_range(ix, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
        const T *dy = dout + pl * s.oh * s.ow;
        const int32_t *am = argmax + pl * s.oh * s.ow;
        float acc = 0.0f;
        for (int oy = y0; oy <= y1; oy++)
            for (int ox = x0; ox <= x1; ox++)
                if (am[oy * s.ow + ox] == me) acc += rt_ld(dy[oy * s.ow + ox]);
        din[i] = rt_st<T>(acc);
    }
}

void cuda_maxpool2d_forward(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_forward_kernel<T><<<rt_blocks((long)s->n * s->c * s->oh * s->ow), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, argmax, (const T *)in, *s));
    CUDA_LAUNCHED();
}

void cuda_maxpool2d_backward(void *din, const void *dout, const int32_t *argmax, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_backward_kernel<T><<<rt_blocks((long)s->n * s->c * s->h * s->w), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, argmax, *s));
    CUDA_LAUNCHED();
}

/* Channels-last: element (n, y, x, ch) at ((n * h + y) * w + x) * c + ch, so a warp's threads
 * take neighbouring channels of one position. */
template <typename T>
__global__ void maxpool_forward_nhwc_kernel(T *out, int32_t *argmax, const T *in, rt_pool_shape s) {
    GRID_STRIDE(o, (long)s.n * s.oh * s.ow * s.c) {
        int ch = (int)(o % s.c);
        long pos = o / s.c;
        int ox = (int)(pos % s.ow), oy = (int)(pos / s.ow % s.oh);
        const T *x = in + pos / ((long)s.oh * s.ow) * s.h * s.w * s.c + ch;
        int best = -1;
        float bv = 0.0f;
        for (int ki = 0; ki < s.kh; ki++) {
            int iy = oy * s.sh - s.ph + ki;
            if (iy < 0 || iy >= s.h) continue;
            for (int kj = 0; kj < s.kw; kj++) {
                int ix = ox * s.sw - s.pw + kj;
                if (ix < 0 || ix >= s.w) continue;
                float v = rt_ld(x[((long)iy * s.w + ix) * s.c]);
                if (best < 0 || v > bv) { bv = v; best = iy * s.w + ix; }
            }
        }
        out[o] = rt_st<T>(bv);
        argmax[o] = best;
    }
}

template <typename T>
__global__ void maxpool_backward_nhwc_kernel(T *din, const T *dout, const int32_t *argmax, rt_pool_shape s) {
    GRID_STRIDE(i, (long)s.n * s.h * s.w * s.c) {
        int ch = (int)(i % s.c);
        long pos = i / s.c;
        int ix = (int)(pos % s.w), iy = (int)(pos / s.w % s.h), me = iy * s.w + ix;
        long first = pos / ((long)s.h * s.w) * s.oh * s.ow * s.c + ch;   /* output (n, 0, 0, ch) */
        int y0, y1, x0, x1;
        pool_window_range(iy, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
        pool_window_range(ix, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
        float acc = 0.0f;
        for (int oy = y0; oy <= y1; oy++)
            for (int ox = x0; ox <= x1; ox++) {
                long o = first + ((long)oy * s.ow + ox) * s.c;
                if (argmax[o] == me) acc += rt_ld(dout[o]);
            }
        din[i] = rt_st<T>(acc);
    }
}

void cuda_maxpool2d_forward_nhwc(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_forward_nhwc_kernel<T><<<rt_blocks((long)s->n * s->c * s->oh * s->ow), RT_THREADS, 0,
                                                     rt_stream()>>>((T *)out, argmax, (const T *)in, *s));
    CUDA_LAUNCHED();
}

void cuda_maxpool2d_backward_nhwc(void *din, const void *dout, const int32_t *argmax, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_backward_nhwc_kernel<T><<<rt_blocks((long)s->n * s->c * s->h * s->w), RT_THREADS, 0,
                                                      rt_stream()>>>((T *)din, (const T *)dout, argmax, *s));
    CUDA_LAUNCHED();
}
