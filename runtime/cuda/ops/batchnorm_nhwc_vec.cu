/* Batch normalization on channels-last tensors [N*H*W rows][C], the default kernels: each
 * thread takes 4 neighbouring channels as one vector (act_vec.cuh: 16 bytes in FP32, 8 in
 * BF16/FP16, where the sums' 8 double accumulators and four rows in flight fit the 64-register
 * budget; 8 channels would not) and walks rows of its block's range, several rows' loads in
 * flight before their arithmetic. A block is lx vectors of channels (a power of two up to 32:
 * a warp reads up to 512 contiguous bytes of a row) x 256/lx row lanes; blocks split the rows as channel_tiles.cuh does and leave their
 * partial sums in the same layout for batchnorm_sums.cu. Passes over the tensor: statistics
 * 1 read; apply 1 read + 1 write; backward 3 reads (dy, the ReLU output, x) for the sums and
 * 3 reads + 1 write for the input gradient. TRAINC_CUDA_BN=old runs batchnorm_nhwc.cu's. */
#include "bn_vec_tiles.cuh"
#include "pool_window.cuh"

/* Sums of d and d^2 per channel, d = x - shift[ch] (the running mean, as in batchnorm.cu). */
template <typename T, int V>
__global__ void __launch_bounds__(VEC_THREADS)
vec_partial_stats_kernel(double *part, const T *__restrict__ in, const float *shift, long rows, long per, int c) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;   /* this thread's vector of channels */
    double sum[V] = {}, sq[V] = {};
    if (q < c / V) {
        float k[V];
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = shift[q * V + j];
        act_vec<T, V> x[VEC_ROWS_IN_FLIGHT];
        vec_rows<VEC_ROWS_IN_FLIGHT>(
            rows, per, [&](int u, long r) { x[u] = vec_load<T, V>(in + r * c + q * V); },
            [&](int u, long r) {
#pragma unroll
                for (int j = 0; j < V; j++) {
                    double d = (double)rt_ld(x[u].e[j]) - k[j];
                    sum[j] += d;
                    sq[j] += d * d;
                }
            });
    }
    vec_tile_sums<V>(sum, sq, part, c);
}

template <typename T, int V>
__global__ void __launch_bounds__(VEC_THREADS)
vec_apply_kernel(T *__restrict__ out, const T *__restrict__ in, const float *gamma, const float *beta,
                 const float *mean, const float *inv_std, long rows, long per, int c, int relu) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= c / V) return;
    float scale[V], shift[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        int ch = q * V + j;
        scale[j] = gamma[ch] * inv_std[ch], shift[j] = beta[ch] - mean[ch] * scale[j];
    }
    act_vec<T, V> x[VEC_ROWS_IN_FLIGHT];
    vec_rows<VEC_ROWS_IN_FLIGHT>(
        rows, per, [&](int u, long r) { x[u] = vec_load<T, V>(in + r * c + q * V); },
        [&](int u, long r) {
            act_vec<T, V> y;
#pragma unroll
            for (int j = 0; j < V; j++) {
                float v = rt_ld(x[u].e[j]) * scale[j] + shift[j];
                y.e[j] = rt_st<T>(relu && v < 0.0f ? 0.0f : v);
            }
            vec_store<T, V>(out + r * c + q * V, y);
        });
}

/* Where the backward's ReLU condition comes from (a compile-time choice: the register budget):
 * the ReLU's output (or no ReLU where it is NULL), its bitmask, or recomputed from x and the
 * per-channel scale and bias a conv's prologue applied (conv_bn_fprop.cu's scale-bias-ReLU,
 * fuse_conv_bn.c ir_op.bn_in_conv): x·scale + bias > 0, in FP32 from the activation-type
 * scale and bias, as the prologue computes it. */
enum { RELU_OUT = 0, RELU_BITS = 1, RELU_SB = 2, RELU_POOL = 3 };

/* RELU_POOL: the bits, and dy gathered from the max pooling after the bn (the stem's bn1 ->
 * ReLU -> maxpool, lower.c choose_bn_pool): its output gradient and the argmax the fused
 * forward wrote (bn_relu_maxpool_nhwc.cu: the winner's window offset ki * kw + kj, a byte an
 * element); the other modes leave it empty. */
struct bn_pool_in {
    const uint8_t *argmax;
    rt_pool_shape s;
};

