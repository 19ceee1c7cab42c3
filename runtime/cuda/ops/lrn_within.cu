/* Local response normalization within each channel (Caffe's WITHIN_CHANNEL): a size x size
 * zero-padded spatial window, alpha divided by size^2, one thread per element, as the CPU's
 * lrn_within.c. The saved scale is FP32 in every precision. */
#include "../cuda_common.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
lrn_within_forward_kernel(T *out, float *save_scale, const T *in, int h, int w, int r, long total,
                                          float a, float beta, float k) {
    GRID_STRIDE(i, total) {
        long plane = i / ((long)h * w);
        int y = (int)(i / w % h), x = (int)(i % w);
        const T *p = in + plane * h * w;
        float sq = 0.0f;
        for (int yy = max(y - r, 0); yy <= min(y + r, h - 1); yy++)
            for (int xx = max(x - r, 0); xx <= min(x + r, w - 1); xx++) {
                float v = rt_ld(p[(long)yy * w + xx]);
                sq += v * v;
            }
        float sc = k + a * sq;
        save_scale[i] = sc;
        out[i] = rt_st<T>(rt_ld(in[i]) * powf(sc, -beta));
    }
}

/* The window is symmetric: the outputs whose window holds pixel i are those of i's window. */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
lrn_within_backward_kernel(T *din, const T *dout, const T *in, const T *out, const float *save_scale,
                                           int h, int w, int r, long total, float beta, float coef) {
    GRID_STRIDE(i, total) {
        long base = i / ((long)h * w) * h * w;
        int y = (int)(i / w % h), x = (int)(i % w);
        float acc = 0.0f;
        for (int yy = max(y - r, 0); yy <= min(y + r, h - 1); yy++)
            for (int xx = max(x - r, 0); xx <= min(x + r, w - 1); xx++) {
                long q = base + (long)yy * w + xx;
                acc += rt_ld(dout[q]) * rt_ld(out[q]) / save_scale[q];
            }
        din[i] = rt_st<T>(rt_ld(dout[i]) * powf(save_scale[i], -beta) - coef * rt_ld(in[i]) * acc);
    }
}

void cuda_lrn_within_forward(void *out, float *save_scale, const void *in, int n, int c, int h, int w, int size,
                             float alpha, float beta, float k) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(lrn_within_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, save_scale, (const T *)in, h, w, (size - 1) / 2, total, alpha / ((float)size * size), beta, k));
    CUDA_LAUNCHED();
}

void cuda_lrn_within_backward(void *din, const void *dout, const void *in, const void *out, const float *save_scale,
                              int n, int c, int h, int w, int size, float alpha, float beta) {
    long total = (long)n * c * h * w;
    RT_ACT_DISPATCH(lrn_within_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)in, (const T *)out, save_scale, h, w, (size - 1) / 2, total, beta,
        2 * alpha * beta / ((float)size * size)));
    CUDA_LAUNCHED();
}
