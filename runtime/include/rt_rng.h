/* Counter-based random numbers and weight initialization.
 *
 * rt_rng is two uint64s (key, counter): output i is mix(key, i). Saving a checkpoint saves
 * those 16 bytes, and resuming continues the exact same stream. For per-sample decisions
 * (augmentation, dropout masks) use the stateless rt_hash_u64(seed, a, b): the answer
 * depends only on its arguments, never on how many numbers were drawn before, so any rank
 * layout and any resume point see the same values.
 *
 *   rt_rng r; rt_rng_init(&r, seed, RT_STREAM_INIT);
 *   rt_init_kaiming_normal(conv1_w, 64 * 3 * 7 * 7, 64 * 7 * 7, &r);   // fan_out, ReLU
 *   rt_init_torch_linear(fc_w, fc_b, 1000, 2048, &r);                   // torch defaults
 */
#ifndef RT_RNG_H
#define RT_RNG_H
#include <stdint.h>
#include "rt_hash.h"   /* rt_hash_u64, rt_mix64 */

typedef struct {
    uint64_t key;       /* derived from (seed, stream) */
    uint64_t counter;   /* how many 64-bit outputs have been drawn */
} rt_rng;

/* Stream ids keep unrelated uses of one seed apart. */
enum { RT_STREAM_INIT = 1, RT_STREAM_SHUFFLE = 2, RT_STREAM_AUGMENT = 3, RT_STREAM_DROPOUT = 4,
       RT_STREAM_DATA = 5 };

void rt_rng_init(rt_rng *r, uint64_t seed, uint64_t stream);
uint64_t rt_rng_u64(rt_rng *r);
float rt_rng_uniform(rt_rng *r);                  /* [0, 1), 24 random bits */
float rt_rng_uniform_range(rt_rng *r, float lo, float hi);
float rt_rng_normal(rt_rng *r);                   /* N(0, 1) via Box-Muller */
uint32_t rt_rng_below(rt_rng *r, uint32_t n);     /* uniform integer in [0, n), unbiased */

/* Stateless: a well-mixed 64-bit function of three inputs. */

/* Weight init into w[0..n). `fan` is fan_in (or fan_out where the caller chooses) =
 * in_channels * kh * kw for a conv, in_features for a linear layer. */
void rt_init_const(float *w, long n, float value);
void rt_init_uniform(float *w, long n, float lo, float hi, rt_rng *r);
void rt_init_normal(float *w, long n, float mean, float std, rt_rng *r);
/* He et al.: std = gain / sqrt(fan), gain = sqrt(2) (ReLU). */
void rt_init_kaiming_normal(float *w, long n, long fan, rt_rng *r);
/* bound = gain * sqrt(3 / fan), gain = sqrt(2 / (1 + a^2)) (leaky-ReLU slope a; 0 for ReLU). */
void rt_init_kaiming_uniform(float *w, long n, long fan, double a, rt_rng *r);
/* PyTorch's default Linear/Conv init: weight kaiming_uniform(a = sqrt(5)), which works out
 * to U(-1/sqrt(fan_in), 1/sqrt(fan_in)); bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
 * bias may be NULL (no bias). */
void rt_init_torch_default(float *weight, long n_weight, float *bias, long n_bias, long fan_in,
                           rt_rng *r);
void rt_init_torch_linear(float *weight, float *bias, long out_features, long in_features,
                          rt_rng *r);
void rt_init_torch_conv(float *weight, float *bias, long out_ch, long in_ch, long kh, long kw,
                        rt_rng *r);

#endif