/* Row r's (position (n, iy, ix)) V channels of the bn's output gradient, as the unfused
 * pooling backward computes and stores it (maxpool2d_nhwc_vec.cu): the sum, in the order of
 * the windows, of the gradients of the outputs whose window's winner it is, rounded to T. */
template <typename T, int V>
__device__ __forceinline__ act_vec<T, V> vec_pool_dy(const T *__restrict__ pdy, const bn_pool_in &p, long r, int q) {
    const rt_pool_shape &s = p.s;
    int hw = s.h * s.w, n = (int)(r / hw), at = (int)(r - (long)n * hw), iy = at / s.w, ix = at - iy * s.w;
    int y0, y1, x0, x1;
    pool_window_range(iy, s.kh, s.sh, s.ph, s.oh, &y0, &y1);
    pool_window_range(ix, s.kw, s.sw, s.pw, s.ow, &x0, &x1);
    int base = n * s.oh * s.ow * s.c + q * V;   /* output (n, 0, 0, vector q); 32 bits: cuda_bn_relu_maxpool_fits */
    float acc[V] = {};
#pragma unroll 1
    for (int oy = y0; oy <= y1; oy++)
#pragma unroll 1
        for (int ox = x0; ox <= x1; ox++) {
            int o = base + (oy * s.ow + ox) * s.c;
            unsigned me = (unsigned)((iy - (oy * s.sh - s.ph)) * s.kw + ix - (ox * s.sw - s.pw));
            act_vec<uint8_t, V> won = vec_load<uint8_t, V>(p.argmax + o);
            int any = 0;
#pragma unroll
            for (int j = 0; j < V; j++) any |= won.e[j] == me;
            if (!any) continue;
            act_vec<T, V> dy = vec_load<T, V>(pdy + o);
#pragma unroll
            for (int j = 0; j < V; j++)
                if (won.e[j] == me) acc[j] += rt_ld(dy.e[j]);
        }
    act_vec<T, V> d;
#pragma unroll
    for (int j = 0; j < V; j++) d.e[j] = rt_st<T>(acc[j]);
    return d;
}

/* Rows whose loads a thread keeps in flight: one where RELU_POOL, whose gather of up to four
 * windows' argmax and gradient vectors per row would spill past the 64-register budget
 * (tests/cuda/kernel_budget_test.sh) with two. */
__host__ __device__ constexpr int grad_rows_in_flight(int relu) { return relu == RELU_POOL ? 1 : VEC_GRAD_ROWS_IN_FLIGHT; }
/* Blocks an SM must hold: four where RELU_POOL (the gather's addressing would take the
 * retiring kernel past 64 registers otherwise; 4 x 256 threads caps it there), else unstated
 * (0). A member, not a call: tests/emu/emu-nvcc reads launch bounds without parentheses. */
template <int RELU> struct grad_bounds {
    enum { min_blocks = RELU == RELU_POOL ? 4 : 0 };
};

/* vec_grad_load, with dy gathered from the pooling where RELU_POOL (dout: its output gradient). */
template <typename T, int V, int RELU>
__device__ __forceinline__ void vec_grad_load_mode(vec_grad_in<T, V> &g, const T *dout, const T *relu_out,
                                                   const void *relu_aux, const T *in, long r, int q, int c,
                                                   const bn_pool_in &pool) {
    if (RELU == RELU_POOL) {
        g.dy = vec_pool_dy<T, V>(dout, pool, r, q);
        g.bits = relu_bits_at<V>((const uint8_t *)relu_aux, r * c + q * V);
        g.x = vec_load<T, V>(in + r * c + q * V);
        return;
    }
    vec_grad_load(g, dout, RELU != RELU_OUT ? NULL : relu_out, in, r * c + q * V,
                  RELU == RELU_BITS ? (const uint8_t *)relu_aux : NULL);
}

/* This thread's V channels' prologue scale and bias ([2][c] in the activation type). */
template <typename T, int V, int RELU>
__device__ __forceinline__ void vec_sb_load(float s[V], float b[V], const T *scale_bias, int q, int c) {
#pragma unroll
    for (int j = 0; j < V; j++) s[j] = RELU == RELU_SB ? rt_ld(scale_bias[q * V + j]) : 0.0f,
                                b[j] = RELU == RELU_SB ? rt_ld(scale_bias[c + q * V + j]) : 0.0f;
}

