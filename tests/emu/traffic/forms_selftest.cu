/* The traffic build's self-test (tests/emu/traffic/forms_selftest.sh): one small kernel per
 * form of global-memory access the CUDA code writes (scalar, __half and __nv_bfloat16 through
 * their conversions and casts, half2 / bfloat162 / float4 / uint4 vectors through
 * reinterpret_cast, a helper's pointer arithmetic and reference, a value passed to a function
 * that is not inlined, in-place updates, an atomic, a shared-memory staging, memcpy, structs
 * of odd sizes), each printing the bytes it must read and write ("expect NAME READ WRITE"); the
 * script compares them with the emulator's count (EMU_TRAFFIC) kernel by kernel. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#define N 256
#define T 64

__global__ void f32_copy(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}
__global__ void half2float_load(const __half *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __half2float(in[i]);
}
__global__ void half_cast_load(const __half *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = (float)in[i];
}
__global__ void float2half_store(const float *in, __half *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __float2half(in[i]);
}
__global__ void bf16_roundtrip(const __nv_bfloat16 *in, __nv_bfloat16 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __float2bfloat16(__bfloat162float(in[i]) * 2.0f);
}
__global__ void half_copy(const __half *in, __half *out) {   /* an aggregate copied as it is */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}
__global__ void half2_vec(const __half2 *in, __half2 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 f = __half22float2(in[i]);
    out[i] = __floats2half2_rn(f.x + 1.0f, f.y);
}
__global__ void bf162_vec(const __nv_bfloat162 *in, float2 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __bfloat1622float2(in[i]);
}
__global__ void uint4_cast(const __nv_bfloat16 *in, __nv_bfloat16 *out) {   /* 8 elements a thread */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 v = *reinterpret_cast<const uint4 *>(in + 8 * i);
    reinterpret_cast<uint4 *>(out)[i] = v;
}
__global__ void float4_cast(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = reinterpret_cast<const float4 *>(in)[i];
    v.x += v.w;
    *reinterpret_cast<float4 *>(out + 4 * i) = v;
}
__device__ __forceinline__ const __half &at(const __half *base, long row, int col) { return base[row * 4 + col]; }
__device__ __forceinline__ __half *slot(__half *base, long row, int col) { return base + row * 4 + col; }
__global__ void helper_ptr(const __half *in, __half *out) {   /* rows of 4, through helpers */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    *slot(out, i / 4, i % 4) = __hadd(at(in, i / 4, i % 4), __float2half(1.0f));
}
__device__ __attribute__((noinline)) float by_value(__half h, __nv_bfloat16 b) { return __half2float(h) + __bfloat162float(b); }
__device__ __attribute__((noinline)) void store_to(__half *p, float v) { *p = __float2half(v); }
__global__ void noinline_args(const __half *a, const __nv_bfloat16 *b, __half *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    store_to(&out[i], by_value(a[i], b[i]));
}
__global__ void in_place(float *x, __half *h) {   /* read-modify-write: both count */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] += 1.0f;
    h[i] = __hmul(h[i], __float2half(2.0f));
}
__global__ void atomic_count(unsigned *counter, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned old = atomicAdd(counter, 1u);
    out[i] = (float)old;
}
__global__ void shared_stage(const __half *in, __half *out) {   /* global -> shared -> global, reversed */
    __shared__ __half tile[T];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = tile[T - 1 - threadIdx.x];
}
__global__ void memcpy_load(const float *in, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float w;
    memcpy(&w, &in[i], sizeof w);
    out[i] = w;
}
struct rgb {
    float r, g, b;
};
struct six {
    __half a, b, c;
};
struct wide {
    float v[8];
};
__global__ void odd_structs(const rgb *in3, rgb *out3, const six *in6, six *out6) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out3[i] = in3[i];
    out6[i] = in6[i];
}
__global__ void wide_struct(const wide *in, wide *out) {   /* 32 bytes by value */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    wide w = in[i];
    w.v[0] += w.v[7];
    out[i] = w;
}
__global__ void strided_half(const __half *in, float *out) {   /* every other element: half the bytes */
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = __half2float(in[2 * i]);
}

static void *dev(size_t bytes) {
    void *p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\n"); exit(1); }
    cudaMemset(p, 0, bytes);
    return p;
}
static void expect(const char *name, long r, long w) { printf("expect %s %ld %ld\n", name, r, w); }

int main() {
    float *f0 = (float *)dev(4 * N * 8), *f1 = (float *)dev(4 * N * 8);
    __half *h0 = (__half *)dev(2 * N * 8), *h1 = (__half *)dev(2 * N * 8);
    __nv_bfloat16 *b0 = (__nv_bfloat16 *)dev(2 * N * 8), *b1 = (__nv_bfloat16 *)dev(2 * N * 8);
    unsigned *cnt = (unsigned *)dev(4);
    dim3 g(N / T), b(T);
    f32_copy<<<g, b>>>(f0, f1);                                  expect("f32_copy", 4 * N, 4 * N);
    half2float_load<<<g, b>>>(h0, f1);                           expect("half2float_load", 2 * N, 4 * N);
    half_cast_load<<<g, b>>>(h0, f1);                            expect("half_cast_load", 2 * N, 4 * N);
    float2half_store<<<g, b>>>(f0, h1);                          expect("float2half_store", 4 * N, 2 * N);
    bf16_roundtrip<<<g, b>>>(b0, b1);                            expect("bf16_roundtrip", 2 * N, 2 * N);
    half_copy<<<g, b>>>(h0, h1);                                 expect("half_copy", 2 * N, 2 * N);
    half2_vec<<<g, b>>>((const __half2 *)h0, (__half2 *)h1);     expect("half2_vec", 4 * N, 4 * N);
    bf162_vec<<<g, b>>>((const __nv_bfloat162 *)b0, (float2 *)f1); expect("bf162_vec", 4 * N, 8 * N);
    uint4_cast<<<g, b>>>(b0, b1);                                expect("uint4_cast", 16 * N, 16 * N);
    float4_cast<<<g, b>>>(f0, f1);                               expect("float4_cast", 16 * N, 16 * N);
    helper_ptr<<<g, b>>>(h0, h1);                                expect("helper_ptr", 2 * N, 2 * N);
    noinline_args<<<g, b>>>(h0, b0, h1);                         expect("noinline_args", 4 * N, 2 * N);
    in_place<<<g, b>>>(f0, h0);                                  expect("in_place", 6 * N, 6 * N);
    atomic_count<<<g, b>>>(cnt, f1);                             expect("atomic_count", 4, 4 + 4 * N);
    shared_stage<<<g, b>>>(h0, h1);                              expect("shared_stage", 2 * N, 2 * N);
    memcpy_load<<<g, b>>>(f0, f1);                               expect("memcpy_load", 4 * N, 4 * N);
    odd_structs<<<g, b>>>((const rgb *)f0, (rgb *)f1, (const six *)h0, (six *)h1);
    expect("odd_structs", 12 * N + 6 * N, 12 * N + 6 * N);
    wide_struct<<<g, b>>>((const wide *)f0, (wide *)f1);         expect("wide_struct", 32 * N, 32 * N);
    strided_half<<<g, b>>>(h0, f1);                              expect("strided_half", 2 * N, 4 * N);
    if (cudaDeviceSynchronize() != cudaSuccess) { fprintf(stderr, "the kernels failed\n"); return 1; }
    return 0;
}
