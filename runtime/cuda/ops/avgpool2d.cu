/* 2-D average pooling, count_include_pad = true (torch's default): every window divides by
 * its area inside the padded input (kh·kw in floor mode; less for a ceil-mode window past the
 * padding, Caffe's rule); the backward gathers per input from the windows that hold it. */
#include "../cuda_common.cuh"
#include "pool_window.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
avgpool_forward_kernel(T *out, const T *in, rt_pool_shape s) {
    GRID_STRIDE(o, (long)s.n * s.c * s.oh * s.ow) {
        long pl = o / ((long)s.oh * s.ow);
        int oy = (int)(o / s.ow % s.oh), ox = (int)(o % s.ow);
        const T *x = in + pl * s.h * s.w;
        float acc = 0.0f;
        for (int ki = 0; ki < s.kh; ki++) {
            int iy = oy * s.sh - s.ph + ki;
            if (iy < 0 || iy >= s.h) continue;
            for (int kj = 0; kj < s.kw; kj++) {
                int ix = ox * s.sw - s.pw + kj;
                if (ix >= 0 && ix < s.w) acc += rt_ld(x[iy * s.w + ix]);
            }
        }
        out[o] = rt_st<T>(acc * pool_window_inv(s, oy, ox));
    }
}

/* At least 6 resident blocks: ~40 registers. With the block size alone, ptxas capped the
 * 16-bit variants at 32 and spilled (the clipped window of ceil mode needs a few more). */
template <typename T> __global__ void __launch_bounds__(RT_THREADS, 6)
avgpool_backward_kernel(T *din, const T *dout, rt_pool_shape s) {
    GRID_STRIDE(i, (long)s.n * s.c * s.h * s.w) {
        long pl = i / ((long)s.h * s.w);
        int iy = (int)(i / s.w % s.h), ix = (int)(i % s.w);
        int y0, y1, x0, x1;
        pool_window_range(iy, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
        pool_window_range(ix, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
        const T *dy = dout + pl * s.oh * s.ow;
        float acc = 0.0f;
        for (int oy = y0; oy <= y1; oy++)
            for (int ox = x0; ox <= x1; ox++) acc += rt_ld(dy[oy * s.ow + ox]) * pool_window_inv(s, oy, ox);
        din[i] = rt_st<T>(acc);
    }
}

void cuda_avgpool2d_forward(void *out, const void *in, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(avgpool_forward_kernel<T><<<rt_blocks((long)s->n * s->c * s->oh * s->ow), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, *s));
    CUDA_LAUNCHED();
}

void cuda_avgpool2d_backward(void *din, const void *dout, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(avgpool_backward_kernel<T><<<rt_blocks((long)s->n * s->c * s->h * s->w), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, *s));
    CUDA_LAUNCHED();
}
