/* A residual block's tail in one pass each way (ConvNeXt: pwconv2's bias, layer scale, drop
 * path, add; lower.c choose_residual_tail): forward out = res + s[b]·gamma[c]·(conv + bias[c]),
 * s[b] the drop path's per-sample scale (1 without one, or in evaluation); the layer scale's
 * and drop path's outputs are never written. Backward from the add's output gradient: the
 * shortcut's gradient (written or added), the conv's output gradient dconv = dout·s·gamma, and
 * both parameter gradients, dbias = sum dconv and dgamma = sum dout·s·x with x = conv + bias
 * recomputed, in the same pass. The sums run in the unfused kernels' order (one block per
 * NCHW channel; channels-last tiles and their partials), and each element is read before it
 * is written, so dconv may alias dout. */
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

/* Sample b's drop path scale: kept iff rt_hash_uniform(seed, first_sample + b) >= p, as
 * drop_path.cu and the CPU op draw it. */
struct tail_drop {
    float p, keep_scale;
    uint64_t seed;
    long first_sample, per_sample;
    int on;
    __device__ float scale(long i) const {
        if (!on) return 1.0f;
        long b = i / per_sample;
        return rt_hash_uniform(seed, (uint64_t)(first_sample + b)) >= (double)p ? keep_scale : 0.0f;
    }
};

static tail_drop drop_of(float p, long per_sample, long first_sample, int train) {
    tail_drop d;
    d.on = train && p > 0;
    d.p = p, d.keep_scale = p < 1 ? 1 / (1 - p) : 0.0f;
    d.seed = 0, d.first_sample = first_sample, d.per_sample = per_sample;
    return d;
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
residual_tail_forward_kernel(T *out, const T *conv, const T *res, const float *bias, const float *gamma, int c, long hw,
                             long total, tail_drop d, const uint64_t *step_seed, uint64_t salt) {
    if (d.on) d.seed = rt_hash_u64(*step_seed, salt, 0);
    GRID_STRIDE(i, total) {
        int ch = (int)((i / hw) % c);
        float x = rt_ld(conv[i]) + bias[ch];
        out[i] = rt_st<T>(x * gamma[ch] * d.scale(i) + rt_ld(res[i]));
    }
}

/* One element's backward: the shortcut's gradient, dconv; returns {dconv, dout·s·x}. */
template <typename T>
__device__ static inline void tail_element(long i, int ch, T *dconv, T *dres, int dres_add, const T *dout, const T *conv,
                                           const float *bias, const float *gamma, const tail_drop &d, double &s0,
                                           double &s1) {
    float g = rt_ld(dout[i]);
    float x = rt_ld(conv[i]) + bias[ch];
    float gs = g * d.scale(i);
    if (dres) dres[i] = rt_st<T>(dres_add ? rt_ld(dres[i]) + g : g);
    float dx = gs * gamma[ch];
    dconv[i] = rt_st<T>(dx);
    s0 += dx, s1 += gs * x;   /* float products, as the unfused kernels sum them */
}

/* NCHW planes: one block per channel, the sums written as the gradients. */
template <typename T>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
residual_tail_backward_kernel(float *dbias, float *dgamma, T *dconv, T *dres, int dres_add, const T *dout, const T *conv,
                              const float *bias, const float *gamma, int n, int c, long hw, tail_drop d,
                              const uint64_t *step_seed, uint64_t salt) {
    if (d.on) d.seed = rt_hash_u64(*step_seed, salt, 0);
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double s0 = 0, s1 = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x)
        tail_element(((j / hw) * c + ch) * hw + j % hw, ch, dconv, dres, dres_add, dout, conv, bias, gamma, d, s0, s1);
    s0 = block_sum(s0);
    s1 = block_sum(s1);
    if (threadIdx.x == 0) dbias[ch] = (float)s0, dgamma[ch] = (float)s1;
}

/* Channels-last rows: this block's rows of 32 neighbouring channels, the two sums to part. */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
residual_tail_rows_kernel(double *part, T *dconv, T *dres, int dres_add, const T *dout, const T *conv, const float *bias,
                          const float *gamma, long rows, long per, int c, tail_drop d, const uint64_t *step_seed,
                          uint64_t salt) {
    if (d.on) d.seed = rt_hash_u64(*step_seed, salt, 0);
    double s0 = 0, s1 = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        tail_element(i, (int)(i % c), dconv, dres, dres_add, dout, conv, bias, gamma, d, s0, s1);
    });
    nhwc_tile_sums(s0, s1, part, c);
}

void cuda_residual_tail_forward(void *out, const void *conv, const void *res, const float *bias, const float *gamma,
                                int n, int c, long hw, long per_sample, float p, const uint64_t *step_seed, uint64_t salt,
                                long first_sample, int train) {
    long total = (long)n * c * hw;
    tail_drop d = drop_of(p, per_sample, first_sample, train);
    RT_ACT_DISPATCH(residual_tail_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, (const T *)conv, (const T *)res, bias, gamma, c, hw, total, d, step_seed, salt));
    CUDA_LAUNCHED();
}

void cuda_residual_tail_backward(void *dconv, void *dres, int dres_add, float *dbias, float *dgamma, const void *dout,
                                 const void *conv, const float *bias, const float *gamma, int n, int c, long hw,
                                 long per_sample, float p, const uint64_t *step_seed, uint64_t salt, long first_sample) {
    tail_drop d = drop_of(p, per_sample, first_sample, 1);
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(residual_tail_rows_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (T *)dconv, (T *)dres, dres_add, (const T *)dout, (const T *)conv, bias, gamma, n, sp.per, c, d,
            step_seed, salt));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(dgamma, dbias, part, sp.splits, c, &m, 0);
        return;
    }
    RT_ACT_DISPATCH(residual_tail_backward_kernel<T><<<c, RT_CHANNEL_THREADS, 0, rt_stream()>>>(
        dbias, dgamma, (T *)dconv, (T *)dres, dres_add, (const T *)dout, (const T *)conv, bias, gamma, n, c, hw, d,
        step_seed, salt));
    CUDA_LAUNCHED();
}
