/* Row-major GEMM for the CPU ops on OpenBLAS (FP32; oneDNN's BF16 GEMM under compute BF16), threaded by OpenMP rather than by OpenBLAS:
 * measured on the 2-core machine, OpenBLAS's own threads made the small per-image GEMMs of
 * a convolution slower than one thread, and conv parallelizes over images instead. */
#include <cblas.h>
#include <omp.h>
#include "rt_gemm.h"
#include "rt_real.h"
#include "rt_slots.h"

/* Below this many multiply-adds, splitting costs more than it gains. */
#define SPLIT_MIN_MACS (1L << 21)

static void gemm_one(int fp32_on_dnnl, int trans_a, int trans_b, int m, int n, int k, real_t alpha,
                     const real_t *a, int lda, const real_t *b, int ldb, real_t beta,
                     real_t *c, int ldc) {
#ifdef RT_REAL_DOUBLE
    (void)fp32_on_dnnl;
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#elif defined(RT_PINNED_ARITH)
    (void)fp32_on_dnnl;   /* the pinned runtime: no library kernels, FP32 only (gemm_pinned.c) */
    rt_gemm_pinned(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
    int bf16 = rt_gemm_compute() == RT_COMPUTE_BF16;   /* BF16 inputs, FP32 accumulation */
    if (bf16 || (fp32_on_dnnl && rt_gemm_fp32_dnnl_allowed()) || rt_gemm_fp32_on_dnnl()) {
        rt_gemm_library_call(bf16 ? RT_GEMM_DNNL_BF16 : RT_GEMM_DNNL_F32, trans_a, trans_b, m, n, k,
                             alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}

void RT_FN(rt_gemm)(int trans_a, int trans_b, int m, int n, int k,
                    real_t alpha, const real_t *a, int lda, const real_t *b, int ldb,
                    real_t beta, real_t *c, int ldc) {
    RT_FN(rt_gemm_chosen)((rt_gemm_choice){ 0, RT_GEMM_SPLIT_LONGER }, trans_a, trans_b, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc);
}

void RT_FN(rt_gemm_chosen)(rt_gemm_choice how, int trans_a, int trans_b, int m, int n, int k,
                           real_t alpha, const real_t *a, int lda, const real_t *b, int ldb,
                           real_t beta, real_t *c, int ldc) {
    /* OpenBLAS threads would run on top of ours: pin it to one thread, once. */
    static int pinned;
    if (!__atomic_load_n(&pinned, __ATOMIC_ACQUIRE)) {
        #pragma omp critical(rt_gemm_pin)
        if (!__atomic_load_n(&pinned, __ATOMIC_ACQUIRE)) {
            openblas_set_num_threads(1);
            __atomic_store_n(&pinned, 1, __ATOMIC_RELEASE);
        }
    }
    /* Inside an op's parallel region (even a team of one) the caller has split the work. */
    int slots = rt_slots();
    if (omp_get_level() > 0 || slots < 2 || (long)m * n * k < SPLIT_MIN_MACS) {
        gemm_one(how.fp32_on_dnnl, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    /* Split one side of C (the longer unless the caller chose) into one block per reduction
     * slot (rt_slots.h), which threads share out. A library may sum an element of C in another
     * order for another block shape; the blocks depend only on the machine, so the result
     * does not change with the thread count. */
    int split_rows = how.split == RT_GEMM_SPLIT_LONGER ? m >= n : how.split == RT_GEMM_SPLIT_ROWS;
    int len = split_rows ? m : n;
    #pragma omp parallel for schedule(static) num_threads(rt_slot_threads())
    for (int t = 0; t < slots; t++) {
        int lo = rt_slot_begin(len, t, slots), hi = rt_slot_begin(len, t + 1, slots);
        if (hi <= lo) continue;
        if (split_rows)   /* rows lo..hi of op(A) and of C */
            gemm_one(how.fp32_on_dnnl, trans_a, trans_b, hi - lo, n, k, alpha, trans_a ? a + lo : a + (long)lo * lda,
                     lda, b, ldb, beta, c + (long)lo * ldc, ldc);
        else              /* columns lo..hi of op(B) and of C */
            gemm_one(how.fp32_on_dnnl, trans_a, trans_b, m, hi - lo, k, alpha, a, lda,
                     trans_b ? b + (long)lo * ldb : b + lo, ldb, beta, c + lo, ldc);
    }
}
