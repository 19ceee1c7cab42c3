/* Which convs run cuDNN's fused conv + batch-norm-statistics graph, and which of them apply the
 * previous bn in their prologue (lower.h choose_conv_bn): the rule, in one place. MLPerf's
 * ResNet-50 has every conv that feeds a batch norm write the per-channel sum and sum of squares
 * of its output from its epilogue ("genstats"), so the bn's statistics need no pass over the
 * conv's output of their own; its pass only finalizes the sums (mean, inverse std, running
 * statistics). cuDNN offers that fusion as a graph (conv forward -> genstats) that two of its
 * engines run, per its graph-API documentation (bench/RESULTS.md, "cuDNN's engines for conv +
 * statistics in BF16", quotes the lines):
 *  - FP16: the ConvBNfprop specialized engines: FP16 data only, NHWC packed, KRSC weights,
 *    1x1 and 3x3 kernels, compute capability 8.0 or higher but 8.9; they also take the
 *    previous bn's scale-bias-ReLU as a prologue (choose_sbr);
 *  - BF16: the generic runtime-fusion engine's support surface 70 (compute capability 7.0 to
 *    9.0), whose epilogue may hold a GenStats node (reading FP16 or FP32: the conv's output
 *    kept in FP32 for it, an identity node rounds it to BF16) and whose convolution takes
 *    BF16 input with FP32 compute: NHWC packed, no grouped convs, any kernel size. (Its
 *    surfaces 80 and 90 allow one reduction only, so no sum and sum of squares together; its
 *    prologue is FP16 only, so BF16 takes no scale-bias-ReLU prologue.)
 * Both here: input and output channels a multiple of 8 (the 16-byte vectors the tensors are
 * described with), no groups, no bias. cuDNN itself may still refuse a graph (the device's
 * compute capability, a missing runtime compiler): runtime/cuda/ops/conv_bn_fprop.cu then
 * runs the unfused conv and statistics and says why, once. */
#include "lower.h"

/* The one op reading value v, or -1 when none or several do. */
static int only_reader(const ir_net *net, int v) {
    int who = -1;
    for (int i = 0; i < net->n_ops; i++)
        for (int k = 0; k < net->ops[i].n_in; k++)
            if (net->ops[i].in[k] == v) {
                if (who >= 0 && who != i) return -1;
                who = i;
            }
    return who;
}

/* Why conv op i (whose one reader is a training bn) cannot take the engine, or NULL. */
static const char *refusal(const schedule *s, const ir_op *op, int sync_bn) {
    if (s->opt.no_conv_genstats) return "--no-conv-genstats";
    if (s->precision != CUDA_FP16 && s->precision != CUDA_BF16)
        return "not BF16 or FP16: cuDNN's conv + genstats engines take 16-bit data";
    if (sync_bn) return "sync BN: the sums are all-reduced between the statistics' passes";
    if (op->groups != 1) return "a grouped conv (the engines take groups = 1)";
    if (s->precision == CUDA_FP16) {   /* ConvBNfprop's own limits; the runtime-fusion engine has none of these */
        if (!((op->kh == 1 && op->kw == 1) || (op->kh == 3 && op->kw == 3))) return "the engine takes 1x1 and 3x3 kernels only";
        if (op->dh != 1 || op->dw != 1) return "a dilated conv (the engine takes dilation 1)";
    }
    if (op->in_c % 8 || op->c % 8) return "channels not a multiple of 8 (the engine's 16-byte vectors)";
    if (op->b_off >= 0) return "a conv with a bias (the graph has no bias node)";
    return NULL;
}

/* The training bn with a fused ReLU that conv op i alone reads, or NULL. */
static ir_op *relu_bn_into(ir_net *net, int i) {
    int v = net->ops[i].in[0];
    if (v <= 0 || v == net->n_ops) return NULL;
    ir_op *bn = &net->ops[v - 1];
    if (bn->kind != IR_BN || bn->bn_frozen || !bn->act || bn->bn_in_add || only_reader(net, v) != i) return NULL;
    return bn;
}

/* The data gradient of a prologue conv (dgrad_bn): cuDNN's DgradDreluBNBwdWeight graph (cuDNN 9.8
 * or later, FP16 data, FP32 statistics; cudnn-frontend's samples/cpp/convolution/dgrads.cpp)
 * computes the conv's data gradient, passes it through the bn's ReLU (the bn's output recomputed
 * from its input and statistics in FP32, as MLPerf's backward does) and writes the bn's backward
 * sums from its epilogue, so the bn's backward has no pass over dy and x for them. Its limits are
 * ConvBNfprop's (FP16, NHWC, 1x1 and 3x3, channels a multiple of 8: refusal() covered them for
 * the conv), and the bn's gradient must be the conv's alone (only_reader: relu_bn_into). The
 * runtime falls back per layer where cuDNN refuses (conv_bn_dgrad.cu). */
