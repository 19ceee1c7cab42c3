/* Row-major GEMM for the CPU ops, forwarded to OpenBLAS (sgemm or dgemm by precision). */
#include <cblas.h>
#include "rt_gemm.h"
#include "rt_real.h"

void RT_FN(rt_gemm)(int trans_a, int trans_b, int m, int n, int k,
                    real_t alpha, const real_t *a, int lda, const real_t *b, int ldb,
                    real_t beta, real_t *c, int ldc) {
#ifdef RT_REAL_DOUBLE
    cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#else
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
}
