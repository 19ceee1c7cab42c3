/* Lowering for a backend (lower.h): the backend's needs (alignment, which fusions it can
 * run, activation width), then ir_build (ops, fusion, parameter layout, memory plan with
 * gradient routes), the gradient buckets and sync-BN. */
#include "lower.h"
#include "ir_build.h"
#include "ir_nhwc.h"
#include "rt_ops.h"

#include <string.h>

static const char *src_path(const ir_op *op) { return op->loc.file ? op->loc.file->path : "?"; }

/* What --layout nhwc covers: every op; a value's layout only matters where it has positions
 * (hw > 1). Past a flatten of such a value (or a linear reading one) the data stays in
 * [H][W][C] order: a linear reads it as a conv whose kernel covers the whole input, with the
 * conv weights' channels-last copy, and dropout draws its mask at the C,H,W index (the CPU's),
 * so parameters, checkpoints and masks are NCHW's. What reads such a flattened value must
 * be one of those (or relu, gelu, stochastic depth); anything per-feature (bn, layer scale,
 * concat, add, the loss) would see the features in the wrong order, so it is refused.
 * Returns 0, or 1 after printing why not. */
static int check_nhwc(const schedule *s, const char *spec_path) {
    if (s->precision != CUDA_BF16 && s->precision != CUDA_FP16) {
        fprintf(stderr, "%s: error: --layout nhwc is for 16-bit activations, and this spec computes in %s\n"
                        "  hint: set precision { compute: BF16 } (or FP16), or build without --layout nhwc\n",
                spec_path, s->precision == CUDA_TF32 ? "TF32" : "FP32");
        return 1;
    }
    const ir_net *net = &s->net;
    int c, h, w;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind == IR_LINEAR || ir_nhwc_passes_layout(op->kind)) continue;
        for (int k = 0; k < op->n_in; k++) {
            int v = op->in[k], own = v ? net->ops[v - 1].h * net->ops[v - 1].w > 1 : net->in_h * net->in_w > 1;
            if (own || !ir_nhwc_positions(net, v, &c, &h, &w)) continue;
            fprintf(stderr, "%s:%d: layer \"%s\" (%s): --layout nhwc does not support this op on a flattened tensor "
                            "with positions (%dx%dx%d, stored channels-last)\n"
                            "  hint: flatten right before a linear (relu, gelu and dropout may sit between), or build "
                            "without --layout nhwc\n",
                    src_path(op), op->loc.line, op->name, ir_ops[op->kind].name, c, h, w);
            return 1;
        }
    }
    for (int hd = 0; hd < (net->n_heads ? net->n_heads : 1); hd++) {   /* every loss head's logits */
    int logits = net->n_heads ? net->heads[hd].value : net->n_ops;
    if (logits > 0 && net->ops[logits - 1].h * net->ops[logits - 1].w == 1 && ir_nhwc_positions(net, logits, &c, &h, &w)) {
        const ir_op *op = &net->ops[logits - 1];
        fprintf(stderr, "%s:%d: layer \"%s\" (%s): --layout nhwc cannot hand the loss a flattened tensor with positions "
                        "(%dx%dx%d, stored channels-last)\n"
                        "  hint: end the net with a linear or a global pooling, or build without --layout nhwc\n",
                src_path(op), op->loc.line, op->name, ir_ops[op->kind].name, c, h, w);
        return 1;
    }
    }
    return 0;
}

/* The CPU's conv + ReLU + max pooling in one call (conv2d_relu_maxpool in rt_ops.h): a conv of
 * the net's data with the 1-channel kernel's geometry (one input channel, stride 1, no
 * dilation, 3x3 or 5x5, "same" padding) and a fused ReLU, whose output only the next op reads:
 * a 2x2 stride-2 unpadded max pooling whose windows lie inside it. */
