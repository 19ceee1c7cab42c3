/* A residual block's output on channels-last tensors [N*H*W rows][C] in one pass that writes
 * once: out = act(bn_a(xa) + bn_b(xb)), or act(bn_a(xa) + xb) where the shortcut is the
 * identity. A projection block normalizes its main branch and its downsample branch here, so
 * neither normalized tensor is written and read back (MLPerf's BN-add-ReLU; lower.c decides it,
 * ir_op.bn_in_add). The statistics come from the bns' own passes (mean, inv_std), as for the
 * plain apply; the backward is the unfused one (it reads x and the add's output, never bn(x)).
 * Each thread takes V neighbouring channels as one vector (8 in BF16/FP16, 4 in FP32: 16 bytes)
 * when V divides C and the tensors are aligned, else one channel. */
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