static void choose_dgrad(schedule *s, ir_op *op, ir_op *bn) {
    if (s->opt.no_conv_dgrad_fuse) op->dgrad_why = "--no-conv-dgrad-fuse";
    else if (op->dh != 1 || op->dw != 1) op->dgrad_why = "a dilated conv (the engine takes dilation 1)";
    if (op->dgrad_why) return;
    op->dgrad_bn = 1;
    bn->bn_dgrad_in_conv = 1;
}

/* In BF16 the same conv's data gradient stays unfused, and says why: cuDNN documents no BF16
 * graph that passes it through the bn's ReLU recomputed from the bn's input and writes both of
 * the bn's backward sums (bench/RESULTS.md, "BF16's data gradient + dReLU + the bn's backward
 * sums", quotes the lines): DgradDreluBNBwdWeight takes FP16 data only; the runtime-fusion
 * engine's surface 80 has no data-gradient fusions, its surface 90 one reduction per graph
 * (and no strided data gradients), and its surface 70 requires the data gradient to be the
 * first operand of every epilogue operation, which a recompute from the bn's input is not. */
#define BF16_DGRAD_WHY "BF16: cuDNN documents no such graph (DgradDreluBNBwdWeight takes FP16; runtime fusion: no " \
                       "ReLU recompute from the bn's input on surface 70, one reduction on 90)"

/* The prologue (IR_CONV_BN_SBR): a conv taking the engine whose input is a training bn with a
 * fused ReLU that this conv alone reads (a bottleneck's conv2 and conv3, MLPerf's structure)
 * reads that bn's input instead and applies the bn's scale, bias and ReLU inside itself; the
 * bn's pass only finalizes its statistics into that scale and bias. The graph is the same
 * engine's (FP16, refusal()'s limits), so the conv's own refusals cover it; the bn must retire
 * its sums (its backward recomputes the ReLU's condition in the retiring kernels) and have
 * channels a multiple of 8 (the conv's input channels: checked by refusal()). */
static void choose_sbr(schedule *s) {
    ir_net *net = &s->net;
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i], *bn;
        if (op->conv_bn == IR_CONV_BN_GENSTATS_RT && relu_bn_into(net, i)) op->dgrad_why = BF16_DGRAD_WHY;
        if (op->conv_bn != IR_CONV_BN_GENSTATS || !(bn = relu_bn_into(net, i))) continue;
        if (s->opt.no_conv_sbr) op->sbr_why = "--no-conv-sbr";
        else if (!bn->bn_retire) op->sbr_why = "the bn's sums do not retire (--no-bn-retire)";
        if (op->sbr_why) continue;
        op->conv_bn = IR_CONV_BN_SBR;
        bn->bn_in_conv = 1;
        choose_dgrad(s, op, bn);
    }
}

int choose_conv_bn(schedule *s, int sync_bn) {
    ir_net *net = &s->net;
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        op->conv_bn = IR_CONV_BN_NONE, op->conv_bn_why = op->sbr_why = op->dgrad_why = NULL;
        op->dgrad_bn = 0;
        if (op->kind == IR_BN) op->bn_sums_in_conv = op->bn_in_conv = op->bn_dgrad_in_conv = 0;
    }
    if (net->forward_only) return 0;   /* an evaluation schedule: batch norm reads running statistics */
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        if (op->kind != IR_CONV || op->act) continue;
        int r = only_reader(net, i + 1);
        if (r < 0 || net->ops[r].kind != IR_BN || net->ops[r].bn_frozen || net->ops[r].in[0] != i + 1) continue;
        op->conv_bn_why = refusal(s, op, sync_bn);
        if (op->conv_bn_why) continue;
        op->conv_bn = s->precision == CUDA_BF16 ? IR_CONV_BN_GENSTATS_RT : IR_CONV_BN_GENSTATS;
        net->ops[r].bn_sums_in_conv = 1;
    }
    choose_sbr(s);
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].bn_in_conv) return 1;
    return 0;
}

const char *ir_conv_bn_name(int engine) {
    return engine == IR_CONV_BN_GENSTATS ? "ConvBNfprop conv+genstats"
           : engine == IR_CONV_BN_GENSTATS_RT ? "runtime-fusion conv+genstats"
           : engine == IR_CONV_BN_SBR         ? "ConvBNfprop scale+bias+ReLU+conv+genstats"
                                              : "unfused";
}
