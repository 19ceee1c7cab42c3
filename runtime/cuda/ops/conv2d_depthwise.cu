/* Depthwise 2-D convolution (groups == channels == output channels; stride 1, square 3x3, 5x5
 * or 7x7 kernels: ConvNeXt's 7x7 among them) as direct kernels with FP32 accumulation, in
 * NCHW and channels-last, replacing cuDNN's grouped direct kernels (4.7 to 23.6 ms per 7x7
 * weight gradient of ConvNeXt-Tiny at batch 256 on an H100, bench/RESULTS.md).
 * - Forward and input gradient are one kernel: out[y][x] = sum_rs in[y + r - ph][x + s - pw]
 *   * w[r][s], the input gradient being that with dout as `in`, padding K-1-p and the taps
 *   flipped. A thread keeps a strip of outputs of one row in registers: NCHW 8 outputs of one
 *   channel, reading each input of a row once (14 loads a row for 56 FMAs at 7x7; 3 16-byte
 *   loads where rows are a multiple of 8 elements long, as ConvNeXt's 56 and 28);
 *   channels-last 2 outputs x 8 channels, tap by tap, with 16-byte loads across the channels
 *   so that a warp reads whole pixels (a load per 8 FMAs). The halo rows are re-read by the
 *   neighbouring rows' threads from L1/L2, not from memory.
 * - Weight gradient: dw[c][r][s] = sum over n, y, x of dout[n][c][y][x] * in[n][c][y+r-ph][x+s-pw].
 *   Each block sums a slice of the pixels for its channels into registers and writes its
 *   partial sums (a fixed-order reduction over its threads) to the conv workspace; a second
 *   kernel adds each weight's partials over the slices in a fixed order (dw_sum_slices_kernel).
 *   No atomics: the same inputs give the same bits every run.
 * - The conv's bias (lower: fuse_dw_bias.c; --no-dw-bias: a pass of its own each way): the
 *   forward adds it to the FP32 sums before the one rounding of the store; the weight
 *   gradient's kernel also sums dout per channel (the threads of kernel row 0, which read
 *   every output's dout) into one more partial per channel and slice, added up by the same
 *   slice-summing launch. FP32 sums in a fixed order: deterministic, within FP32 rounding of
 *   bias.cu's double sums (not their bits).
 * Every thread stays within 64 registers without local memory (tests/cuda/kernel_budget_test.sh).
 * No shared-memory input tiles yet: the next step if a profile shows the direct kernels bound
 * by L1 load instructions.
 * What to expect (reasoned, not measured: no GPU when written): ConvNeXt-Tiny's largest
 * depthwise layer at batch 256 (stage 1: 256 x 96 x 56 x 56, 7x7, BF16) moves 154 MB a tensor;
 * each pass reads two such tensors or reads one and writes one (308 MB, 0.10 ms at 3 TB/s;
 * the added input gradient 462 MB, 0.15 ms) and does 7.55 GFLOP (0.13 ms at 60 TFLOP/s FP32
 * FMA), so about 0.13 ms a pass is the floor; cuDNN's grouped direct kernels took 4.7 (NCHW)
 * to 23.6 ms (NHWC) for its weight gradient alone. All 18 depthwise convs of the net: 1.1 GB
 * a tensor, 161 GFLOP for the three passes, a floor near 2.7 ms a step (cuDNN: 108 ms NCHW,
 * 593 ms NHWC). A/B on a GPU: TRAINC_CUDA_DEPTHWISE=cudnn bench/gpu_kernel_profile.sh ... */
#include "conv2d_depthwise.cuh"
#include "rt_depthwise_plan.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DW_NCHW_STRIP 8   /* outputs of one row per thread, NCHW direct kernel */
#define DW_NHWC_STRIP 2   /* outputs of one row per thread, channels-last direct kernel */
#define DW_WGRAD_STRIP RT_DW_WGRAD_STRIP   /* the plan's constants: rt_depthwise_plan.h */
#define DW_VEC RT_DW_VEC
#define DW_PART_TAPS RT_DW_PART_TAPS
static_assert(RT_DW_THREADS == RT_THREADS, "rt_depthwise_plan.h plans for blocks of RT_THREADS");
/* Blocks resident per SM that the main kernels are compiled for: ptxas then plans for 64
 * registers a thread (tests/cuda/kernel_budget_test.sh's budget) instead of choosing a lower
 * target and spilling, and an SM holds 1024 of their threads. */