static void choose_conv_pool(ir_net *net) {
    for (int i = 0; i + 1 < net->n_ops; i++) {
        ir_op *c = &net->ops[i], *p = &net->ops[i + 1];
        if (c->kind != IR_CONV || !c->act || c->in[0] != 0 || c->in_c != 1 || c->groups != 1 || c->sh != 1 ||
            c->sw != 1 || c->dh != 1 || c->dw != 1 || c->kh != c->kw || (c->kh != 3 && c->kh != 5) ||
            c->h != c->in_h + 2 * c->ph - c->kh + 1 || c->w != c->in_w + 2 * c->pw - c->kw + 1)
            continue;
        if (p->kind != IR_MAXPOOL || p->n_in != 1 || p->in[0] != i + 1 || p->kh != 2 || p->kw != 2 || p->sh != 2 ||
            p->sw != 2 || p->ph != 0 || p->pw != 0 || 2 * p->h > c->h || 2 * p->w > c->w)
            continue;
        int other_reader = 0;
        for (int k = 0; k < net->n_ops; k++)
            for (int m = 0; m < net->ops[k].n_in; m++)
                if (net->ops[k].in[m] == i + 1 && k != i + 1) other_reader = 1;
        if (other_reader) continue;
        c->pools_into = i + 1;
        p->pooled_in = i;
    }
}

/* CUDA: a conv's or linear's bias added by the GELU or activation right after it, in one
 * pass (bias_act.cu), where that activation is the only reader of the output and no ReLU is
 * fused into the bias. */
static void choose_bias_act(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *a = &net->ops[i];
        if ((a->kind != IR_GELU && a->kind != IR_ACTIVATION) || a->n_in != 1 || a->in[0] <= 0) continue;
        int v = a->in[0];
        ir_op *p = &net->ops[v - 1];
        if ((p->kind != IR_CONV && p->kind != IR_LINEAR) || p->b_off < 0 || p->act || p->bias_act >= 0) continue;
        if (ir_value_readers(net, v) != 1) continue;
        p->bias_act = i;
        a->act_bias_of = v - 1;
    }
}

/* CUDA channels-last batch norm in training: the statistics' and the gradient sums' partials
 * finished by the last block of each channel tile (batchnorm_nhwc_vec.cu), which saves the
 * sums' launches (two of five per layer and step). Not with sync BN, whose sums are
 * all-reduced over the ranks between the passes, nor for a frozen bn (no batch statistics). */
static void choose_bn_retire(ir_net *net, int sync_bn) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        op->bn_retire = op->kind == IR_BN && !op->bn_frozen && !sync_bn;
    }
}

/* CUDA channels-last (16-bit activations): a two-input add whose inputs include a bn that it
 * alone reads, without a ReLU of its own, normalizes that bn itself: act(bn(a) + bn(b)) or
 * act(bn(a) + b) in one kernel (bn_add_relu_nhwc.cu) that writes only the add's output. The
 * bn's statistics pass stays where it was; its backward reads x, never bn(x), and the add's
 * backward reads its own output, so the backward is unchanged. A projection block's two bns
 * both fuse (MLPerf's structure). Only with fused elementwise kernels (not --no-fuse). */
static int bn_into_add(const ir_net *net, int v) {
    if (v <= 0) return 0;
    const ir_op *bn = &net->ops[v - 1];
    if (bn->kind != IR_BN || bn->act) return 0;
    return ir_value_readers(net, v) == 1 && v != net->n_ops;
}

static void choose_bn_add(ir_net *net) {
    for (int j = 0; j < net->n_ops; j++) {
        ir_op *add = &net->ops[j];
        if (add->kind != IR_ADD || add->n_in != 2 || add->in[0] == add->in[1]) continue;
        int a = bn_into_add(net, add->in[0]), b = bn_into_add(net, add->in[1]);
        if (!a && !b) continue;
        add->add_bns = a + b;
        if (a) net->ops[add->in[0] - 1].bn_in_add = 1;
        if (b) net->ops[add->in[1] - 1].bn_in_add = 1;
    }
}

/* CUDA channels-last (lower.h no_relu_mask: off): a ReLU fused into a bn or into an add that
 * applies its bns writes a bitmask beside its output (1 bit an element: 1/16 of a BF16 tensor),
 * and the backward reads the bits instead of the whole ReLU output (MLPerf's ReLU bitmask).
 * The mask's bytes are whole per 8 elements, which C % 8 == 0 keeps inside one row of
 * channels. The bits go through the retiring batch-norm kernels (ir_op.bn_retire). A block's
 * closing add with its bns (add_bns) also takes their backward (add_bwd_fused): dReLU, the
 * add's gradient and every bn's backward in two passes over dz, the bits and each bn's input
 * (bn_add_relu_backward_nhwc.cu) instead of the add's pass (dz and the ReLU output in, one
 * gradient per branch out) and two per bn. It writes each bn input's gradient (its first
 * writer: GRAD_WRITE) and the identity shortcut's (written or added, as the plan routes it;
 * a conv's dgrad later adds into it with beta = 1). Returns whether anything changed. */
