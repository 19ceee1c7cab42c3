/* `trainc show --gpu-cost [--device h100|h200|a100] [--layout nchw|nhwc] [--old-kernels] SPEC`:
 * the CUDA trainer's training step as the lowered schedule launches it (gpu_cost.c), one line
 * per kernel or library call with its bytes, FLOPs and modeled time, then the step's totals
 * and one summary line (`make bench-gpu-model` prints those). Predicted, not measured: the
 * bytes are what the emulator counts (tests/emu/traffic_emu_test.sh checks them kernel by
 * kernel); the times are bytes at the device's bandwidth and FLOPs at its peak, library calls
 * at the rates of compiler/lower/gpu_rates.def, each kernel plus a launch's fixed time. */
#include "show.h"

#include <string.h>

#include "gpu_cost.h"
#include "lower.h"

/* Each conv that feeds a training batch norm: the fused engine it runs (fuse_conv_bn.c), or
 * why it runs unfused. */
static void show_conv_engines(FILE *out, const ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->conv_bn == IR_CONV_BN_SBR)
            fprintf(out, "# conv \"%s\": %s (bn \"%s\" applied in its prologue, the next bn's sums in its epilogue)\n",
                    op->name, ir_conv_bn_name(op->conv_bn), net->ops[op->in[0] - 1].name);
        else if (op->conv_bn)
            fprintf(out, "# conv \"%s\": %s (the next bn's sums in its epilogue)\n", op->name, ir_conv_bn_name(op->conv_bn));
        else if (op->conv_bn_why)
            fprintf(out, "# conv \"%s\": unfused: %s\n", op->name, op->conv_bn_why);
        if (op->sbr_why) fprintf(out, "# conv \"%s\": no prologue: %s\n", op->name, op->sbr_why);
        if (op->dgrad_bn)
            fprintf(out, "# conv \"%s\": data gradient on DgradDreluBNBwdWeight (bn \"%s\"'s dReLU and backward sums in its "
                         "epilogue)\n", op->name, net->ops[op->in[0] - 1].name);
        if (op->dgrad_why) fprintf(out, "# conv \"%s\": no fused data gradient: %s\n", op->name, op->dgrad_why);
    }
}

static const char *precision_name(cuda_precision p) {
    return p == CUDA_BF16 ? "BF16" : p == CUDA_FP16 ? "FP16" : p == CUDA_TF32 ? "TF32" : "FP32";
}