#define DW_MIN_BLOCKS 4

/* The direct kernel's geometry: out is oh x ow, in is ih x iw, out[y][x] reads
 * in[y + r - ph][x + s - pw]; flip: the taps are read mirrored (the input gradient). */
struct dw_geom {
    int n, c, ih, iw, oh, ow, ph, pw, flip, add;
};

/* V consecutive elements as FP32, with 16-byte loads where V elements fill them (the caller
 * guarantees the alignment: C a multiple of V, buffers 64-byte aligned). */
template <typename T, int V> __device__ __forceinline__ void dw_load(const T *p, float v[V]) {
    if constexpr ((V * sizeof(T)) % 16 == 0) {
        constexpr int per = 16 / sizeof(T);
#pragma unroll
        for (int k = 0; k < V / per; k++) {
            const uint4 u = reinterpret_cast<const uint4 *>(p)[k];
            const T *h = reinterpret_cast<const T *>(&u);
#pragma unroll
            for (int e = 0; e < per; e++) v[k * per + e] = rt_ld(h[e]);
        }
    } else {
#pragma unroll
        for (int e = 0; e < V; e++) v[e] = rt_ld(p[e]);
    }
}

template <typename T, int V> __device__ __forceinline__ void dw_store(T *p, const float v[V]) {
    if constexpr ((V * sizeof(T)) % 16 == 0) {
        constexpr int per = 16 / sizeof(T);
#pragma unroll
        for (int k = 0; k < V / per; k++) {
            uint4 u;
            T *h = reinterpret_cast<T *>(&u);
#pragma unroll
            for (int e = 0; e < per; e++) h[e] = rt_st<T>(v[k * per + e]);
            reinterpret_cast<uint4 *>(p)[k] = u;
        }
    } else {
#pragma unroll
        for (int e = 0; e < V; e++) p[e] = rt_st<T>(v[e]);
    }
}

/* ---- kernels ---------------------------------------------------------------------------- */

/* The weight a direct kernel's tap (r, s) reads: mirrored for the input gradient. */
template <int K> __device__ __forceinline__ int dw_tap(int r, int s, int flip) {
    return flip ? (K - 1 - r) * K + K - 1 - s : r * K + s;
}

/* A grid-stride loop in int: index arithmetic in 32 bits (64-bit division costs registers and
 * time); cuda_conv2d_depthwise_takes refuses tensors of more than INT_MAX elements. */
#define DW_GRID_STRIDE(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += gridDim.x * blockDim.x)

/* The inputs under a strip of DW_NCHW_STRIP outputs from x0: v[q] = row[x0 + q - pw], 0
 * outside the row. ALIGNED (rows a multiple of 8 elements long, pw == K/2): as the three
 * aligned 8-element chunks around the strip, 16-byte loads (a chunk lies wholly inside or
 * wholly outside the row); else element by element. */
template <typename T, int K, bool ALIGNED>
__device__ __forceinline__ void dw_nchw_row(float v[DW_NCHW_STRIP + K - 1], const T *row, int x0, int pw, int iw) {
    if constexpr (ALIGNED) {
        static_assert(DW_NCHW_STRIP == 8 && K / 2 <= 8, "the strip and its halo within three 8-element chunks");
        float chunk[3][8];
#pragma unroll
        for (int k = 0; k < 3; k++) {
            const int at = x0 - 8 + 8 * k;
            if (at >= 0 && at < iw) dw_load<T, 8>(row + at, chunk[k]);
            else
#pragma unroll
                for (int e = 0; e < 8; e++) chunk[k][e] = 0.0f;
        }
#pragma unroll
        for (int q = 0; q < DW_NCHW_STRIP + K - 1; q++) v[q] = chunk[(q - K / 2 + 8) / 8][(q - K / 2 + 8) % 8];
    } else {
#pragma unroll
        for (int q = 0; q < DW_NCHW_STRIP + K - 1; q++) {
            const int xi = x0 + q - pw;
            v[q] = xi >= 0 && xi < iw ? rt_ld(row[xi]) : 0.0f;
        }
    }
}

