/* A residual block's output backward, z = relu(bn(x) + shortcut) with x = conv3(h) a 1x1
 * stride-1 convolution on channels-last tensors, with the bn's backward folded through conv3
 * (bench/bn_fold_1x1_numerics.py gives the algebra and the numerics; bench/RESULTS.md the
 * design study). Per pixel x = W h (W: C_out x C_in, no bias), so with g = dReLU(dz) (the
 * shortcut's gradient), G = sum_p g h^T, H = sum_p h h^T, S = sum_p h, a = gamma istd,
 * N pixels, mean_g = sum g / N, k = sum g xhat / N, e = a k istd, u = -a mean_g + e mu:
 *   sum g xhat = istd (rowdot(G, W) - mu sum g)            (dgamma; dbeta = sum g)
 *   dW         = diag(a) G + u S^T - diag(e) W H
 *   dh         = (diag(a) W)^T g - (W^T diag(e) W) h + W^T u
 * which is conv3's weight and data gradients of the bn's input gradient dx3 = a (g - mean_g -
 * xhat k). Neither x nor dx3 is read or written: one pass reads dz and the ReLU bits and
 * writes g and sum g, a second sums h's channels, then cuBLASLt products (G and H: 16-bit
 * operands, FP32 out), two small per-channel kernels for the closed forms, an FP32 product
 * for dW's W H term and one for W^T diag(e) W, and two products into dh (the second adds onto
 * the first, beta = 1, with W^T u as its bias epilogue).
 * Not bit-identical to the unfused path (conv3 forward rounds x to 16 bits, which the
 * statistics saw and this algebra does not): dW is more accurate (dx3 never rounded), dh a
 * little less (the correction matrix is rounded to 16 bits), dgamma moves by up to ~1% in
 * BF16 (tests/gpu/test_ops_gpu.c states the tolerances). */
#include "../cuda_libs.cuh"

#include <string.h>
#include "bn_vec_tiles.cuh"
#include "rt_devmem.h"   /* rt_devmem_bn_fold_bytes: the scratch's pieces, as the memory check counts them */

/* Per-channel sums of a [rows][c] tensor into out[c] (FP32), by the retiring tiles of
 * bn_vec_tiles.cuh. PASS: the tensor is g = dz where the ReLU's bit is set (bits NULL: no
 * ReLU), written to g as it is summed; else the tensor is src itself (h). */
/* (the pass's tensor and its bits, two rows in flight as the backward's kernels: four spill
 * in ptxas's schedule) */
#define FOLD_ROWS_IN_FLIGHT VEC_GRAD_ROWS_IN_FLIGHT

template <typename T, int V, bool PASS>
__global__ void __launch_bounds__(VEC_THREADS)
fold_sums_kernel(double *part, unsigned *counters, float *out, T *__restrict__ g, const T *__restrict__ src,
                 const uint8_t *__restrict__ bits, long rows, long per, int c) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    double s[V] = {};
    if (q < c / V) {
        act_vec<T, V> v[FOLD_ROWS_IN_FLIGHT];
        unsigned b[FOLD_ROWS_IN_FLIGHT];
        vec_rows<FOLD_ROWS_IN_FLIGHT>(
            rows, per,
            [&](int u, long r) {
                v[u] = vec_load<T, V>(src + r * c + q * V);
                b[u] = PASS && bits ? relu_bits_at<V>(bits, r * c + q * V) : (1u << V) - 1u;
            },
            [&](int u, long r) {
                act_vec<T, V> o;
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float x = (b[u] >> j) & 1u ? rt_ld(v[u].e[j]) : 0.0f;
                    s[j] += x;
                    if (PASS) o.e[j] = rt_st<T>(x);
                }
                if (PASS) vec_store<T, V>(g + r * c + q * V, o);
            });
    }
    vec_tile_sums<V>(s, s, part, c);   /* (the second sums unused) */
    if (!vec_tile_retires<V>(counters, part, NULL, c)) return;
    vec_tile_totals<V>(part, c, [&](int ch, double a, double) { out[ch] = (float)a; });
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;
}

#define FOLD_THREADS 128

/* One block per output channel o: dgamma, dbeta, u[o], dW's row without its W H term, and
 * the rows of diag(a) W (16-bit, the data gradient's weights) and diag(e) W (FP32). */
