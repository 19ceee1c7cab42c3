/* Local response normalization across channels (torch/Caffe: alpha divided by size), one
 * thread per element; the backward sums over the windows that hold each channel. */
#include "../cuda_common.cuh"

__global__ void lrn_forward_kernel(float *out, float *save_scale, const float *in, int c, long hw, long total,
                                   int size, float a, float beta, float k) {
    GRID_STRIDE(i, total) {
        long p = i % hw, b = i / hw / c;
        int ch = (int)(i / hw % c);
        int lo = ch - size / 2, hi = ch + (size - 1) / 2;
        if (lo < 0) lo = 0;
        if (hi > c - 1) hi = c - 1;
        const float *x = in + b * c * hw + p;
        float sq = 0.0f;
        for (int j = lo; j <= hi; j++) sq += x[(long)j * hw] * x[(long)j * hw];
        float sc = k + a * sq;
        save_scale[i] = sc;
        out[i] = in[i] * powf(sc, -beta);
    }
}

__global__ void lrn_backward_kernel(float *din, const float *dout, const float *in, const float *out,
                                    const float *save_scale, int c, long hw, long total, int size, float beta,
                                    float coef) {
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
            acc += dout[q] * out[q] / save_scale[q];
        }
        din[i] = dout[i] * powf(save_scale[i], -beta) - coef * in[i] * acc;
    }
}

void cuda_lrn_forward(float *out, float *save_scale, const float *in, int n, int c, int hw, int size, float alpha,
                      float beta, float k) {
    long total = (long)n * c * hw;
    lrn_forward_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(out, save_scale, in, c, hw, total, size,
                                                                         alpha / size, beta, k);
    CUDA_LAUNCHED();
}

void cuda_lrn_backward(float *din, const float *dout, const float *in, const float *out, const float *save_scale,
                       int n, int c, int hw, int size, float alpha, float beta) {
    long total = (long)n * c * hw;
    lrn_backward_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(din, dout, in, out, save_scale, c, hw,
                                                                          total, size, beta,
                                                                          2 * alpha * beta / size);
    CUDA_LAUNCHED();
}