/* NCHW: one thread per strip of DW_NCHW_STRIP outputs of one row of one (n, c) plane.
 * weight [C][K][K]. ALIGNED: see dw_nchw_row. */
template <typename T, int K, bool ALIGNED> __global__ void __launch_bounds__(RT_THREADS, DW_MIN_BLOCKS)
dw_nchw_direct_kernel(T *out, const T *in, const T *weight, const float *bias, dw_geom g) {
    const int strips = (g.ow + DW_NCHW_STRIP - 1) / DW_NCHW_STRIP;
    const int total = g.n * g.c * g.oh * strips;
    DW_GRID_STRIDE(i, total) {
        const int xs = i % strips, t = i / strips, y = t % g.oh, plane = t / g.oh;
        const T *wc = weight + (plane % g.c) * (K * K);
        const T *src = in + (long)plane * g.ih * g.iw;
        const int x0 = xs * DW_NCHW_STRIP;
        float acc[DW_NCHW_STRIP];
#pragma unroll
        for (int j = 0; j < DW_NCHW_STRIP; j++) acc[j] = 0.0f;
#pragma unroll
        for (int r = 0; r < K; r++) {
            const int yi = y + r - g.ph;
            if (yi < 0 || yi >= g.ih) continue;
            const T *row = src + (long)yi * g.iw;
            float w[K], v[DW_NCHW_STRIP + K - 1];
#pragma unroll
            for (int s = 0; s < K; s++) w[s] = rt_ld(wc[dw_tap<K>(r, s, g.flip)]);
            dw_nchw_row<T, K, ALIGNED>(v, row, x0, g.pw, g.iw);
#pragma unroll
            for (int q = 0; q < DW_NCHW_STRIP + K - 1; q++)
#pragma unroll
                for (int j = 0; j < DW_NCHW_STRIP; j++)
                    if (q - j >= 0 && q - j < K) acc[j] += v[q] * w[q - j];
        }
        if (bias) {   /* the conv's bias, before the store's one rounding */
            const float b = bias[plane % g.c];
#pragma unroll
            for (int j = 0; j < DW_NCHW_STRIP; j++) acc[j] += b;
        }
        T *dst = out + ((long)plane * g.oh + y) * g.ow;
#pragma unroll
        for (int j = 0; j < DW_NCHW_STRIP; j++)
            if (x0 + j < g.ow) dst[x0 + j] = rt_st<T>(g.add ? acc[j] + rt_ld(dst[x0 + j]) : acc[j]);
    }
}

/* Channels-last: one thread per strip of DW_NHWC_STRIP outputs of one row, V channels;
 * neighbouring threads take neighbouring channels of the same pixels. weight [K][K][C].
 * Tap by tap (loops, not unrolled): the tap's weights, then the strip's inputs under it
 * (re-read from L1 for the next tap), which keeps a thread within 64 registers. */