template <typename T>
__global__ void __launch_bounds__(FOLD_THREADS)
fold_channel_kernel(float *dgamma, float *dbeta, float *u, float *dw, T *wa, float *we, const float *G, const float *S,
                    const float *sum_g, const float *w, const float *gamma, const float *mean, const float *istd, long n,
                    int cin) {
    int o = blockIdx.x;
    const float *go = G + (long)o * cin, *wo = w + (long)o * cin;
    double dot = 0;
    for (int i = threadIdx.x; i < cin; i += FOLD_THREADS) dot += (double)go[i] * wo[i];
    dot = block_sum(dot);
    float sg = sum_g[o], mu = mean[o], is = istd[o];
    float a = gamma[o] * is, b = (float)(is * (dot - (double)mu * sg));
    float k = b / (float)n, mg = sg / (float)n, e = a * k * is, uo = -a * mg + e * mu;
    if (threadIdx.x == 0) dgamma[o] = b, dbeta[o] = sg, u[o] = uo;
    for (int i = threadIdx.x; i < cin; i += FOLD_THREADS) {
        long at = (long)o * cin + i;
        dw[at] = a * go[i] + uo * S[i];
        wa[at] = rt_st<T>(a * wo[i]);
        we[at] = e * wo[i];
    }
}

/* The correction's 16-bit operands: -M (M = W^T diag(e) W, FP32 in m32) and the bias W^T u,
 * a thread an element of M (the first cin threads also one bias entry). */
template <typename T>
__global__ void __launch_bounds__(FOLD_THREADS)
fold_correction_kernel(T *mneg, T *bias, const float *m32, const float *w, const float *u, int cin, int cout) {
    long t = (long)blockIdx.x * FOLD_THREADS + threadIdx.x;
    if (t < (long)cin * cin) mneg[t] = rt_st<T>(-m32[t]);
    if (t < cin) {
        float s = 0;
        for (int o = 0; o < cout; o++) s += w[(long)o * cin + t] * u[o];
        bias[t] = rt_st<T>(s);
    }
}

/* One column-major product D (m x n) = alpha op(A) op(B) + beta C (C = D), optionally with a
 * bias of D's type added to each row (cuBLASLt's BIAS epilogue), on the context's stream.
 * Planned once per shape (descriptor, layouts, the heuristics' algorithm for the operands'
 * alignment), as linear.cu's plans are: ResNet-50's folds have 24 distinct products (six at
 * each stage); past FOLD_PLANS of them a product is planned per call. The heuristic query is
 * host work, no GPU work, so a plan made during a graph capture is fine. */
enum { FOLD_PLANS = 64 };
typedef struct {
    int ta, tb, m, n, k, lda, ldb, ldd, bias;
    cudaDataType_t ab, cd;
    uint32_t align;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
} fold_plan;
static fold_plan fold_plans[FOLD_PLANS];
static int fold_n_plans;

static void fold_plan_make(fold_plan *p) {
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;   /* not TF32: H's and M's sums carry the correction */
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, ct, CUDA_R_32F));
    cublasOperation_t opa = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    if (p->bias) {
        uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    }
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->la, p->ab, p->ta ? p->k : p->m, p->ta ? p->m : p->k, p->lda));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->lb, p->ab, p->tb ? p->n : p->k, p->tb ? p->k : p->n, p->ldb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->ld, p->cd, p->m, p->n, p->ldd));
    if (!rt_cublaslt_algo(p->desc, p->la, p->lb, p->ld, p->align, &p->algo))
        rt_die("cuBLASLt has no algorithm for the bn fold's %dx%dx%d product", p->m, p->n, p->k);
}

static void fold_plan_free(fold_plan *p) {
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->la));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->lb));
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->ld));
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(p->desc));
}

static void fold_gemm(int ta, int tb, int m, int n, int k, cudaDataType_t ab, const void *a, int lda, const void *b,
                      int ldb, cudaDataType_t cd, void *d, int ldd, float alpha, float beta, const void *bias) {
    uintptr_t bits = (uintptr_t)a | (uintptr_t)b | (uintptr_t)d | (uintptr_t)bias | 256;
    fold_plan want;
    memset(&want, 0, sizeof want);
    want.ta = ta, want.tb = tb, want.m = m, want.n = n, want.k = k, want.lda = lda, want.ldb = ldb, want.ldd = ldd;
    want.bias = bias != NULL, want.ab = ab, want.cd = cd, want.align = (uint32_t)(bits & (~bits + 1));
    fold_plan *p = NULL;
    for (int i = 0; i < fold_n_plans && !p; i++) {
        fold_plan *q = &fold_plans[i];
        if (q->ta == ta && q->tb == tb && q->m == m && q->n == n && q->k == k && q->lda == lda && q->ldb == ldb &&
            q->ldd == ldd && q->bias == want.bias && q->ab == ab && q->cd == cd && q->align == want.align)
            p = q;
    }
    int once = !p && fold_n_plans == FOLD_PLANS;   /* the table is full: this call's plan alone */
    if (!p) {
        p = once ? &want : &fold_plans[fold_n_plans++];
        *p = want;
        fold_plan_make(p);
    }
    if (bias)   /* (the scratch's: the same pointer every call, set each call all the same) */
        CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    size_t ws_bytes;
    void *ws = rt_cublaslt_workspace(&ws_bytes);
    CUBLAS_CHECK(cublasLtMatmul(rt_cublaslt(), p->desc, &alpha, a, p->la, b, p->lb, &beta, d, p->ld, d, p->ld, &p->algo, ws,
                                ws_bytes, rt_stream()));
    if (once) fold_plan_free(p);
}

