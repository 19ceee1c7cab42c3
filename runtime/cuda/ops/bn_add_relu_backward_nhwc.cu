/* The backward of a residual block's output on channels-last tensors [N*H*W rows][C]:
 * z = relu(bn_a(xa) + bn_b(xb)), or relu(bn_a(xa) + shortcut), in two passes (lower.c
 * ir_op.add_bwd_fused; MLPerf's dReLU + dBN with a ReLU bitmask). dy = dz where the ReLU passed
 * (the forward's bits, bn_add_relu_nhwc.cu; no ReLU: dz), which is both branches' output
 * gradient.
 *   pass 1 reads dz, the bits and each bn's input, and leaves per channel sum dy and
 *          sum dy·xhat of each bn; each channel tile's last block (a retire counter) adds the
 *          partials up into dgamma, dbeta and the totals pass 2 needs (no launch of its own);
 *   pass 2 reads them again and writes each bn's input gradient, and for an identity shortcut
 *          its gradient dy (written, or added where the plan routes it so; a conv's dgrad
 *          later adds into it with beta = 1).
 * Against the unfused backward (the add's pass: dz and its output in, one gradient per branch
 * out; then two passes per bn over dy and x), a projection block moves 8 tensors instead of 14
 * and an identity block 6 instead of 10, plus the bits. The sums run in the order of
 * batchnorm_nhwc_vec.cu's retiring kernels, so dgamma, dbeta and the gradients are theirs. */
#include "bn_vec_tiles.cuh"

/* What the passes read per row: dz, the ReLU bits, each bn's input (xb: a projection's). */
template <typename T, int V> struct bwd_rows {
    act_vec<T, V> dz, xa, xb;
    unsigned bits;
};

template <typename T, int V, bool PROJ>
__device__ __forceinline__ void bwd_load(bwd_rows<T, V> &g, const T *dz, const uint8_t *bits, const T *xa, const T *xb,
                                         long at) {
    g.dz = vec_load<T, V>(dz + at);
    g.bits = bits ? relu_bits_at<V>(bits, at) : (1u << V) - 1u;
    g.xa = vec_load<T, V>(xa + at);
    if (PROJ) g.xb = vec_load<T, V>(xb + at);
}

__device__ __forceinline__ float bwd_dy(float dz, unsigned bits, int j) { return (bits >> j) & 1u ? dz : 0.0f; }

/* Rows whose loads a thread has in flight: two as batchnorm_nhwc_vec.cu's backward, one for a
 * projection (two bns' accumulators or constants, and three tensors a row, within 64
 * registers). */
#define BWD_ROWS_IN_FLIGHT(PROJ) ((PROJ) ? 1 : VEC_GRAD_ROWS_IN_FLIGHT)

template <typename T, int V, bool PROJ>
__global__ void __launch_bounds__(VEC_THREADS)
bn_add_bwd_sums_kernel(double *part_a, double *part_b, unsigned *counters, double *totals_a, double *totals_b,
                       float *dga, float *dba, float *dgb, float *dbb, const T *__restrict__ dz,
                       const uint8_t *__restrict__ bits, const T *__restrict__ xa, const T *__restrict__ xb,
                       const float *ma, const float *sa, const float *mb, const float *sb, long rows, long per, int c) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    double s_dy[V] = {}, s_a[V] = {}, s_b[V] = {};
    if (q < c / V) {
        float mean_a[V], istd_a[V], mean_b[V], istd_b[V];
#pragma unroll
        for (int j = 0; j < V; j++) {
            mean_a[j] = ma[q * V + j], istd_a[j] = sa[q * V + j];
            if (PROJ) mean_b[j] = mb[q * V + j], istd_b[j] = sb[q * V + j];
        }
        bwd_rows<T, V> g[BWD_ROWS_IN_FLIGHT(PROJ)];
        vec_rows<BWD_ROWS_IN_FLIGHT(PROJ)>(
            rows, per, [&](int u, long r) { bwd_load<T, V, PROJ>(g[u], dz, bits, xa, xb, r * c + q * V); },
            [&](int u, long r) {
#pragma unroll
                for (int j = 0; j < V; j++) {
                    float dy = bwd_dy(rt_ld(g[u].dz.e[j]), g[u].bits, j);
                    s_dy[j] += dy;
                    s_a[j] += dy * (rt_ld(g[u].xa.e[j]) - mean_a[j]) * istd_a[j];
                    if (PROJ) s_b[j] += dy * (rt_ld(g[u].xb.e[j]) - mean_b[j]) * istd_b[j];
                }
            });
    }
    vec_tile_sums<V>(s_dy, s_a, part_a, c);
    if (PROJ) {
        __syncthreads();   /* the tile sums' shared memory is read until here */
        vec_tile_sums<V>(s_dy, s_b, part_b, c);
    }
    if (!vec_tile_retires<V>(counters, part_a, PROJ ? part_b : NULL, c)) return;
    vec_tile_totals<V>(part_a, c, [&](int ch, double a, double b) { store_channel_totals(totals_a, dga, dba, ch, a, b); });
    if (PROJ)
        vec_tile_totals<V>(part_b, c, [&](int ch, double a, double b) { store_channel_totals(totals_b, dgb, dbb, ch, a, b); });
    if (threadIdx.x == 0 && threadIdx.y == 0) counters[blockIdx.x] = 0;
}

