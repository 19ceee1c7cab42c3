/* Shared by the batch-norm ops of both layouts (batchnorm.cu: NCHW, batchnorm_nhwc.cu) and
 * the channels-last parameter gradients of bias, layer scale and layer norm: the
 * per-(channel, block) partial sums they leave in one scratch buffer, part[2 * (ch * splits +
 * s) + k], and the kernels that add them up in a fixed order. */
#ifndef RT_CUDA_BATCHNORM_SUMS_CUH
#define RT_CUDA_BATCHNORM_SUMS_CUH
#include "../cuda_common.cuh"
#include "act_vec.cuh"

/* TRAINC_CUDA_BN=old: the batch-norm kernels before the 16-byte channels-last and
 * warp-per-channel ones (read once), for A/B timing on a GPU. */
int bn_old_kernels(void);
/* The old channels-last launchers (batchnorm_nhwc.cu), same arguments as rt_cuda.h's. */
void cuda_batchnorm_stats_train_nhwc_old(float *save_mean, float *save_inv_std, float *running_mean,
                                         float *running_var, const void *in, int n, int c, int hw, float momentum,
                                         float eps, int sync);
void cuda_batchnorm_apply_nhwc_old(void *out, const void *in, const float *gamma, const float *beta,
                                   const float *mean, const float *inv_std, int n, int c, int hw, int relu);
void cuda_batchnorm_backward_nhwc_old(void *din, float *dgamma, float *dbeta, const void *dout,
                                      const void *relu_out, const void *in, const float *gamma,
                                      const float *save_mean, const float *save_inv_std, int n, int c, int hw,
                                      int sync);

/* Room for splits x c pairs: sized at start-up to the device memory plan's bound
 * (cuda_reserve_partial_sums); grows (rt_cuda_scratch) only if that bound was short. */
double *bn_partials(int splits, int c);
/* Batch statistics from sums of d and d^2 over m values per channel, d = x - running_mean
 * (the shift keeps E[d^2] - E[d]^2 accurate), and torch's running-stat update (unbiased
 * variance). sync: the sums of every rank (all-reduced; m counts this rank's values). */
void bn_finish_stats(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                     const double *part, int splits, int c, long m, float momentum, float eps, int sync);
/* dgamma = sum dy·xhat (the second sums), dbeta = sum dy (the first) over this rank's values,
 * each unless NULL. Returns the per-channel totals
 * {sum dy, sum dy·xhat} the input gradient needs, [c][2] on the device: every rank's when sync,
 * *m then multiplied by the world size. */
const double *bn_finish_grads(float *dgamma, float *dbeta, const double *part, int splits, int c, long *m, int sync);

/* The per-channel totals {sum dy, sum dy·xhat} buffer ([c][2], on the device). */
double *bn_channel_totals(int c);
/* Room for one retire counter per channel tile (zeroed; each launch leaves them zero). */
unsigned *bn_retire_counters(int tiles);

/* Channel ch's batch statistics from the sums of d = x - running_mean over m values (the
 * running mean read before it is updated), and torch's running-stat update. Returns the saved
 * {mean, inv_std} too, for a caller that derives more from them without reading them back. */
__device__ static inline float2 finish_channel_stats(float *save_mean, float *save_inv_std, float *running_mean,
                                                   float *running_var, int ch, double sum, double sq, long m,
                                                   float momentum, float eps) {
    double shifted = sum / m, mean = running_mean[ch] + shifted, var = sq / m - shifted * shifted;
    if (var < 0) var = 0;
    save_mean[ch] = (float)mean;
    save_inv_std[ch] = (float)(1.0 / sqrt(var + eps));
    double unbiased = m > 1 ? var * m / (m - 1) : var;
    running_mean[ch] = (float)((1 - momentum) * running_mean[ch] + momentum * mean);
    running_var[ch] = (float)((1 - momentum) * running_var[ch] + momentum * unbiased);
    return make_float2((float)mean, (float)(1.0 / sqrt(var + eps)));
}

