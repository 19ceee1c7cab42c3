/* The pinned FP32 matrix multiply: rt_gemm in a runtime built with RT_PINNED_ARITH (the
 * pinned library, mk/runtime.mk). Every element of C is one sum over k in increasing order,
 * each product rounded before it is added (the library is built with -ffp-contract=off), so
 * the result is the same bits on any x86-64 CPU that runs it, whatever BLAS kernels that CPU
 * would otherwise pick. tests/lower/params_hash_test.sh records hashes through it; it is a
 * reference, not a fast path. */
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"
#include "rt_gemm.h"

/* A per-thread packed copy of op(B), grown as needed. */
static _Thread_local float *scratch;
static _Thread_local long scratch_cap;

static float *scratch_floats(long n) {
    if (n > scratch_cap) {
        free(scratch);
        scratch = malloc(sizeof(float) * (size_t)n);
        if (!scratch) rt_die("out of memory for the pinned GEMM's scratch (%ld floats)", n);
        scratch_cap = n;
    }
    return scratch;
}

enum { ROWS = 4, COLS = 256 };   /* a block of C kept in L1 while k runs */

/* C[i0.., j0..] for up to ROWS rows and COLS columns of op(B) (dense, row-major, ld ldbk):
 * each element summed over k in increasing order from 0. */
static void block(float acc[ROWS][COLS], int rows, int cols, int k, const float *a, int lda,
                  int trans_a, int i0, const float *bk, long ldbk, int j0) {
    for (int r = 0; r < ROWS; r++) memset(acc[r], 0, sizeof(float) * COLS);
    for (int kk = 0; kk < k; kk++) {
        const float *brow = bk + (long)kk * ldbk + j0;
        for (int r = 0; r < rows; r++) {
            int i = i0 + r;
            float aik = trans_a ? a[(long)kk * lda + i] : a[(long)i * lda + kk];
            float *row = acc[r];
            for (int j = 0; j < cols; j++) row[j] += aik * brow[j];
        }
    }
}

void rt_gemm_pinned(int trans_a, int trans_b, int m, int n, int k, float alpha, const float *a, int lda,
                    const float *b, int ldb, float beta, float *c, int ldc) {
    if (m <= 0 || n <= 0) return;
    /* op(B) as a dense k x n row-major block, so the inner loop runs along a row */
    const float *bk = b;
    long ldbk = ldb;
    if (trans_b) {
        float *packed = scratch_floats((long)k * n);
        for (int kk = 0; kk < k; kk++)
            for (int j = 0; j < n; j++) packed[(long)kk * n + j] = b[(long)j * ldb + kk];
        bk = packed;
        ldbk = n;
    }
    float acc[ROWS][COLS] __attribute__((aligned(64)));
    for (int i0 = 0; i0 < m; i0 += ROWS) {
        int rows = m - i0 < ROWS ? m - i0 : ROWS;
        for (int j0 = 0; j0 < n; j0 += COLS) {
            int cols = n - j0 < COLS ? n - j0 : COLS;
            block(acc, rows, cols, k, a, lda, trans_a, i0, bk, ldbk, j0);
            for (int r = 0; r < rows; r++) {
                float *ci = c + (long)(i0 + r) * ldc + j0;
                if (beta == 0.0f)   /* C is not read: it may hold NaN, as BLAS allows */
                    for (int j = 0; j < cols; j++) ci[j] = alpha * acc[r][j];
                else
                    for (int j = 0; j < cols; j++) ci[j] = alpha * acc[r][j] + beta * ci[j];
            }
        }
    }
}