/* The loaded rows' ReLU bits, recomputed from x where RELU_SB. */
template <typename T, int V, int RELU>
__device__ __forceinline__ void vec_sb_bits(vec_grad_in<T, V> &g, const float s[V], const float b[V]) {
    if (RELU != RELU_SB) return;
    g.bits = 0;
#pragma unroll
    for (int j = 0; j < V; j++) g.bits |= (rt_ld(g.x.e[j]) * s[j] + b[j] > 0.0f ? 1u : 0u) << j;
}

/* Sums of dy and dy·xhat per channel: this block's partials into `part` (the two kernels below
 * share it; the retiring one then adds them up). relu_aux: the bits (RELU_BITS) or the scale
 * and bias (RELU_SB). */
template <typename T, int V, int RELU>
__device__ __forceinline__ void vec_grad_partials(double *part, const T *__restrict__ dout,
                                                  const T *__restrict__ relu_out, const void *__restrict__ relu_aux,
                                                  const T *__restrict__ in,
                                                  const float *save_mean, const float *save_inv_std, long rows,
                                                  long per, int c, const bn_pool_in &pool) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    double s_dy[V] = {}, s_dy_xhat[V] = {};
    const bool bits = RELU != RELU_OUT;
    if (q < c / V) {
        float mean[V], inv_std[V], sc[V], bi[V];
#pragma unroll
        for (int j = 0; j < V; j++) mean[j] = save_mean[q * V + j], inv_std[j] = save_inv_std[q * V + j];
        vec_sb_load<T, V, RELU>(sc, bi, (const T *)relu_aux, q, c);
        vec_grad_in<T, V> g[grad_rows_in_flight(RELU)];
        vec_rows<grad_rows_in_flight(RELU)>(
            rows, per,
            [&](int u, long r) { vec_grad_load_mode<T, V, RELU>(g[u], dout, relu_out, relu_aux, in, r, q, c, pool); },
            [&](int u, long r) {
                vec_sb_bits<T, V, RELU>(g[u], sc, bi);
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float dy = vec_dy(g[u], !bits && relu_out != NULL, bits, j);
                    s_dy[j] += dy;
                    s_dy_xhat[j] += dy * (rt_ld(g[u].x.e[j]) - mean[j]) * inv_std[j];
                }
            });
    }
    vec_tile_sums<V>(s_dy, s_dy_xhat, part, c);
}

/* Sums of dy and dy·xhat per channel. */
template <typename T, int V>
__global__ void __launch_bounds__(VEC_THREADS)
vec_partial_grads_kernel(double *part, const T *__restrict__ dout, const T *__restrict__ relu_out,
                         const T *__restrict__ in, const float *save_mean, const float *save_inv_std, long rows,
                         long per, int c) {
    vec_grad_partials<T, V, RELU_OUT>(part, dout, relu_out, NULL, in, save_mean, save_inv_std, rows, per, c,
                                      bn_pool_in());
}

/* din = gamma·inv_std/m · (m·dy - sum dy - xhat · sum dy·xhat), as in batchnorm.cu; RELU and
 * relu_aux as vec_grad_partials's. */
template <typename T, int V, int RELU>
__global__ void __launch_bounds__(VEC_THREADS, grad_bounds<RELU>::min_blocks)
vec_input_grad_kernel(T *__restrict__ din, const T *__restrict__ dout, const T *__restrict__ relu_out,
                      const void *__restrict__ relu_aux, const T *__restrict__ in, const float *gamma, const double *totals, long m,
                      const float *save_mean, const float *save_inv_std, long rows, long per, int c,
                      bn_pool_in pool) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= c / V) return;
    const bool bits = RELU != RELU_OUT;
    float mean[V], inv_std[V], k[V], a[V], b[V], sc[V], bi[V];
