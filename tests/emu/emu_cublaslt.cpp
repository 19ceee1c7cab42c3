/* Reference cuBLASLt for the CUDA emulator: the calls runtime/cuda/ops/linear.cu makes,
 * from cuBLASLt's documentation. D = alpha * op(A) * op(B) + beta * C on column-major
 * layouts (rows, cols, leading dimension), transposes from the matmul descriptor, FP32 /
 * FP16 / BF16 operands accumulated in double, FP32 or 16-bit C/D, compute 32F (exact) or
 * 32F_FAST_TF32 (inputs rounded to TF32); the default epilogue, or BIAS (a vector of D's type
 * and m entries added to each column, the fold's correction: bn_fold_conv1x1_backward.cu); others
 * are refused.
 * The heuristic returns one algorithm that remembers the operand alignment it was asked to
 * assume; a matmul on operands aligned less than that fails, as a real kernel picked for
 * 256-byte alignment may fault. */
#include <math.h>
#include <string.h>
#include <cublasLt.h>
#include "emu_internal.h"

using emu::fail;

namespace {
struct desc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    const void *bias = nullptr;
};
struct layout {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};
struct pref {
    size_t max_ws = 0;
    uint32_t align[4] = { 256, 256, 256, 256 };
};
struct algo {
    uint32_t magic, align;
};
const uint32_t MAGIC = 0x454d554cu;

