/* Batch normalization with frozen statistics (Caffe's use_global_stats) on the device: the
 * forward is cuda_batchnorm_stats_eval + apply in training too; the backward holds the
 * running statistics constant: dgamma, dbeta as the batch backward's sums (over xhat from the
 * running statistics), din = dout·gamma·inv_std, as the CPU's batchnorm_backward_frozen. */
#include "batchnorm_sums.cuh"

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
bn_frozen_input_grad_kernel(T *din, const T *dout, const T *relu_out, const float *gamma,
                                            const float *inv_std, int c, int hw, long total) {
    GRID_STRIDE(i, total) {
        int ch = (int)(i / hw % c);
        din[i] = rt_st<T>(bn_dy(dout, relu_out, i) * gamma[ch] * inv_std[ch]);
    }
}

void cuda_batchnorm_backward_frozen(void *din, float *dgamma, float *dbeta, const void *dout, const void *relu_out,
                                    const void *in, const float *gamma, const float *save_mean,
                                    const float *save_inv_std, int n, int c, int hw) {
    /* dgamma and dbeta: the batch backward's sums, without its input gradient */
    cuda_batchnorm_backward(NULL, dgamma, dbeta, dout, relu_out, in, gamma, save_mean, save_inv_std, n, c, hw, 0);
    if (!din) return;
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(bn_frozen_input_grad_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(
        (T *)din, (const T *)dout, (const T *)relu_out, gamma, save_inv_std, c, hw, total));
    CUDA_LAUNCHED();
}
