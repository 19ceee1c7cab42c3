/* Layer normalization over channels per (sample, pixel), NCHW (ConvNeXt channels_first):
 * one thread per pixel, so neighbouring threads read neighbouring addresses. Activations in
 * the context's type; mean, rstd, gamma, beta and their gradients FP32. Channels-last rows
 * (hw = 1) take one warp per row, its lanes reading neighbouring channels, and reduce the
 * parameter gradients in channel tiles (channel_tiles.cuh). With xb (lower: fuse_ln_bias.c) the
 * norm's input is its producer conv's output without that conv's bias, which every pass adds
 * as it reads x, and the backward sums the bias gradient too (channels-last: in the input
 * gradient's launch; NCHW: bias.cu's pass over din). */
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

/* x as the norm reads it: the stored value, or that plus the producer conv's bias rounded to T
 * as the generated bias kernel stores it (r = v0 + bias[c]), so every pass sees the unfused
 * values bit for bit and nothing but the conv's output is kept for the backward. */
template <typename T> __device__ static inline float ln_x(const T *x, long i, const float *xb, int ch) {
    return xb ? rt_ld(rt_st<T>(rt_ld(x[i]) + xb[ch])) : rt_ld(x[i]);
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_forward_kernel(T *out, float *save_mean, float *save_rstd, const T *in, const float *xb, const float *gamma,
                  const float *beta, int n, int c, int hw, float eps) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const T *x = in + b * c * hw + p;
        T *y = out + b * c * hw + p;
        double sum = 0, sq = 0;
        for (int ch = 0; ch < c; ch++) sum += ln_x(x, (long)ch * hw, xb, ch);
        double mean = sum / c;
        for (int ch = 0; ch < c; ch++) {
            double d = ln_x(x, (long)ch * hw, xb, ch) - mean;
            sq += d * d;
        }
        float rstd = (float)(1.0 / sqrt(sq / c + eps)), fmean = (float)mean;
        save_mean[q] = fmean;
        save_rstd[q] = rstd;
        for (int ch = 0; ch < c; ch++)
            y[(long)ch * hw] = rt_st<T>((ln_x(x, (long)ch * hw, xb, ch) - fmean) * rstd * gamma[ch] + beta[ch]);
    }
}

