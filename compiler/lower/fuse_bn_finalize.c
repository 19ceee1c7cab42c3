/* Which batch norms finalize their statistics through cuDNN's BN finalize graph (lower.h
 * choose_bn_finalize): the rule, in one place. Where a conv's epilogue wrote a training bn's
 * per-channel sum and sum of squares (fuse_conv_bn.c, bn_sums_in_conv), the bn's own pass
 * only finalizes them: mean, inverse std, the running statistics and, where the next conv
 * applies the bn in its prologue (bn_in_conv), that prologue's scale and bias. MLPerf's
 * ResNet-50 runs that finalize as cuDNN's BN finalize operation
 * (CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, the cudnn-frontend's
 * bn_finalize; cuDNN 8.4 or later): from SUM, SQSUM, the bn's scale (gamma) and bias (beta),
 * the previous running mean and variance, epsilon, the exponential average factor (our
 * momentum) and the accumulation count m (n·h·w), it writes the equivalent scale
 * gamma·inv_std and bias beta - mean·gamma·inv_std, the saved mean and inverse std and the next
 * running mean and variance, next = (1 - factor)·previous + factor·batch value, in FP32 math.
 * The running variance's batch value is the unbiased one (m/(m-1) times the biased), as the
 * spec's is and as cuDNN's batch norm has always kept it; the runtime checks that on the
 * library at start-up on a known input and falls back, naming why, where cuDNN's convention
 * differs (runtime/cuda/ops/bn_finalize_graph.cu). Taken here:
 *  - FP16 only: the ConvBNfprop family whose sums it finalizes, and whose prologue reads its
 *    FP16 equivalent scale and bias; BF16 keeps our kernel (bn_finalize_sums_kernel);
 *  - more than one value a channel (m > 1): with one, the spec's running variance takes the
 *    biased variance (m/(m-1) is undefined), which the graph cannot be asked for. */
#include "lower.h"

/* Why bn op (whose sums a conv wrote) keeps our finalize kernel, or NULL. */
static const char *refusal(const schedule *s, const ir_op *op) {
    if (s->opt.no_bn_finalize_graph) return "--no-bn-finalize-graph";
    if (s->precision != CUDA_FP16)
        return "not FP16: the graph is built for the FP16 engines (whose prologue reads its FP16 scale and bias)";
    if ((long)s->net.batch * op->h * op->w <= 1)
        return "one value a channel: the spec's running variance is the biased one there, not the graph's m/(m-1)";
    return NULL;
}

void choose_bn_finalize(schedule *s) {
    ir_net *net = &s->net;
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        op->bn_fin_graph = 0, op->bn_fin_why = NULL;
        if (op->kind != IR_BN || !op->bn_sums_in_conv || net->forward_only) continue;
        op->bn_fin_why = refusal(s, op);
        op->bn_fin_graph = op->bn_fin_why == NULL;
    }
}
