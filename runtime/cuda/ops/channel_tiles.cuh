/* Per-channel work on channels-last rows [rows][C] (NHWC activations, and any [N][C] tensor)
 * with coalesced access: a block is 32 neighbouring channels x 8 row lanes, so a warp reads
 * 32 neighbouring channels of one row; the rows are split over up to 512 blocks per channel
 * tile, and each block leaves its two sums per channel in part[2 * (ch * splits + s) + k]
 * for batchnorm_sums.cuh's kernels to add in a fixed order. */
#ifndef RT_CUDA_CHANNEL_TILES_CUH
#define RT_CUDA_CHANNEL_TILES_CUH
#include "../cuda_common.cuh"
#include "rt_devmem.h"

#define TILE_C 32
#define ROW_LANES 8
#define MIN_ROWS_PER_BLOCK 256
#define MAX_SPLITS RT_DEVMEM_MAX_SPLITS   /* the device memory plan counts the partials at it */

struct nhwc_split {
    int splits;
    long per;   /* rows per block */
};

static inline nhwc_split nhwc_split_of(long rows) {
    long want = (rows + MIN_ROWS_PER_BLOCK - 1) / MIN_ROWS_PER_BLOCK;
    int splits = (int)(want < 1 ? 1 : want > MAX_SPLITS ? MAX_SPLITS : want);
    long per = (rows + splits - 1) / splits;
    return { (int)((rows + per - 1) / per), per };
}

static inline dim3 nhwc_grid(int c, nhwc_split sp) { return dim3((c + TILE_C - 1) / TILE_C, sp.splits); }

/* Calls f(i) for the elements of this thread's channel (x) in its rows of block y's range. */
template <typename F> __device__ static inline void nhwc_for_each(long rows, long per, int c, F f) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    if (ch >= c) return;
    long r1 = min(rows, (long)blockIdx.y * per + per);
    for (long r = (long)blockIdx.y * per + threadIdx.y; r < r1; r += ROW_LANES) f(r * c + ch);
}

/* The block's two sums per channel, over its row lanes in order, to part. */
__device__ static inline void nhwc_tile_sums(double a, double b, double *part, int c) {
    __shared__ double sa[ROW_LANES][TILE_C], sb[ROW_LANES][TILE_C];
    sa[threadIdx.y][threadIdx.x] = a;
    sb[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    if (threadIdx.y != 0 || ch >= c) return;
    double ta = 0, tb = 0;
    for (int y = 0; y < ROW_LANES; y++) ta += sa[y][threadIdx.x], tb += sb[y][threadIdx.x];
    double *o = part + 2 * ((long)ch * gridDim.y + blockIdx.y);
    o[0] = ta, o[1] = tb;
}
#endif
