/* The stateless hashes behind every random choice that must agree everywhere: splitmix64
 * mixing, rt_hash_u64 (per-layer/step seeds, augmentation) and rt_hash_uniform (dropout and
 * drop-path masks). One definition, compiled for the host and, under nvcc, for the device too,
 * so GPU masks are the CPU's bit for bit. */
#ifndef RT_HASH_H
#define RT_HASH_H
#include <stdint.h>

#ifdef __CUDACC__
#define RT_HOST_DEVICE __host__ __device__
#else
#define RT_HOST_DEVICE
#endif

/* The splitmix64 finalizer. */
RT_HOST_DEVICE static inline uint64_t rt_mix64(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Chained mixing: each input passes through a full avalanche before the next is added, so
 * (a, b) and (b, a) give unrelated outputs. */
RT_HOST_DEVICE static inline uint64_t rt_hash_u64(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t h = rt_mix64(seed + 0x9e3779b97f4a7c15ull);
    h = rt_mix64(h ^ (a + 0x632be59bd9b4e019ull));
    return rt_mix64(h ^ (b + 0x8cb92ba72f3d8dd7ull));
}

/* Counter-based uniform in [0,1) from (seed, index): splitmix64 of the pair. */
RT_HOST_DEVICE static inline double rt_hash_uniform(uint64_t seed, uint64_t index) {
    uint64_t z = seed ^ (index * 0xD1B54A32D192ED03ull);
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}
#endif
