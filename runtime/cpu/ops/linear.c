/* Fully connected layer in PyTorch layout: out[N,O] = in[N,I] . W[O,I]^T + b. */
#include "rt_core.h"
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"

/* The gradient products of the large layers run on oneDNN's sgemm, which was faster than
 * OpenBLAS on the MLP's and LeNet's fc1 products and no faster on the small fc2 ones; the
 * forward stays on OpenBLAS, which was faster on its halves (bench/RESULTS.md, "GEMM library
 * per linear product"). dW is split by rows, so each thread writes the rows of the gradient
 * that its half of the optimizer step (a static split of the flat tensor) reads next, as the
 * forward's split by output columns reads that half of the weights: an SGD step that reads
 * what the other thread just wrote runs several times slower. Under BF16, dW keeps rt_gemm's
 * split (by columns here), which converts less of the input to BF16 per thread. */
#define DNNL_MIN_MACS (1L << 20)

static rt_gemm_choice gradient_choice(long macs, rt_gemm_split split) {
    return (rt_gemm_choice){ .fp32_on_dnnl = macs >= DNNL_MIN_MACS, .split = split };
}

static rt_gemm_split dweight_split(void) {
    return rt_gemm_compute() == RT_COMPUTE_BF16 ? RT_GEMM_SPLIT_LONGER : RT_GEMM_SPLIT_ROWS;
}

void RT_FN(linear_forward)(real_t *out /*N,O*/, const real_t *in /*N,I*/,
                           const real_t *weight /*O,I*/, const real_t *bias /*O or NULL*/,
                           int n, int in_features, int out_features) {
    double t0 = rt_op_stats_clock();
    RT_FN(rt_gemm)(0, 1, n, out_features, in_features, 1, in, in_features, weight, in_features,
                   0, out, out_features);
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
    long macs = (long)n * in_features * out_features;
    /* dW = dout^T . in */
    RT_FN(rt_gemm_chosen)(gradient_choice(macs, dweight_split()), 1, 0, out_features, in_features, n,
                          1, dout, out_features, in, in_features, 0, dweight, in_features);
    if (din)   /* din = dout . W */
        RT_FN(rt_gemm_chosen)(gradient_choice(macs, RT_GEMM_SPLIT_LONGER), 0, 0, n, in_features,
                              out_features, 1, dout, out_features, weight, in_features, 0, din, in_features);
    if (dbias) {
        for (int o = 0; o < out_features; o++) dbias[o] = 0;
        for (int i = 0; i < n; i++)
            for (int o = 0; o < out_features; o++) dbias[o] += dout[(long)i * out_features + o];
    }
    if (t0) rt_op_stats_add(RT_OP_LINEAR, (din ? 4.0 : 2.0) * n * in_features * out_features, rt_time_s() - t0);
}
