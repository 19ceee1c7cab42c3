/* Row-major matrix multiply used by the CPU ops: C = alpha * op(A) * op(B) + beta * C,
 * op(X) = X or X^T, through OpenBLAS (FP32; oneDNN's sgemm where OpenBLAS has no AVX-512
 * kernels for an AVX-512 CPU), or oneDNN's BF16 GEMM under compute BF16 (gemm_library.c).
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

/* rt_gemm with the FP32 library and the split of C over the threads chosen by the caller,
 * from measurements of its own shapes (linear.c); fp32 is a preference: where oneDNN is
 * missing, or TRAINC_SGEMM=openblas, OpenBLAS computes. BF16 and the f64 build ignore it. */
typedef enum { RT_GEMM_SPLIT_LONGER, RT_GEMM_SPLIT_ROWS, RT_GEMM_SPLIT_COLS } rt_gemm_split;
typedef struct { int fp32_on_dnnl; rt_gemm_split split; } rt_gemm_choice;
void rt_gemm_chosen(rt_gemm_choice how, int trans_a, int trans_b, int m, int n, int k,
                    float alpha, const float *a, int lda, const float *b, int ldb,
                    float beta, float *c, int ldc);
void rt_gemm_chosen_f64(rt_gemm_choice how, int trans_a, int trans_b, int m, int n, int k,
                        double alpha, const double *a, int lda, const double *b, int ldb,
                        double beta, double *c, int ldc);

/* Precision of rt_gemm's products (precision.compute of the spec): FP32, or BF16 inputs
 * (A and B rounded to bfloat16, to nearest even) with FP32 accumulation and FP32 output.
 * Set once at start-up, before the first step; the f64 build always computes in double. */
typedef enum { RT_COMPUTE_FP32 = 0, RT_COMPUTE_BF16 = 1 } rt_compute;
/* Returns 0, or -1 with a reason in why (BF16 on a CPU without avx512_bf16, no oneDNN). */
int rt_gemm_set_compute(rt_compute compute, char *why, unsigned why_cap);
rt_compute rt_gemm_compute(void);

/* The libraries rt_gemm can call, for benchmarks and tests (bench/gemm_peak.c). */
typedef enum { RT_GEMM_OPENBLAS, RT_GEMM_DNNL_F32, RT_GEMM_DNNL_BF16 } rt_gemm_library;
int rt_gemm_library_available(rt_gemm_library lib);
/* One single-threaded-or-library-threaded product through lib (not OpenBLAS; see gemm.c). */
void rt_gemm_library_call(rt_gemm_library lib, int trans_a, int trans_b, int m, int n, int k,
                          float alpha, const float *a, int lda, const float *b, int ldb,
                          float beta, float *c, int ldc);
int rt_cpu_has_avx512_bf16(void);
/* Whether FP32 products go to oneDNN's sgemm rather than OpenBLAS (gemm_library.c says when). */
int rt_gemm_fp32_on_dnnl(void);
/* Whether oneDNN's sgemm may take the FP32 products a caller prefers it for (rt_gemm_chosen). */
int rt_gemm_fp32_dnnl_allowed(void);
/* The pinned FP32 product (gemm_pinned.c): what rt_gemm computes in a runtime built with
 * RT_PINNED_ARITH, the same bits on every x86-64 CPU. */
void rt_gemm_pinned(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                    const float *b, int ldb, float beta, float *c, int ldc);
/* Whether this runtime is the pinned one (RT_PINNED_ARITH). */
int rt_arith_pinned(void);
/* n floats to bfloat16 (round to nearest even). */
void rt_to_bf16(unsigned short *dst, const float *src, long n);
unsigned short rt_float_to_bf16(float f);

#endif
