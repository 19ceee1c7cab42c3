/* Channel concatenation of NCHW tensors and its backward split: one strided 2-D copy per
 * input (a sample's slice of input i is contiguous, N of them at a fixed pitch). */
#include "../cuda_common.cuh"

void cuda_concat_forward(float *out, const float *const *ins, const int *channels, int k, int n, int hw) {
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    long at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = (size_t)channels[i] * hw * sizeof(float);
        CUDA_CHECK(cudaMemcpy2DAsync(out + at * hw, (size_t)total * hw * sizeof(float), ins[i], len, len, (size_t)n,
                                     cudaMemcpyDeviceToDevice, rt_stream()));
        at += channels[i];
    }
}

void cuda_concat_backward(float *const *dins, const float *dout, const int *channels, int k, int n, int hw) {
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    long at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = (size_t)channels[i] * hw * sizeof(float);
        if (dins[i])
            CUDA_CHECK(cudaMemcpy2DAsync(dins[i], len, dout + at * hw, (size_t)total * hw * sizeof(float), len,
                                         (size_t)n, cudaMemcpyDeviceToDevice, rt_stream()));
        at += channels[i];
    }
}