/* Parameter gradients: one block per channel, fixed order. */
template <typename T>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
ln_param_grad_kernel(float *dgamma, float *dbeta, const T *dout, const T *in, const float *xb,
                     const float *save_mean, const float *save_rstd, int n, int c, int hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double dg = 0, db = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long b = j / hw, p = j % hw, i = (b * c + ch) * hw + p;
        float xhat = (ln_x(in, i, xb, ch) - save_mean[j]) * save_rstd[j];
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
ln_input_grad_kernel(T *din, const T *dout, const T *in, const float *xb, const float *gamma,
                     const float *save_mean, const float *save_rstd, int n, int c, int hw) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const T *x = in + b * c * hw + p, *dy = dout + b * c * hw + p;
        T *dx = din + b * c * hw + p;
        float mean = save_mean[q], rstd = save_rstd[q];
        double sg = 0, sgx = 0;
        for (int ch = 0; ch < c; ch++) {
            float g = rt_ld(dy[(long)ch * hw]) * gamma[ch];
            sg += g;
            sgx += g * (ln_x(x, (long)ch * hw, xb, ch) - mean) * rstd;
        }
        for (int ch = 0; ch < c; ch++) {
            float g = rt_ld(dy[(long)ch * hw]) * gamma[ch];
            float xhat = (ln_x(x, (long)ch * hw, xb, ch) - mean) * rstd;
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
ln_rows_forward_kernel(T *out, float *save_mean, float *save_rstd, const T *in, const float *xb, const float *gamma,
                       const float *beta, long rows, int c, float eps) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    for (long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        const T *x = in + r * c;
        T *y = out + r * c;
        double sum = 0, sq = 0;
        for (int ch = lane; ch < c; ch += 32) sum += ln_x(x, ch, xb, ch);
        double mean = warp_sum(sum) / c;
        for (int ch = lane; ch < c; ch += 32) {
            double d = ln_x(x, ch, xb, ch) - mean;
            sq += d * d;
        }
        float rstd = (float)(1.0 / sqrt(warp_sum(sq) / c + eps)), fmean = (float)mean;
        if (lane == 0) save_mean[r] = fmean, save_rstd[r] = rstd;
        for (int ch = lane; ch < c; ch += 32) y[ch] = rt_st<T>((ln_x(x, ch, xb, ch) - fmean) * rstd * gamma[ch] + beta[ch]);
    }
}

/* hw = 1: one row's input gradient by one warp, each stored value also handed to keep(ch, v). */
template <typename T, typename F>
__device__ static inline void ln_row_input_grad(T *dx, const T *dy, const T *x, const float *xb, const float *gamma,
                                                float mean, float rstd, int c, F keep) {
    int lane = threadIdx.x & 31;
    double sg = 0, sgx = 0;
    for (int ch = lane; ch < c; ch += 32) {
        float g = rt_ld(dy[ch]) * gamma[ch];
        sg += g;
        sgx += g * (ln_x(x, ch, xb, ch) - mean) * rstd;
    }
    sg = warp_sum(sg), sgx = warp_sum(sgx);
    for (int ch = lane; ch < c; ch += 32) {
        float g = rt_ld(dy[ch]) * gamma[ch];
        float xhat = (ln_x(x, ch, xb, ch) - mean) * rstd;
        T v = rt_st<T>(rstd / c * ((float)c * g - (float)sg - xhat * (float)sgx));
        dx[ch] = v;
        keep(ch, v);
    }
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_rows_input_grad_kernel(T *din, const T *dout, const T *in, const float *xb, const float *gamma,
                          const float *save_mean, const float *save_rstd, long rows, int c) {
    long warps = (long)gridDim.x * blockDim.x / 32;
    for (long r = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; r < rows; r += warps)
        ln_row_input_grad(din + r * c, dout + r * c, in + r * c, xb, gamma, save_mean[r], save_rstd[r], c,
                          [](int, T) {});
}

/* hw = 1 with the producer conv's bias gradient (fuse_ln_bias.c): the input gradient as above,
 * block b over rows [b * per, (b + 1) * per) one warp a row, and the stored dx summed per
 * channel: each warp's in its row of shared memory, then the block's over its warps in order,
 * in part's first slot (bias.cu's layout, added up by bn_finish_grads). */
#define LN_BGRAD_WARPS (RT_THREADS / 32)
template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
ln_rows_input_grad_bgrad_kernel(T *din, double *part, const T *dout, const T *in, const float *xb,
                                const float *gamma, const float *save_mean, const float *save_rstd, long rows,
                                long per, int c) {
    __shared__ double acc[LN_BGRAD_WARPS][RT_LN_BGRAD_MAX_C];
    int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
    for (int ch = lane; ch < c; ch += 32) acc[warp][ch] = 0;
    long r1 = min(rows, (long)blockIdx.x * per + per);
    for (long r = (long)blockIdx.x * per + warp; r < r1; r += LN_BGRAD_WARPS)
        ln_row_input_grad(din + r * c, dout + r * c, in + r * c, xb, gamma, save_mean[r], save_rstd[r], c,
                          [&](int ch, T v) { acc[warp][ch] += rt_ld(v); });
    __syncthreads();
    for (int ch = threadIdx.x; ch < c; ch += blockDim.x) {
        double t = 0;
        for (int k = 0; k < LN_BGRAD_WARPS; k++) t += acc[k][ch];
        double *o = part + 2 * ((long)ch * gridDim.x + blockIdx.x);
        o[0] = t, o[1] = 0;
    }
}

/* hw = 1: this block's rows of 32 neighbouring channels: sum dy (first) and dy·xhat (second). */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
ln_rows_partial_kernel(double *part, const T *dout, const T *in, const float *xb, const float *save_mean,
                       const float *save_rstd, long rows, long per, int c) {
    double dg = 0, db = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        long row = i / c;
        float xhat = (ln_x(in, i, xb, (int)(i - row * c)) - save_mean[row]) * save_rstd[row];
        float dy = rt_ld(dout[i]);
        dg += dy * xhat;
        db += dy;
    });
    nhwc_tile_sums(db, dg, part, c);
}