template <typename T, int K, int V> __global__ void __launch_bounds__(RT_THREADS, DW_MIN_BLOCKS)
dw_nhwc_direct_kernel(T *out, const T *in, const T *weight, const float *bias, dw_geom g) {
    const int cvecs = g.c / V, strips = (g.ow + DW_NHWC_STRIP - 1) / DW_NHWC_STRIP;
    const int total = g.n * g.oh * strips * cvecs;
    DW_GRID_STRIDE(i, total) {
        const int c0 = i % cvecs * V, t = i / cvecs, x0 = t % strips * DW_NHWC_STRIP;
        const int y = t / strips % g.oh, b = t / strips / g.oh;
        float acc[DW_NHWC_STRIP][V];
#pragma unroll
        for (int j = 0; j < DW_NHWC_STRIP; j++)
#pragma unroll
            for (int e = 0; e < V; e++) acc[j][e] = 0.0f;
        for (int r = 0; r < K; r++) {
            const int yi = y + r - g.ph;
            if (yi < 0 || yi >= g.ih) continue;
            const T *row = in + ((long)b * g.ih + yi) * g.iw * g.c + c0;
#pragma unroll 1
            for (int s = 0; s < K; s++) {
                float w[V];
                dw_load<T, V>(weight + (long)dw_tap<K>(r, s, g.flip) * g.c + c0, w);
#pragma unroll
                for (int j = 0; j < DW_NHWC_STRIP; j++) {
                    const int xi = x0 + j + s - g.pw;
                    if (xi < 0 || xi >= g.iw) continue;
                    float v[V];
                    dw_load<T, V>(row + (long)xi * g.c, v);
#pragma unroll
                    for (int e = 0; e < V; e++) acc[j][e] += v[e] * w[e];
                }
            }
        }
        if (bias) {   /* the conv's bias, before the store's one rounding */
#pragma unroll
            for (int e = 0; e < V; e++) {
                const float be = bias[c0 + e];
#pragma unroll
                for (int j = 0; j < DW_NHWC_STRIP; j++) acc[j][e] += be;
            }
        }
        T *dst = out + (((long)b * g.oh + y) * g.ow + x0) * g.c + c0;
#pragma unroll
        for (int j = 0; j < DW_NHWC_STRIP; j++) {
            if (x0 + j >= g.ow) break;
            if (g.add) {
                float old[V];
                dw_load<T, V>(dst + (long)j * g.c, old);
#pragma unroll
                for (int e = 0; e < V; e++) acc[j][e] += old[e];
            }
            dw_store<T, V>(dst + (long)j * g.c, acc[j]);
        }
    }
}

/* NCHW weight gradient: block (channel, slice); thread t takes kernel row t / lanes and every
 * lanes-th strip of DW_WGRAD_STRIP outputs of one row among the slice's from t % lanes,
 * summing the row's K taps (a warp's threads share the kernel row, so they read neighbouring
 * strips of the same input row); the lanes' sums are then added in lane order into
 * partial[slice][c][K*K]. ALIGNED (output rows a multiple of 8 too): 16-byte loads of the
 * output gradient's strip and of the inputs (dw_nchw_row). bpart (or NULL): the bias
 * gradient's partials [slice][c], summed by the kernel row 0 threads, which take every strip
 * (reading dout even where their input row lies in the padding), in lane order. */
template <typename T, int K, bool ALIGNED> __global__ void __launch_bounds__(RT_THREADS, DW_MIN_BLOCKS)
dw_nchw_wgrad_kernel(float *partial, float *bpart, const T *dout, const T *in, dw_geom g) {
    static_assert(DW_WGRAD_STRIP == DW_NCHW_STRIP, "dw_nchw_row reads the inputs under a DW_NCHW_STRIP strip");
    __shared__ float lane_sums[RT_THREADS][K];
    const int ch = blockIdx.x, strips = (g.ow + DW_WGRAD_STRIP - 1) / DW_WGRAD_STRIP;
    const int lanes = RT_THREADS / K, lane = threadIdx.x % lanes, r = threadIdx.x / lanes;
    const int items = g.n * g.oh * strips, per = (items + gridDim.y - 1) / gridDim.y;
    const int end = min(items, (int)(blockIdx.y + 1) * per);
    const bool sums_bias = bpart && r == 0;
    float acc[K], bsum = 0.0f;
#pragma unroll
    for (int s = 0; s < K; s++) acc[s] = 0.0f;
    for (int it = blockIdx.y * per + lane; r < K && it < end; it += lanes) {
        const int x0 = it % strips * DW_WGRAD_STRIP, t = it / strips;
        const int y = t % g.oh, yi = y + r - g.ph;
        const bool row_in = yi >= 0 && yi < g.ih;
        if (!row_in && !sums_bias) continue;
        const int plane = t / g.oh * g.c + ch;
        const T *drow = dout + ((long)plane * g.oh + y) * g.ow;
        float d[DW_WGRAD_STRIP], v[DW_WGRAD_STRIP + K - 1];
        if constexpr (ALIGNED) {
            dw_load<T, DW_WGRAD_STRIP>(drow + x0, d);
        } else {
#pragma unroll
            for (int j = 0; j < DW_WGRAD_STRIP; j++) d[j] = x0 + j < g.ow ? rt_ld(drow[x0 + j]) : 0.0f;
        }
        if (sums_bias)
#pragma unroll
            for (int j = 0; j < DW_WGRAD_STRIP; j++) bsum += d[j];
        if (!row_in) continue;
        const T *row = in + ((long)plane * g.ih + yi) * g.iw;
        dw_nchw_row<T, K, ALIGNED>(v, row, x0, g.pw, g.iw);
#pragma unroll
        for (int q = 0; q < DW_WGRAD_STRIP + K - 1; q++)
#pragma unroll
            for (int j = 0; j < DW_WGRAD_STRIP; j++)
                if (q - j >= 0 && q - j < K) acc[q - j] += v[q] * d[j];
    }
#pragma unroll
    for (int s = 0; s < K; s++) lane_sums[threadIdx.x][s] = acc[s];
    __syncthreads();
    if (threadIdx.x < K * K) {   /* thread (r', s') = (t / K, t % K) adds weight r'*K + s' */
        const int rr = threadIdx.x / K, ss = threadIdx.x % K;
        float sum = 0.0f;
        for (int l = 0; l < lanes; l++) sum += lane_sums[rr * lanes + l][ss];
        partial[((long)blockIdx.y * g.c + ch) * (K * K) + threadIdx.x] = sum;
    }
    if (!bpart) return;
    __syncthreads();   /* the weights' sums are read: lane_sums takes row 0's bias sums */
    if (threadIdx.x < lanes) lane_sums[threadIdx.x][0] = bsum;
    __syncthreads();
    if (threadIdx.x == 0) {
        float sum = 0.0f;
        for (int l = 0; l < lanes; l++) sum += lane_sums[l][0];
        bpart[(long)blockIdx.y * g.c + ch] = sum;
    }
}