#pragma unroll
    for (int j = 0; j < V; j++) {
        int ch = q * V + j;
        mean[j] = save_mean[ch], inv_std[j] = save_inv_std[ch];
        k[j] = gamma[ch] * inv_std[j] / m, a[j] = (float)totals[2 * ch], b[j] = (float)totals[2 * ch + 1];
    }
    vec_sb_load<T, V, RELU>(sc, bi, (const T *)relu_aux, q, c);
    vec_grad_in<T, V> g[grad_rows_in_flight(RELU)];
    vec_rows<grad_rows_in_flight(RELU)>(
        rows, per,
        [&](int u, long r) { vec_grad_load_mode<T, V, RELU>(g[u], dout, relu_out, relu_aux, in, r, q, c, pool); },
        [&](int u, long r) {
            act_vec<T, V> d;
            vec_sb_bits<T, V, RELU>(g[u], sc, bi);
#pragma unroll
            for (int j = 0; j < V; j++) {
                float xhat = (rt_ld(g[u].x.e[j]) - mean[j]) * inv_std[j];
                d.e[j] = rt_st<T>(k[j] * ((float)m * vec_dy(g[u], !bits && relu_out != NULL, bits, j) - a[j] -
                                          xhat * b[j]));
            }
            vec_store<T, V>(din + r * c + q * V, d);
        });
}

/* ---- Retiring variants (lower.c decides them: ir_op.bn_retire) --------------------------------
 * The sums' own launch is gone: each block leaves its partial sums as above, then counts
 * itself done on its channel tile's counter; the tile's last block (the one that sees every
 * other block's partials, as CUDA's threadFenceReduction sample) adds the tile's partials up
 * in split order and finishes the statistics (forward) or the totals, dgamma and dbeta
 * (backward), and puts the counter back to zero for the next launch or graph replay. */
template <typename T, int V>
__global__ void __launch_bounds__(VEC_THREADS)
vec_stats_retire_kernel(double *part, unsigned *counters, float *save_mean, float *save_inv_std, float *running_mean,
                        float *running_var, const T *__restrict__ in, long rows, long per, int c, float momentum,
                        float eps) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    double sum[V] = {}, sq[V] = {};
    if (q < c / V) {
        float k[V];
#pragma unroll
        for (int j = 0; j < V; j++) k[j] = running_mean[q * V + j];
        act_vec<T, V> x[VEC_ROWS_IN_FLIGHT];
        vec_rows<VEC_ROWS_IN_FLIGHT>(
            rows, per, [&](int u, long r) { x[u] = vec_load<T, V>(in + r * c + q * V); },
            [&](int u, long r) {
#pragma unroll
                for (int j = 0; j < V; j++) {
                    double d = (double)rt_ld(x[u].e[j]) - k[j];
                    sum[j] += d;
                    sq[j] += d * d;
                }
            });
    }
    vec_tile_sums<V>(sum, sq, part, c);
    if (!vec_tile_retires<V>(counters, part, NULL, c)) return;
    vec_tile_totals<V>(part, c, [&](int ch, double a, double b) {
        finish_channel_stats(save_mean, save_inv_std, running_mean, running_var, ch, a, b, rows, momentum, eps);
    });
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;
}

template <typename T, int V, int RELU>
__global__ void __launch_bounds__(VEC_THREADS, grad_bounds<RELU>::min_blocks)
vec_grads_retire_kernel(double *part, unsigned *counters, double *totals, float *dgamma, float *dbeta,
                        const T *__restrict__ dout, const T *__restrict__ relu_out,
                        const void *__restrict__ relu_aux, const T *__restrict__ in, const float *save_mean,
                        const float *save_inv_std, long rows, long per, int c, bn_pool_in pool) {
    vec_grad_partials<T, V, RELU>(part, dout, relu_out, relu_aux, in, save_mean, save_inv_std, rows, per, c, pool);
    if (!vec_tile_retires<V>(counters, part, NULL, c)) return;
    vec_tile_totals<V>(part, c, [&](int ch, double a, double b) { store_channel_totals(totals, dgamma, dbeta, ch, a, b); });
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;
}

