/* Per-channel work on NCHW planes (batch norm, bias gradients): a channel's N rows of hw
 * values, split over blocks of whole samples, walked without a division per element. */
#ifndef RT_CUDA_CHANNEL_PLANES_CUH
#define RT_CUDA_CHANNEL_PLANES_CUH
#include "../cuda_common.cuh"

#define BN_THREADS 256
#define BN_VALUES_PER_BLOCK 8192   /* of one channel: about 32 per thread */

/* A channel's N x HW values are split over `splits` blocks of `per` whole samples each, so
 * the channel dimension alone does not limit the grid (64 channels would fill half an H100)
 * and no loop divides per element. Partial sums go to a scratch buffer; a small kernel adds
 * them in a fixed order, so results repeat run to run. */
struct bn_split {
    int splits, per;
};

static inline bn_split bn_split_of(int n, int c, int hw) {
    if (c > 65535) rt_die("batch norm: %d channels (the CUDA grid takes at most 65535)", c);
    long m = (long)n * hw, want = (m + BN_VALUES_PER_BLOCK - 1) / BN_VALUES_PER_BLOCK;
    int splits = (int)(want < 1 ? 1 : want > n ? n : want);
    int per = (n + splits - 1) / splits;
    return { (n + per - 1) / per, per };
}

/* Calls f(i) for every index i of channel ch in samples [n0, n1), or with V > 1 for the first
 * index of every V consecutive ones (V divides hw): each thread walks rows (samples) and
 * positions of its own; with a row shorter than the block one pass covers blockDim/row
 * whole rows, so small feature maps keep the threads busy too. */
template <int V = 1, typename F>
__device__ static inline void bn_for_each(int n0, int n1, int c, int ch, int hw, F f) {
    int len = hw / V, wide = len >= (int)blockDim.x;   /* a row in vectors */
    int rows = wide ? 1 : (int)blockDim.x / len, step = wide ? (int)blockDim.x : len;
    int r = wide ? 0 : (int)threadIdx.x / len, p0 = wide ? (int)threadIdx.x : (int)threadIdx.x % len;
    if (r >= rows) return;   /* the blockDim % len threads left over */
    for (int ni = n0 + r; ni < n1; ni += rows) {
        long base = ((long)ni * c + ch) * hw;
        for (int p = p0; p < len; p += step) f(base + (long)p * V);
    }
}
#endif
