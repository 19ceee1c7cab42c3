/* Channel concatenation of NCHW tensors and its backward split: one strided 2-D copy per
 * input (a sample's slice of input i is contiguous, N of them at a fixed pitch). */
#include "../cuda_common.cuh"

void cuda_concat_forward(void *out, const void *const *ins, const int *channels, int k, int n, int hw) {
    size_t e = rt_cuda_act_bytes();
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    long at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = (size_t)channels[i] * hw * e;
        CUDA_CHECK(cudaMemcpy2DAsync((char *)out + at * hw * e, (size_t)total * hw * e, ins[i], len, len, (size_t)n,
                                     cudaMemcpyDeviceToDevice, rt_stream()));
        at += channels[i];
    }
}

void cuda_concat_backward(void *const *dins, const void *dout, const int *channels, int k, int n, int hw) {
    size_t e = rt_cuda_act_bytes();
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    long at = 0;
    for (int i = 0; i < k; i++) {
        size_t len = (size_t)channels[i] * hw * e;
        if (dins[i])
            CUDA_CHECK(cudaMemcpy2DAsync(dins[i], len, (const char *)dout + at * hw * e, (size_t)total * hw * e, len,
                                         (size_t)n, cudaMemcpyDeviceToDevice, rt_stream()));
        at += channels[i];
    }
}
