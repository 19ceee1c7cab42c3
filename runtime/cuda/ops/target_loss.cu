/* The loss against dense targets on the device (runtime/cpu/ops/target_loss.c's semantics):
 * softmax cross-entropy or timm's per-class sigmoid binary cross-entropy, against the
 * label-smoothed one-hot target, optionally mixed with a partner label (mixup/cutmix
 * layout: labels, partner labels, weights as float bits), backward fused. One warp per
 * sample; the batch mean is cuda_softmax_xent's (cuda_loss_batch_mean). */
#include "../cuda_common.cuh"

__device__ static float class_target(int j, int ya, int yb, float w, float eps, int k, float threshold) {
    float t = eps / k + (1 - eps) * ((j == ya ? w : 0.0f) + (j == yb ? 1 - w : 0.0f));
    if (threshold > 0) t = t > threshold ? 1.0f : 0.0f;
    return t;
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
target_rows_kernel(double *row_loss, T *dlogits, const T *logits, const int32_t *targets, int mixed,
                                   int n, int k, int bce, float smoothing, float threshold, float dscale,
                                   const float *loss_scale) {
    int lane = threadIdx.x & 31;
    long warps = (long)gridDim.x * blockDim.x / 32;
    float ds = loss_scale ? dscale * *loss_scale : dscale;
    for (long b = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; b < n; b += warps) {
        const T *z = logits + b * k;
        int ya = targets[b], yb = mixed ? targets[n + b] : ya;
        float w = 1.0f;
        if (mixed) memcpy(&w, &targets[2L * n + b], sizeof w);   /* the weight travels as float bits */
        T *d = dlogits ? dlogits + b * k : NULL;
        if (ya < 0 || ya >= k || yb < 0 || yb >= k) {   /* a NaN loss, as cuda_softmax_xent */
            if (lane == 0) row_loss[b] = NAN;
            for (int j = lane; d && j < k; j += 32) d[j] = rt_st<T>(NAN);
            continue;
        }
        if (bce) {
            double row = 0;
            for (int j = lane; j < k; j += 32) {
                float zj = rt_ld(z[j]), t = class_target(j, ya, yb, w, smoothing, k, threshold);
                row += fmaxf(zj, 0.0f) - zj * t + log1pf(expf(-fabsf(zj)));
                if (d) d[j] = rt_st<T>(ds * (1 / (1 + expf(-zj)) - t) / k);
            }
            for (int o = 16; o > 0; o >>= 1) row += __shfl_xor_sync(0xffffffffu, row, o);
            if (lane == 0) row_loss[b] = row / k;
            continue;
        }
        float zmax = -INFINITY;
        for (int j = lane; j < k; j += 32) zmax = fmaxf(zmax, rt_ld(z[j]));
        for (int o = 16; o > 0; o >>= 1) zmax = fmaxf(zmax, __shfl_xor_sync(0xffffffffu, zmax, o));
        double sum = 0, tz = 0;
        for (int j = lane; j < k; j += 32) {
            float zj = rt_ld(z[j]);
            sum += expf(zj - zmax);
            tz += class_target(j, ya, yb, w, smoothing, k, 0) * zj;
        }
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(0xffffffffu, sum, o);
            tz += __shfl_xor_sync(0xffffffffu, tz, o);
        }
        if (lane == 0) row_loss[b] = zmax + log(sum) - tz;
        if (!d) continue;
        float inv_sum = (float)(1 / sum);
        for (int j = lane; j < k; j += 32)
            d[j] = rt_st<T>(ds * (expf(rt_ld(z[j]) - zmax) * inv_sum - class_target(j, ya, yb, w, smoothing, k, 0)));
    }
}

/* softmax_xent.cu: the batch mean of the per-sample losses, in a fixed order. */
void cuda_loss_batch_mean(double *loss, const double *row_loss, int n);

static rt_cuda_scratch row_losses;

void cuda_target_loss(double *loss, void *dlogits, const void *logits, const int32_t *targets, int mixed, int n,
                      int k, int bce, float smoothing, float bce_threshold, float dscale, const float *loss_scale) {
    double *row_loss = (double *)rt_cuda_scratch_get(&row_losses, (size_t)n * sizeof(double), "per-sample losses");
    RT_ACT_DISPATCH(target_rows_kernel<T><<<rt_blocks((long)n * 32), RT_THREADS, 0, rt_stream()>>>(
        row_loss, (T *)dlogits, (const T *)logits, targets, mixed, n, k, bce, smoothing, bce_threshold, dscale,
        loss_scale));
    CUDA_LAUNCHED();
    cuda_loss_batch_mean(loss, row_loss, n);
}
