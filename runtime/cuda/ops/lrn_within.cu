/* Local response normalization within each channel (Caffe's WITHIN_CHANNEL): a size x size
 * zero-padded spatial window, alpha divided by size^2, one thread per element, as the CPU's
 * lrn_within.c; NCHW, or channels-last (the _nhwc pair: a window's pixels then sit c elements
 * apart, and a warp's threads take neighbouring channels, so each of its reads is coalesced).
 * The saved scale is FP32 in every precision, in the tensors' layout. */
#include "../cuda_common.cuh"

/* Element i's pixel (y, x) and where its channel's plane starts: pixel (yy, xx) of that
 * plane is at base + (yy * w + xx) * step (step 1: NCHW, c: channels-last). */
struct lrn_pixel {
    long base;
    int y, x;
};
__device__ static inline lrn_pixel lrn_pixel_of(long i, int c, int h, int w, int nhwc) {
    if (!nhwc) return { i / ((long)h * w) * h * w, (int)(i / w % h), (int)(i % w) };
    long pos = i / c;
    return { pos / ((long)h * w) * h * w * c + (i - pos * c), (int)(pos / w % h), (int)(pos % w) };
}

/* At least 6 resident blocks, ~40 registers: with the block size alone ptxas capped the 16-bit
 * forward at 32 and spilled once the pixel's channel stride came in. */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS, 6)
lrn_within_forward_kernel(T *out, float *save_scale, const T *in, int c, int h, int w, int nhwc, int r, long total,
                          float a, float beta, float k) {
    long step = nhwc ? c : 1;
    GRID_STRIDE(i, total) {
        lrn_pixel px = lrn_pixel_of(i, c, h, w, nhwc);
        const T *p = in + px.base;
        float sq = 0.0f;
        for (int yy = max(px.y - r, 0); yy <= min(px.y + r, h - 1); yy++)
            for (int xx = max(px.x - r, 0); xx <= min(px.x + r, w - 1); xx++) {
                float v = rt_ld(p[((long)yy * w + xx) * step]);
                sq += v * v;
            }
        float sc = k + a * sq;
        save_scale[i] = sc;
        out[i] = rt_st<T>(rt_ld(in[i]) * powf(sc, -beta));
    }
}

/* The window is symmetric: the outputs whose window holds pixel i are those of i's window. */
/* At least 4 resident blocks (64 registers): at 40, sm_80's ptxas spilled it. */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS, 4)
lrn_within_backward_kernel(T *din, const T *dout, const T *in, const T *out, const float *save_scale, int c, int h,
                           int w, int nhwc, int r, long total, float beta, float coef) {
    long step = nhwc ? c : 1;
    GRID_STRIDE(i, total) {
        lrn_pixel px = lrn_pixel_of(i, c, h, w, nhwc);
        float acc = 0.0f;
        for (int yy = max(px.y - r, 0); yy <= min(px.y + r, h - 1); yy++)
            for (int xx = max(px.x - r, 0); xx <= min(px.x + r, w - 1); xx++) {
                long q = px.base + ((long)yy * w + xx) * step;
                acc += rt_ld(dout[q]) * rt_ld(out[q]) / save_scale[q];
            }
        din[i] = rt_st<T>(rt_ld(dout[i]) * powf(save_scale[i], -beta) - coef * rt_ld(in[i]) * acc);
    }
}

static void lrn_within_forward(void *out, float *save_scale, const void *in, int n, int c, int h, int w, int nhwc,
                               int size, float alpha, float beta, float k) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(lrn_within_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, save_scale, (const T *)in, c, h, w, nhwc, (size - 1) / 2, total, alpha / ((float)size * size), beta,
        k));
    CUDA_LAUNCHED();
}

static void lrn_within_backward(void *din, const void *dout, const void *in, const void *out, const float *save_scale,
                                int n, int c, int h, int w, int nhwc, int size, float alpha, float beta) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(lrn_within_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)in, (const T *)out, save_scale, c, h, w, nhwc, (size - 1) / 2, total,
        beta, 2 * alpha * beta / ((float)size * size)));
    CUDA_LAUNCHED();
}

void cuda_lrn_within_forward(void *out, float *save_scale, const void *in, int n, int c, int h, int w, int size,
                             float alpha, float beta, float k) {
    lrn_within_forward(out, save_scale, in, n, c, h, w, 0, size, alpha, beta, k);
}

void cuda_lrn_within_backward(void *din, const void *dout, const void *in, const void *out, const float *save_scale,
                              int n, int c, int h, int w, int size, float alpha, float beta) {
    lrn_within_backward(din, dout, in, out, save_scale, n, c, h, w, 0, size, alpha, beta);
}

void cuda_lrn_within_forward_nhwc(void *out, float *save_scale, const void *in, int n, int c, int h, int w, int size,
                                  float alpha, float beta, float k) {
    lrn_within_forward(out, save_scale, in, n, c, h, w, 1, size, alpha, beta, k);
}

void cuda_lrn_within_backward_nhwc(void *din, const void *dout, const void *in, const void *out,
                                   const float *save_scale, int n, int c, int h, int w, int size, float alpha,
                                   float beta) {
    lrn_within_backward(din, dout, in, out, save_scale, n, c, h, w, 1, size, alpha, beta);
}
