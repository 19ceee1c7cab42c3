/* The backward of a conv's or linear's bias + activation (bias_act.cu) and that bias's
 * gradient in one pass (fuse_bias_act_grad.c): din = dout * act'(in + bias[c]) written once,
 * and summed per channel on the way, where bias_act_backward_kernel wrote din and bias.cu's
 * kernel read it back for the sums. Each value is rounded to the storage type before it is
 * summed, and the sums walk bias.cu's order (rows of channels: nhwc_for_each's tiles and
 * partials, then bn_finish_grads; NCHW planes: one block per channel, bn_for_each), so the
 * gradient equals the two-pass one bit for bit. TRAINC_CUDA_BIAS=old, or planes too long for
 * 32-bit offsets: the two passes. */
#include "act_fns.cuh"
#include "act_vec.cuh"
#include "batchnorm_sums.cuh"
#include "channel_planes.cuh"
#include "channel_tiles.cuh"

#define BGRAD_VEC 4   /* a thread's neighbouring positions when they divide hw (as bias.cu) */

/* act'(x): GELU for fn < 0 (RT_BIAS_ACT_GELU), else the family member rt_activation fn. */
__device__ static inline float bgrad_slope(float x, int fn) { return fn < 0 ? gelu_slope(x) : act_slope(x, fn); }

/* Channels-last rows (hw = 1): this block's rows of 32 neighbouring channels; din written and
 * its rounded values summed into part's first slot (bias_rows_partial_kernel's order). */
template <typename T>
__global__ void __launch_bounds__(TILE_C * ROW_LANES)
bias_act_bgrad_rows_kernel(double *part, T *din, const T *dout, const T *in, const float *bias, long rows, long per,
                           int c, int fn) {
    int ch = blockIdx.x * TILE_C + threadIdx.x;
    float b = ch < c ? bias[ch] : 0.0f;
    double acc = 0;
    nhwc_for_each(rows, per, c, [&](long i) {
        T d = rt_st<T>(rt_ld(dout[i]) * bgrad_slope(rt_ld(in[i]) + b, fn));
        din[i] = d;
        acc += rt_ld(d);
    });
    nhwc_tile_sums(acc, 0.0, part, c);
}

/* NCHW planes: one block per channel (bias_backward_planes_kernel's order), V positions a
 * thread as one access. */
template <typename T, int V>
__global__ void __launch_bounds__(RT_CHANNEL_THREADS)
bias_act_bgrad_planes_kernel(float *dbias, T *__restrict__ din, const T *__restrict__ dout, const T *__restrict__ in,
                             const float *bias, int n, int c, int hw, int fn) {
    int ch = blockIdx.x;
    float b = bias[ch];
    double acc = 0;
    bn_for_each<V>(0, n, c, ch, hw, [&](long i) {
        act_vec<T, V> g = vec_load<T, V>(dout + i), x = vec_load<T, V>(in + i);
#pragma unroll
        for (int j = 0; j < V; j++) g.e[j] = rt_st<T>(rt_ld(g.e[j]) * bgrad_slope(rt_ld(x.e[j]) + b, fn));
        vec_store<T, V>(din + i, g);
#pragma unroll
        for (int j = 0; j < V; j++) acc += rt_ld(g.e[j]);
    });
    acc = block_sum(acc);
    if (threadIdx.x == 0) dbias[ch] = (float)acc;
}

static int bgrad_old_kernels(void) {
    static int cached = -1;
    return rt_cuda_env_old(RT_ENV_TRAINC_CUDA_BIAS, &cached);
}

void cuda_bias_act_backward_bgrad(void *din, float *dbias, const void *dout, const void *in, const float *bias, int n,
                                  int c, long hw, int fn) {
    if (hw == 1) {
        nhwc_split sp = nhwc_split_of(n);
        double *part = bn_partials(sp.splits, c);
        RT_ACT_DISPATCH(bias_act_bgrad_rows_kernel<T><<<nhwc_grid(c, sp), dim3(TILE_C, ROW_LANES), 0, rt_stream()>>>(
            part, (T *)din, (const T *)dout, (const T *)in, bias, n, sp.per, c, fn));
        CUDA_LAUNCHED();
        long m = n;
        bn_finish_grads(NULL, dbias, part, sp.splits, c, &m, 0);
        return;
    }
    if (bgrad_old_kernels() || hw > INT32_MAX) {
        cuda_bias_act_backward(din, dout, in, bias, n, c, hw, fn);
        cuda_bias_backward(dbias, NULL, din, NULL, n, c, hw);
        return;
    }
    /* bias.cu's vector width for the sums over din (it asks din alone; the arena aligns all
     * three), so they add in its order */
    int vec = hw % BGRAD_VEC == 0 && vec_aligned(din, dout, in);
    RT_ACT_DISPATCH(ACT_VEC_DISPATCH(vec, BGRAD_VEC, bias_act_bgrad_planes_kernel<T, V><<<c, RT_CHANNEL_THREADS, 0,
                                                                                   rt_stream()>>>(
                                                 dbias, (T *)din, (const T *)dout, (const T *)in, bias, n, c,
                                                 (int)hw, fn)));
    CUDA_LAUNCHED();
}
