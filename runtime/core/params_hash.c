/* Parameter fingerprint (FNV-1a 64): cheap bit-exact comparison of two runs' final weights. */
#include "rt_core.h"

uint64_t rt_fnv1a64(const void *data, size_t n, uint64_t h) {
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

char *rt_params_hash(const float *p, long n, char out[RT_PARAMS_HASH_LEN + 1]) {
    uint64_t h = rt_fnv1a64(p, n > 0 ? (size_t)n * sizeof(float) : 0, RT_FNV1A64_INIT);
    snprintf(out, RT_PARAMS_HASH_LEN + 1, "%016llx", (unsigned long long)h);
    return out;
}
