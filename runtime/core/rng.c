/* Counter-based RNG (splitmix64 keyed by seed and stream) and a stateless hash. */
#include <math.h>
#include "rt_rng.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

void rt_rng_init(rt_rng *r, uint64_t seed, uint64_t stream) {
    r->key = rt_hash_u64(seed, stream, 0x5eedull);
    r->counter = 0;
}

uint64_t rt_rng_u64(rt_rng *r) {
    /* splitmix64: output i = mix(key + (i+1) * golden); the state is just (key, i). */
    r->counter++;
    return rt_mix64(r->key + r->counter * GOLDEN);
}

float rt_rng_uniform(rt_rng *r) { return (float)(rt_rng_u64(r) >> 40) * (1.0f / 16777216.0f); }

float rt_rng_uniform_range(rt_rng *r, float lo, float hi) {
    return lo + (hi - lo) * rt_rng_uniform(r);
}

float rt_rng_normal(rt_rng *r) {
    /* Box-Muller, keeping one of the pair: a cached spare would add state beyond two
     * uint64s and make checkpointed streams depend on parity. u1 in (0,1] avoids log(0). */
    uint64_t a = rt_rng_u64(r), b = rt_rng_u64(r);
    double u1 = ((a >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (b >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
}

uint32_t rt_rng_below(rt_rng *r, uint32_t n) {
    /* Lemire's multiply-shift with rejection: unbiased for every n. */
    uint64_t m = (uint64_t)(uint32_t)(rt_rng_u64(r) >> 32) * n;
    uint32_t lo = (uint32_t)m;
    if (lo < n) {
        uint32_t t = (uint32_t)(-n) % n;
        while (lo < t) {
            m = (uint64_t)(uint32_t)(rt_rng_u64(r) >> 32) * n;
            lo = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
