/* A batch norm applied inside the next conv's prologue (fuse_conv_bn.c ir_op.bn_in_conv; the
 * conv runs conv_bn_fprop.cu's scale-bias-ReLU graph): the bn's own pass finalizes its
 * statistics into the per-channel scale = gamma·inv_std and bias = beta - mean·scale the
 * prologue reads, in one small launch where the conv before it summed them (genstats), and the
 * conv's weight gradient reads relu(x·scale + bias) recomputed here from the bn's input (the
 * forward never wrote it). The scale and bias are in the activation type, as cuDNN's graph
 * takes them; the prologue and the recompute compute in FP32 from them, so both see the same
 * values, and the bn's backward (batchnorm_nhwc_vec.cu cuda_batchnorm_backward_nhwc_sbr)
 * recomputes the ReLU's condition the same way. */
#include "../cuda_libs.cuh"
#include "batchnorm_sums.cuh"

/* Per channel: the statistics from the sums the conv's epilogue left (the raw sum and sum of
 * squares over m values, FP32, in the channel-sums scratch: conv_bn_fprop.cu), through batch
 * norm's own finish, then the prologue's scale and bias. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
finalize_scale_bias_kernel(T *scale_bias, float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                           const float *sums, const float *gamma, const float *beta, int c, long m, float momentum,
                           float eps) {
    int ch = blockIdx.x * blockDim.x + threadIdx.x;
    if (ch >= c) return;
    double k = running_mean[ch], s = sums[ch], sq = sums[c + ch];
    float2 st = finish_channel_stats(save_mean, save_inv_std, running_mean, running_var, ch, s - m * k,
                                     sq - 2 * k * s + m * k * k, m, momentum, eps);
    float scale = gamma[ch] * st.y;   /* as cuda_bn_scale_bias computes them */
    scale_bias[ch] = rt_st<T>(scale);
    scale_bias[c + ch] = rt_st<T>(beta[ch] - st.x * scale);
}

void cuda_conv_bn_stats_scale_bias(const rt_cuda_conv_bn *f, float *save_mean, float *save_inv_std, float *running_mean,
                                   float *running_var, void *scale_bias, const float *gamma, const float *beta,
                                   const void *out, int n, int c, int hw, float momentum, float eps) {
    if (!f || !rt_cuda_conv_bn_fused(f, NULL)) {   /* a statistics pass over out, then the scale and bias */
        if (f)
            cuda_conv_bn_stats(f, save_mean, save_inv_std, running_mean, running_var, out, n, c, hw, momentum, eps, 1);
        else
            cuda_batchnorm_stats_train_nhwc_retire(save_mean, save_inv_std, running_mean, running_var, out, n, c, hw,
                                                   momentum, eps, 0);
        cuda_bn_scale_bias(scale_bias, gamma, beta, save_mean, save_inv_std, c);
        return;
    }
    const float *sums = (const float *)bn_channel_totals(c);   /* where conv_bn_fprop.cu's graph wrote them */
    RT_ACT_DISPATCH(finalize_scale_bias_kernel<T><<<(c + RT_THREADS - 1) / RT_THREADS, RT_THREADS, 0, rt_stream()>>>(
        (T *)scale_bias, save_mean, save_inv_std, running_mean, running_var, sums, gamma, beta, c, (long)n * hw, momentum,
        eps));
    CUDA_LAUNCHED();
}

/* out = relu(in·scale + bias) per channel of rows of c channels, rounded to the activation
 * type: the values the prologue fed the conv. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
scale_bias_relu_kernel(T *__restrict__ out, const T *__restrict__ in, const T *__restrict__ scale_bias, long total, int c) {
    GRID_STRIDE(i, total) {
        int ch = (int)(i % c);
        float v = rt_ld(in[i]) * rt_ld(scale_bias[ch]) + rt_ld(scale_bias[c + ch]);
        out[i] = rt_st<T>(v > 0.0f ? v : 0.0f);
    }
}

void cuda_bn_scale_bias_relu(void *out, const void *in, const void *scale_bias, long rows, int c) {
    long total = rows * c;
    RT_ACT_DISPATCH(scale_bias_relu_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)in, (const T *)scale_bias, total, c));
    CUDA_LAUNCHED();
}