void cuda_layernorm_forward_bias(void *out, float *save_mean, float *save_rstd, const void *in, const float *xb,
                                 const float *gamma, const float *beta, int n, int c, int hw, float eps) {
    if (hw == 1) {
        RT_ACT_DISPATCH(ln_rows_forward_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
            (T *)out, save_mean, save_rstd, (const T *)in, xb, gamma, beta, n, c, eps));
        CUDA_LAUNCHED();
        return;
    }
    RT_ACT_DISPATCH(ln_forward_kernel<T><<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, save_mean, save_rstd, (const T *)in, xb, gamma, beta, n, c, hw, eps));
    CUDA_LAUNCHED();
}

void cuda_layernorm_forward(void *out, float *save_mean, float *save_rstd, const void *in, const float *gamma,
                            const float *beta, int n, int c, int hw, float eps) {
    cuda_layernorm_forward_bias(out, save_mean, save_rstd, in, NULL, gamma, beta, n, c, hw, eps);
}

void cuda_layernorm_backward_bias(void *din, float *dgamma, float *dbeta, float *dxb, const void *dout,
                                  const void *in, const float *xb, const float *gamma, const float *save_mean,
                                  const float *save_rstd, int n, int c, int hw) {
    if (dxb && (!din || !xb)) rt_die("layernorm: internal: the producer's bias gradient needs din and the bias");
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(ln_rows_partial_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (const T *)dout, (const T *)in, xb, save_mean, save_rstd, n, sp.per, c));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(dgamma, dbeta, part, sp.splits, c, &m, 0);
    } else {
        RT_ACT_DISPATCH(ln_param_grad_kernel<T><<<c, RT_CHANNEL_THREADS, 0, rt_stream()>>>(
            dgamma, dbeta, (const T *)dout, (const T *)in, xb, save_mean, save_rstd, n, c, hw));
        CUDA_LAUNCHED();
    }
    if (!din) return;
    if (hw == 1 && dxb && c <= RT_LN_BGRAD_MAX_C) {   /* dx and its channel sums in one pass */
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(ln_rows_input_grad_bgrad_kernel<T><<<sp.splits, RT_THREADS, 0, rt_stream()>>>(
            (T *)din, part, (const T *)dout, (const T *)in, xb, gamma, save_mean, save_rstd, n, sp.per, c));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(NULL, dxb, part, sp.splits, c, &m, 0);
        return;
    }
    if (hw == 1) {
        RT_ACT_DISPATCH(ln_rows_input_grad_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
            (T *)din, (const T *)dout, (const T *)in, xb, gamma, save_mean, save_rstd, n, c));
    } else {
        RT_ACT_DISPATCH(ln_input_grad_kernel<T><<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(
            (T *)din, (const T *)dout, (const T *)in, xb, gamma, save_mean, save_rstd, n, c, hw));
    }
    CUDA_LAUNCHED();
    /* NCHW planes (or more channels than the fused sums hold): bias.cu's sums over din */
    if (dxb) cuda_bias_backward(dxb, NULL, din, NULL, n, c, hw);
}

void cuda_layernorm_backward(void *din, float *dgamma, float *dbeta, const void *dout, const void *in,
                             const float *gamma, const float *save_mean, const float *save_rstd, int n, int c,
                             int hw) {
    cuda_layernorm_backward_bias(din, dgamma, dbeta, NULL, dout, in, NULL, gamma, save_mean, save_rstd, n, c, hw);
}
