/* Softmax cross-entropy with label smoothing (torch semantics) fused with its backward:
 * one warp per sample writes dlogits and the sample's loss; a second one-block kernel adds
 * the losses in a fixed order into the batch mean, on the device (no synchronization). */
#include "../cuda_common.cuh"

__global__ void xent_rows_kernel(double *row_loss, float *dlogits, const float *logits, const int32_t *labels,
                                 int n, int k, float smoothing, float dscale) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    for (long b = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; b < n; b += warps) {
        const float *z = logits + b * k;
        int y = labels[b];
        float zmax = -INFINITY;
        for (int j = lane; j < k; j += 32) zmax = fmaxf(zmax, z[j]);
        for (int o = 16; o > 0; o >>= 1) zmax = fmaxf(zmax, __shfl_xor_sync(0xffffffffu, zmax, o));
        double sum = 0, zsum = 0;
        for (int j = lane; j < k; j += 32) {
            sum += expf(z[j] - zmax);
            zsum += z[j];
        }
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
            zsum += __shfl_xor_sync(0xffffffffu, zsum, o);
        }
        double lse = zmax + log(sum);
        if (lane == 0) row_loss[b] = (1 - smoothing) * (lse - z[y]) + smoothing * (lse - zsum / k);
        if (!dlogits) continue;
        float *d = dlogits + b * k;
        float off = smoothing / k, inv_sum = (float)(1 / sum);
        for (int j = lane; j < k; j += 32) {
            float p = expf(z[j] - zmax) * inv_sum;
            d[j] = dscale * (p - off - (j == y ? 1 - smoothing : 0.0f));
        }
    }
}

__global__ void xent_mean_kernel(double *loss, const double *row_loss, int n) {
    double acc = 0;
    for (int b = threadIdx.x; b < n; b += blockDim.x) acc += row_loss[b];
    acc = block_sum(acc);
    if (threadIdx.x == 0) *loss = acc / n;
}

/* Per-sample losses: a scratch buffer that grows to the largest batch seen. */
static double *row_loss;
static int row_cap;

void cuda_softmax_xent(double *loss, float *dlogits, const float *logits, const int32_t *labels, int n, int k,
                       float smoothing, float dscale) {
    if (n > row_cap) {
        rt_cuda_free(row_loss);
        row_loss = (double *)rt_cuda_malloc((size_t)n * sizeof(double), "per-sample losses");
        row_cap = n;
    }
    xent_rows_kernel<<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(row_loss, dlogits, logits, labels, n,
                                                                             k, smoothing, dscale);
    CUDA_LAUNCHED();
    xent_mean_kernel<<<1, 256, 0, rt_stream()>>>(loss, row_loss, n);
    CUDA_LAUNCHED();
}
