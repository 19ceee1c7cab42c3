/* 2-D max pooling, NCHW and channels-last (NHWC): the forward saves the winning input
 * position (iy * w + ix) per output (padding never wins); the backward gathers, per input,
 * the gradients of the outputs it won. */
#include "../cuda_common.cuh"
#include "pool_window.cuh"

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
maxpool_forward_kernel(T *out, int32_t *argmax, const T *in, rt_pool_shape s) {
    GRID_STRIDE(o, (long)s.n * s.c * s.oh * s.ow) {
        long pl = o / ((long)s.oh * s.ow);
        int best, oy = (int)(o / s.ow % s.oh), ox = (int)(o % s.ow);
        out[o] = rt_st<T>(pool_window_max(in + pl * s.h * s.w, 1, s, oy, ox, &best));
        argmax[o] = best;
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
maxpool_backward_kernel(T *din, const T *dout, const int32_t *argmax, rt_pool_shape s) {
    GRID_STRIDE(i, (long)s.n * s.c * s.h * s.w) {
        long at = i / ((long)s.h * s.w) * s.oh * s.ow;   /* the plane's first output */
        int iy = (int)(i / s.w % s.h), ix = (int)(i % s.w);
        din[i] = rt_st<T>(pool_argmax_gather(dout + at, argmax + at, 1, s, iy, ix));
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
 * take neighbouring channels of one position. One element a thread: the old kernels, run under
 * TRAINC_CUDA_POOL=old (maxpool2d_nhwc_vec.cu has the default ones). */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
maxpool_forward_nhwc_kernel(T *out, int32_t *argmax, const T *in, rt_pool_shape s) {
    GRID_STRIDE(o, (long)s.n * s.oh * s.ow * s.c) {
        long pos = o / s.c;
        const T *x = in + pos / ((long)s.oh * s.ow) * s.h * s.w * s.c + o % s.c;   /* (n, 0, 0, ch) */
        int best, oy = (int)(pos / s.ow % s.oh), ox = (int)(pos % s.ow);
        out[o] = rt_st<T>(pool_window_max(x, s.c, s, oy, ox, &best));
        argmax[o] = best;
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
maxpool_backward_nhwc_kernel(T *din, const T *dout, const int32_t *argmax, rt_pool_shape s) {
    GRID_STRIDE(i, (long)s.n * s.h * s.w * s.c) {
        long pos = i / s.c, at = pos / ((long)s.h * s.w) * s.oh * s.ow * s.c + i % s.c;   /* output (n, 0, 0, ch) */
        int iy = (int)(pos / s.w % s.h), ix = (int)(pos % s.w);
        din[i] = rt_st<T>(pool_argmax_gather(dout + at, argmax + at, s.c, s, iy, ix));
    }
}

void cuda_maxpool2d_forward_nhwc_old(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_forward_nhwc_kernel<T><<<rt_blocks((long)s->n * s->c * s->oh * s->ow), RT_THREADS, 0,
                                                     rt_stream()>>>((T *)out, argmax, (const T *)in, *s));
    CUDA_LAUNCHED();
}

void cuda_maxpool2d_backward_nhwc_old(void *din, const void *dout, const int32_t *argmax, const rt_pool_shape *s) {
    RT_ACT_DISPATCH(maxpool_backward_nhwc_kernel<T><<<rt_blocks((long)s->n * s->c * s->h * s->w), RT_THREADS, 0,
                                                      rt_stream()>>>((T *)din, (const T *)dout, argmax, *s));
    CUDA_LAUNCHED();
}
