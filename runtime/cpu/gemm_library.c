/* The matrix-multiply libraries behind rt_gemm besides OpenBLAS: oneDNN's sgemm and its BF16
 * GEMM (BF16 inputs, FP32 accumulation and output), loaded with dlopen so that a trainer
 * links and runs without oneDNN (it then keeps OpenBLAS, and refuses BF16 at start-up).
 * dnnl_gemm_bf16bf16f32 is exported by libdnnl.so.2 but not declared in its headers; its
 * signature is dnnl_sgemm's with bfloat16 A and B (checked against sgemm by
 * test_gemm in tests/unit/test_grad_bf16.c). */
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"
#include "rt_env.h"
#include "rt_gemm.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *, int64_t,
                             const float *, int64_t, float, float *, int64_t);
typedef int (*dnnl_bf16_fn)(char, char, int64_t, int64_t, int64_t, float, const uint16_t *, int64_t,
                            const uint16_t *, int64_t, float, float *, int64_t);

static dnnl_sgemm_fn dnnl_sgemm_p;
static dnnl_bf16_fn dnnl_bf16_p;

static void load_dnnl(void) {
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    dnnl_sgemm_p = (dnnl_sgemm_fn)dlsym(h, "dnnl_sgemm");
    dnnl_bf16_p = (dnnl_bf16_fn)dlsym(h, "dnnl_gemm_bf16bf16f32");
}

static void load_once(void) {
    static int loaded;
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return;
    #pragma omp critical(rt_gemm_load)
    if (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) {
        load_dnnl();
        __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
}

int rt_cpu_has_avx512_bf16(void) {
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 12
    return __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

/* TRAINC_CPU_NO_BF16=1 makes this CPU count as one without avx512_bf16, so that the
 * start-up refusal can be tested on a CPU that has it. */
static int bf16_hidden(void) { return rt_env_bool(RT_ENV_TRAINC_CPU_NO_BF16); }

static rt_compute compute_mode = RT_COMPUTE_FP32;

/* FP32 products: OpenBLAS where its run-time detection picked AVX-512 kernels (SkylakeX,
 * Cooperlake, SapphireRapids). On an AVX-512 CPU it does not know yet (Zen 5 with Debian
 * 12's OpenBLAS 0.3.21) it runs its "Haswell" kernels at about half oneDNN's rate
 * (bench/RESULTS.md, "GEMM library per linear product"), so there, with oneDNN installed,
 * FP32 goes to oneDNN's sgemm. TRAINC_SGEMM=openblas or onednn forces either (for
 * measurements); make test-cpu-paths runs the tests with OPENBLAS_CORETYPE=Haswell. */
static int decide_dnnl_fp32(void) {
    if (rt_arith_pinned()) return 0;
    if (rt_env_is(RT_ENV_TRAINC_SGEMM, "openblas")) return 0;
    if (rt_env_is(RT_ENV_TRAINC_SGEMM, "onednn")) return rt_gemm_library_available(RT_GEMM_DNNL_F32);
    const char *core = openblas_get_corename();
    int avx512_kernels = core && (strstr(core, "SkylakeX") || strstr(core, "Cooperlake") ||
                                  strstr(core, "SapphireRapids"));
    return !avx512_kernels && __builtin_cpu_supports("avx512f") &&
           rt_gemm_library_available(RT_GEMM_DNNL_F32);
}

int rt_gemm_fp32_on_dnnl(void) {
    static int decided = -1;
    int d = __atomic_load_n(&decided, __ATOMIC_ACQUIRE);
    if (d < 0) {
        d = decide_dnnl_fp32();
        __atomic_store_n(&decided, d, __ATOMIC_RELEASE);
    }
    return d;
}

int rt_gemm_fp32_dnnl_allowed(void) {
    static int decided = -1;
    int d = __atomic_load_n(&decided, __ATOMIC_ACQUIRE);
    if (d < 0) {
        d = !rt_env_is(RT_ENV_TRAINC_SGEMM, "openblas") && rt_gemm_library_available(RT_GEMM_DNNL_F32);
        __atomic_store_n(&decided, d, __ATOMIC_RELEASE);
    }
    return d;
}

rt_compute rt_gemm_compute(void) { return compute_mode; }

int rt_arith_pinned(void) {
#ifdef RT_PINNED_ARITH
    return 1;
#else
    return 0;
#endif
}

int rt_gemm_set_compute(rt_compute compute, char *why, unsigned why_cap) {
    if (compute == RT_COMPUTE_BF16 && rt_arith_pinned()) {
        snprintf(why, why_cap, "precision.compute BF16 runs on oneDNN's kernels, which the pinned-arithmetic "
                               "runtime leaves out: build the trainer against the normal runtime");
        return -1;
    }
    if (compute == RT_COMPUTE_BF16) {
        if (!rt_cpu_has_avx512_bf16() || bf16_hidden()) {
            snprintf(why, why_cap, "precision.compute BF16 needs a CPU with avx512_bf16 (vdpbf16ps), "
                                   "and this one has none");
            return -1;
        }
        if (!rt_gemm_library_available(RT_GEMM_DNNL_BF16)) {
            snprintf(why, why_cap, "precision.compute BF16 on the CPU runs on oneDNN's BF16 GEMM, "
                                   "and libdnnl.so.2 (with dnnl_gemm_bf16bf16f32) was not found");
            return -1;
        }
    }
    compute_mode = compute;
    return 0;
}

int rt_gemm_library_available(rt_gemm_library lib) {
    load_once();
    switch (lib) {
    case RT_GEMM_OPENBLAS: return 1;
    case RT_GEMM_DNNL_F32: return dnnl_sgemm_p != NULL;
    case RT_GEMM_DNNL_BF16: return dnnl_bf16_p != NULL && rt_cpu_has_avx512_bf16();
    }
    return 0;
}

/* float -> bfloat16, rounding to nearest even (NaN stays NaN). */
unsigned short rt_float_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 12
/* 32 values at a time with vcvtne2ps2bf16 (round to nearest even, as rt_float_to_bf16). */
__attribute__((target("avx512f,avx512bf16")))
static void row_to_bf16_avx512(uint16_t *dst, const float *src, long n) {
    long i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i + 16), _mm512_loadu_ps(src + i));
        _mm512_storeu_si512((void *)(dst + i), (__m512i)v);
    }
    for (; i < n; i++) dst[i] = rt_float_to_bf16(src[i]);
}
#endif

