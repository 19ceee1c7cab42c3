/* Row-major matrix multiply used by the CPU ops: C = alpha * op(A) * op(B) + beta * C,
 * op(X) = X or X^T, through OpenBLAS.
 * Threading: the CPU ops own it, with OpenMP. The first call pins OpenBLAS to one thread
 * (openblas_set_num_threads(1), process-wide); called outside a parallel region, rt_gemm
 * splits C into one block per OpenMP thread; called inside one (conv2d's loop over images),
 * it runs on the calling thread. Measured on the 2-core machine: per-image conv GEMMs ran
 * 2-3x faster this way than with OpenBLAS's own threads, which also oversubscribe. */
#ifndef RT_GEMM_H
#define RT_GEMM_H

/* A is M x K after op (stored K x M when trans_a), B is K x N after op, C is M x N. */
void rt_gemm(int trans_a, int trans_b, int m, int n, int k,
             float alpha, const float *a, int lda, const float *b, int ldb,
             float beta, float *c, int ldc);
void rt_gemm_f64(int trans_a, int trans_b, int m, int n, int k,
                 double alpha, const double *a, int lda, const double *b, int ldb,
                 double beta, double *c, int ldc);

#endif
