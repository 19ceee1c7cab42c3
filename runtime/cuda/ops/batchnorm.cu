/* Batch normalization over (N, H, W) per channel: statistics (with torch's running-stat
 * update), the apply step, and the backward, optionally through a following ReLU's mask.
 * Activations in the context's type; statistics, gamma, beta and their gradients FP32.
 * Blocks walk a channel's planes (channel_planes.cuh), V = 4 neighbouring positions a thread
 * as one access when 4 divides hw; TRAINC_CUDA_BN=old: one position a thread, and the apply
 * as one thread per element with a 64-bit division each, as before. */
#include "batchnorm_sums.cuh"
#include "channel_planes.cuh"

/* Grid (splits, c): block (s, ch) sums d and d^2 of its samples, d = x - shift[ch] (the
 * running mean: near the batch mean, so the variance E[d^2] - E[d]^2 keeps its digits), in
 * double like the CPU op. */
template <typename T, int V>
__global__ void __launch_bounds__(BN_THREADS)
bn_partial_stats_kernel(double *part, const T *in, const float *shift, int n, int c, int hw, int per) {
    int s = blockIdx.x, ch = blockIdx.y, n0 = s * per, n1 = min(n, n0 + per);
    double sum = 0, sq = 0, k = shift[ch];
    bn_for_each<V>(n0, n1, c, ch, hw, [&](long i) {
        act_vec<T, V> x = vec_load<T, V>(in + i);
#pragma unroll
        for (int j = 0; j < V; j++) {
            double d = rt_ld(x.e[j]) - k;
            sum += d;
            sq += d * d;
        }
    });
    sum = block_sum(sum);
    sq = block_sum(sq);
    if (threadIdx.x == 0) {
        double *o = part + 2 * ((long)ch * gridDim.x + s);
        o[0] = sum, o[1] = sq;
    }
}

__global__ void __launch_bounds__(RT_THREADS)
bn_eval_stats_kernel(float *save_mean, float *save_inv_std, const float *running_mean,
                     const float *running_var, int c, float eps) {
    GRID_STRIDE(ch, c) {
        save_mean[ch] = running_mean[ch];
        save_inv_std[ch] = 1.0f / sqrtf(running_var[ch] + eps);
    }
}

/* The old apply: one thread per element. */
template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
bn_apply_kernel(T *out, const T *in, const float *gamma, const float *beta, const float *mean,
                const float *inv_std, int c, long hw, long total, int relu) {
    GRID_STRIDE(i, total) {
        int ch = (int)((i / hw) % c);
        float scale = gamma[ch] * inv_std[ch];
        float y = rt_ld(in[i]) * scale + (beta[ch] - mean[ch] * scale);
        out[i] = rt_st<T>(relu && y < 0.0f ? 0.0f : y);
    }
}

/* Grid (splits, c), as the statistics. */
template <typename T, int V>
__global__ void __launch_bounds__(BN_THREADS)
bn_apply_planes_kernel(T *out, const T *in, const float *gamma, const float *beta, const float *mean,
                       const float *inv_std, int n, int c, int hw, int per, int relu) {
    int s = blockIdx.x, ch = blockIdx.y, n0 = s * per, n1 = min(n, n0 + per);
    float scale = gamma[ch] * inv_std[ch], shift = beta[ch] - mean[ch] * scale;
    bn_for_each<V>(n0, n1, c, ch, hw, [&](long i) {
        act_vec<T, V> x = vec_load<T, V>(in + i), y;
#pragma unroll
        for (int j = 0; j < V; j++) {
            float v = rt_ld(x.e[j]) * scale + shift;
            y.e[j] = rt_st<T>(relu && v < 0.0f ? 0.0f : v);
        }
        vec_store<T, V>(out + i, y);
    });
}

/* Grid (splits, c): block (s, ch) sums dy and dy·xhat of its samples. */
template <typename T, int V>
__global__ void __launch_bounds__(BN_THREADS)
bn_partial_grads_kernel(double *part, const T *dout, const T *relu_out, const T *in,
                        const float *save_mean, const float *save_inv_std, int n, int c, int hw,
                        int per) {
    int s = blockIdx.x, ch = blockIdx.y, n0 = s * per, n1 = min(n, n0 + per);
    float mean = save_mean[ch], inv_std = save_inv_std[ch];
    double s_dy = 0, s_dy_xhat = 0;
    bn_for_each<V>(n0, n1, c, ch, hw, [&](long i) {
        vec_grad_in<T, V> g;
        vec_grad_load(g, dout, relu_out, in, i);
#pragma unroll
        for (int j = 0; j < V; j++) {
            float dy = vec_dy(g.dy, g.relu, relu_out != NULL, j);
            s_dy += dy;
            s_dy_xhat += dy * (rt_ld(g.x.e[j]) - mean) * inv_std;
        }
    });
    s_dy = block_sum(s_dy);
    s_dy_xhat = block_sum(s_dy_xhat);
    if (threadIdx.x == 0) {
        double *o = part + 2 * ((long)ch * gridDim.x + s);
        o[0] = s_dy, o[1] = s_dy_xhat;
    }
}

