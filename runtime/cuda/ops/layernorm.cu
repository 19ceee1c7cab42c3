/* Layer normalization over channels per (sample, pixel), NCHW (ConvNeXt channels_first):
 * one thread per pixel, so neighbouring threads read neighbouring addresses. Activations in
 * the context's type; mean, rstd, gamma, beta and their gradients FP32. Channels-last rows
 * (hw = 1) take one warp per row, its lanes reading neighbouring channels, and reduce the
 * parameter gradients in channel tiles (channel_tiles.cuh). */
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_forward_kernel(T *out, float *save_mean, float *save_rstd, const T *in, const float *gamma,
                  const float *beta, int n, int c, int hw, float eps) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const T *x = in + b * c * hw + p;
        T *y = out + b * c * hw + p;
        double sum = 0, sq = 0;
        for (int ch = 0; ch < c; ch++) sum += rt_ld(x[(long)ch * hw]);
        double mean = sum / c;
        for (int ch = 0; ch < c; ch++) {
            double d = rt_ld(x[(long)ch * hw]) - mean;
            sq += d * d;
        }
        float rstd = (float)(1.0 / sqrt(sq / c + eps)), fmean = (float)mean;
        save_mean[q] = fmean;
        save_rstd[q] = rstd;
        for (int ch = 0; ch < c; ch++)
            y[(long)ch * hw] = rt_st<T>((rt_ld(x[(long)ch * hw]) - fmean) * rstd * gamma[ch] + beta[ch]);
    }
}

/* Parameter gradients: one block per channel, fixed order. */
template <typename T>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
ln_param_grad_kernel(float *dgamma, float *dbeta, const T *dout, const T *in, const float *save_mean,
                     const float *save_rstd, int n, int c, int hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double dg = 0, db = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long b = j / hw, p = j % hw, i = (b * c + ch) * hw + p;
        float xhat = (rt_ld(in[i]) - save_mean[j]) * save_rstd[j];
        float dy = rt_ld(dout[i]);
        dg += dy * xhat;
        db += dy;
    }
    dg = block_sum(dg);
    db = block_sum(db);
    if (threadIdx.x == 0) {
        dgamma[ch] = (float)dg;
        dbeta[ch] = (float)db;
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_input_grad_kernel(T *din, const T *dout, const T *in, const float *gamma, const float *save_mean,
                     const float *save_rstd, int n, int c, int hw) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const T *x = in + b * c * hw + p, *dy = dout + b * c * hw + p;
        T *dx = din + b * c * hw + p;
        float mean = save_mean[q], rstd = save_rstd[q];
        double sg = 0, sgx = 0;
        for (int ch = 0; ch < c; ch++) {
            float g = rt_ld(dy[(long)ch * hw]) * gamma[ch];
            sg += g;
            sgx += g * (rt_ld(x[(long)ch * hw]) - mean) * rstd;
        }
        for (int ch = 0; ch < c; ch++) {
            float g = rt_ld(dy[(long)ch * hw]) * gamma[ch];
            float xhat = (rt_ld(x[(long)ch * hw]) - mean) * rstd;
            dx[(long)ch * hw] = rt_st<T>(rstd / c * ((float)c * g - (float)sg - xhat * (float)sgx));
        }
    }
}

