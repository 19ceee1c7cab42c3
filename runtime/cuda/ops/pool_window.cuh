/* The output windows of a pooling layer that contain one input position: the gather form of
 * the pooling backward passes (no atomics, same summation order as the CPU's scatter). */
#ifndef RT_CUDA_POOL_WINDOW_CUH
#define RT_CUDA_POOL_WINDOW_CUH
#include "../cuda_common.cuh"

/* Outputs o in [lo, hi] along one axis whose window [o*s - p, o*s - p + k - 1] holds i. */
__device__ static inline void pool_window_range(int i, int k, int s, int p, int out, int *lo, int *hi) {
    int a = i + p - k + 1;
    *lo = a <= 0 ? 0 : (a + s - 1) / s;
    *hi = (i + p) / s;
    if (*hi > out - 1) *hi = out - 1;
}

/* Average pooling's divisor: 1 / output (oy, ox)'s window area clipped to the padded input
 * [-p, size + p), as the CPU's (count_include_pad; Caffe's rule for ceil-mode windows). */
__device__ static inline float pool_window_inv(const rt_pool_shape &s, int oy, int ox) {
    int y0 = oy * s.sh - s.ph, x0 = ox * s.sw - s.pw;
    int y1 = min(y0 + s.kh, s.h + s.ph), x1 = min(x0 + s.kw, s.w + s.pw);
    return 1.0f / (float)((y1 - y0) * (x1 - x0));
}

/* Max over output (oy, ox)'s window of one channel, whose position (iy, ix) sits at
 * x[(iy * w + ix) * step] (step 1: NCHW plane, c: channels-last); *best gets the winning
 * position iy * w + ix, -1 when the window lies in the padding. */
template <typename T>
__device__ static inline float pool_window_max(const T *x, long step, const rt_pool_shape &s, int oy, int ox,
                                               int *best) {
    float bv = 0.0f;
    *best = -1;
    for (int ki = 0; ki < s.kh; ki++) {
        int iy = oy * s.sh - s.ph + ki;
        if (iy < 0 || iy >= s.h) continue;
        for (int kj = 0; kj < s.kw; kj++) {
            int ix = ox * s.sw - s.pw + kj;
            if (ix < 0 || ix >= s.w) continue;
            float v = rt_ld(x[((long)iy * s.w + ix) * step]);
            if (*best < 0 || v > bv) { bv = v; *best = iy * s.w + ix; }
        }
    }
    return bv;
}

/* The max-pool gradient of input (iy, ix): the sum of dout over the outputs whose argmax is
 * it; output (oy, ox) of this channel sits at dout[(oy * ow + ox) * step], argmax alike. */
template <typename T>
__device__ static inline float pool_argmax_gather(const T *dout, const int32_t *argmax, long step,
                                                  const rt_pool_shape &s, int iy, int ix) {
    int y0, y1, x0, x1, me = iy * s.w + ix;
    pool_window_range(iy, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
    pool_window_range(ix, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
    float acc = 0.0f;
    for (int oy = y0; oy <= y1; oy++)
        for (int ox = x0; ox <= x1; ox++) {
            long o = ((long)oy * s.ow + ox) * step;
            if (argmax[o] == me) acc += rt_ld(dout[o]);
        }
    return acc;
}
/* The old channels-last max-pool launchers (maxpool2d.cu), same arguments as rt_cuda.h's. */
void cuda_maxpool2d_forward_nhwc_old(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s);
void cuda_maxpool2d_backward_nhwc_old(void *din, const void *dout, const int32_t *argmax, const rt_pool_shape *s);
#endif
