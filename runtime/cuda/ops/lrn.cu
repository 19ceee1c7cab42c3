/* Local response normalization across channels (torch/Caffe: alpha divided by size), one
 * thread per element; the backward sums over the windows that hold each channel. The saved
 * scale is FP32 in every precision. */
#include "../cuda_common.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
lrn_forward_kernel(T *out, float *save_scale, const T *in, int c, long hw, long total, int size,
                   float a, float beta, float k) {
    GRID_STRIDE(i, total) {
        long p = i % hw, b = i / hw / c;
        int ch = (int)(i / hw % c);
        int lo = ch - size / 2, hi = ch + (size - 1) / 2;
        if (lo < 0) lo = 0;
        if (hi > c - 1) hi = c - 1;
        const T *x = in + b * c * hw + p;
        float sq = 0.0f;
        for (int j = lo; j <= hi; j++) {
            float v = rt_ld(x[(long)j * hw]);
            sq += v * v;
        }
        float sc = k + a * sq;
        save_scale[i] = sc;
        out[i] = rt_st<T>(rt_ld(in[i]) * powf(sc, -beta));
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
lrn_backward_kernel(T *din, const T *dout, const T *in, const T *out, const float *save_scale, int c,
                    long hw, long total, int size, float beta, float coef) {
    GRID_STRIDE(i, total) {
        long p = i % hw, b = i / hw / c;
        int ch = (int)(i / hw % c);
        int lo = ch - (size - 1) / 2, hi = ch + size / 2;
        if (lo < 0) lo = 0;
        if (hi > c - 1) hi = c - 1;
        long base = b * c * hw + p;
        float acc = 0.0f;
        for (int j = lo; j <= hi; j++) {
            long q = base + (long)j * hw;
            acc += rt_ld(dout[q]) * rt_ld(out[q]) / save_scale[q];
        }
        din[i] = rt_st<T>(rt_ld(dout[i]) * powf(save_scale[i], -beta) - coef * rt_ld(in[i]) * acc);
    }
}

void cuda_lrn_forward(void *out, float *save_scale, const void *in, int n, int c, int hw, int size, float alpha,
                      float beta, float k) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(lrn_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, save_scale, (const T *)in, c, hw, total, size, alpha / size, beta, k));
    CUDA_LAUNCHED();
}

void cuda_lrn_backward(void *din, const void *dout, const void *in, const void *out, const float *save_scale, int n,
                       int c, int hw, int size, float alpha, float beta) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(lrn_backward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)in, (const T *)out, save_scale, c, hw, total, size, beta,
        2 * alpha * beta / size));
    CUDA_LAUNCHED();
}
