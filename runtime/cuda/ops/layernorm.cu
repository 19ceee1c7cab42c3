/* Layer normalization over channels per (sample, pixel), NCHW (ConvNeXt channels_first):
 * one thread per pixel, so neighbouring threads read neighbouring addresses. */
#include "../cuda_common.cuh"

__global__ void ln_forward_kernel(float *out, float *save_mean, float *save_rstd, const float *in,
                                  const float *gamma, const float *beta, int n, int c, int hw, float eps) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const float *x = in + b * c * hw + p;
        float *y = out + b * c * hw + p;
        double sum = 0, sq = 0;
        for (int ch = 0; ch < c; ch++) sum += x[(long)ch * hw];
        double mean = sum / c;
        for (int ch = 0; ch < c; ch++) {
            double d = x[(long)ch * hw] - mean;
            sq += d * d;
        }
        float rstd = (float)(1.0 / sqrt(sq / c + eps)), fmean = (float)mean;
        save_mean[q] = fmean;
        save_rstd[q] = rstd;
        for (int ch = 0; ch < c; ch++) y[(long)ch * hw] = (x[(long)ch * hw] - fmean) * rstd * gamma[ch] + beta[ch];
    }
}

/* Parameter gradients: one block per channel, fixed order. */
__global__ void ln_param_grad_kernel(float *dgamma, float *dbeta, const float *dout, const float *in,
                                     const float *save_mean, const float *save_rstd, int n, int c, int hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double dg = 0, db = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long b = j / hw, p = j % hw, i = (b * c + ch) * hw + p;
        float xhat = (in[i] - save_mean[j]) * save_rstd[j];
        dg += dout[i] * xhat;
        db += dout[i];
    }
    dg = block_sum(dg);
    db = block_sum(db);
    if (threadIdx.x == 0) {
        dgamma[ch] = (float)dg;
        dbeta[ch] = (float)db;
    }
}

__global__ void ln_input_grad_kernel(float *din, const float *dout, const float *in, const float *gamma,
                                     const float *save_mean, const float *save_rstd, int n, int c, int hw) {
    GRID_STRIDE(q, (long)n * hw) {
        long b = q / hw, p = q % hw;
        const float *x = in + b * c * hw + p, *dy = dout + b * c * hw + p;
        float *dx = din + b * c * hw + p;
        float mean = save_mean[q], rstd = save_rstd[q];
        double sg = 0, sgx = 0;
        for (int ch = 0; ch < c; ch++) {
            float g = dy[(long)ch * hw] * gamma[ch];
            sg += g;
            sgx += g * (x[(long)ch * hw] - mean) * rstd;
        }
        for (int ch = 0; ch < c; ch++) {
            float g = dy[(long)ch * hw] * gamma[ch];
            float xhat = (x[(long)ch * hw] - mean) * rstd;
            dx[(long)ch * hw] = rstd / c * ((float)c * g - (float)sg - xhat * (float)sgx);
        }
    }
}

void cuda_layernorm_forward(float *out, float *save_mean, float *save_rstd, const float *in, const float *gamma,
                            const float *beta, int n, int c, int hw, float eps) {
    ln_forward_kernel<<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(out, save_mean, save_rstd, in,
                                                                              gamma, beta, n, c, hw, eps);
    CUDA_LAUNCHED();
}

void cuda_layernorm_backward(float *din, float *dgamma, float *dbeta, const float *dout, const float *in,
                             const float *gamma, const float *save_mean, const float *save_rstd, int n, int c,
                             int hw) {
    ln_param_grad_kernel<<<c, 512, 0, rt_stream()>>>(dgamma, dbeta, dout, in, save_mean, save_rstd, n, c, hw);
    CUDA_LAUNCHED();
    if (!din) return;
    ln_input_grad_kernel<<<rt_blocks((long)n * hw), RT_THREADS, 0, rt_stream()>>>(din, dout, in, gamma, save_mean,
                                                                                 save_rstd, n, c, hw);
    CUDA_LAUNCHED();
}