static_assert(sizeof(desc) <= sizeof(cublasLtMatmulDescOpaque_t), "descriptor too large");
static_assert(sizeof(layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout too large");
static_assert(sizeof(pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "preference too large");

double load(const void *p, cudaDataType_t t, long i) {
    switch (t) {
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_16F: return __half2float(((const __half *)p)[i]);
    case CUDA_R_16BF: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: fail("cuBLASLt: data type %d is not emulated", (int)t);
    }
}
void store(void *p, cudaDataType_t t, long i, double v) {
    switch (t) {
    case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
    case CUDA_R_16F: ((__half *)p)[i] = __float2half((float)v); break;
    case CUDA_R_16BF: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
    default: fail("cuBLASLt: data type %d is not emulated", (int)t);
    }
}
size_t bytes_of(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }
long span(const layout *l) { return (long)((l->cols - 1) * (uint64_t)l->ld + l->rows); }
unsigned alignment(const void *p) {
    uintptr_t b = (uintptr_t)p | 256;
    return (unsigned)(b & (~b + 1));
}
}   // namespace

struct cublasLtContext {
    int unused;
};

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) {
    *h = new cublasLtContext;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute, cudaDataType_t scale) {
    if (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    desc *x = new desc;
    x->compute = compute, x->scale = scale;
    *d = (cublasLtMatmulDesc_t)x;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
    delete (desc *)d;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t size) {
    desc *x = (desc *)d;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
        if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
        int32_t v;
        memcpy(&v, buf, 4);
        if (v != CUBLAS_OP_N && v != CUBLAS_OP_T) return CUBLAS_STATUS_NOT_SUPPORTED;
        (attr == CUBLASLT_MATMUL_DESC_TRANSA ? x->ta : x->tb) = (cublasOperation_t)v;
        return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_EPILOGUE: {
        if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
        uint32_t v;
        memcpy(&v, buf, 4);
        if (v != CUBLASLT_EPILOGUE_DEFAULT && v != CUBLASLT_EPILOGUE_BIAS) return CUBLAS_STATUS_NOT_SUPPORTED;
        x->epilogue = (cublasLtEpilogue_t)v;
        return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        if (size != sizeof(void *)) return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&x->bias, buf, sizeof(void *));
        return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0 || ld < (int64_t)rows) return CUBLAS_STATUS_INVALID_VALUE;
    if (type != CUDA_R_32F && type != CUDA_R_16F && type != CUDA_R_16BF) return CUBLAS_STATUS_NOT_SUPPORTED;
    *l = (cublasLtMatrixLayout_t) new layout{ type, rows, cols, ld };
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
    delete (layout *)l;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p) {
    *p = (cublasLtMatmulPreference_t) new pref;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
    delete (pref *)p;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size) {
    pref *x = (pref *)p;
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
        if (size != sizeof(uint64_t)) return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&x->max_ws, buf, 8);
        return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
        if (size != sizeof(uint32_t)) return CUBLAS_STATUS_INVALID_VALUE;
        memcpy(&x->align[attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], buf, 4);
        return CUBLAS_STATUS_SUCCESS;
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatmulPreference_t p, int requested, cublasLtMatmulHeuristicResult_t res[],
                                              int *returned) {
    if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
    const pref *x = (const pref *)p;
    unsigned al = 256;
    for (int i = 0; i < 4; i++) al = x->align[i] < al ? x->align[i] : al;
    memset(&res[0], 0, sizeof res[0]);
    algo a = { MAGIC, al };
    memcpy(&res[0].algo, &a, sizeof a);
    res[0].workspaceSize = 0;
    res[0].state = CUBLAS_STATUS_SUCCESS;
    res[0].wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t dd, const void *alpha, const void *A, cublasLtMatrixLayout_t ad,
                              const void *B, cublasLtMatrixLayout_t bd, const void *beta, const void *C, cublasLtMatrixLayout_t cd,
                              void *D, cublasLtMatrixLayout_t ddl, const cublasLtMatmulAlgo_t *al, void *ws, size_t ws_bytes,
                              cudaStream_t stream) {
    const desc d = *(const desc *)dd;
    const layout a = *(const layout *)ad, b = *(const layout *)bd, c = *(const layout *)cd, o = *(const layout *)ddl;
    uint64_t m = d.ta == CUBLAS_OP_N ? a.rows : a.cols, k = d.ta == CUBLAS_OP_N ? a.cols : a.rows;
    uint64_t kb = d.tb == CUBLAS_OP_N ? b.rows : b.cols, n = d.tb == CUBLAS_OP_N ? b.cols : b.rows;
    if (k != kb || c.rows != m || c.cols != n || o.rows != m || o.cols != n) return CUBLAS_STATUS_INVALID_VALUE;
    if (a.type != b.type || c.type != o.type) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (c.type != a.type && c.type != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    algo alg;
    memcpy(&alg, al, sizeof alg);
    if (alg.magic != MAGIC) return CUBLAS_STATUS_INVALID_VALUE;
    const void *ptrs[4] = { A, B, C, D };
    for (int i = 0; i < 4; i++)
        if (alignment(ptrs[i]) < alg.align)
            fail("cublasLtMatmul: operand %c at %p is %u-byte aligned, the algorithm was chosen for %u", "ABCD"[i], ptrs[i],
                 alignment(ptrs[i]), alg.align);
    emu::check_device(A, (size_t)span(&a) * bytes_of(a.type), "cublasLtMatmul A");
    emu::check_device(B, (size_t)span(&b) * bytes_of(b.type), "cublasLtMatmul B");
    emu::check_device(D, (size_t)span(&o) * bytes_of(o.type), "cublasLtMatmul D");
    double al_ = *(const float *)alpha, be = *(const float *)beta;   /* host pointer mode */
    if (be != 0) emu::check_device(C, (size_t)span(&c) * bytes_of(c.type), "cublasLtMatmul C");
    const void *bias = d.epilogue == CUBLASLT_EPILOGUE_BIAS ? d.bias : nullptr;
    if (d.epilogue == CUBLASLT_EPILOGUE_BIAS) {
        if (!bias) return CUBLAS_STATUS_INVALID_VALUE;
        emu::check_device(bias, (size_t)m * bytes_of(o.type), "cublasLtMatmul bias");
    }
    bool fast = d.compute == CUBLAS_COMPUTE_32F_FAST_TF32 && a.type == CUDA_R_32F;
    emu::enqueue(stream, "cublasLtMatmul", [=]() {
        emu::traffic_touch(A, (size_t)span(&a) * bytes_of(a.type), false);   /* EMU_TRAFFIC */
        emu::traffic_touch(B, (size_t)span(&b) * bytes_of(b.type), false);
        if (be != 0) emu::traffic_touch(C, (size_t)span(&c) * bytes_of(c.type), false);
        if (bias) emu::traffic_touch(bias, (size_t)m * bytes_of(o.type), false);
        emu::traffic_touch(D, (size_t)span(&o) * bytes_of(o.type), true);
        auto rd = [fast](const void *p, cudaDataType_t t, long i) { return fast ? emu::tf32(load(p, t, i)) : load(p, t, i); };
        for (uint64_t j = 0; j < n; j++)
            for (uint64_t i = 0; i < m; i++) {
                double s = 0;
                for (uint64_t q = 0; q < k; q++) {
                    long ia = d.ta == CUBLAS_OP_N ? (long)(q * a.ld + i) : (long)(i * a.ld + q);
                    long ib = d.tb == CUBLAS_OP_N ? (long)(j * b.ld + q) : (long)(q * b.ld + j);
                    s += rd(A, a.type, ia) * rd(B, b.type, ib);
                }
                double v = al_ * s + (be != 0 ? be * load(C, c.type, (long)(j * c.ld + i)) : 0);
                if (bias) v += load(bias, o.type, (long)i);
                store(D, o.type, (long)(j * o.ld + i), v);
            }
    });
    return CUBLAS_STATUS_SUCCESS;
}

}   // extern "C"
