/* Batch normalization on channels-last tensors [N, H, W, C] (the layout cuDNN's tensor-core
 * convolutions want): the statistics, apply and backward of batchnorm.cu, with the N*H*W rows
 * of each channel reduced across blocks in channel tiles (channel_tiles.cuh) and the partial
 * sums added in a fixed order (batchnorm_sums.cuh). One thread per channel and element: the old
 * kernels, run under TRAINC_CUDA_BN=old (batchnorm_nhwc_vec.cu has the default ones). */
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

/* Sums of d and d^2, d = x - shift[ch] (the running mean, as in batchnorm.cu). */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
nhwc_partial_stats_kernel(double *part, const T *in, const float *shift, long rows, long per, int c) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    double sum = 0, sq = 0, k = ch < c ? shift[ch] : 0.0;
    nhwc_for_each(rows, per, c, [&](long i) {
        double d = rt_ld(in[i]) - k;
        sum += d;
        sq += d * d;
    });
    nhwc_tile_sums(sum, sq, part, c);
}

template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
nhwc_apply_kernel(T *out, const T *in, const float *gamma, const float *beta, const float *mean,
                  const float *inv_std, long rows, long per, int c, int relu) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    float scale = ch < c ? gamma[ch] * inv_std[ch] : 0.0f, shift = ch < c ? beta[ch] - mean[ch] * scale : 0.0f;
    nhwc_for_each(rows, per, c, [&](long i) {
        float y = rt_ld(in[i]) * scale + shift;
        out[i] = rt_st<T>(relu && y < 0.0f ? 0.0f : y);
    });
}

template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
nhwc_partial_grads_kernel(double *part, const T *dout, const T *relu_out, const T *in,
                          const float *save_mean, const float *save_inv_std, long rows, long per,
                          int c) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    float mean = ch < c ? save_mean[ch] : 0.0f, inv_std = ch < c ? save_inv_std[ch] : 0.0f;
    double s_dy = 0, s_dy_xhat = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        float dy = bn_dy(dout, relu_out, i);
        s_dy += dy;
        s_dy_xhat += dy * (rt_ld(in[i]) - mean) * inv_std;
    });
    nhwc_tile_sums(s_dy, s_dy_xhat, part, c);
}

/* din = gamma·inv_std/m · (m·dy - sum dy - xhat · sum dy·xhat), as in batchnorm.cu. */
/* At least 6 resident blocks (42 registers): with the block size alone ptxas aims at full
 * occupancy, 32 registers, and spills the 16-bit variants. */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES, 6)
nhwc_input_grad_kernel(T *din, const T *dout, const T *relu_out, const T *in, const float *gamma,
                       const double *totals, long m, const float *save_mean,
                       const float *save_inv_std, long rows, long per, int c) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    if (ch >= c) return;
    float mean = save_mean[ch], inv_std = save_inv_std[ch];
    float k = gamma[ch] * inv_std / m, a = (float)totals[2 * ch], b = (float)totals[2 * ch + 1];
    nhwc_for_each(rows, per, c, [&](long i) {
        float xhat = (rt_ld(in[i]) - mean) * inv_std;
        din[i] = rt_st<T>(k * ((float)m * bn_dy(dout, relu_out, i) - a - xhat * b));
    });
}

static const dim3 nhwc_block(TILE_C, ROW_LANES);

void cuda_batchnorm_stats_train_nhwc_old(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                                     const void *in, int n, int c, int hw, float momentum, float eps, int sync) {
    long rows = (long)n * hw;
    nhwc_split sp = nhwc_split_of(rows);
    double *part = bn_partials(sp.splits, c);
    RT_ACT_DISPATCH(nhwc_partial_stats_kernel<T><<<nhwc_grid(c, sp), nhwc_block, 0, rt_stream()>>>(
        part, (const T *)in, running_mean, rows, sp.per, c));
    CUDA_LAUNCHED();
    bn_finish_stats(save_mean, save_inv_std, running_mean, running_var, part, sp.splits, c, rows, momentum, eps, sync);
}

void cuda_batchnorm_apply_nhwc_old(void *out, const void *in, const float *gamma, const float *beta, const float *mean,
                               const float *inv_std, int n, int c, int hw, int relu) {
    long rows = (long)n * hw;
    nhwc_split sp = nhwc_split_of(rows);
    RT_ACT_DISPATCH(nhwc_apply_kernel<T><<<nhwc_grid(c, sp), nhwc_block, 0, rt_stream()>>>(
        (T *)out, (const T *)in, gamma, beta, mean, inv_std, rows, sp.per, c, relu));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_backward_nhwc_old(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                                  const void *in, const float *gamma, const float *save_mean,
                                  const float *save_inv_std, int n, int c, int hw, int sync) {
    long rows = (long)n * hw;
    nhwc_split sp = nhwc_split_of(rows);
    double *part = bn_partials(sp.splits, c);
    dim3 grid = nhwc_grid(c, sp);
    RT_ACT_DISPATCH(nhwc_partial_grads_kernel<T><<<grid, nhwc_block, 0, rt_stream()>>>(
        part, (const T *)dout, (const T *)relu_out, (const T *)in, save_mean, save_inv_std, rows, sp.per, c));
    CUDA_LAUNCHED();
    long m = rows;
    if (!din) sync = 0;   /* dgamma and dbeta are this rank's share: only din needs every rank's sums */
    const double *totals = bn_finish_grads(dgamma, dbeta, part, sp.splits, c, &m, sync);
    if (!din) return;
    RT_ACT_DISPATCH(nhwc_input_grad_kernel<T><<<grid, nhwc_block, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)relu_out, (const T *)in, gamma, totals, m, save_mean, save_inv_std,
        rows, sp.per, c));
    CUDA_LAUNCHED();
}