/* Channels-last weight gradient: block (channel tile, slice). A job is (channel vector of
 * the tile, kernel row, part of the row's taps): job t % jobs, with jobs = cvt * K * parts,
 * and every lanes-th pixel of the slice from t / jobs; it sums DW_PART_TAPS taps for V
 * channels (3 x 8 sums: within 64 registers). The lanes' sums are added in lane order
 * through shared memory, tap by tap, into partial[slice][c][K*K]. bpart (or NULL): the bias
 * gradient's partials [slice][c], summed by the jobs of kernel row 0's first part, which read
 * dout at every pixel of their lane (also where their input row lies in the padding), into
 * their own slots of lane_sums (the kernel has no registers left for 8 more sums), then
 * added in lane order before the taps' sums take lane_sums over. */
template <typename T, int K, int V> __global__ void __launch_bounds__(RT_THREADS, DW_MIN_BLOCKS)
dw_nhwc_wgrad_kernel(float *partial, float *bpart, const T *dout, const T *in, dw_geom g, int cvt) {
    constexpr int TAPS = DW_PART_TAPS < K ? DW_PART_TAPS : K, PARTS = (K + TAPS - 1) / TAPS;
    __shared__ float lane_sums[RT_THREADS][V];
    const int jobs = cvt * K * PARTS, lanes = RT_THREADS / jobs, job = threadIdx.x % jobs, lane = threadIdx.x / jobs;
    /* part q owns taps [q*TAPS, (q+1)*TAPS) of the row; the last part sums the row's last
     * TAPS taps (some the part before owns: it writes only its own) */
    const int cv = job % cvt, r = job / cvt % K, own = job / (cvt * K) * TAPS, s0 = min(own, K - TAPS);
    const int c0 = (blockIdx.x * cvt + cv) * V;
    const int active = lane < lanes && c0 < g.c;
    const int items = g.n * g.oh * g.ow, per = (items + gridDim.y - 1) / gridDim.y;
    const int end = min(items, (int)(blockIdx.y + 1) * per);
    const bool sums_bias = bpart && r == 0 && own == 0;
    float acc[TAPS][V];
#pragma unroll
    for (int s = 0; s < TAPS; s++)
#pragma unroll
        for (int e = 0; e < V; e++) acc[s][e] = 0.0f;
    if (sums_bias)
#pragma unroll
        for (int e = 0; e < V; e++) lane_sums[threadIdx.x][e] = 0.0f;
#pragma unroll 1   /* one pixel's loads in flight at a time: within 64 registers */
    for (int p = blockIdx.y * per + lane; active && p < end; p += lanes) {
        const int x = p % g.ow, t = p / g.ow, y = t % g.oh, b = t / g.oh;
        const int yi = y + r - g.ph;
        const bool row_in = yi >= 0 && yi < g.ih;
        if (!row_in && !sums_bias) continue;
        float d[V];
        dw_load<T, V>(dout + (long)p * g.c + c0, d);
        if (sums_bias)
#pragma unroll
            for (int e = 0; e < V; e++) lane_sums[threadIdx.x][e] += d[e];
        if (!row_in) continue;
        const T *row = in + ((long)b * g.ih + yi) * g.iw * g.c + c0;
#pragma unroll
        for (int s = 0; s < TAPS; s++) {
            const int xi = x + s0 + s - g.pw;
            if (xi < 0 || xi >= g.iw) continue;
            float v[V];
            dw_load<T, V>(row + (long)xi * g.c, v);
#pragma unroll
            for (int e = 0; e < V; e++) acc[s][e] += v[e] * d[e];
        }
    }
    if (bpart) {
        __syncthreads();
        if (lane == 0 && active && sums_bias)
#pragma unroll
            for (int e = 0; e < V; e++) {
                float sum = 0.0f;
                for (int l = 0; l < lanes; l++) sum += lane_sums[threadIdx.x + l * jobs][e];
                bpart[(long)blockIdx.y * g.c + c0 + e] = sum;
            }
        __syncthreads();   /* read: the taps' sums take lane_sums */
    }
#pragma unroll
    for (int s = 0; s < TAPS; s++) {
#pragma unroll
        for (int e = 0; e < V; e++) lane_sums[threadIdx.x][e] = acc[s][e];
        __syncthreads();
        if (lane == 0 && active && s0 + s >= own) {
#pragma unroll
            for (int e = 0; e < V; e++) {
                float sum = 0.0f;
                for (int l = 0; l < lanes; l++) sum += lane_sums[threadIdx.x + l * jobs][e];
                partial[((long)blockIdx.y * g.c + c0 + e) * (K * K) + r * K + s0 + s] = sum;
            }
        }
        __syncthreads();
    }
}