static int bn_bwd_fits(const ir_net *net, int v) {
    const ir_op *bn = &net->ops[v - 1];
    return bn->bn_retire && bn->in[0] > 0 && ir_route(net, v - 1, 0) == GRAD_WRITE;
}

static int choose_relu_mask(ir_net *net) {
    int changed = 0;
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        if (op->c % 8) continue;
        /* (a bn applied inside its conv writes no ReLU output: its backward recomputes the condition) */
        if (op->kind == IR_BN && op->act && !op->bn_in_add && !op->bn_in_conv && op->bn_retire) op->relu_mask = changed = 1;
        if (op->kind != IR_ADD || !op->add_bns) continue;
        int fits = 1;
        for (int k = 0; k < op->n_in; k++) {
            int v = op->in[k];
            if (v > 0 && net->ops[v - 1].bn_in_add) fits &= bn_bwd_fits(net, v);
            else fits &= ir_route(net, i, k) == GRAD_WRITE || ir_route(net, i, k) == GRAD_ADD ||
                         ir_route(net, i, k) == GRAD_NONE;
        }
        if (!fits) continue;
        op->add_bwd_fused = changed = 1;
        op->relu_mask = op->act;
        for (int k = 0; k < op->n_in; k++)
            if (op->in[k] > 0 && net->ops[op->in[k] - 1].bn_in_add) net->ops[op->in[k] - 1].bn_bwd_in_add = 1;
    }
    return changed;
}

/* CUDA channels-last: a bn with a fused ReLU writing its bitmask (relu_mask), whose output only
 * a 3x3 stride-2 pad-1 max pooling reads (ResNet's stem: bn1 -> relu -> maxpool), is applied
 * inside the pooling's kernel (bn_relu_maxpool_nhwc.cu), which reads the bn's input once and
 * writes the pooled output, its argmax (the window offset, a byte) and the bn's bits: the
 * normalized tensor, four times the pooled one, is neither written nor read back. The
 * backward is the bn's (from its bits and input) with the pooling's folded in: both passes
 * gather dy from the pooled gradient and the argmax, so the bn's output gradient is neither
 * written nor read either (batchnorm_nhwc_vec.cu cuda_batchnorm_backward_nhwc_pool). Even
 * input extents (each input position in exactly one window's share of the bits) and C % 8 == 0
 * (a mask byte a thread), as cuda_bn_relu_maxpool_fits checks again. */
static int choose_bn_pool(ir_net *net) {
    int changed = 0;
    for (int i = 0; i < net->n_ops; i++) net->ops[i].bn_in_pool = 0, net->ops[i].pool_bn = -1;
    for (int i = 0; i + 1 < net->n_ops; i++) {
        ir_op *bn = &net->ops[i], *p = &net->ops[i + 1];
        if (bn->kind != IR_BN || !bn->act || !bn->relu_mask || bn->bn_in_add || bn->c % 8) continue;
        if (p->kind != IR_MAXPOOL || p->n_in != 1 || p->in[0] != i + 1 || p->kh != 3 || p->kw != 3 || p->sh != 2 ||
            p->sw != 2 || p->ph != 1 || p->pw != 1 || bn->h % 2 || bn->w % 2 || p->h != bn->h / 2 || p->w != bn->w / 2)
            continue;
        if (ir_value_readers(net, i + 1) != 1 || i + 1 == net->n_ops) continue;
        bn->bn_in_pool = 1;
        p->pool_bn = i;
        changed = 1;
    }
    return changed;
}

static cuda_precision precision_of(const run_config *run) {
    switch (run->compute) {
    case RUN_TF32: return CUDA_TF32;
    case RUN_BF16: return CUDA_BF16;
    case RUN_FP16: return CUDA_FP16;
    case RUN_FP32: return CUDA_FP32;
    }
    return CUDA_FP32;
}

