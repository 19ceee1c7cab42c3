/* Fully connected layer in PyTorch layout: out[N,O] = in[N,I] . W[O,I]^T + b. */
#include "rt_core.h"
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"

/* Which library computes each product and how it is split over the threads, from
 * measurements on this machine's Zen 4 (one thread on each 2-thread block, best of 25-300
 * calls, OpenBLAS 0.3.21 vs oneDNN 2.6 sgemm):
 *   dW = dout^T.in and din = dout.W: oneDNN 8-17% faster on the MLP's and LeNet's fc1
 *     (128x392x64: 59 vs 66 us; 512x1568x128: 1.82 vs 2.06 ms; 128x1568x512: 1.80 vs 2.11 ms),
 *     no faster on the small fc2 products (10x128x64: 1.9 vs 1.5 us), which stay on OpenBLAS;
 *   out = in.W^T: oneDNN on half the rows beats OpenBLAS on half the columns for the MLP's fc1
 *     (32x128x784: 65 vs 71 us), not for LeNet's (64x512x3136: 2.89 ms; OpenBLAS on
 *     128x256x3136: 2.22 ms); the weights' size separates the two cases measured.
 * Under BF16 all products run on oneDNN's BF16 GEMM with rt_gemm's own split. */
#define DNNL_MIN_MACS (1L << 20)
#define FORWARD_DNNL_MAX_WEIGHTS (1L << 18)

static rt_gemm_choice gradient_choice(long macs) {
    return (rt_gemm_choice){ .fp32_on_dnnl = macs >= DNNL_MIN_MACS, .split = RT_GEMM_SPLIT_LONGER };
}

static rt_gemm_choice forward_choice(long macs, long weights) {
    int dnnl = macs >= DNNL_MIN_MACS && weights <= FORWARD_DNNL_MAX_WEIGHTS &&
               rt_gemm_compute() == RT_COMPUTE_FP32;
    return (rt_gemm_choice){ .fp32_on_dnnl = dnnl, .split = dnnl ? RT_GEMM_SPLIT_ROWS : RT_GEMM_SPLIT_LONGER };
}

void RT_FN(linear_forward)(real_t *out /*N,O*/, const real_t *in /*N,I*/,
                           const real_t *weight /*O,I*/, const real_t *bias /*O or NULL*/,
                           int n, int in_features, int out_features) {
    double t0 = rt_op_stats_clock();
    long macs = (long)n * in_features * out_features;
    RT_FN(rt_gemm_chosen)(forward_choice(macs, (long)in_features * out_features), 0, 1, n, out_features,
                          in_features, 1, in, in_features, weight, in_features, 0, out, out_features);
    if (bias)
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out_features; o++) out[(long)i * out_features + o] += bias[o];
    if (t0) rt_op_stats_add(RT_OP_LINEAR, 2.0 * n * in_features * out_features, rt_time_s() - t0);
}

void RT_FN(linear_backward)(real_t *din /*N,I or NULL*/, real_t *dweight /*O,I*/,
                            real_t *dbias /*O or NULL*/, const real_t *dout /*N,O*/,
                            const real_t *in, const real_t *weight,
                            int n, int in_features, int out_features) {
    double t0 = rt_op_stats_clock();
    rt_gemm_choice how = gradient_choice((long)n * in_features * out_features);
    /* dW = dout^T . in */
    RT_FN(rt_gemm_chosen)(how, 1, 0, out_features, in_features, n, 1, dout, out_features, in, in_features,
                          0, dweight, in_features);
    if (din)   /* din = dout . W */
        RT_FN(rt_gemm_chosen)(how, 0, 0, n, in_features, out_features, 1, dout, out_features, weight,
                              in_features, 0, din, in_features);
    if (dbias) {
        for (int o = 0; o < out_features; o++) dbias[o] = 0;
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out_features; o++) dbias[o] += dout[(long)i * out_features + o];
    }
    if (t0) rt_op_stats_add(RT_OP_LINEAR, (din ? 4.0 : 2.0) * n * in_features * out_features, rt_time_s() - t0);
}