static rt_cuda_scratch fold_scratch;

/* 256-byte aligned pieces of one scratch buffer (cuBLASLt's algorithms assume that). */
static size_t fold_round(size_t b) { return (b + 255) & ~(size_t)255; }

void cuda_bn_fold_reserve(size_t bytes) { rt_cuda_scratch_get(&fold_scratch, bytes, "bn fold scratch"); }

void cuda_bn_fold_conv1x1_backward_nhwc(const void *dz, const uint8_t *relu_bits, void *g, const void *h,
                                        const float *w, float *dw, void *dh, float *dgamma, float *dbeta,
                                        const float *gamma, const float *mean, const float *istd, long rows, int cin,
                                        int cout) {
    size_t act = rt_cuda_act_bytes();
    size_t sizes[RT_DEVMEM_BN_FOLD_PIECES];
    size_t total = rt_devmem_bn_fold_bytes(cin, cout, (int)act, sizes);
    char *p = (char *)rt_cuda_scratch_get(&fold_scratch, total, "bn fold scratch");
    void *piece[sizeof sizes / sizeof *sizes];
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) piece[i] = p, p += fold_round(sizes[i]);
    float *G = (float *)piece[0], *H = (float *)piece[1], *S = (float *)piece[2], *sum_g = (float *)piece[3];
    float *u = (float *)piece[4], *we = (float *)piece[6], *m32 = (float *)piece[7];
    void *wa = piece[5], *mneg = piece[8], *bias = piece[9];
    cudaDataType_t at = act == 4 ? CUDA_R_32F : rt_cuda_act_type() == RT_ACT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
    int icin = cin, icout = cout, irows = (int)rows;
    /* the pass over dz and the bits (g, sum g), then h's channel sums (S) */
    {
        vec_tiles t = vec_tiles_of(rows, cout, vec_suits(cout, dz, g));
        double *part = bn_partials((int)t.grid.y, cout);
        unsigned *counters = bn_retire_counters((int)t.grid.x);
        RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, {
            fold_sums_kernel<T, V, true><<<t.grid, t.block, 0, rt_stream()>>>(part, counters, sum_g, (T *)g,
                                                                                (const T *)dz, relu_bits, rows, t.per,
                                                                                cout);
            CUDA_LAUNCHED();
        }));
    }
    {
        vec_tiles t = vec_tiles_of(rows, cin, vec_suits(cin, h));
        double *part = bn_partials((int)t.grid.y, cin);
        unsigned *counters = bn_retire_counters((int)t.grid.x);
        RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, {
            fold_sums_kernel<T, V, false><<<t.grid, t.block, 0, rt_stream()>>>(part, counters, S, (T *)NULL,
                                                                                 (const T *)h, (const uint8_t *)NULL, rows,
                                                                                 t.per, cin);
            CUDA_LAUNCHED();
        }));
    }
    /* column-major views: h is cin x rows, g cout x rows, W (row-major cout x cin) cin x cout */
    fold_gemm(0, 1, icin, icout, irows, at, h, icin, g, icout, CUDA_R_32F, G, icin, 1.0f, 0.0f, NULL);   /* G */
    fold_gemm(0, 1, icin, icin, irows, at, h, icin, h, icin, CUDA_R_32F, H, icin, 1.0f, 0.0f, NULL);     /* H */
    RT_ACT_DISPATCH({
        fold_channel_kernel<T><<<cout, FOLD_THREADS, 0, rt_stream()>>>(dgamma, dbeta, u, dw, (T *)wa, we, G, S, sum_g,
                                                                       w, gamma, mean, istd, rows, cin);
        CUDA_LAUNCHED();
    });
    /* dW -= diag(e) W H; M = W^T diag(e) W (FP32) */
    fold_gemm(0, 0, icin, icout, icin, CUDA_R_32F, H, icin, we, icin, CUDA_R_32F, dw, icin, -1.0f, 1.0f, NULL);
    fold_gemm(0, 1, icin, icin, icout, CUDA_R_32F, w, icin, we, icin, CUDA_R_32F, m32, icin, 1.0f, 0.0f, NULL);
    RT_ACT_DISPATCH({
        long n = (long)cin * cin;
        fold_correction_kernel<T><<<(unsigned)((n + FOLD_THREADS - 1) / FOLD_THREADS), FOLD_THREADS, 0, rt_stream()>>>(
            (T *)mneg, (T *)bias, m32, w, u, cin, cout);
        CUDA_LAUNCHED();
    });
    /* dh = (diag(a) W)^T g, then dh += -M h + W^T u */
    fold_gemm(0, 0, icin, irows, icout, at, wa, icin, g, icout, at, dh, icin, 1.0f, 0.0f, NULL);
    fold_gemm(0, 0, icin, irows, icin, at, mneg, icin, h, icin, at, dh, icin, 1.0f, 1.0f, bias);
}