void cuda_batchnorm_stats_train_nhwc_retire(float *save_mean, float *save_inv_std, float *running_mean,
                                            float *running_var, const void *in, int n, int c, int hw, float momentum,
                                            float eps, int sync) {
    /* the A/B switch and a world of several ranks (their sums all-reduced between the passes)
     * take the launches apart */
    if (bn_old_kernels() || (sync && rt_cuda_world() > 1))
        return cuda_batchnorm_stats_train_nhwc(save_mean, save_inv_std, running_mean, running_var, in, n, c, hw,
                                               momentum, eps, sync);
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, in));
    double *part = bn_partials((int)t.grid.y, c);
    unsigned *counters = bn_retire_counters((int)t.grid.x);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_stats_retire_kernel<T, V><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, counters, save_mean, save_inv_std, running_mean, running_var,
                                                (const T *)in, rows, t.per, c, momentum, eps)));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_backward_nhwc_retire(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                                         const void *in, const float *gamma, const float *save_mean,
                                         const float *save_inv_std, int n, int c, int hw, int sync) {
    if (bn_old_kernels() || (din && sync && rt_cuda_world() > 1))
        return cuda_batchnorm_backward_nhwc(din, dgamma, dbeta, dout, relu_out, in, gamma, save_mean, save_inv_std, n,
                                            c, hw, sync);
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, din, dout, relu_out, in));
    double *part = bn_partials((int)t.grid.y, c), *totals = bn_channel_totals(c);
    unsigned *counters = bn_retire_counters((int)t.grid.x);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_grads_retire_kernel<T, V, RELU_OUT><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, counters, totals, dgamma, dbeta, (const T *)dout,
                                                (const T *)relu_out, (const void *)NULL, (const T *)in, save_mean,
                                                save_inv_std, rows, t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_input_grad_kernel<T, V, RELU_OUT><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)din, (const T *)dout, (const T *)relu_out, (const void *)NULL,
                                                (const T *)in, gamma, totals, rows, save_mean, save_inv_std, rows,
                                                t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
}

/* The retiring backward of a bn whose ReLU left a bitmask (lower.c ir_op.relu_mask): the bits
 * stand in for the ReLU's output, 1/16 of its bytes in BF16/FP16. No old-kernel variant
 * (TRAINC_CUDA_BN=old: the old kernels read the ReLU's output; build with --no-relu-mask for
 * them) and no sync BN (lower.c chooses the bits only where the sums retire). */
void cuda_batchnorm_backward_nhwc_bits(void *din, float *dgamma, float *dbeta, const void *dout, const uint8_t *relu_bits,
                                       const void *in, const float *gamma, const float *save_mean,
                                       const float *save_inv_std, int n, int c, int hw) {
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, din, dout, in));
    double *part = bn_partials((int)t.grid.y, c), *totals = bn_channel_totals(c);
    unsigned *counters = bn_retire_counters((int)t.grid.x);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_grads_retire_kernel<T, V, RELU_BITS><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, counters, totals, dgamma, dbeta, (const T *)dout,
                                                (const T *)NULL, (const void *)relu_bits, (const T *)in, save_mean, save_inv_std,
                                                rows, t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_input_grad_kernel<T, V, RELU_BITS><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)din, (const T *)dout, (const T *)NULL, (const void *)relu_bits, (const T *)in,
                                                gamma, totals, rows, save_mean, save_inv_std, rows, t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
}

/* The retiring backward of a bn applied inside the next conv's prologue (ir_op.bn_in_conv): no
 * ReLU output and no bits were written; the ReLU's condition is recomputed from x and the
 * prologue's scale and bias ([2][c], activation type), so dy and x are all it reads. */
void cuda_batchnorm_backward_nhwc_sbr(void *din, float *dgamma, float *dbeta, const void *dout, const void *scale_bias,
                                      const void *in, const float *gamma, const float *save_mean,
                                      const float *save_inv_std, int n, int c, int hw) {
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, din, dout, in));
    double *part = bn_partials((int)t.grid.y, c), *totals = bn_channel_totals(c);
    unsigned *counters = bn_retire_counters((int)t.grid.x);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_grads_retire_kernel<T, V, RELU_SB><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, counters, totals, dgamma, dbeta, (const T *)dout,
                                                (const T *)NULL, scale_bias, (const T *)in, save_mean, save_inv_std,
                                                rows, t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_input_grad_kernel<T, V, RELU_SB><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)din, (const T *)dout, (const T *)NULL, scale_bias, (const T *)in,
                                                gamma, totals, rows, save_mean, save_inv_std, rows, t.per, c, bn_pool_in())));
    CUDA_LAUNCHED();
}

/* The retiring backward of a bn applied inside the max pooling after it (ir_op.bn_in_pool,
 * bn_relu_maxpool_nhwc.cu): both passes gather dy from the pooling's output gradient and the
 * forward's byte argmax (vec_pool_dy, the unfused pooling backward's sum and rounding), so the
 * bn's output gradient is never written nor read, and the pooling has no backward launch. */
