/* The per-channel sums of batchnorm_sums.cuh: the (channel, block) partial sums added in a
 * fixed order into the batch statistics (with torch's running-stat update) or the gradient
 * totals. One warp per channel (lanes stride over the blocks' partials, then a fixed shuffle
 * tree); TRAINC_CUDA_BN=old: one thread per channel adding them serially, as before. */
#include "batchnorm_sums.cuh"

#define SUM_WARPS (RT_THREADS / 32)   /* channels per block of the warp-per-channel kernels */

int bn_old_kernels(void) {
    static int cached = -1;
    return rt_cuda_env_old(RT_ENV_TRAINC_CUDA_BN, &cached);
}

/* The old kernels: one thread per channel, the splits added in order. */
__global__ void __launch_bounds__(RT_THREADS)
bn_finish_stats_kernel(float *save_mean, float *save_inv_std, float *running_mean,
                       float *running_var, const double *part, int splits, int c, long m,
                       float momentum, float eps) {
    GRID_STRIDE(ch, c) {
        double sum = 0, sq = 0;
        for (int s = 0; s < splits; s++) sum += part[2 * (ch * splits + s)], sq += part[2 * (ch * splits + s) + 1];
        finish_channel_stats(save_mean, save_inv_std, running_mean, running_var, (int)ch, sum, sq, m, momentum, eps);
    }
}

__global__ void __launch_bounds__(RT_THREADS)
bn_sum_partials_kernel(double *totals, float *dgamma, float *dbeta, const double *part, int splits,
                       int c) {
    GRID_STRIDE(ch, c) {
        double s0 = 0, s1 = 0;
        for (int s = 0; s < splits; s++) s0 += part[2 * (ch * splits + s)], s1 += part[2 * (ch * splits + s) + 1];
        store_channel_totals(totals, dgamma, dbeta, (int)ch, s0, s1);
    }
}

/* Grid: SUM_WARPS channels a block, one warp each (a warp's channel is uniform, so the early
 * return keeps whole warps for the shuffles). */
__global__ void __launch_bounds__(RT_THREADS)
bn_finish_stats_warp_kernel(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                            const double *part, int splits, int c, long m, float momentum, float eps) {
    int ch = blockIdx.x * SUM_WARPS + (int)threadIdx.x / 32;
    if (ch >= c) return;
    double sum, sq;
    warp_channel_sums(part, splits, ch, threadIdx.x & 31, &sum, &sq);
    if ((threadIdx.x & 31) == 0)
        finish_channel_stats(save_mean, save_inv_std, running_mean, running_var, ch, sum, sq, m, momentum, eps);
}

__global__ void __launch_bounds__(RT_THREADS)
bn_sum_partials_warp_kernel(double *totals, float *dgamma, float *dbeta, const double *part, int splits, int c) {
    int ch = blockIdx.x * SUM_WARPS + (int)threadIdx.x / 32;
    if (ch >= c) return;
    double s0, s1;
    warp_channel_sums(part, splits, ch, threadIdx.x & 31, &s0, &s1);
    if ((threadIdx.x & 31) == 0) store_channel_totals(totals, dgamma, dbeta, ch, s0, s1);
}

/* Partial sums and per-channel totals of every BN layer, of either layout: one stream runs
 * them one after another. */
static rt_cuda_scratch partials, channel_totals;

double *bn_partials(int splits, int c) {
    return (double *)rt_cuda_scratch_get(&partials, sizeof(double) * 2 * (size_t)splits * c, "batch-norm partial sums");
}

static double *bn_totals(int c) {
    return (double *)rt_cuda_scratch_get(&channel_totals, sizeof(double) * 2 * (size_t)c, "batch-norm channel sums");
}

double *bn_channel_totals(int c) { return bn_totals(c); }

/* The retire counters: zero when allocated, and each launch's last blocks (of each group, of
 * each tile) put theirs back to zero. */
static rt_cuda_scratch retire_counters;

unsigned *bn_retire_counters(int tiles) {
    size_t bytes = sizeof(unsigned) * (size_t)tiles * (1 + RETIRE_MAX_GROUPS);
    if (bytes > retire_counters.bytes) {
        rt_cuda_scratch_get(&retire_counters, bytes, "batch-norm retire counters");
        rt_cuda_memset0(retire_counters.p, bytes);
    }
    return (unsigned *)retire_counters.p;
}

void cuda_reserve_partial_sums(size_t partial_bytes, long channels) {
    if (!channels) return;
    rt_cuda_scratch_get(&partials, partial_bytes, "batch-norm partial sums");
    bn_totals((int)channels);
    bn_retire_counters((int)((channels + 31) / 32));   /* a tile spans 32 channels or more (vec_tiles_of), or all */
}

static unsigned warp_blocks(int c) { return (unsigned)((c + SUM_WARPS - 1) / SUM_WARPS); }

static void sum_partials(double *totals, float *dgamma, float *dbeta, const double *part, int splits, int c) {
    if (bn_old_kernels())
        bn_sum_partials_kernel<<<rt_blocks(c), RT_THREADS, 0, rt_stream()>>>(totals, dgamma, dbeta, part, splits, c);
    else
        bn_sum_partials_warp_kernel<<<warp_blocks(c), RT_THREADS, 0, rt_stream()>>>(totals, dgamma, dbeta, part,
                                                                                   splits, c);
    CUDA_LAUNCHED();
}

void bn_finish_stats(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                     const double *part, int splits, int c, long m, float momentum, float eps, int sync) {
    if (sync && rt_cuda_world() > 1) {   /* every rank's sums, as one channel total each */
        double *totals = bn_totals(c);
        sum_partials(totals, NULL, NULL, part, splits, c);
        rt_cuda_allreduce_f64(totals, 2L * c);
        part = totals, splits = 1, m *= rt_cuda_world();
    }
    if (bn_old_kernels())
        bn_finish_stats_kernel<<<rt_blocks(c), RT_THREADS, 0, rt_stream()>>>(
            save_mean, save_inv_std, running_mean, running_var, part, splits, c, m, momentum, eps);
    else
        bn_finish_stats_warp_kernel<<<warp_blocks(c), RT_THREADS, 0, rt_stream()>>>(
            save_mean, save_inv_std, running_mean, running_var, part, splits, c, m, momentum, eps);
    CUDA_LAUNCHED();
}

const double *bn_finish_grads(float *dgamma, float *dbeta, const double *part, int splits, int c, long *m, int sync) {
    double *totals = bn_totals(c);
    sum_partials(totals, dgamma, dbeta, part, splits, c);
    if (sync && rt_cuda_world() > 1) {
        rt_cuda_allreduce_f64(totals, 2L * c);
        *m *= rt_cuda_world();
    }
    return totals;
}