/* One bn's input-gradient constants for V channels from q * V: din = k·(m·dy - A - xhat·B). */
template <int V> struct bn_grad_consts {
    float mean[V], istd[V], k[V], a[V], b[V];
};
template <int V>
__device__ __forceinline__ void bn_grad_consts_load(bn_grad_consts<V> &k, const float *gamma, const float *mean,
                                                    const float *istd, const double *totals, long m, int q) {
#pragma unroll
    for (int j = 0; j < V; j++) {
        int ch = q * V + j;
        k.mean[j] = mean[ch], k.istd[j] = istd[ch];
        k.k[j] = gamma[ch] * k.istd[j] / m, k.a[j] = (float)totals[2 * ch], k.b[j] = (float)totals[2 * ch + 1];
    }
}
template <int V> __device__ __forceinline__ float bn_grad_one(const bn_grad_consts<V> &k, float x, float dy, long m, int j) {
    float xhat = (x - k.mean[j]) * k.istd[j];
    return k.k[j] * ((float)m * dy - k.a[j] - xhat * k.b[j]);
}

/* dxa; PROJ: dxb, else the shortcut's gradient dy into dshort (NULL: none; added when
 * short_add). */
template <typename T, int V, bool PROJ>
__global__ void __launch_bounds__(VEC_THREADS)
bn_add_bwd_dx_kernel(T *__restrict__ dxa, T *__restrict__ dxb, T *__restrict__ dshort, int short_add,
                     const T *__restrict__ dz, const uint8_t *__restrict__ bits, const T *__restrict__ xa,
                     const T *__restrict__ xb, const float *ga, const float *ma, const float *sa, const double *totals_a,
                     const float *gb, const float *mb, const float *sb, const double *totals_b, long rows, long per,
                     int c) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= c / V) return;
    bn_grad_consts<V> ka, kb;
    bn_grad_consts_load<V>(ka, ga, ma, sa, totals_a, rows, q);
    if (PROJ) bn_grad_consts_load<V>(kb, gb, mb, sb, totals_b, rows, q);
    bwd_rows<T, V> g[BWD_ROWS_IN_FLIGHT(PROJ)];
    vec_rows<BWD_ROWS_IN_FLIGHT(PROJ)>(
        rows, per, [&](int u, long r) { bwd_load<T, V, PROJ>(g[u], dz, bits, xa, xb, r * c + q * V); },
        [&](int u, long r) {
            long at = r * c + q * V;
            act_vec<T, V> da, db;
            if (!PROJ && dshort && short_add) db = vec_load<T, V>(dshort + at);
#pragma unroll
            for (int j = 0; j < V; j++) {
                float dy = bwd_dy(rt_ld(g[u].dz.e[j]), g[u].bits, j);
                da.e[j] = rt_st<T>(bn_grad_one<V>(ka, rt_ld(g[u].xa.e[j]), dy, rows, j));
                if (PROJ) db.e[j] = rt_st<T>(bn_grad_one<V>(kb, rt_ld(g[u].xb.e[j]), dy, rows, j));
                else if (dshort) db.e[j] = rt_st<T>(short_add ? rt_ld(db.e[j]) + dy : dy);
            }
            vec_store<T, V>(dxa + at, da);
            if (PROJ) vec_store<T, V>(dxb + at, db);
            else if (dshort) vec_store<T, V>(dshort + at, db);
        });
}

void cuda_bn_add_relu_backward_nhwc(const void *dz, const uint8_t *relu_bits, void *dxa, float *dga, float *dba,
                                    const void *xa, const float *ga, const float *ma, const float *sa, void *dxb,
                                    float *dgb, float *dbb, const void *xb, const float *gb, const float *mb,
                                    const float *sb, int short_add, long rows, int c) {
    int proj = xb != NULL;
    /* FP32 (test_ops_gpu's; a channels-last trainer is 16-bit): a projection one channel a
     * thread, its two bns' state within 64 registers (W below) */
    int fp32_proj = proj && rt_cuda_act_bytes() == 4;
    vec_tiles t = vec_tiles_of(rows, c, vec_suits(c, dz, dxa, xa, xb) && vec_aligned(dxb) && !fp32_proj);
    /* each bn's partials and totals in the first and second half of room for 2c channels
     * (ir_partial_sum_channels plans it) */
    double *part = bn_partials((int)t.grid.y, proj ? 2 * c : c), *totals = bn_channel_totals(proj ? 2 * c : c);
    double *part_b = part + 2L * c * t.grid.y, *totals_b = totals + 2L * c;
    unsigned *counters = bn_retire_counters((int)t.grid.x);
#define BWD_LAUNCH(P)                                                                                                    \
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(t.vec, VEC_CHANNELS, {                                                              \
        constexpr int W = P && sizeof(T) == 4 ? 1 : V;                                                                   \
        bn_add_bwd_sums_kernel<T, W, P><<<t.grid, t.block, 0, rt_stream()>>>(                                            \
            part, part_b, counters, totals, totals_b, dga, dba, dgb, dbb, (const T *)dz, relu_bits, (const T *)xa,       \
            (const T *)xb, ma, sa, mb, sb, rows, t.per, c);                                                              \
        CUDA_LAUNCHED();                                                                                                 \
        bn_add_bwd_dx_kernel<T, W, P><<<t.grid, t.block, 0, rt_stream()>>>(                                              \
            (T *)dxa, P ? (T *)dxb : (T *)NULL, P ? (T *)NULL : (T *)dxb, short_add, (const T *)dz, relu_bits,           \
            (const T *)xa, (const T *)xb, ga, ma, sa, totals, gb, mb, sb, totals_b, rows, t.per, c);                     \
        CUDA_LAUNCHED();                                                                                                 \
    }))
    if (proj) BWD_LAUNCH(true);
    else BWD_LAUNCH(false);
#undef BWD_LAUNCH
}
