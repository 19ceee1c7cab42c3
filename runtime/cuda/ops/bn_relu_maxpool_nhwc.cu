/* A batch norm's apply and ReLU and the 3x3 stride-2 pad-1 max pooling that alone reads them,
 * in one channels-last pass (the ResNet stem's bn1 -> relu -> maxpool; lower.c choose_bn_pool):
 * the bn's input x is read once, and only the pooled output, its argmax and the ReLU's bitmask
 * are written. The normalized, ReLU'd tensor (four times the pooled one) is neither written nor
 * read back. Its backward is the bn's with the pooling's gather folded in
(batchnorm_nhwc_vec.cu cuda_batchnorm_backward_nhwc_pool), the only reader of the argmax:
 *   out          as maxpool2d_nhwc_vec.cu: each window's max of the stored (rounded) bn + ReLU
 *                values, the first of equal maxima winning;
 *   argmax       the winner's offset in its window, ki * 3 + kj (0..8), one byte an element
 *                (a quarter of the unfused pooling's int32 position iy * w + ix);
 *   bits         as the generated bn apply (emit_cuda_kernels.c gen_bn_apply_bits): bit j of
 *                bits[q] set where element 8q + j's stored value is above 0.
 * Each thread takes 8 neighbouring channels of one output position (C % 8 == 0; one 16-byte
 * vector in BF16/FP16, two in FP32); the window of output (oy, ox) owns the input rows 2oy,
 * 2oy + 1 and columns 2ox, 2ox + 1 (h and w even: every input position is in exactly one
 * owner's window), so each mask byte is written once. */
#include <limits.h>
#include "act_vec.cuh"

enum { BRP_V = 8 };   /* channels a thread: one mask byte */

template <typename T> __global__ void __launch_bounds__(RT_THREADS)
bn_relu_maxpool_nhwc_kernel(T *__restrict__ out, uint8_t *__restrict__ argmax, uint8_t *__restrict__ bits,
                            const T *__restrict__ in, const float *gamma, const float *beta, const float *mean,
                            const float *inv_std, rt_pool_shape s, int total) {
    int cv = s.c / BRP_V;
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += gridDim.x * blockDim.x) {
        int pos = t / cv, q = t - pos * cv;
        int n = pos / (s.ow * s.oh), oy = pos / s.ow % s.oh, ox = pos % s.ow;
        float scale[BRP_V], shift[BRP_V], best_v[BRP_V];
        int best[BRP_V];
#pragma unroll
        for (int j = 0; j < BRP_V; j++) {   /* bn(x) = x * scale + shift, as the generated apply */
            int c = q * BRP_V + j;
            scale[j] = gamma[c] * inv_std[c];
            shift[j] = beta[c] - mean[c] * scale[j];
            best_v[j] = 0.0f, best[j] = -1;
        }
        long img = (long)n * s.h * s.w;
        for (int ki = 0; ki < 3; ki++) {
            int iy = oy * 2 - 1 + ki;
            if (iy < 0 || iy >= s.h) continue;
#pragma unroll 1
            for (int kj = 0; kj < 3; kj++) {
                int ix = ox * 2 - 1 + kj, me = iy * s.w + ix;
                if (ix < 0 || ix >= s.w) continue;
                act_vec<T, BRP_V> v = vec_load<T, BRP_V>(in + (img + me) * s.c + q * BRP_V);
                unsigned m = 0;
#pragma unroll
                for (int j = 0; j < BRP_V; j++) {
                    float r = rt_ld(v.e[j]) * scale[j] + shift[j];
                    float f = rt_ld(rt_st<T>(r > 0.0f ? r : 0.0f));   /* the value the unfused apply stores */
                    m |= (f > 0.0f ? 1u : 0u) << j;
                    if (best[j] < 0 || f > best_v[j]) best_v[j] = f, best[j] = ki * 3 + kj;
                }
                if (bits && iy >> 1 == oy && ix >> 1 == ox) bits[(img + me) * cv + q] = (uint8_t)m;
            }
        }
        act_vec<T, BRP_V> y;
        act_vec<uint8_t, BRP_V> won;
#pragma unroll
        for (int j = 0; j < BRP_V; j++) y.e[j] = rt_st<T>(best_v[j]), won.e[j] = (uint8_t)best[j];
        vec_store<T, BRP_V>(out + (long)t * BRP_V, y);
        vec_store<uint8_t, BRP_V>(argmax + (long)t * BRP_V, won);
    }
}

/* The shapes it takes (lower.c asks the same before choosing it): 3x3 windows, stride 2,
 * padding 1, even input extents (floor mode: h / 2 x w / 2 outputs), C % 8 == 0, 16-byte
 * aligned tensors, and an index range in 32 bits. */
int cuda_bn_relu_maxpool_fits(const rt_pool_shape *s) {
    return s->kh == 3 && s->kw == 3 && s->sh == 2 && s->sw == 2 && s->ph == 1 && s->pw == 1 && s->h % 2 == 0 &&
           s->w % 2 == 0 && s->oh == s->h / 2 && s->ow == s->w / 2 && s->c % BRP_V == 0 &&
           (long)s->n * s->h * s->w * s->c <= INT_MAX / 2;
}

void cuda_bn_relu_maxpool_forward_nhwc(void *out, uint8_t *argmax, uint8_t *bits, const void *in, const float *gamma,
                                       const float *beta, const float *mean, const float *inv_std,
                                       const rt_pool_shape *s) {
    if (!cuda_bn_relu_maxpool_fits(s) || !vec_aligned(out, argmax, in))
        rt_die("bn + relu + maxpool: internal: a shape or tensor the fused kernel does not take (%dx%d stride %d pad %d "
               "on %dx%dx%d): lower.c choose_bn_pool decides only where it fits",
               s->kh, s->kw, s->sh, s->ph, s->h, s->w, s->c);
    int total = (int)((long)s->n * s->oh * s->ow * (s->c / BRP_V));
    RT_ACT_DISPATCH(bn_relu_maxpool_nhwc_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)out, argmax, bits, (const T *)in, gamma, beta, mean, inv_std, *s, total));
    CUDA_LAUNCHED();
}