int show_gpu_cost(FILE *out, const char *path, const sema_result *res, const char *device, const build_options *how,
                  int old_kernels, const char *label) {
    int nhwc = how->nhwc, no_bn_retire = how->no_bn_retire, no_bn_add = how->no_bn_add, no_relu_mask = how->no_relu_mask;
    const gpu_device *dev = gpu_device_named(device);
    if (!dev) {
        fprintf(stderr, "trainc: error: unknown device '%s' for --gpu-cost\n  hint: h100, h200 or a100\n", device);
        return 1;
    }
    build_options opt = *how;
    opt.backend = BACKEND_CUDA, opt.fuse = 1;
    schedule s;
    if (lower(&s, res, &opt, 0, path) != 0) {
        schedule_free(&s);
        return 1;
    }
    gpu_cost c;
    gpu_cost_of(&s, old_kernels, &c);
    const ir_net *net = &s.net;
    int half = s.precision == CUDA_BF16 || s.precision == CUDA_FP16;
    fprintf(out, "# %s: the CUDA training step (forward, loss, backward) as lowered, %s %s, batch %d, on %s "
                 "(%.2f TB/s, %.0f TFLOP/s dense 16-bit, %.1f us per launch, %.2f us per serial round of loads)%s%s%s\n",
            path, precision_name(s.precision), nhwc ? "nhwc" : "nchw", net->batch, dev->name, dev->bandwidth / 1e12,
            dev->peak16 / 1e12, dev->launch_s * 1e6, dev->round_s * 1e6,
            old_kernels ? ", the old batch-norm kernels" : nhwc && no_bn_retire ? ", batch norm's sums launched apart" : "",
            nhwc && no_bn_add ? ", batch norm applied apart from the add" : "",
            nhwc && no_relu_mask ? ", no ReLU bitmasks (the add's and each bn's backward apart)" : "");
    /* the fusions lower() decided (lower.c), which the kernels below carry out */
    int retire = 0, bn_add = 0, masks = 0, bwd2 = 0, bn_pool = 0, bn_conv = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        retire += op->kind == IR_BN && op->bn_retire;
        bn_add += op->bn_in_add;
        masks += ir_has_mask(net, i);
        bwd2 += op->add_bwd_fused && op->bn_fold < 0;
        bn_pool += op->bn_in_pool;
        bn_conv += op->bn_in_conv;
    }
    show_conv_engines(out, net);
    int fin = 0, fin_not = 0;
    const char *fin_why = NULL;
    for (int i = 0; i < net->n_ops; i++) {   /* BN finalize (fuse_bn_finalize.c) */
        fin += net->ops[i].bn_fin_graph;
        if (net->ops[i].bn_fin_why && !fin_not++) fin_why = net->ops[i].bn_fin_why;
    }
    if (fin || fin_not)
        fprintf(out, "# bn finalize: %d batch norms finalize their conv's sums in cuDNN's BN finalize graph, %d in our kernel%s%s\n",
                fin, fin_not, fin_why ? ": " : "", fin_why ? fin_why : "");
    int dw_bias = 0;
    for (int i = 0; i < net->n_ops; i++) dw_bias += net->ops[i].dw_bias;
    if (dw_bias)   /* fuse_dw_bias.c; on cuDNN (TRAINC_CUDA_DEPTHWISE=cudnn) the bias passes below run */
        fprintf(out, "# depthwise bias: %d depthwise convs take their bias (our kernels add it in their store and "
                     "sum its gradient in the weight gradient's kernel)\n", dw_bias);
    int ln_bias = 0;
    for (int i = 0; i < net->n_ops; i++) ln_bias += net->ops[i].ln_bias >= 0;
    if (ln_bias)   /* fuse_ln_bias.c */
        fprintf(out, "# layer norm bias: %d conv%s bias added by the layer norm that reads its output (and its gradient "
                     "summed by that norm's backward)\n", ln_bias, ln_bias == 1 ? "'s" : "s'");
    int folds = 0;
    for (int i = 0; i < net->n_ops; i++) folds += net->ops[i].bn_fold >= 0;
    if (folds)   /* fuse_bn_fold.c */
        fprintf(out, "# bn fold: %d identity block output%s backward folded through a 1x1 conv3 (no conv3 gradient "
                     "passes; bn_fold_conv1x1_backward.cu)\n", folds, folds == 1 ? "'s" : "s'");
    if (nhwc)
        fprintf(out, "# lowered: %d batch norms retire their sums, %d applied inside their add, %d inside their max "
                     "pooling, %d inside the next conv's prologue, %d ReLU bitmasks, %d block outputs' backward in two "
                     "passes\n", retire, bn_add, bn_pool, bn_conv, masks, bwd2);
    fprintf(out, "# %-4s %-28s %-4s %-36s %-10s %14s %14s %10s %10s\n", "op", "layer", "pass", "kernel or call", "class",
            "read bytes", "write bytes", "GFLOP", "us");
    double total_s = 0, bytes = 0, kernel_bytes = 0, flops = 0, lib_s = 0, rounds_s = 0;
    for (int i = 0; i < c.n; i++) {
        const gpu_kernel *k = &c.k[i];
        double t = gpu_kernel_seconds(k, dev, half);
        const char *layer = k->op < 0 ? "(loss)" : k->op >= net->n_ops ? "(logits)" : net->ops[k->op].name;
        fprintf(out, "%-6d %-28s %-4s %-36s %-10s %14.0f %14.0f %10.3f %10.1f\n", k->op, layer, k->backward ? "bwd" : "fwd",
                k->name, gpu_class_name(k->cls), k->read, k->write, k->flops / 1e9, t * 1e6);
        total_s += t, bytes += k->read + k->write, flops += k->flops, rounds_s += k->rounds * dev->round_s;
        if (k->cls == GK_KERNEL) kernel_bytes += k->read + k->write;
        else lib_s += t;
    }
    /* one pass over the BN-sized tensors: each batch norm's input, once */
    double bn_pass = 0;
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].kind == IR_BN) bn_pass += (double)ir_value_elems(net, net->ops[i].in[0]) * net->act_bytes;
    double passes = bn_pass > 0 ? kernel_bytes / bn_pass : 0;
    fprintf(out, "# totals: %d launches, %.1f MB moved (%.1f MB by our kernels, %.1f MB per image), %.2f TFLOP; "
                 "library calls %.2f ms, our kernels %.2f ms (%.2f ms of it serial rounds adding partial sums)\n",
            c.n, bytes / 1e6, kernel_bytes / 1e6, bytes / 1e6 / net->batch, flops / 1e12, lib_s * 1e3,
            (total_s - lib_s) * 1e3, rounds_s * 1e3);
    if (bn_pass > 0)
        fprintf(out, "# one pass over the batch-norm-sized tensors: %.1f MB; our kernels move %.2f of them\n", bn_pass / 1e6,
                passes);
    if (!c.modeled) fprintf(out, "# INCOMPLETE: some ops have no model (named on stderr); the totals leave them out\n");
    fprintf(out, "%s %s %s %s: %.1f ms per %d images, %.1f passes over BN tensors, %d launches, %.0f MB/image%s\n",
            label ? label : path, precision_name(s.precision), nhwc ? "nhwc" : "nchw", dev->name, total_s * 1e3, net->batch,
            passes, c.n, bytes / 1e6 / net->batch, c.modeled ? "" : " (incomplete)");
    int rc = c.modeled ? 0 : 1;
    gpu_cost_free(&c);
    schedule_free(&s);
    return rc;
}