/* Sum over the 32 lanes of a warp, every lane reaching it (a fixed tree: results repeat). */
__device__ static inline double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* hw = 1: one warp per row of c channels. */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_rows_forward_kernel(T *out, float *save_mean, float *save_rstd, const T *in, const float *gamma,
                       const float *beta, long rows, int c, float eps) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    for (long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const T *x = in + r * c;
        T *y = out + r * c;
        double sum = 0, sq = 0;
        for (int ch = lane; ch < c; ch += 32) sum += rt_ld(x[ch]);
        double mean = warp_sum(sum) / c;
        for (int ch = lane; ch < c; ch += 32) {
            double d = rt_ld(x[ch]) - mean;
            sq += d * d;
        }
        float rstd = (float)(1.0 / sqrt(warp_sum(sq) / c + eps)), fmean = (float)mean;
        if (lane == 0) save_mean[r] = fmean, save_rstd[r] = rstd;
        for (int ch = lane; ch < c; ch += 32) y[ch] = rt_st<T>((rt_ld(x[ch]) - fmean) * rstd * gamma[ch] + beta[ch]);
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_rows_input_grad_kernel(T *din, const T *dout, const T *in, const float *gamma, const float *save_mean,
                          const float *save_rstd, long rows, int c) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    for (long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const T *x = in + r * c, *dy = dout + r * c;
        T *dx = din + r * c;
        float mean = save_mean[r], rstd = save_rstd[r];
        double sg = 0, sgx = 0;
        for (int ch = lane; ch < c; ch += 32) {
            float g = rt_ld(dy[ch]) * gamma[ch];
            sg += g;
            sgx += g * (rt_ld(x[ch]) - mean) * rstd;
        }
        sg = warp_sum(sg), sgx = warp_sum(sgx);
        for (int ch = lane; ch < c; ch += 32) {
            float g = rt_ld(dy[ch]) * gamma[ch];
            float xhat = (rt_ld(x[ch]) - mean) * rstd;
            dx[ch] = rt_st<T>(rstd / c * ((float)c * g - (float)sg - xhat * (float)sgx));
        }
    }
}

/* hw = 1: this block's rows of 32 neighbouring channels: sum dy (first) and dy·xhat (second). */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
ln_rows_partial_kernel(double *part, const T *dout, const T *in, const float *save_mean, const float *save_rstd,
                       long rows, long per, int c) {
    double dg = 0, db = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        long row = i / c;
        float xhat = (rt_ld(in[i]) - save_mean[row]) * save_rstd[row];
        float dy = rt_ld(dout[i]);
        dg += dy * xhat;
        db += dy;
    });
    nhwc_tile_sums(db, dg, part, c);
}

void cuda_layernorm_forward(void *out, float *save_mean, float *save_rstd, const void *in, const float *gamma,
                            const float *beta, int n, int c, int hw, float eps) {
    if (hw == 1) {
        RT_ACT_DISPATCH(ln_rows_forward_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
            (T *)out, save_mean, save_rstd, (const T *)in, gamma, beta, n, c, eps));
        CUDA_LAUNCHED();
        return;
    }
    RT_ACT_DISPATCH(ln_forward_kernel<T><<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, save_mean, save_rstd, (const T *)in, gamma, beta, n, c, hw, eps));
    CUDA_LAUNCHED();
}

void cuda_layernorm_backward(void *din, float *dgamma, float *dbeta, const void *dout, const void *in,
                             const float *gamma, const float *save_mean, const float *save_rstd, int n, int c,
                             int hw) {
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(ln_rows_partial_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (const T *)dout, (const T *)in, save_mean, save_rstd, n, sp.per, c));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(dgamma, dbeta, part, sp.splits, c, &m, 0);
    } else {
        RT_ACT_DISPATCH(ln_param_grad_kernel<T><<<c, RT_CHANNEL_THREADS, 0, rt_stream()>>>(
            dgamma, dbeta, (const T *)dout, (const T *)in, save_mean, save_rstd, n, c, hw));
        CUDA_LAUNCHED();
    }
    if (!din) return;
    if (hw == 1) {
        RT_ACT_DISPATCH(ln_rows_input_grad_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
            (T *)din, (const T *)dout, (const T *)in, gamma, save_mean, save_rstd, n, c));
        CUDA_LAUNCHED();
        return;
    }
    RT_ACT_DISPATCH(ln_input_grad_kernel<T><<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)in, gamma, save_mean, save_rstd, n, c, hw));
    CUDA_LAUNCHED();
}