int lower(schedule *s, const sema_result *res, const build_options *opt, int batch, const char *spec_path) {
    memset(s, 0, sizeof *s);
    const run_config *run = &res->run;
    int cuda = opt->backend == BACKEND_CUDA;
    s->opt = *opt;
    s->precision = cuda ? precision_of(run) : CUDA_FP32;
    s->loss_scale = !cuda ? LOSS_SCALE_NONE
                  : run->loss_scale == RUN_LOSS_SCALE_DYNAMIC ? LOSS_SCALE_DYNAMIC
                  : run->loss_scale == RUN_LOSS_SCALE_STATIC ? LOSS_SCALE_STATIC : LOSS_SCALE_NONE;
    s->init_scale = run->init_scale;
    s->bucket_mb = run->bucket_mb;
    s->graph_candidates = cuda && !opt->no_graph_autotune ? GRAPH_AUTOTUNE_CANDIDATES : 0;
    int half = s->precision == CUDA_BF16 || s->precision == CUDA_FP16;
    /* CPU: packed parameters, 64-byte tensors, the conv and linear ops apply a relu
     * themselves, adds hand their gradient buffer on and compute a bn right before them.
     * CUDA: cuBLASLt and cuDNN want 256-byte operands; a relu fuses into a bias kernel,
     * batch-norm apply or add kernel; a relu on the logits stays separate. */
    ir_lowering how = { cuda ? 256 : 64, cuda ? 128 : 1, half ? 2 : 4, cuda ? opt->fuse : 1, cuda, cuda, !cuda,
                        /* CPU: bn + add (+ relu) in one pass; sync BN all-reduces between its passes */
                        !cuda && !run->sync_bn };
    if (batch <= 0) batch = run->train.batch_per_rank > 0 ? (int)run->train.batch_per_rank : 1;
    if (ir_build(&s->net, &res->net, batch, run->label_smoothing, &how) != 0) {
        fprintf(stderr, "%s: error: the net cannot be compiled (empty, or an op with more than %d inputs)\n",
                spec_path, IR_MAX_INPUTS);
        return 1;
    }
    if (cuda && cuda_refuse_unsupported(&s->net, spec_path, opt->nhwc)) return 1;
    s->net.loss_bce = run->loss_kind == RUN_LOSS_BCE;
    s->net.bce_threshold = run->bce_target_threshold;
    s->net.mixed_targets = run->augment.mixup_alpha > 0 || run->augment.cutmix_alpha > 0;
    s->net.input_float = s->net.mixed_targets || run->augment.erase_p > 0;
    if (cuda && opt->nhwc && check_nhwc(s, spec_path)) return 1;
    if (!cuda) choose_conv_algos(&s->net, run->compute == RUN_BF16);   /* cuDNN times its own at start-up */
    for (int i = 0; i < s->net.n_ops; i++) {
        ir_op *op = &s->net.ops[i];
        op->pools_into = op->pooled_in = op->bias_act = op->act_bias_of = op->pool_bn = op->tail_conv = op->in_tail = -1;
        op->ln_bias = op->ln_bias_of = op->bn_fold = op->folded_in = -1;
    }
    if (!cuda) choose_conv_pool(&s->net);
    if (cuda && opt->fuse) choose_bias_act(&s->net);
    if (cuda && opt->nhwc && !opt->no_bn_retire) choose_bn_retire(&s->net, run->sync_bn);
    if (cuda && opt->nhwc && opt->fuse && !opt->no_bn_add) choose_bn_add(&s->net);
    /* a bn applied inside its conv keeps its scale and bias in its saved tensor */
    if (cuda && opt->nhwc && opt->fuse && choose_conv_bn(s, run->sync_bn)) ir_replan(&s->net);
    if (cuda) choose_bn_finalize(s);
    if (cuda && opt->fuse && !opt->no_residual_tail) choose_residual_tail(&s->net);
    if (cuda && opt->fuse && !opt->no_bias_act_grad) choose_bias_act_grad(&s->net);
    if (cuda && opt->fuse && !opt->no_dw_bias) choose_dw_bias(&s->net);
    if (cuda && opt->fuse && !opt->no_ln_bias) choose_ln_bias(&s->net);
    if (cuda && choose_attention(s)) ir_replan(&s->net);   /* its 16-bit copies are tensors of the plan */
    /* the masks are tensors of the plan, and the fused backward writes gradients earlier */
    if (cuda && opt->nhwc && opt->fuse && !opt->no_relu_mask && choose_relu_mask(&s->net)) {
        if (!opt->no_bn_pool) choose_bn_pool(&s->net);   /* needs the bits; its bn then has no output tensor */
        ir_replan(&s->net);
        if (!opt->no_bn_fold && choose_bn_fold(s)) ir_replan(&s->net);
    }
    ir_plan_buckets(&s->net, s->bucket_mb);
    s->net.sync_bn = run->sync_bn;
    return 0;
}

void schedule_free(schedule *s) { ir_net_free(&s->net); }
