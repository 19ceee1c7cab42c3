/* Batch normalization over (N, H, W) per channel: statistics (with torch's running-stat
 * update), the apply step, and the backward, optionally through a following ReLU's mask.
 * Activations in the context's type; statistics, gamma, beta and their gradients FP32. */
#include "../cuda_common.cuh"

#define BN_THREADS 512

/* One block per channel, two passes in double like the CPU op. */
template <typename T>
__global__ void bn_stats_kernel(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                                const T *in, int n, int c, int hw, float momentum, float eps) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double sum = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) sum += rt_ld(in[(j / hw * c + ch) * hw + j % hw]);
    double mean = block_sum(sum) / m;
    double sq = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        double d = rt_ld(in[(j / hw * c + ch) * hw + j % hw]) - mean;
        sq += d * d;
    }
    sq = block_sum(sq);
    if (threadIdx.x != 0) return;
    double var = sq / m;
    save_mean[ch] = (float)mean;
    save_inv_std[ch] = (float)(1.0 / sqrt(var + eps));
    double unbiased = m > 1 ? sq / (m - 1) : var;
    running_mean[ch] = (float)((1 - momentum) * running_mean[ch] + momentum * mean);
    running_var[ch] = (float)((1 - momentum) * running_var[ch] + momentum * unbiased);
}

__global__ void bn_eval_stats_kernel(float *save_mean, float *save_inv_std, const float *running_mean,
                                     const float *running_var, int c, float eps) {
    GRID_STRIDE(ch, c) {
        save_mean[ch] = running_mean[ch];
        save_inv_std[ch] = 1.0f / sqrtf(running_var[ch] + eps);
    }
}

template <typename T>
__global__ void bn_apply_kernel(T *out, const T *in, const float *gamma, const float *beta, const float *mean,
                                const float *inv_std, int c, long hw, long total, int relu) {
    GRID_STRIDE(i, total) {
        int ch = (int)((i / hw) % c);
        float scale = gamma[ch] * inv_std[ch];
        float y = rt_ld(in[i]) * scale + (beta[ch] - mean[ch] * scale);
        out[i] = rt_st<T>(relu && y < 0.0f ? 0.0f : y);
    }
}

template <typename T>
__global__ void bn_backward_kernel(T *din, float *dgamma, float *dbeta, const T *dout, const T *relu_out,
                                   const T *in, const float *gamma, const float *save_mean,
                                   const float *save_inv_std, int n, int c, int hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    float mean = save_mean[ch], inv_std = save_inv_std[ch];
    double s_dy = 0, s_dy_xhat = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        float dy = relu_out && !(rt_ld(relu_out[i]) > 0.0f) ? 0.0f : rt_ld(dout[i]);
        s_dy += dy;
        s_dy_xhat += dy * (rt_ld(in[i]) - mean) * inv_std;
    }
    s_dy = block_sum(s_dy);
    s_dy_xhat = block_sum(s_dy_xhat);
    if (threadIdx.x == 0) {
        dgamma[ch] = (float)s_dy_xhat;
        dbeta[ch] = (float)s_dy;
    }
    if (!din) return;
    float k = gamma[ch] * inv_std / m, a = (float)s_dy, b = (float)s_dy_xhat;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        float dy = relu_out && !(rt_ld(relu_out[i]) > 0.0f) ? 0.0f : rt_ld(dout[i]);
        float xhat = (rt_ld(in[i]) - mean) * inv_std;
        din[i] = rt_st<T>(k * ((float)m * dy - a - xhat * b));
    }
}

void cuda_batchnorm_stats_train(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                                const void *in, int n, int c, int hw, float momentum, float eps) {
    RT_ACT_DISPATCH(bn_stats_kernel<T><<<c, BN_THREADS, 0, rt_stream()>>>(save_mean, save_inv_std, running_mean,
                                                                         running_var, (const T *)in, n, c, hw,
                                                                         momentum, eps));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_stats_eval(float *save_mean, float *save_inv_std, const float *running_mean,
                               const float *running_var, int c, float eps) {
    bn_eval_stats_kernel<<<rt_blocks(c), RT_THREADS, 0, rt_stream()>>>(save_mean, save_inv_std, running_mean,
                                                                       running_var, c, eps);
    CUDA_LAUNCHED();
}

void cuda_batchnorm_apply(void *out, const void *in, const float *gamma, const float *beta, const float *mean,
                          const float *inv_std, int n, int c, int hw, int relu) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(bn_apply_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, gamma, beta, mean, inv_std, c, hw, total, relu));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_backward(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                             const void *in, const float *gamma, const float *save_mean,
                             const float *save_inv_std, int n, int c, int hw) {
    RT_ACT_DISPATCH(bn_backward_kernel<T><<<c, BN_THREADS, 0, rt_stream()>>>(
        (T *)din, dgamma, dbeta, (const T *)dout, (const T *)relu_out, (const T *)in, gamma, save_mean,
        save_inv_std, n, c, hw));
    CUDA_LAUNCHED();
}