/* dweight[i] = the sum of the slices' partials for weight i; with dbias, dbias[c] likewise
 * from the bias partials bpart[slice][c] (the same launch). A block is 32 neighbouring sums
 * (a warp reads 32 neighbouring partials of one slice) by DW_SUM_LANES lanes of slices: lane
 * y adds slices y, y + DW_SUM_LANES, ... in order, then lane 0 adds the lanes' sums in lane
 * order, a fixed order. A thread a sum walking all the slices in turn (1024 at ConvNeXt-Tiny's
 * 56x56 dwconvs) would take about as long as the H100 profile's "sum of partials" kernels
 * (bench/RESULTS.md: 75 us for 512 splits). */
#define DW_SUM_LANES 8
__global__ void __launch_bounds__(32 * DW_SUM_LANES)
dw_sum_slices_kernel(float *dweight, const float *partial, int slices, long weights, float *dbias,
                     const float *bpart, int c) {
    __shared__ float lane_sums[DW_SUM_LANES][32];
    long i = (long)blockIdx.x * 32 + threadIdx.x;
    const bool in = i < weights + (dbias ? c : 0), w = i < weights;
    float sum = 0.0f;
    if (in) {
        const float *src = w ? partial + i : bpart + (i - weights);
        const long stride = w ? weights : c;
#pragma unroll 4
        for (int k = threadIdx.y; k < slices; k += DW_SUM_LANES) sum += src[k * stride];
    }
    lane_sums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (!in || threadIdx.y != 0) return;
    float total = 0.0f;
    for (int y = 0; y < DW_SUM_LANES; y++) total += lane_sums[y][threadIdx.x];
    if (w) dweight[i] = total;
    else dbias[i - weights] = total;
}

/* [C][KK] -> [KK][C]. */
template <typename T> __global__ void __launch_bounds__(RT_THREADS)
dw_weight_nhwc_kernel(T *dst, const T *src, int c, int kk) {
    GRID_STRIDE(i, (long)c * kk) dst[i] = src[(i % c) * kk + i / c];
}