void rt_to_bf16(unsigned short *dst, const float *src, long n) {
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 12
    if (rt_cpu_has_avx512_bf16()) { row_to_bf16_avx512(dst, src, n); return; }
#endif
    for (long i = 0; i < n; i++) dst[i] = rt_float_to_bf16(src[i]);
}

/* rows x cols of a row-major matrix with leading dimension ld into a packed BF16 copy. */
static void matrix_to_bf16(uint16_t *dst, const float *src, int rows, int cols, int ld) {
    for (int r = 0; r < rows; r++) rt_to_bf16(dst + (long)r * cols, src + (long)r * ld, cols);
}

/* Each thread's BF16 copies of A and B, grown as needed and kept for the next call. */
static _Thread_local uint16_t *bf16_buf;
static _Thread_local long bf16_cap;

static uint16_t *bf16_scratch(long elems) {
    if (elems > bf16_cap) {
        free(bf16_buf);
        long cap = elems + elems / 4;
        bf16_buf = malloc(sizeof(uint16_t) * cap);
        if (!bf16_buf) rt_die("out of memory for a BF16 GEMM copy (%ld values)", cap);
        bf16_cap = cap;
    }
    return bf16_buf;
}

static void library_call(rt_gemm_library lib, int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b, int ldb,
                         float beta, float *c, int ldc);

void rt_gemm_library_call(rt_gemm_library lib, int trans_a, int trans_b, int m, int n, int k,
                          float alpha, const float *a, int lda, const float *b, int ldb,
                          float beta, float *c, int ldc) {
    load_once();
    /* One thread: rt_gemm splits the work itself, and oneDNN called outside a parallel
     * region (or in a team of one) would open its own (measured: 100x slower when nested). */
    int threads = omp_get_max_threads();
    if (threads > 1) omp_set_num_threads(1);
    library_call(lib, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (threads > 1) omp_set_num_threads(threads);
}

static void library_call(rt_gemm_library lib, int trans_a, int trans_b, int m, int n, int k,
                         float alpha, const float *a, int lda, const float *b, int ldb,
                         float beta, float *c, int ldc) {
    char ta = trans_a ? 'T' : 'N', tb = trans_b ? 'T' : 'N';
    if (lib == RT_GEMM_DNNL_F32 && dnnl_sgemm_p) {
        dnnl_sgemm_p(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    if (lib == RT_GEMM_DNNL_BF16 && dnnl_bf16_p) {
        /* stored shapes: A is (trans_a ? k x m : m x k), B is (trans_b ? n x k : k x n) */
        int ar = trans_a ? k : m, ac = trans_a ? m : k, br = trans_b ? n : k, bc = trans_b ? k : n;
        uint16_t *a16 = bf16_scratch((long)ar * ac + (long)br * bc), *b16 = a16 + (long)ar * ac;
        matrix_to_bf16(a16, a, ar, ac, lda);
        matrix_to_bf16(b16, b, br, bc, ldb);
        dnnl_bf16_p(ta, tb, m, n, k, alpha, a16, ac, b16, bc, beta, c, ldc);
        return;
    }
    rt_die("rt_gemm: library %d is not loaded (libdnnl.so.2 missing?)", (int)lib);
}
