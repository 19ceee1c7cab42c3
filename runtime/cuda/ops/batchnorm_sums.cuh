/* Shared by the batch-norm ops of both layouts (batchnorm.cu: NCHW, batchnorm_nhwc.cu) and
 * the channels-last parameter gradients of bias, layer scale and layer norm: the
 * per-(channel, block) partial sums they leave in one scratch buffer, part[2 * (ch * splits +
 * s) + k], and the kernels that add them up in a fixed order. */
#ifndef RT_CUDA_BATCHNORM_SUMS_CUH
#define RT_CUDA_BATCHNORM_SUMS_CUH
#include "../cuda_common.cuh"
#include "act_vec.cuh"
#include "rt_devmem.h"   /* RT_DEVMEM_MAX_SPLITS */

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
/* Room for the retire counters of `tiles` channel tiles (bn_vec_tiles.cuh vec_tile_retires):
 * one a tile, then RETIRE_MAX_GROUPS a tile for its groups of splits (zeroed; each launch
 * leaves them zero). */
#define RETIRE_MAX_GROUPS ((RT_DEVMEM_MAX_SPLITS + SUM_GROUP - 1) / SUM_GROUP)
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

/* The order every per-channel sum of partials follows, so that each way of adding them gives
 * the same bits: the splits in groups of SUM_GROUP, each group's pairs added by a fixed
 * shuffle tree (split k of the group in lane k), the groups' sums then added in order. Both
 * retiring kernels (bn_vec_tiles.cuh: each group's last block adds its group, the tile's last
 * block the groups) and the warp-per-channel kernels (warp_channel_sums) follow it. */
#define SUM_GROUP 32

/* A pair of sums over the calling warp's lanes, in lane 0 (every lane calls). */
__device__ static inline double2 warp_tree(double2 v) {
    for (int o = 16; o > 0; o >>= 1) {
        v.x += __shfl_down_sync(0xffffffffu, v.x, o);
        v.y += __shfl_down_sync(0xffffffffu, v.y, o);
    }
    return v;
}

/* Both sums of channel ch, in lane 0 of the calling warp (every lane of it calls, lane its
 * index in the warp), in SUM_GROUP's order: lane l loads split l of each group (16-byte loads,
 * coalesced: a channel's pairs are contiguous; four groups' loads in flight). */
__device__ static inline void warp_channel_sums(const double *part, int splits, int ch, int lane, double *s0,
                                                double *s1) {
    const double2 *p = reinterpret_cast<const double2 *>(part) + (long)ch * splits;
    double a = 0, b = 0;
#pragma unroll 4
    for (int g = 0; g * SUM_GROUP < splits; g++) {
        int s = g * SUM_GROUP + lane;
        double2 v = warp_tree(s < splits ? p[s] : make_double2(0, 0));
        a += v.x, b += v.y;
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
