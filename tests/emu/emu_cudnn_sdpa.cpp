/* Reference of cuDNN's fused scaled-dot-product attention (emu_sdpa.h), written from cuDNN's
 * documentation of its SDPA operations (the frontend's sdpa / sdpa_backward nodes, which the
 * backend's OPERATION_SDPA_FWD / _BWD descriptors carry), not from our CPU op:
 *   forward   S = scale·Q·Kᵀ, P = softmax(S) over the keys, O = P·V; Stats = each row's
 *             max(S) + log(sum(exp(S - max))) (the log-sum-exp the backward reads);
 *   backward  P recomputed from Q, K and Stats; D = rowsum(dO ∘ O); dV = Pᵀ·dO;
 *             dS = P ∘ (dO·Vᵀ - D); dQ = scale·dS·K; dK = scale·dSᵀ·Q.
 * The support surface the emulated engine takes (the documented one for the dense, unmasked,
 * no-dropout case): Q, K, V, O (and dO, dQ, dK, dV) all BF16 or all FP16, dimensions
 * [B, H, S, D] with D contiguous (stride 1), Q and O [B, H, S_q, D], K and V [B, H, S_kv, D],
 * D a multiple of 8 and at most 128; Stats FP32 [B, H, S_q, 1]; the scale an FP32 [1,1,1,1]
 * tensor passed by value; nothing virtual. Arithmetic in double from the 16-bit operands; P is
 * rounded to the operand type before P·V (the tensor cores read it so), outputs are stored in
 * the operand type, Stats in FP32. The backward's plan reports an FP32 dQ accumulator and the
 * row sums D as workspace, which each execution overwrites with NaN first. */
#include <math.h>
#include <string.h>
#include <vector>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "emu_sdpa.h"

namespace emu {
namespace {

double ld(const sdpa_tensor &t, const void *p, int64_t i) {
    if (t.dt == CUDNN_DATA_FLOAT) return ((const float *)p)[i];
    if (t.dt == CUDNN_DATA_BFLOAT16) return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    return __half2float(((const __half *)p)[i]);
}
void st(const sdpa_tensor &t, void *p, int64_t i, double v) {
    if (t.dt == CUDNN_DATA_FLOAT) ((float *)p)[i] = (float)v;
    else if (t.dt == CUDNN_DATA_BFLOAT16) ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v);
    else ((__half *)p)[i] = __float2half((float)v);
}
/* v as the operand type holds it */
double round_to(cudnnDataType_t dt, double v) {
    if (dt == CUDNN_DATA_BFLOAT16) return __bfloat162float(__float2bfloat16((float)v));
    return __half2float(__float2half((float)v));
}
int64_t at(const sdpa_tensor &t, int64_t b, int64_t h, int64_t s, int64_t d) {
    return b * t.strides[0] + h * t.strides[1] + s * t.strides[2] + d * t.strides[3];
}
bool dims_are(const sdpa_tensor &t, int64_t b, int64_t h, int64_t s, int64_t d) {
    return t.dims[0] == b && t.dims[1] == h && t.dims[2] == s && t.dims[3] == d;
}

}   // namespace

size_t sdpa_bytes(const sdpa_tensor &t) {
    int64_t last = 0;
    for (int i = 0; i < 4; i++) last += (t.dims[i] - 1) * t.strides[i];
    return (size_t)(last + 1) * (t.dt == CUDNN_DATA_FLOAT ? 4 : 2);
}

const char *sdpa_refusal(bool bwd, const sdpa_tensor *t) {
    static const int fwd_ops[] = { SDPA_Q, SDPA_K, SDPA_V, SDPA_O, SDPA_STATS, SDPA_SCALE };
    for (int i : fwd_ops)
        if (!t[i].set) return "an operand is missing (Q, K, V, O, Stats and the scale are needed)";
    if (bwd)
        for (int i : { SDPA_DO, SDPA_DQ, SDPA_DK, SDPA_DV })
            if (!t[i].set) return "a backward operand is missing (dO, dQ, dK, dV)";
    const sdpa_tensor &q = t[SDPA_Q];
    if (q.dt != CUDNN_DATA_BFLOAT16 && q.dt != CUDNN_DATA_HALF) return "Q is neither BF16 nor FP16";
    int64_t b = q.dims[0], h = q.dims[1], sq = q.dims[2], d = q.dims[3], skv = t[SDPA_K].dims[2];
    for (int i : { SDPA_Q, SDPA_K, SDPA_V, SDPA_O, SDPA_DO, SDPA_DQ, SDPA_DK, SDPA_DV }) {
        if (!t[i].set) continue;
        if (t[i].dt != q.dt) return "the data operands differ in type";
        if (t[i].strides[3] != 1) return "a data operand's head dimension is not contiguous";
        if (t[i].virt) return "a virtual operand";
        bool kv = i == SDPA_K || i == SDPA_V || i == SDPA_DK || i == SDPA_DV;
        if (!dims_are(t[i], b, h, kv ? skv : sq, d)) return "the operands' dimensions do not agree";
    }
    if (d % 8 || d > 128) return "a head dimension that is not a multiple of 8 up to 128";
    const sdpa_tensor &s = t[SDPA_STATS], &sc = t[SDPA_SCALE];
    if (s.dt != CUDNN_DATA_FLOAT || !dims_are(s, b, h, sq, 1) || s.virt) return "Stats is not FP32 [B, H, S_q, 1]";
    if (sc.dt != CUDNN_DATA_FLOAT || !dims_are(sc, 1, 1, 1, 1) || !sc.by_value) return "the scale is not an FP32 value";
    return nullptr;
}

