/* Per-channel bias of conv and linear layers (linear: hw = 1): the forward add, and the
 * backward channel sums, optionally fused with the ReLU mask that follows the layer. Rows of
 * channels (hw = 1: linear layers, channels-last activations) are summed in channel tiles,
 * so that a warp reads neighbouring channels (channel_tiles.cuh). */
#include "act_vec.cuh"
#include "batchnorm_sums.cuh"
#include "channel_planes.cuh"
#include "channel_tiles.cuh"

#define BIAS_VEC 4   /* a thread's neighbouring positions when they divide hw */

static int bias_old_kernels(void) {
    static int cached = -1;
    return rt_cuda_env_old(RT_ENV_TRAINC_CUDA_BIAS, &cached);
}

template <typename T>
__global__ void __launch_bounds__(RT_THREADS)
bias_forward_kernel(T *out, const T *in, const float *bias, int c, long hw, long total) {
    GRID_STRIDE(i, total) out[i] = rt_st<T>(rt_ld(in[i]) + bias[(i / hw) % c]);
}

/* One block per channel; the sum's order depends only on the shape. The old kernel
 * (TRAINC_CUDA_BIAS=old): two 64-bit divisions per element. */
template <typename T>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
bias_backward_kernel(float *dbias, T *dmasked, const T *dout, const T *relu_out, int n, int c, long hw) {
    int ch = blockIdx.x;
    long m = (long)n * hw;
    double acc = 0;
    for (long j = threadIdx.x; j < m; j += blockDim.x) {
        long i = (j / hw * c + ch) * hw + j % hw;
        float g = rt_ld(dout[i]);
        if (relu_out) {
            g = rt_ld(relu_out[i]) > 0.0f ? g : 0.0f;
            dmasked[i] = rt_st<T>(g);
        }
        acc += g;
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[ch] = (float)acc;
}

/* One block per channel walking its N planes of hw values (channel_planes.cuh), V positions a
 * thread as one access (16 bytes FP32, 8 bytes BF16/FP16), without a division per element;
 * the sum's order depends only on the shape. No scratch: 96 channels (ConvNeXt-T's first
 * stage) still give 96 blocks of 512 threads streaming their planes. */
template <typename T, int V>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
bias_backward_planes_kernel(float *dbias, T *__restrict__ dmasked, const T *__restrict__ dout,
                            const T *__restrict__ relu_out, int n, int c, int hw) {
    int ch = blockIdx.x;
    double acc = 0;
    bn_for_each<V>(0, n, c, ch, hw, [&](long i) {
        act_vec<T, V> g = vec_load<T, V>(dout + i);
        if (relu_out) {
            act_vec<T, V> r = vec_load<T, V>(relu_out + i);
#pragma unroll
            for (int j = 0; j < V; j++)
                if (!(rt_ld(r.e[j]) > 0.0f)) g.e[j] = rt_st<T>(0.0f);
            vec_store<T, V>(dmasked + i, g);
        }
#pragma unroll
        for (int j = 0; j < V; j++) acc += rt_ld(g.e[j]);
    });
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[ch] = (float)acc;
}

/* hw = 1: this block's rows of 32 neighbouring channels, summed into part's first slot. */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
bias_rows_partial_kernel(double *part, T *dmasked, const T *dout, const T *relu_out, long rows, long per, int c) {
    double acc = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        float g = rt_ld(dout[i]);
        if (relu_out) {
            g = rt_ld(relu_out[i]) > 0.0f ? g : 0.0f;
            dmasked[i] = rt_st<T>(g);
        }
        acc += g;
    });
    nhwc_tile_sums(acc, 0.0, part, c);
}

void cuda_bias_forward(void *out, const void *in, const float *bias, int n, int c, long hw) {
    long total = (long)n * c * hw;
    RT_ACT_DISPATCH(bias_forward_kernel<T><<<rt_blocks(total), RT_THREADS, 0, rt_stream()>>>((T *)out, (const T *)in,
                                                                                            bias, c, hw, total));
    CUDA_LAUNCHED();
}

void cuda_bias_backward(float *dbias, void *dmasked, const void *dout, const void *relu_out, int n, int c, long hw) {
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(bias_rows_partial_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (T *)dmasked, (const T *)dout, (const T *)relu_out, n, sp.per, c));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(NULL, dbias, part, sp.splits, c, &m, 0);
        return;
    }
    if (bias_old_kernels() || hw > INT32_MAX) {
        RT_ACT_DISPATCH(bias_backward_kernel<T><<<c, RT_CHANNEL_THREADS, 0, rt_stream()>>>(
            dbias, (T *)dmasked, (const T *)dout, (const T *)relu_out, n, c, hw));
        CUDA_LAUNCHED();
        return;
    }
    int vec = hw % BIAS_VEC == 0 && vec_aligned(dmasked, dout, relu_out);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, BIAS_VEC, bias_backward_planes_kernel<T, V><<<c, RT_CHANNEL_THREADS, 0,
                                                                                 rt_stream()>>>(
                                                dbias, (T *)dmasked, (const T *)dout, (const T *)relu_out, n, c,
                                                (int)hw)));
    CUDA_LAUNCHED();
}
