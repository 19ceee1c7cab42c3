/* A residual block's output on channels-last tensors [N*H*W rows][C] in one pass that writes
 * once: out = act(bn_a(xa) + bn_b(xb)), or act(bn_a(xa) + xb) where the shortcut is the
 * identity. A projection block normalizes its main branch and its downsample branch here, so
 * neither normalized tensor is written and read back (MLPerf's BN-add-ReLU; lower.c decides it,
 * ir_op.bn_in_add). The statistics come from the bns' own passes (mean, inv_std), as for the
 * plain apply; the backward is the unfused one (it reads x and the add's output, never bn(x)).
 * Each thread takes V neighbouring channels as one vector (8 in BF16/FP16, 4 in FP32: 16 bytes)
 * when V divides C and the tensors are aligned, else one channel. The bitmask variant
 * (lower.c ir_op.relu_mask) also writes where the ReLU passed, one bit an element, for the
 * fused backward (bn_add_relu_backward_nhwc.cu): each thread then takes the 8 elements of one
 * mask byte, so no two threads write one byte. */
#include "act_vec.cuh"

/* The scale and shift of channel c: bn(x) = x * scale + shift. */
__device__ __forceinline__ void bn_affine(const float *g, const float *b, const float *m, const float *s, int c,
                                          float *scale, float *shift) {
    float k = g[c] * s[c];
    *scale = k, *shift = b[c] - m[c] * k;
}

template <typename T, int V> __global__ void __launch_bounds__(RT_THREADS)
bn_add_relu_nhwc_kernel(T *out, const T *xa, const float *ga, const float *ba, const float *ma, const float *sa,
                        const T *xb, const float *gb, const float *bb, const float *mb, const float *sb, long nvec,
                        int cv, int relu) {
    GRID_STRIDE(q, nvec) {
        int c0 = (int)(q % cv) * V;
        act_vec<T, V> a = vec_load<T, V>(xa + q * V), b = vec_load<T, V>(xb + q * V), o;
#pragma unroll
        for (int v = 0; v < V; v++) {
            float ka, ha, r;
            bn_affine(ga, ba, ma, sa, c0 + v, &ka, &ha);
            r = rt_ld(a.e[v]) * ka + ha;
            if (gb) {   /* the projection's branch, normalized in the same pass */
                float kb, hb;
                bn_affine(gb, bb, mb, sb, c0 + v, &kb, &hb);
                r += rt_ld(b.e[v]) * kb + hb;
            } else {
                r += rt_ld(b.e[v]);
            }
            o.e[v] = rt_st<T>(relu && r < 0.0f ? 0.0f : r);
        }
        vec_store<T, V>(out + q * V, o);
    }
}

/* One output element: act(bn_a(a) + bn_b(b) or b), channel ch. */
__device__ __forceinline__ float bn_add_one(float a, float b, int ch, const float *ga, const float *ba, const float *ma,
                                            const float *sa, const float *gb, const float *bb, const float *mb,
                                            const float *sb, int relu) {
    float ka, ha, r;
    bn_affine(ga, ba, ma, sa, ch, &ka, &ha);
    r = a * ka + ha;
    if (gb) {
        float kb, hb;
        bn_affine(gb, bb, mb, sb, ch, &kb, &hb);
        r += b * kb + hb;
    } else {
        r += b;
    }
    return relu && r < 0.0f ? 0.0f : r;
}

/* Mask byte q: elements 8q..8q+7 (fewer in the last byte when 8 does not divide the total).
 * VEC: C % 8 == 0 and aligned tensors, the 8 elements one vector of channels of one row. The
 * bit is the stored value's, the one the ReLU output's sign tells the unfused backward. */
template <typename T, bool VEC> __global__ void __launch_bounds__(RT_THREADS)
bn_add_relu_bits_nhwc_kernel(T *out, uint8_t *bits, const T *xa, const float *ga, const float *ba, const float *ma,
                             const float *sa, const T *xb, const float *gb, const float *bb, const float *mb,
                             const float *sb, long total, int c, int relu) {
    GRID_STRIDE(q, (total + 7) / 8) {
        unsigned m = 0;
        if (VEC) {
            int c0 = (int)(q * 8 % c);
            act_vec<T, 8> a = vec_load<T, 8>(xa + q * 8), b = vec_load<T, 8>(xb + q * 8), o;
#pragma unroll
            for (int v = 0; v < 8; v++) {
                o.e[v] = rt_st<T>(bn_add_one(rt_ld(a.e[v]), rt_ld(b.e[v]), c0 + v, ga, ba, ma, sa, gb, bb, mb, sb, relu));
                m |= (rt_ld(o.e[v]) > 0.0f ? 1u : 0u) << v;
            }
            vec_store<T, 8>(out + q * 8, o);
        } else {
            for (int v = 0; v < 8 && q * 8 + v < total; v++) {
                long i = q * 8 + v;
                T o = rt_st<T>(bn_add_one(rt_ld(xa[i]), rt_ld(xb[i]), (int)(i % c), ga, ba, ma, sa, gb, bb, mb, sb, relu));
                out[i] = o;
                m |= (rt_ld(o) > 0.0f ? 1u : 0u) << v;
            }
        }
        bits[q] = (uint8_t)m;
    }
}

void cuda_bn_add_relu_bits_nhwc(void *out, uint8_t *bits, const void *xa, const float *ga, const float *ba,
                                const float *ma, const float *sa, const void *xb, const float *gb, const float *bb,
                                const float *mb, const float *sb, long rows, int c, int relu) {
    long total = rows * c, bytes = (total + 7) / 8;
    int vec = c % 8 == 0 && vec_aligned(out, xa, xb);
    RT_ACT_DISPATCH({
        if (vec)
            bn_add_relu_bits_nhwc_kernel<T, true><<<rt_blocks(bytes), RT_THREADS, 0, rt_stream()>>>(
                (T *)out, bits, (const T *)xa, ga, ba, ma, sa, (const T *)xb, gb, bb, mb, sb, total, c, relu);
        else
            bn_add_relu_bits_nhwc_kernel<T, false><<<rt_blocks(bytes), RT_THREADS, 0, rt_stream()>>>(
                (T *)out, bits, (const T *)xa, ga, ba, ma, sa, (const T *)xb, gb, bb, mb, sb, total, c, relu);
    });
    CUDA_LAUNCHED();
}

void cuda_bn_add_relu_nhwc(void *out, const void *xa, const float *ga, const float *ba, const float *ma,
                           const float *sa, const void *xb, const float *gb, const float *bb, const float *mb,
                           const float *sb, long rows, int c, int relu) {
    RT_ACT_DISPATCH({
        constexpr int W = act_vec_width<T>();
        int vec = c % W == 0 && vec_aligned(out, xa, xb);
        ACT_VEC_DISPATCH(vec, W, {
            long nvec = rows * (c / V);
            bn_add_relu_nhwc_kernel<T, V><<<rt_blocks(nvec), RT_THREADS, 0, rt_stream()>>>(
                (T *)out, (const T *)xa, ga, ba, ma, sa, (const T *)xb, gb, bb, mb, sb, nvec, c / V, relu);
        });
    });
    CUDA_LAUNCHED();
}
