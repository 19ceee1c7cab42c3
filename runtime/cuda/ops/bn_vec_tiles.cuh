/* The channels-last batch-norm kernels' launch shape and block-level sums, shared by
 * batchnorm_nhwc_vec.cu and the fused block backward (bn_add_relu_backward_nhwc.cu): each
 * thread takes V = 4 neighbouring channels (or 1) and walks rows of its block's range; a
 * block's partial sums per channel go to part[2 * (ch * splits + s) + k], and with a retire
 * counter the channel tile's last block adds them up. */
#ifndef RT_CUDA_BN_VEC_TILES_CUH
#define RT_CUDA_BN_VEC_TILES_CUH
#include "batchnorm_sums.cuh"
#include "channel_tiles.cuh"

#define VEC_THREADS 256
/* Rows whose loads a thread has in flight: 4 of one tensor for the statistics and the apply,
 * 2 of three tensors for the backward (within 64 registers). */
#define VEC_ROWS_IN_FLIGHT 4
#define VEC_GRAD_ROWS_IN_FLIGHT 2
#define VEC_CHANNELS 4   /* a thread's channels when they divide C */

/* The launch shape: vec (V = VEC_CHANNELS, else 1), grid (channel tiles, row splits). */
struct vec_tiles {
    int vec;
    dim3 grid, block;
    long per;   /* rows per block */
};

static vec_tiles vec_tiles_of(long rows, int c, int vec) {
    int v = vec ? VEC_CHANNELS : 1;
    int cv = c / v, lx = 1;
    while (lx < cv && lx < 32) lx *= 2;
    nhwc_split sp = nhwc_split_of(rows);   /* the old kernels' splits: the partials' room stays as planned */
    return { vec, dim3((cv + lx - 1) / lx, sp.splits), dim3(lx, VEC_THREADS / lx), sp.per };
}

/* Whether V = VEC_CHANNELS suits c channels and the tensors' addresses (inline: not every file that
 * includes this header calls it, and nvcc -Werror refuses an unused static function). */
static inline int vec_suits(int c, const void *a, const void *b = NULL, const void *d = NULL, const void *e = NULL) {
    return c % VEC_CHANNELS == 0 && vec_aligned(a, b, d, e);
}

/* For this thread's rows r of block y's range, in order: load(u, r) for U rows, then use(u, r)
 * for them, so U rows' loads are in flight together; u indexes the caller's register arrays
 * (a constant once unrolled). */
template <int U, typename Load, typename Use>
__device__ __forceinline__ void vec_rows(long rows, long per, Load load, Use use) {
    long r = (long)blockIdx.y * per + threadIdx.y, end = min(rows, (long)blockIdx.y * per + per), step = blockDim.y;
    for (; r + (U - 1) * step < end; r += U * step) {
#pragma unroll
        for (int u = 0; u < U; u++) load(u, r + u * step);
#pragma unroll
        for (int u = 0; u < U; u++) use(u, r + u * step);
    }
    for (; r < end; r += step) {
        load(0, r);
        use(0, r);
    }
}

/* The block's two sums per channel over its row lanes, in lane order, to part[2 * (ch *
 * splits + s) + k]: each thread puts its 2V sums in shared memory, then each of the block's
 * 2 * lx * V values is added up by one thread. */
template <int V>
__device__ static inline void vec_tile_sums(const double a[V], const double b[V], double *part, int c) {
    __shared__ double lane_sums[VEC_THREADS * 2 * V];
    int width = blockDim.x * V * 2, mine = threadIdx.y * width + threadIdx.x * V * 2;
#pragma unroll
    for (int j = 0; j < V; j++) lane_sums[mine + 2 * j] = a[j], lane_sums[mine + 2 * j + 1] = b[j];
    __syncthreads();
    for (int o = threadIdx.y * blockDim.x + threadIdx.x; o < width; o += VEC_THREADS) {
        int ch = blockIdx.x * blockDim.x * V + o / 2;
        if (ch >= c) continue;
        double t = 0;
        for (int y = 0; y < (int)blockDim.y; y++) t += lane_sums[y * width + o];
        part[2 * ((long)ch * gridDim.y + blockIdx.y) + (o & 1)] = t;
    }
}

