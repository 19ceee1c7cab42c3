/* Global average pooling [N,C,H,W] -> [N,C]: one warp per plane, and its backward broadcast. */
#include "../cuda_common.cuh"

__global__ void gap_forward_kernel(float *out, const float *in, long planes, int hw) {
    long warps = (long)gridDim.x * blockDim.x / 32;
    int lane = threadIdx.x & 31;
    /* Whole warps take whole planes, so the shuffle below always has all 32 lanes. */
    for (long pl = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32; pl < planes; pl += warps) {
        const float *x = in + pl * hw;
        float acc = 0.0f;
        for (int i = lane; i < hw; i += 32) acc += x[i];
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (lane == 0) out[pl] = acc / hw;
    }
}

__global__ void gap_backward_kernel(float *din, const float *dout, long total, int hw) {
    GRID_STRIDE(i, total) din[i] = dout[i / hw] / hw;
}

void cuda_global_avgpool_forward(float *out, const float *in, int n, int c, int hw) {
    long planes = (long)n * c;
    gap_forward_kernel<<<rt_blocks(planes * 32), RT_THREADS, 0, rt_stream()>>>(out, in, planes, hw);
    CUDA_LAUNCHED();
}

void cuda_global_avgpool_backward(float *din, const float *dout, int n, int c, int hw) {
    long total = (long)n * c * hw;
    gap_backward_kernel<<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>(din, dout, total, hw);
    CUDA_LAUNCHED();
}