/* ---- launchers -------------------------------------------------------------------------- */

int cuda_conv2d_depthwise_takes(const rt_conv_shape *s) {
    static int cudnn = -1;
    if (cudnn < 0) cudnn = rt_env_is(RT_ENV_TRAINC_CUDA_DEPTHWISE, "cudnn");
    int takes = !cudnn && rt_dw_fits(s);
    long most = (long)s->n * s->c * (s->h > s->oh ? s->h : s->oh) * (s->w > s->ow ? s->w : s->ow);
    if (takes && most > INT_MAX)
        rt_die_hint("set TRAINC_CUDA_DEPTHWISE=cudnn, or a smaller batch_per_rank",
                    "conv2d: a depthwise conv's tensors of %ld elements are more than its kernels index (%d)", most,
                    INT_MAX);
    return takes;
}

static int vec_of(const rt_conv_shape *s) { return rt_dw_vec(s); }
static int nhwc_wgrad_cvt(const rt_conv_shape *s) { return rt_dw_nhwc_cvt(s); }

size_t cuda_conv2d_depthwise_workspace(const rt_conv_shape *s, int nhwc, size_t cap, int *slices) {
    long per_slice = rt_dw_slice_bytes(s);
    if ((size_t)per_slice > cap)
        rt_die_hint("raise TRAINC_CUDNN_WORKSPACE_MB, or set TRAINC_CUDA_DEPTHWISE=cudnn",
                    "conv2d: a depthwise conv's weight gradient needs %ld bytes of workspace, above the cap of %zu",
                    per_slice, cap);
    *slices = rt_dw_slices(s, nhwc, cap);
    return (size_t)*slices * (size_t)per_slice;
}

void cuda_conv2d_depthwise_weight_nhwc(void *dst, const void *src, const rt_conv_shape *s) {
    int kk = s->kh * s->kw;
    RT_ACT_DISPATCH(dw_weight_nhwc_kernel<T><<<rt_blocks((long)s->c * kk), RT_THREADS, 0, rt_stream()>>>(
        (T *)dst, (const T *)src, s->c, kk));
    CUDA_LAUNCHED();
}

/* RT_ACT_DISPATCH for channels-last kernels, which exist in the 16-bit types only (conv2d.cu
 * refuses channels-last FP32 when the conv is created). */
#define DW_ACT16_DISPATCH(...)                                                               \
    do {                                                                                    \
        switch (rt_cuda_act_type()) {                                                       \
        case RT_ACT_BF16: { typedef __nv_bfloat16 T; __VA_ARGS__; } break;                 \
        case RT_ACT_F16: { typedef __half T; __VA_ARGS__; } break;                         \
        default: rt_die("conv2d: internal: a channels-last depthwise conv in FP32"); \
        }                                                                                   \
    } while (0)

/* Runs the statements with K bound to the kernel size as a constant (3, 5 or 7). */
#define DW_K_DISPATCH(k, ...)                                         \
    do {                                                              \
        switch (k) {                                                  \
        case 3: { constexpr int K = 3; __VA_ARGS__; } break;          \
        case 5: { constexpr int K = 5; __VA_ARGS__; } break;          \
        default: { constexpr int K = 7; __VA_ARGS__; } break;         \
        }                                                             \
    } while (0)