/* Both sums of channel ch, in lane 0 of the calling warp (every lane of it calls, lane its
 * index in the warp): lane l adds the pairs of splits l, l + 32, ... (16-byte loads,
 * coalesced: a channel's pairs are contiguous, four in flight), then a fixed shuffle tree. The
 * order depends on splits alone, so results repeat run to run, and the warp-per-channel
 * kernels (batchnorm_sums.cu) and the retiring blocks (bn_vec_tiles.cuh) add alike. */
__device__ static inline void warp_channel_sums(const double *part, int splits, int ch, int lane, double *s0,
                                                double *s1) {
    const double2 *p = reinterpret_cast<const double2 *>(part) + (long)ch * splits;
    double a = 0, b = 0;
#pragma unroll 4
    for (int s = lane; s < splits; s += 32) {
        double2 v = p[s];
        a += v.x, b += v.y;
    }
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_down_sync(0xffffffffu, a, o);
        b += __shfl_down_sync(0xffffffffu, b, o);
    }
    *s0 = a, *s1 = b;
}

/* Channel ch's totals [c][2], and as floats dgamma = the second and dbeta = the first (each
 * when not NULL). */
__device__ static inline void store_channel_totals(double *totals, float *dgamma, float *dbeta, int ch, double s0,
                                                   double s1) {
    totals[2 * ch] = s0, totals[2 * ch + 1] = s1;
    if (dgamma) dgamma[ch] = (float)s1;
    if (dbeta) dbeta[ch] = (float)s0;
}

/* dy after the following ReLU's mask (relu_out: that ReLU's output; NULL: none). */
template <typename T> __device__ static inline float bn_dy(const T *dout, const T *relu_out, long i) {
    return relu_out && !(rt_ld(relu_out[i]) > 0.0f) ? 0.0f : rt_ld(dout[i]);
}

/* bn_dy for element j of a vector of V (has_relu 0: no ReLU, relu unread). */
template <typename T, int V>
__device__ __forceinline__ float vec_dy(const act_vec<T, V> &dy, const act_vec<T, V> &relu, int has_relu, int j) {
    return has_relu && !(rt_ld(relu.e[j]) > 0.0f) ? 0.0f : rt_ld(dy.e[j]);
}

/* V bits of a ReLU bitmask (bit i of byte i/8: the ReLU passed element i) from element index
 * `at`, a multiple of V, V dividing 8: they sit in one byte. */
template <int V> __device__ __forceinline__ unsigned relu_bits_at(const uint8_t *bits, long at) {
    return ((unsigned)bits[at >> 3] >> (at & 7)) & ((1u << V) - 1u);
}

/* The backward's input vectors at element index `at`: dy, the ReLU's output (relu_out: none
 * when NULL) or its bits (relu_bits, instead: none when NULL), x. */
template <typename T, int V> struct vec_grad_in {
    act_vec<T, V> dy, relu, x;
    unsigned bits;
};
template <typename T, int V>
__device__ __forceinline__ void vec_grad_load(vec_grad_in<T, V> &g, const T *dout, const T *relu_out, const T *in,
                                              long at, const uint8_t *relu_bits = NULL) {
    g.dy = vec_load<T, V>(dout + at);
    if (relu_out) g.relu = vec_load<T, V>(relu_out + at);
    if (relu_bits) g.bits = relu_bits_at<V>(relu_bits, at);
    g.x = vec_load<T, V>(in + at);
}

/* vec_dy with the ReLU's bits where has_bits (relu unread), else its output where has_relu. */
template <typename T, int V>
__device__ __forceinline__ float vec_dy(const vec_grad_in<T, V> &g, int has_relu, int has_bits, int j) {
    if (has_bits) return (g.bits >> j) & 1u ? rt_ld(g.dy.e[j]) : 0.0f;
    return vec_dy(g.dy, g.relu, has_relu, j);
}
#endif
