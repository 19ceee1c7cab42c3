/* Fully connected layer through cuBLASLt, PyTorch layout (out[N,O] = in[N,I]·W[O,I]^T): the
 * three GEMMs of forward and backward are planned once per layer (layouts, algorithm). In
 * BF16/FP16 the operands are 16-bit, accumulation FP32, and the weight gradient is written
 * straight into the FP32 gradient buffer (cuBLASLt's 16-bit-in, FP32-out form). */
#include "../cuda_libs.cuh"

/* One column-major GEMM C(m×n) = op(A)·op(B), planned. Row-major tensors are read as their
 * column-major transposes, which is how the three products below are written. */
typedef struct {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    int m, n, k;
    unsigned align;   /* the operand alignment in bytes the algorithm was chosen for */
} gemm_plan;

struct rt_cuda_linear {
    int n, in_f, out_f;
    gemm_plan fwd, dweight, dinput;
};

/* The algorithm for operands aligned to `align` bytes (rt_cublaslt_algo). plan_run may
 * call it during a graph capture: a host-side query (not yet run on a GPU). */
static void choose_algo(gemm_plan *g, unsigned align) {
    if (!rt_cublaslt_algo(g->desc, g->a, g->b, g->c, align, &g->algo))
        rt_die("cuBLASLt has no algorithm for a %dx%dx%d product on %u-byte aligned operands", g->m, g->n, g->k,
               align);
    g->align = align;
}

static void plan_init(gemm_plan *g, int trans_a, int trans_b, int m, int n, int k, int lda, int ldb, int ldc,
                      int c_fp32) {
    cublasComputeType_t ct = rt_cuda_math_mode() == RT_CUDA_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    rt_cuda_act act = rt_cuda_act_type();
    cudaDataType_t ab = act == RT_ACT_BF16 ? CUDA_R_16BF : act == RT_ACT_F16 ? CUDA_R_16F : CUDA_R_32F;
    cudaDataType_t cd = c_fp32 ? CUDA_R_32F : ab;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&g->desc, ct, CUDA_R_32F));
    cublasOperation_t ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    /* Stored shapes: op(A) is m×k, so A is k×m when transposed; likewise B. */
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g->a, ab, trans_a ? k : m, trans_a ? m : k, lda));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g->b, ab, trans_b ? n : k, trans_b ? k : n, ldb));
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&g->c, cd, m, n, ldc));
    g->m = m, g->n = n, g->k = k;
    choose_algo(g, 256);
}

/* The largest power of two up to 256 that divides every operand's address. */
static unsigned alignment_of(const void *a, const void *b, const void *c) {
    uintptr_t bits = (uintptr_t)a | (uintptr_t)b | (uintptr_t)c | 256;
    return (unsigned)(bits & (~bits + 1));
}

static void plan_run(gemm_plan *g, const void *a, const void *b, void *c) {
    /* The plans assume 256-byte-aligned operands (the CUDA plan aligns every tensor and
     * parameter so); a caller with less gets an algorithm chosen for what it has. */
    unsigned al = alignment_of(a, b, c);
    if (al < g->align) choose_algo(g, al);
    const float one = 1.0f, zero = 0.0f;
    size_t ws_bytes;
    void *ws = rt_cublaslt_workspace(&ws_bytes);
    CUBLAS_CHECK(cublasLtMatmul(rt_cublaslt(), g->desc, &one, a, g->a, b, g->b, &zero, c, g->c, c, g->c,
                                &g->algo, ws, ws_bytes, rt_stream()));
}

rt_cuda_linear *rt_cuda_linear_create(int n, int in_f, int out_f) {
    rt_cuda_linear *l = (rt_cuda_linear *)rt_xcalloc(1, sizeof *l);
    l->n = n, l->in_f = in_f, l->out_f = out_f;
    /* out^T (O×N) = W (O×I, stored as I×O) · in^T (I×N) */
    plan_init(&l->fwd, 1, 0, out_f, n, in_f, in_f, in_f, out_f, 0);
    /* dW^T (I×O) = in^T (I×N) · dout (N×O, stored as O×N) */
    plan_init(&l->dweight, 0, 1, in_f, out_f, n, in_f, out_f, in_f, 1);
    /* din^T (I×N) = W^T (I×O) · dout^T (O×N) */
    plan_init(&l->dinput, 0, 0, in_f, n, out_f, in_f, out_f, in_f, 0);
    return l;
}

/* The plans are a cache plan_run may refine (a new alignment): the layer is const to its
 * callers only. */
void cuda_linear_forward(const rt_cuda_linear *l, void *out, const void *in, const void *weight) {
    plan_run((gemm_plan *)&l->fwd, weight, in, out);
}

void cuda_linear_backward(const rt_cuda_linear *l, void *din, float *dweight, const void *dout, const void *in,
                          const void *weight) {
    plan_run((gemm_plan *)&l->dweight, in, dout, dweight);
    if (din) plan_run((gemm_plan *)&l->dinput, weight, dout, din);
}