void cuda_batchnorm_backward_nhwc_pool(void *din, float *dgamma, float *dbeta, const void *pool_dout,
                                       const uint8_t *argmax, const uint8_t *relu_bits, const void *in,
                                       const float *gamma, const float *save_mean, const float *save_inv_std,
                                       const rt_pool_shape *s) {
    long rows = (long)s->n * s->h * s->w;
    int c = s->c;
    if (!cuda_bn_relu_maxpool_fits(s))
        rt_die("bn + maxpool backward: internal: a pooling the fused kernels do not take (%dx%d stride %d pad %d on "
               "%dx%dx%d): lower.c choose_bn_pool decides only where it fits",
               s->kh, s->kw, s->sh, s->ph, s->h, s->w, c);
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, din, pool_dout, in, argmax));
    double *part = bn_partials((int)t.grid.y, c), *totals = bn_channel_totals(c);
    unsigned *counters = bn_retire_counters((int)t.grid.x);
    bn_pool_in pool = { argmax, *s };
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_grads_retire_kernel<T, V, RELU_POOL><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, counters, totals, dgamma, dbeta, (const T *)pool_dout,
                                                (const T *)NULL, (const void *)relu_bits, (const T *)in, save_mean,
                                                save_inv_std, rows, t.per, c, pool)));
    CUDA_LAUNCHED();
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_input_grad_kernel<T, V, RELU_POOL><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)din, (const T *)pool_dout, (const T *)NULL, (const void *)relu_bits,
                                                (const T *)in, gamma, totals, rows, save_mean, save_inv_std, rows, t.per,
                                                c, pool)));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_stats_train_nhwc(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                                     const void *in, int n, int c, int hw, float momentum, float eps, int sync) {
    if (bn_old_kernels())
        return cuda_batchnorm_stats_train_nhwc_old(save_mean, save_inv_std, running_mean, running_var, in, n, c, hw,
                                                   momentum, eps, sync);
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, in));
    double *part = bn_partials((int)t.grid.y, c);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_partial_stats_kernel<T, V><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, (const T *)in, running_mean, rows, t.per, c)));
    CUDA_LAUNCHED();
    bn_finish_stats(save_mean, save_inv_std, running_mean, running_var, part, (int)t.grid.y, c, rows, momentum, eps,
                    sync);
}

void cuda_batchnorm_apply_nhwc(void *out, const void *in, const float *gamma, const float *beta, const float *mean,
                               const float *inv_std, int n, int c, int hw, int relu) {
    if (bn_old_kernels()) return cuda_batchnorm_apply_nhwc_old(out, in, gamma, beta, mean, inv_std, n, c, hw, relu);
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, out, in));
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_apply_kernel<T, V><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)out, (const T *)in, gamma, beta, mean, inv_std, rows, t.per, c,
                                                relu)));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_backward_nhwc(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                                  const void *in, const float *gamma, const float *save_mean,
                                  const float *save_inv_std, int n, int c, int hw, int sync) {
    if (bn_old_kernels())
        return cuda_batchnorm_backward_nhwc_old(din, dgamma, dbeta, dout, relu_out, in, gamma, save_mean,
                                                save_inv_std, n, c, hw, sync);
    long rows = (long)n * hw;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, din, dout, relu_out, in));
    double *part = bn_partials((int)t.grid.y, c);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_partial_grads_kernel<T, V><<<t.grid, t.block, 0, rt_stream()>>>(
                                                part, (const T *)dout, (const T *)relu_out, (const T *)in, save_mean,
                                                save_inv_std, rows, t.per, c)));
    CUDA_LAUNCHED();
    long m = rows;
    if (!din) sync = 0;   /* dgamma and dbeta are this rank's share: only din needs every rank's sums */
    const double *totals = bn_finish_grads(dgamma, dbeta, part, (int)t.grid.y, c, &m, sync);
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, vec_input_grad_kernel<T, V, RELU_OUT><<<t.grid, t.block, 0, rt_stream()>>>(
                                                (T *)din, (const T *)dout, (const T *)relu_out, (const void *)NULL,
                                                (const T *)in, gamma, totals, m, save_mean, save_inv_std, rows, t.per,
                                                c, bn_pool_in())));
    CUDA_LAUNCHED();
}