/* The retire counters (the retiring kernels, lower.c ir_op.bn_retire), in two levels so that
 * no one block adds a whole tile's partials after the rest of the grid is done (a tile of 128
 * channels over 512 splits is 1 MB; a thread a channel walking them took the H100 profile's
 * "sum of partials" kernels 75 us a call): each block leaves its partial sums and counts
 * itself done on its group's counter; a group's last block (the one that sees every other
 * member's partials, as CUDA's threadFenceReduction sample) adds the group's SUM_GROUP splits
 * per channel, leaves the sums in the group's first split's place, and counts the group done
 * on the tile's counter; the tile's last group's block (returned true) then adds the groups'
 * sums (vec_tile_totals) and the caller puts the tile's counter back to zero for the next
 * launch or graph replay (each group's last block puts its own back). counters: the tiles'
 * counters, then RETIRE_MAX_GROUPS a tile (batchnorm_sums.cuh bn_retire_counters). */
/* In a group's last block: its group's sums per channel of the tile (part: [c][splits][2]),
 * a warp four channels at a time (their loads in flight together), into split g * SUM_GROUP. */
template <int V> __device__ static inline void vec_group_sums(double *part, int c, int g) {
    int width = blockDim.x * V, splits = gridDim.y, t = threadIdx.y * blockDim.x + threadIdx.x, lane = t & 31;
    int first = blockIdx.x * width, end = min(c, first + width), s = g * SUM_GROUP + lane;
    double2 *p = reinterpret_cast<double2 *>(part);
    for (int ch = first + t / 32 * 4; ch < end; ch += VEC_THREADS / 32 * 4) {   /* warp-uniform */
        double2 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++) v[j] = s < splits && ch + j < end ? p[(long)(ch + j) * splits + s] : make_double2(0, 0);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            double2 sum = warp_tree(v[j]);
            if (lane == 0 && ch + j < end) p[(long)(ch + j) * splits + g * SUM_GROUP] = sum;
        }
    }
}

/* After the block's partials (of one bn, or two: part_b) are written: whether this block
 * finishes the tile, every group's sums then in place. */
template <int V>
__device__ static inline bool vec_tile_retires(unsigned *counters, double *part_a, double *part_b, int c) {
    int g = blockIdx.y / SUM_GROUP, groups = (gridDim.y + SUM_GROUP - 1) / SUM_GROUP;
    unsigned members = min(SUM_GROUP, (int)gridDim.y - g * SUM_GROUP);
    unsigned *group_count = counters + gridDim.x + blockIdx.x * RETIRE_MAX_GROUPS + g;
    __threadfence();   /* this thread's partial sums visible to the group's last block */
    __syncthreads();   /* every thread's, before the block counts itself done */
    /* (the flags through the barrier, not a __shared__ word: the kernels' static shared memory
     * stays within the 16 KiB budget) */
    if (!__syncthreads_or(threadIdx.x == 0 && threadIdx.y == 0 && atomicAdd(group_count, 1u) == members - 1))
        return false;
    vec_group_sums<V>(part_a, c, g);
    if (part_b) vec_group_sums<V>(part_b, c, g);
    if (threadIdx.x == 0 && threadIdx.y == 0) *group_count = 0;
    __threadfence();   /* the group's sums visible to the tile's last block */
    __syncthreads();
    return __syncthreads_or(threadIdx.x == 0 && threadIdx.y == 0 &&
                            atomicAdd(&counters[blockIdx.x], 1u) == (unsigned)groups - 1);
}

/* In the tile's last block: each of the tile's channels' two sums, its groups' sums added in
 * order (SUM_GROUP's order: the warp-per-channel kernels of --no-bn-retire give the same
 * bits), a thread a channel. (One group a round: unrolling the loop makes ptxas spill around
 * f's call in some kernels, and a tile has at most 16 groups.) */
template <int V, typename F> __device__ static inline void vec_tile_totals(const double *part, int c, F f) {
    int width = blockDim.x * V, splits = gridDim.y, groups = (splits + SUM_GROUP - 1) / SUM_GROUP;
    const double2 *p = reinterpret_cast<const double2 *>(part);
    for (int o = threadIdx.y * blockDim.x + threadIdx.x; o < width; o += VEC_THREADS) {
        int ch = blockIdx.x * width + o;
        if (ch >= c) continue;
        double a = 0, b = 0;
#pragma unroll 1
        for (int g = 0; g < groups; g++) {
            double2 v = p[(long)ch * splits + g * SUM_GROUP];
            a += v.x, b += v.y;
        }
        f(ch, a, b);
    }
}

#endif
