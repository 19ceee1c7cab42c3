/* Broken on purpose: each case is a mistake the CUDA emulator must stop or expose
 * (tests/emu/emu_selftest.sh runs them and checks the message). `ok` is a correct kernel. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__global__ void shift_copy(float *dst, const float *src, int n, int off) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i + off];   /* off = 1: reads one past the end */
}

__global__ void block_total(float *out, const float *in, int skip_barrier) {
    __shared__ float part[256];
    part[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    if (skip_barrier == 0 || (skip_barrier == 1 && threadIdx.x < 16))
        __syncthreads();   /* 1: reached by part of the block; 2: missing (thread 0 reads too early) */
    if (threadIdx.x == 0) {
        float t = 0;
        for (int j = 0; j < (int)blockDim.x; j++) t += part[j];
        out[blockIdx.x] = t;
    }
}

__global__ void warp_total(float *out, const float *in, int half) {
    float v = threadIdx.x == 0 ? in[0] : 0.0f;   /* the sum is lane 0's value */
    if (!half || threadIdx.x < 16)   /* half: lanes 16-31 skip the shuffle their mask names */
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) *out = v;
}

__global__ void fill(float *p, int n, float v) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) p[i] = v;
}

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s -> %s\n", #x, cudaGetErrorName(e_)); return 3; } } while (0)

int main(int argc, char **argv) {
    const char *c = argc > 1 ? argv[1] : "ok";
    const int n = 256;
    float *a, *b, h[256];
    CHECK(cudaMalloc((void **)&a, n * sizeof(float)));
    CHECK(cudaMalloc((void **)&b, n * sizeof(float)));
    for (int i = 0; i < n; i++) h[i] = 1.0f;
    CHECK(cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice));
    cudaStream_t s1, s2;
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    if (!strcmp(c, "ok") || !strcmp(c, "divergent") || !strcmp(c, "nosync") || !strcmp(c, "oob")) {
        shift_copy<<<1, 256, 0, s1>>>(b, a, n, !strcmp(c, "oob"));
        block_total<<<1, 256, 0, s1>>>(a, b, !strcmp(c, "divergent") ? 1 : !strcmp(c, "nosync") ? 2 : 0);
        warp_total<<<1, 32, 0, s1>>>(b, a, 0);
        CHECK(cudaMemcpyAsync(h, b, sizeof(float), cudaMemcpyDeviceToHost, s1));
        printf("total %g (expected 256)\n", h[0]);
        return h[0] == 256.0f ? 0 : 1;
    }
    if (!strcmp(c, "halfwarp")) {
        warp_total<<<1, 32, 0, s1>>>(b, a, 1);
        CHECK(cudaStreamSynchronize(s1));
        return 0;
    }
    if (!strcmp(c, "capture")) {   /* the driver refuses an allocation during a capture */
        CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
        fill<<<1, 64, 0, s1>>>(a, n, 2.0f);
        float *x;
        cudaError_t e = cudaMalloc((void **)&x, 64);
        cudaGraph_t g;
        cudaError_t e2 = cudaStreamEndCapture(s1, &g);
        printf("cudaMalloc in capture: %s; cudaStreamEndCapture: %s\n", cudaGetErrorName(e), cudaGetErrorName(e2));
        return e == cudaErrorStreamCaptureUnsupported && e2 == cudaErrorStreamCaptureInvalidated ? 0 : 1;
    }
    if (!strcmp(c, "frozen")) {   /* a replay uses the arguments of the capture */
        cudaGraph_t g;
        cudaGraphExec_t ge;
        float v = 3.0f;
        CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
        fill<<<1, 64, 0, s1>>>(a, n, v);
        CHECK(cudaStreamEndCapture(s1, &g));
        CHECK(cudaGraphInstantiate(&ge, g, 0));
        v = 5.0f;
        CHECK(cudaGraphLaunch(ge, s1));
        CHECK(cudaMemcpyAsync(h, a, sizeof(float), cudaMemcpyDeviceToHost, s1));
        printf("replayed fill wrote %g (captured 3)\n", h[0]);
        return h[0] == 3.0f ? 0 : 1;
    }
    if (!strcmp(c, "unordered")) {   /* s2 reads what s1 writes, without an event between */
        fill<<<1, 64, 0, s1>>>(a, n, 7.0f);
        CHECK(cudaMemcpyAsync(b, a, n * sizeof(float), cudaMemcpyDeviceToDevice, s2));
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h, b, sizeof(float), cudaMemcpyDeviceToHost));
        printf("s2 copied %g (7 only if s1 ran first)\n", h[0]);
        return h[0] == 7.0f ? 0 : 1;
    }
    printf("unknown case %s\n", c);
    return 2;
}