size_t sdpa_workspace(bool bwd, const sdpa_tensor *t) {
    if (!bwd) return 0;
    const sdpa_tensor &q = t[SDPA_Q];
    size_t rows = (size_t)(q.dims[0] * q.dims[1] * q.dims[2]);
    return rows * (size_t)q.dims[3] * 4 + rows * 4;
}

void sdpa_run(bool bwd, const sdpa_tensor *t, void *const *p) {
    const sdpa_tensor &q = t[SDPA_Q], &k = t[SDPA_K], &v = t[SDPA_V], &o = t[SDPA_O], &s = t[SDPA_STATS];
    int64_t B = q.dims[0], H = q.dims[1], SQ = q.dims[2], D = q.dims[3], SK = k.dims[2];
    double scale = *(const float *)p[SDPA_SCALE];
    std::vector<double> prob((size_t)(SQ * SK));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            for (int64_t i = 0; i < SQ; i++) {   /* P, and (forward) each row's statistics */
                double mx = -INFINITY, sum = 0;
                double *row = &prob[(size_t)(i * SK)];
                for (int64_t j = 0; j < SK; j++) {
                    double dot = 0;
                    for (int64_t e = 0; e < D; e++) dot += ld(q, p[SDPA_Q], at(q, b, h, i, e)) * ld(k, p[SDPA_K], at(k, b, h, j, e));
                    row[j] = scale * dot;
                    if (row[j] > mx) mx = row[j];
                }
                if (bwd) {
                    double lse = ld(s, p[SDPA_STATS], at(s, b, h, i, 0));
                    for (int64_t j = 0; j < SK; j++) row[j] = exp(row[j] - lse);
                    continue;
                }
                for (int64_t j = 0; j < SK; j++) sum += row[j] = exp(row[j] - mx);
                for (int64_t j = 0; j < SK; j++) row[j] /= sum;
                st(s, p[SDPA_STATS], at(s, b, h, i, 0), mx + log(sum));
            }
            if (!bwd) {
                for (int64_t i = 0; i < SQ; i++)
                    for (int64_t e = 0; e < D; e++) {
                        double acc = 0;
                        for (int64_t j = 0; j < SK; j++)
                            acc += round_to(q.dt, prob[(size_t)(i * SK + j)]) * ld(v, p[SDPA_V], at(v, b, h, j, e));
                        st(o, p[SDPA_O], at(o, b, h, i, e), acc);
                    }
                continue;
            }
            const sdpa_tensor &dO = t[SDPA_DO], &dq = t[SDPA_DQ], &dk = t[SDPA_DK], &dv = t[SDPA_DV];
            std::vector<double> dd((size_t)SQ), ds((size_t)(SQ * SK));
            for (int64_t i = 0; i < SQ; i++) {
                double acc = 0;
                for (int64_t e = 0; e < D; e++) acc += ld(dO, p[SDPA_DO], at(dO, b, h, i, e)) * ld(o, p[SDPA_O], at(o, b, h, i, e));
                dd[(size_t)i] = acc;
                for (int64_t j = 0; j < SK; j++) {
                    double dp = 0;
                    for (int64_t e = 0; e < D; e++) dp += ld(dO, p[SDPA_DO], at(dO, b, h, i, e)) * ld(v, p[SDPA_V], at(v, b, h, j, e));
                    ds[(size_t)(i * SK + j)] = prob[(size_t)(i * SK + j)] * (dp - acc);
                }
            }
            for (int64_t i = 0; i < SQ; i++)
                for (int64_t e = 0; e < D; e++) {
                    double acc = 0;
                    for (int64_t j = 0; j < SK; j++) acc += ds[(size_t)(i * SK + j)] * ld(k, p[SDPA_K], at(k, b, h, j, e));
                    st(dq, p[SDPA_DQ], at(dq, b, h, i, e), scale * acc);
                }
            for (int64_t j = 0; j < SK; j++)
                for (int64_t e = 0; e < D; e++) {
                    double gk = 0, gv = 0;
                    for (int64_t i = 0; i < SQ; i++) {
                        gk += ds[(size_t)(i * SK + j)] * ld(q, p[SDPA_Q], at(q, b, h, i, e));
                        gv += prob[(size_t)(i * SK + j)] * ld(dO, p[SDPA_DO], at(dO, b, h, i, e));
                    }
                    st(dk, p[SDPA_DK], at(dk, b, h, j, e), scale * gk);
                    st(dv, p[SDPA_DV], at(dv, b, h, j, e), gv);
                }
        }
}

}   // namespace emu
