/* Achieved GFLOP/s of the CPU ops by class (conv forward, backward-data, backward-weights, and
 * the linear layers' GEMMs) for `--benchmark`: the ops add each call's useful work (direct
 * convolution / plain GEMM multiply-adds x 2, whatever algorithm ran, so Winograd can beat the
 * GEMM rate) and wall time while counting is on. Off, an op pays one relaxed load per call. */
#include <stdio.h>

#include "rt_core.h"
#include "rt_ops.h"

static int counting;
static double flops[RT_OP_CLASSES], seconds[RT_OP_CLASSES];
static long calls[RT_OP_CLASSES];

static const char *const class_names[RT_OP_CLASSES] = {
    "conv forward", "conv backward-data", "conv backward-weights", "linear GEMMs (fwd+bwd)",
};

void rt_op_stats_start(void) {
    for (int c = 0; c < RT_OP_CLASSES; c++) flops[c] = seconds[c] = 0, calls[c] = 0;
    __atomic_store_n(&counting, 1, __ATOMIC_RELAXED);
}

void rt_op_stats_stop(void) { __atomic_store_n(&counting, 0, __ATOMIC_RELAXED); }

double rt_op_stats_clock(void) {
    return __atomic_load_n(&counting, __ATOMIC_RELAXED) ? rt_time_s() : 0;
}

/* Called by the ops outside their parallel regions, so the sums need no lock. */
void rt_op_stats_add(rt_op_class c, double useful_flops, double secs) {
    if (!__atomic_load_n(&counting, __ATOMIC_RELAXED)) return;
    flops[c] += useful_flops;
    seconds[c] += secs;
    calls[c]++;
}

void rt_op_stats_conv_backward(double useful_flops_each, int has_din, double t0, double data_s) {
    double wall = rt_time_s() - t0;
    double data = has_din ? (data_s < wall ? data_s : wall) : 0;
    if (has_din) rt_op_stats_add(RT_OP_CONV_BWD_DATA, useful_flops_each, data);
    rt_op_stats_add(RT_OP_CONV_BWD_WEIGHTS, useful_flops_each, wall - data);
}

void rt_op_stats_print(FILE *out, double step_seconds) {
    double total_s = 0;
    for (int c = 0; c < RT_OP_CLASSES; c++) total_s += seconds[c];
    fprintf(out, "op classes (useful FLOPs = 2 x direct multiply-adds, per wall second in the op):\n");
    for (int c = 0; c < RT_OP_CLASSES; c++) {
        if (!calls[c]) continue;
        fprintf(out, "  %-24s %8.1f GFLOP/s  %6.1f GFLOP in %7.3f s  (%4.1f%% of the timed steps)\n",
                class_names[c], flops[c] / seconds[c] / 1e9, flops[c] / 1e9, seconds[c],
                step_seconds > 0 ? 100 * seconds[c] / step_seconds : 0);
    }
    if (total_s > 0)
        fprintf(out, "  %-24s %8.1f GFLOP/s  (%4.1f%% of the timed steps in these ops)\n", "all of them",
                (flops[0] + flops[1] + flops[2] + flops[3]) / total_s / 1e9,
                step_seconds > 0 ? 100 * total_s / step_seconds : 0);
}