/* din = gamma·inv_std/m · (m·dy - sum dy - xhat · sum dy·xhat), the CPU op's float formula;
 * totals[ch] = {sum dy, sum dy·xhat} over the m values behind the statistics. */
template <typename T, int V>
__global__ void __launch_bounds__(BN_THREADS)
bn_input_grad_kernel(T *din, const T *dout, const T *relu_out, const T *in, const float *gamma,
                     const double *totals, long m, const float *save_mean, const float *save_inv_std,
                     int n, int c, int hw, int per) {
    int s = blockIdx.x, ch = blockIdx.y, n0 = s * per, n1 = min(n, n0 + per);
    float mean = save_mean[ch], inv_std = save_inv_std[ch];
    float k = gamma[ch] * inv_std / m, a = (float)totals[2 * ch], b = (float)totals[2 * ch + 1];
    bn_for_each<V>(n0, n1, c, ch, hw, [&](long i) {
        vec_grad_in<T, V> g;
        vec_grad_load(g, dout, relu_out, in, i);
        act_vec<T, V> d;
#pragma unroll
        for (int j = 0; j < V; j++) {
            float xhat = (rt_ld(g.x.e[j]) - mean) * inv_std;
            d.e[j] = rt_st<T>(k * ((float)m * vec_dy(g.dy, g.relu, relu_out != NULL, j) - a - xhat * b));
        }
        vec_store<T, V>(din + i, d);
    });
}

#define BN_VEC 4   /* positions a thread when they divide hw */

/* Whether 4-position vectors suit hw and the tensors' addresses (never under TRAINC_CUDA_BN=old). */
static int planes_vec(int hw, const void *a, const void *b = NULL, const void *c = NULL, const void *d = NULL) {
    return !bn_old_kernels() && hw % BN_VEC == 0 && vec_aligned(a, b, c, d);
}

void cuda_batchnorm_stats_train(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                                const void *in, int n, int c, int hw, float momentum, float eps, int sync) {
    bn_split sp = bn_split_of(n, c, hw);
    double *part = bn_partials(sp.splits, c);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(planes_vec(hw, in), BN_VEC,
                                     bn_partial_stats_kernel<T, V><<<dim3(sp.splits, c), BN_THREADS, 0, rt_stream()>>>(
                                         part, (const T *)in, running_mean, n, c, hw, sp.per)));
    CUDA_LAUNCHED();
    bn_finish_stats(save_mean, save_inv_std, running_mean, running_var, part, sp.splits, c, (long)n * hw, momentum,
                    eps, sync);
}

void cuda_batchnorm_stats_eval(float *save_mean, float *save_inv_std, const float *running_mean,
                               const float *running_var, int c, float eps) {
    bn_eval_stats_kernel<<<rt_blocks(c), RT_THREADS, 0, rt_stream()>>>(save_mean, save_inv_std, running_mean,
                                                                       running_var, c, eps);
    CUDA_LAUNCHED();
}

void cuda_batchnorm_apply(void *out, const void *in, const float *gamma, const float *beta, const float *mean,
                          const float *inv_std, int n, int c, int hw, int relu) {
    if (bn_old_kernels()) {
        long total = (long)n * c * hw;
        RT_ACT_DISPATCH(bn_apply_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
            (T *)out, (const T *)in, gamma, beta, mean, inv_std, c, hw, total, relu));
        CUDA_LAUNCHED();
        return;
    }
    bn_split sp = bn_split_of(n, c, hw);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(planes_vec(hw, out, in), BN_VEC,
                                     bn_apply_planes_kernel<T, V><<<dim3(sp.splits, c), BN_THREADS, 0, rt_stream()>>>(
                                         (T *)out, (const T *)in, gamma, beta, mean, inv_std, n, c, hw, sp.per,
                                         relu)));
    CUDA_LAUNCHED();
}

void cuda_batchnorm_backward(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                             const void *in, const float *gamma, const float *save_mean,
                             const float *save_inv_std, int n, int c, int hw, int sync) {
    bn_split sp = bn_split_of(n, c, hw);
    double *part = bn_partials(sp.splits, c);
    dim3 grid(sp.splits, c);
    int vec = planes_vec(hw, din, dout, relu_out, in);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, BN_VEC, bn_partial_grads_kernel<T, V><<<grid, BN_THREADS, 0, rt_stream()>>>(
                                                      part, (const T *)dout, (const T *)relu_out, (const T *)in,
                                                      save_mean, save_inv_std, n, c, hw, sp.per)));
    CUDA_LAUNCHED();
    long m = (long)n * hw;
    if (!din) sync = 0;   /* dgamma and dbeta are this rank's share: only din needs every rank's sums */
    const double *totals = bn_finish_grads(dgamma, dbeta, part, sp.splits, c, &m, sync);
    if (!din) return;
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, BN_VEC, bn_input_grad_kernel<T, V><<<grid, BN_THREADS, 0, rt_stream()>>>(
                                                      (T *)din, (const T *)dout, (const T *)relu_out, (const T *)in,
                                                      gamma, totals, m, save_mean, save_inv_std, n, c, hw, sp.per)));
    CUDA_LAUNCHED();
}