static void direct(void *out, const void *in, const void *weight, const float *bias, dw_geom g, int k, int nhwc,
                   int vec) {
    long total;
    if (!nhwc) {
        total = (long)g.n * g.c * g.oh * ((g.ow + DW_NCHW_STRIP - 1) / DW_NCHW_STRIP);
        if (g.iw % 8 == 0 && g.pw == k / 2)
            RT_ACT_DISPATCH(DW_K_DISPATCH(k, dw_nchw_direct_kernel<T, K, true><<<rt_blocks(total), RT_THREADS, 0,
                                                                                 rt_stream()>>>(
                                                 (T *)out, (const T *)in, (const T *)weight, bias, g)));
        else
            RT_ACT_DISPATCH(DW_K_DISPATCH(k, dw_nchw_direct_kernel<T, K, false><<<rt_blocks(total), RT_THREADS, 0,
                                                                                  rt_stream()>>>(
                                                 (T *)out, (const T *)in, (const T *)weight, bias, g)));
    } else {
        total = (long)g.n * g.oh * ((g.ow + DW_NHWC_STRIP - 1) / DW_NHWC_STRIP) * (g.c / vec);
        if (vec == DW_VEC)
            DW_ACT16_DISPATCH(DW_K_DISPATCH(k, dw_nhwc_direct_kernel<T, K, DW_VEC><<<rt_blocks(total), RT_THREADS, 0,
                                                                                   rt_stream()>>>(
                                                 (T *)out, (const T *)in, (const T *)weight, bias, g)));
        else
            DW_ACT16_DISPATCH(DW_K_DISPATCH(k, dw_nhwc_direct_kernel<T, K, 1><<<rt_blocks(total), RT_THREADS, 0,
                                                                              rt_stream()>>>(
                                                 (T *)out, (const T *)in, (const T *)weight, bias, g)));
    }
    CUDA_LAUNCHED();
}

void cuda_conv2d_depthwise_forward(void *out, const void *in, const void *weight, const float *bias,
                                   const rt_conv_shape *s, int nhwc) {
    dw_geom g = { s->n, s->c, s->h, s->w, s->oh, s->ow, s->ph, s->pw, 0, 0 };
    direct(out, in, weight, bias, g, s->kh, nhwc, vec_of(s));
}

void cuda_conv2d_depthwise_backward(void *din, float *dweight, float *dbias, const void *dout, const void *in,
                                    const void *weight, const rt_conv_shape *s, int nhwc, float *partials,
                                    int slices) {
    int k = s->kh, vec = vec_of(s);
    long weights = (long)s->c * k * k;
    float *bpart = dbias ? partials + (long)slices * weights : NULL;   /* rt_dw_slice_bytes' room */
    dw_geom g = { s->n, s->c, s->h, s->w, s->oh, s->ow, s->ph, s->pw, 0, 0 };
    if (!nhwc) {
        dim3 grid(s->c, slices);
        if (s->w % 8 == 0 && s->ow % 8 == 0 && s->pw == k / 2)
            RT_ACT_DISPATCH(DW_K_DISPATCH(k, dw_nchw_wgrad_kernel<T, K, true><<<grid, RT_THREADS, 0, rt_stream()>>>(
                                                 partials, bpart, (const T *)dout, (const T *)in, g)));
        else
            RT_ACT_DISPATCH(DW_K_DISPATCH(k, dw_nchw_wgrad_kernel<T, K, false><<<grid, RT_THREADS, 0, rt_stream()>>>(
                                                 partials, bpart, (const T *)dout, (const T *)in, g)));
    } else {
        int cvt = nhwc_wgrad_cvt(s);
        dim3 grid((s->c / vec + cvt - 1) / cvt, slices);
        if (vec == DW_VEC)
            DW_ACT16_DISPATCH(DW_K_DISPATCH(k, dw_nhwc_wgrad_kernel<T, K, DW_VEC><<<grid, RT_THREADS, 0, rt_stream()>>>(
                                                 partials, bpart, (const T *)dout, (const T *)in, g, cvt)));
        else
            DW_ACT16_DISPATCH(DW_K_DISPATCH(k, dw_nhwc_wgrad_kernel<T, K, 1><<<grid, RT_THREADS, 0, rt_stream()>>>(
                                                 partials, bpart, (const T *)dout, (const T *)in, g, cvt)));
    }
    CUDA_LAUNCHED();
    dw_sum_slices_kernel<<<(unsigned)((weights + (dbias ? s->c : 0) + 31) / 32), dim3(32, DW_SUM_LANES), 0, rt_stream()>>>(
        dweight, partials, slices, weights, dbias, bpart, s->c);
    CUDA_LAUNCHED();
    if (!din) return;
    /* din[y][x] = sum_rs dout[y + ph - r][x + pw - s] w[r][s]: the direct kernel over dout with
     * padding k-1-p and the taps mirrored */
    dw_geom d = { s->n, s->c, s->oh, s->ow, s->h, s->w, k - 1 - s->ph, k - 1 - s->pw, 1, s->din_add };
    direct(din, dout, weight, NULL, d, k, nhwc, vec);
}
