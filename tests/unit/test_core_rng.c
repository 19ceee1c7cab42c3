/* RNG: determinism, stream separation, save/restore of state, distribution moments, init. */
#include <math.h>
#include <string.h>
#include "rt_core.h"
#include "rt_rng.h"
#include "testlib.h"

int main(void) {
    rt_rng a, b;
    rt_rng_init(&a, 42, RT_STREAM_INIT);
    rt_rng_init(&b, 42, RT_STREAM_INIT);
    for (int i = 0; i < 1000; i++) CHECK(rt_rng_u64(&a) == rt_rng_u64(&b));

    /* Different seed or stream: different numbers. */
    rt_rng c;
    rt_rng_init(&c, 43, RT_STREAM_INIT);
    rt_rng_init(&b, 42, RT_STREAM_SHUFFLE);
    rt_rng_init(&a, 42, RT_STREAM_INIT);
    int same_seed = 0, same_stream = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rt_rng_u64(&a);
        same_seed += x == rt_rng_u64(&c);
        same_stream += x == rt_rng_u64(&b);
    }
    CHECK(same_seed == 0);
    CHECK(same_stream == 0);

    /* The whole state is the struct: copy it mid-stream (as a checkpoint would) and resume. */
    rt_rng_init(&a, 7, RT_STREAM_DATA);
    for (int i = 0; i < 37; i++) rt_rng_normal(&a);
    rt_rng saved;
    memcpy(&saved, &a, sizeof a);
    float expect[16];
    for (int i = 0; i < 16; i++) expect[i] = rt_rng_normal(&a);
    for (int i = 0; i < 16; i++) CHECK(rt_rng_normal(&saved) == expect[i]);

    /* Moments. */
    rt_rng_init(&a, 1, RT_STREAM_INIT);
    const int n = 200000;
    double su = 0, su2 = 0, sn = 0, sn2 = 0;
    float umin = 1, umax = 0;
    for (int i = 0; i < n; i++) {
        float u = rt_rng_uniform(&a);
        su += u; su2 += (double)u * u;
        umin = fminf(umin, u); umax = fmaxf(umax, u);
        double z = rt_rng_normal(&a);
        sn += z; sn2 += z * z;
    }
    CHECK(umin >= 0.0f && umax < 1.0f);
    CHECK_NEAR(su / n, 0.5, 0.01);
    CHECK_NEAR(su2 / n - (su / n) * (su / n), 1.0 / 12, 0.01);
    CHECK(fabs(sn / n) < 0.01);
    CHECK_NEAR(sn2 / n, 1.0, 0.02);

    /* rt_rng_below: in range and roughly uniform. */
    int counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        uint32_t k = rt_rng_below(&a, 7);
        CHECK(k < 7);
        if (k < 7) counts[k]++;
    }
    for (int k = 0; k < 7; k++) CHECK(abs(counts[k] - 10000) < 500);

    /* Stateless hash: pure function, sensitive to each argument. */
    CHECK(rt_hash_u64(1, 2, 3) == rt_hash_u64(1, 2, 3));
    CHECK(rt_hash_u64(1, 2, 3) != rt_hash_u64(1, 3, 2));
    CHECK(rt_hash_u64(1, 2, 3) != rt_hash_u64(2, 2, 3));
    CHECK(rt_hash_u64(0, 0, 0) != 0);

    /* Init helpers: bounds and scale. */
    static float w[64 * 3 * 3 * 3 * 10];
    long nw = sizeof w / sizeof w[0];
    long fan_in = 3 * 3 * 3;
    static float bias[640];
    rt_init_torch_conv(w, bias, 640, 3, 3, 3, &a);
    float bound = 1.0f / sqrtf((float)fan_in), mx = 0;
    for (long i = 0; i < nw; i++) mx = fmaxf(mx, fabsf(w[i]));
    CHECK(mx <= bound && mx > 0.95f * bound);
    for (int i = 0; i < 640; i++) CHECK(fabsf(bias[i]) <= bound);
    rt_init_kaiming_normal(w, nw, fan_in, &a);
    double s2 = 0;
    for (long i = 0; i < nw; i++) s2 += (double)w[i] * w[i];
    CHECK_NEAR(s2 / nw, 2.0 / fan_in, 0.05);
    rt_init_kaiming_uniform(w, nw, fan_in, 0.0, &a);
    mx = 0;
    for (long i = 0; i < nw; i++) mx = fmaxf(mx, fabsf(w[i]));
    CHECK(mx <= sqrtf(6.0f / fan_in) && mx > 0.95f * sqrtf(6.0f / fan_in));
    return test_finish("test_core_rng");
}
