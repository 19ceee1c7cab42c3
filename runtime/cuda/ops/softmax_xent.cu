/* Softmax cross-entropy with label smoothing (torch semantics) fused with its backward:
 * one warp per sample writes dlogits and the sample's loss; a second one-block kernel adds
 * the losses in a fixed order into the batch mean, on the device (no synchronization). The
 * gradient is multiplied by the loss scale (FP16 training), read from device memory so that
 * a captured graph sees the scale of each step. A label outside [0, k) gives a NaN loss
 * instead of an out-of-bounds read (the loaders check labels; this guards the kernel). */
#include "../cuda_common.cuh"

#define MEAN_THREADS 256

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
xent_rows_kernel(double *row_loss, T *dlogits, const T *logits, const int32_t *labels, int n, int k,
                 float smoothing, float dscale, const float *loss_scale) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    float ds = loss_scale ? dscale * *loss_scale : dscale;
    for (long b = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; b < n; b += warps) {
        const T *z = logits + b * k;
        int y = labels[b];
        if (y < 0 || y >= k) {   /* never read z[y] out of bounds: a NaN loss, which the trainer's guard stops on */
            if (lane == 0) row_loss[b] = NAN;
            for (int j = lane; dlogits && j < k; j += 32) dlogits[b * k + j] = rt_st<T>(NAN);
            continue;
        }
        float zmax = -INFINITY;
        for (int j = lane; j < k; j += 32) zmax = fmaxf(zmax, rt_ld(z[j]));
        for (int o = 16; o > 0; o >>= 1) zmax = fmaxf(zmax, __shfl_xor_sync(0xffffffffu, zmax, o));
        double sum = 0, zsum = 0;
        for (int j = lane; j < k; j += 32) {
            float zj = rt_ld(z[j]);
            sum += expf(zj - zmax);
            zsum += zj;
        }
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
            zsum += __shfl_xor_sync(0xffffffffu, zsum, o);
        }
        double lse = zmax + log(sum);
        if (lane == 0) row_loss[b] = (1 - smoothing) * (lse - rt_ld(z[y])) + smoothing * (lse - zsum / k);
        if (!dlogits) continue;
        T *d = dlogits + b * k;
        float off = smoothing / k, inv_sum = (float)(1 / sum);
        for (int j = lane; j < k; j += 32) {
            float p = expf(rt_ld(z[j]) - zmax) * inv_sum;
            d[j] = rt_st<T>(ds * (p - off - (j == y ? 1 - smoothing : 0.0f)));
        }
    }
}

__global__ void __launch_bounds__(MEAN_THREADS)
xent_mean_kernel(double *loss, const double *row_loss, int n) {
    double acc = 0;
    for (int b = threadIdx.x; b < n; b += blockDim.x) acc += row_loss[b];
    acc = block_sum(acc);
    if (threadIdx.x == 0) *loss = acc / n;
}

/* The batch mean of per-sample losses in a fixed order, on the device (also the loss of
 * target_loss.cu, which declares it). */
void cuda_loss_batch_mean(double *loss, const double *row_loss, int n) {
    xent_mean_kernel<<<1, 256, 0, rt_stream()>>>(loss, row_loss, n);
    CUDA_LAUNCHED();
}

__global__ void __launch_bounds__(1) loss_add_kernel(double *total, const double *head, double weight, int first) {
    *total = (first ? 0 : *total) + weight * *head;
}

/* A loss head's weighted mean into the step's loss (several heads, rt_cuda.h). */
void cuda_loss_add(double *total, const double *head, double weight, int first) {
    loss_add_kernel<<<1, 1, 0, rt_stream()>>>(total, head, weight, first);
    CUDA_LAUNCHED();
}

/* Per-sample losses, sized by the first (uncaptured) step. */
static rt_cuda_scratch row_losses;

void cuda_softmax_xent(double *loss, void *dlogits, const void *logits, const int32_t *labels, int n, int k,
                       float smoothing, float dscale, const float *loss_scale) {
    double *row_loss = (double *)rt_cuda_scratch_get(&row_losses, (size_t)n * sizeof(double), "per-sample losses");
    RT_ACT_DISPATCH(xent_rows_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
        row_loss, (T *)dlogits, (const T *)logits, labels, n, k, smoothing, dscale, loss_scale));
    CUDA_LAUNCHED();
    cuda_loss_batch_mean(loss, row_loss, n);
}
