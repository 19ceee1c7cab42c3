/* The CUDA backend's spelling (emit.h): device-pointer layout, calls into libtrainrt_cuda and
 * the net's fused kernels (kernels.cu), the cuDNN / cuBLASLt plans, and the rt_cuda_model the
 * runtime's shared host side (rt_cuda_model.h) drives. Plain C11. */
#include "emit.h"
#include "emit_names.h"
#include "ir_nhwc.h"

#include <stdlib.h>
#include <string.h>

static const char *const precision_names[] = { "FP32", "TF32", "BF16", "FP16" };
static const char *const precision_enums[] = { "RT_CUDA_FP32", "RT_CUDA_TF32", "RT_CUDA_BF16", "RT_CUDA_FP16" };
static int half_of(const emitter *e) { return e->s->precision == CUDA_BF16 || e->s->precision == CUDA_FP16; }
/* Channels-last builds call the runtime's _nhwc variants and read the conv weights' WN copy. */
static const char *sfx(const emitter *e) { return e->s->opt.nhwc ? "_nhwc" : ""; }
static const char *wname(const emitter *e) { return e->s->opt.nhwc ? "wnhwc" : "wact"; }
/* A linear reading a channels-last tensor with positions (through a flatten, or directly):
 * it runs as the conv whose kernel covers the whole [c, h, w] input (one output position),
 * over the weights' channels-last copy. Its parameters are NCHW's [out][C*H*W] = [K][C][R][S],
 * and the conv's weight gradient comes back in that order, so checkpoints are NCHW's. */
static int linear_as_conv(const emitter *e, const ir_op *op, int *c, int *h, int *w) {
    return e->s->opt.nhwc && ir_nhwc_linear_as_conv(e->net, op, c, h, w);
}
static int runs_conv(const emitter *e, const ir_op *op) {
    int c, h, w;
    return op->kind == IR_CONV || linear_as_conv(e, op, &c, &h, &w);
}
/* "BATCH, C, HW" for the runtime's per-channel ops (bias and layer-scale gradients, layer
 * norm, across-channels LRN). Channels-last, a [N,H,W,C] tensor is [N*H*W rows, C, 1
 * position] to them: the same kernels then index it right. */
static const char *nchw_args(const emitter *e, const ir_op *op, char *buf, size_t cap) {
    if (e->s->opt.nhwc) snprintf(buf, cap, "BATCH * %ldL, %d, 1", ir_hw(op), op->c);
    else snprintf(buf, cap, "BATCH, %d, %ld", op->c, ir_hw(op));
    return buf;
}

static void banner(emitter *e) {
    static const char *const what[] = { "FP32", "TF32 tensor cores, FP32 storage",
                                        "BF16 activations and tensor cores, FP32 master weights",
                                        "FP16 activations and tensor cores, FP32 master weights, loss scaling" };
    const emit_info *info = e->info;
    template_var vars[] = {
        { "NAME", info->name }, { "VERSION", info->compiler_version }, { "SPEC_PATH", info->spec_path },
        { "SPEC_HASH", info->spec_hash }, { "FUSION", e->s->opt.fuse ? "" : " (fusion off: one kernel per op)" },
        { "PRECISION", what[e->s->precision] },
        { "LAYOUT", e->s->opt.nhwc ? "; activations channels-last [N,H,W,C] (--layout nhwc)" : "" },
        { "KERNELS", e->net->forward_only ? "kernels_eval" : "kernels" },   /* the evaluation's schedule */
    };
    if (template_fill(e->out, "cuda_model_header.c.in", vars, (int)(sizeof vars / sizeof vars[0])) != 0) exit(1);
}

/* Same names and offsets as the CPU model.c, over device pointers. */
static void layout_head(emitter *e) {
    FILE *out = e->out;
    fprintf(out, "#define BATCH %d\n#define CLASSES %d\n#define ARENA_BYTES %ldL\n\n", e->net->batch,
            e->net->classes, e->net->arena_bytes);
    if (half_of(e))
        fprintf(out, "/* Activations, their gradients and the weights conv/linear read are %s: 16 bits the\n"
                     " * host never interprets (kernels.cu and libtrainrt_cuda compute in FP32 registers). */\n"
                     "typedef uint16_t act_t;\n\n",
                precision_names[e->s->precision]);
    else
        fprintf(out, "typedef float act_t;   /* activations and their gradients */\n\n");
    fprintf(out, "/* Parameters (P, FP32 master weights), their compute copy (WA: %s) and gradients (G,\n"
                 " * FP32) on the device, in elements: reverse schedule order. */\n",
            half_of(e) ? "updated by the optimizer kernel" : "P itself");
}

static void param_extra(emitter *e, const ir_op *op) {
    if (op->w_off >= 0 && (op->kind == IR_CONV || op->kind == IR_LINEAR))
        fprintf(e->out, "#define %s_wact (WA + %ld)\n", op->ident, op->w_off);
    if (op->w_off >= 0 && runs_conv(e, op) && e->s->opt.nhwc)
        fprintf(e->out, "#define %s_wnhwc (WN + %ld)  /* [K][R][S][C], from %s_wact */\n", op->ident, op->w_off,
                op->ident);
}

static void state(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    int c, h, w;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind == IR_CONV) emit_conv_shape(e, i, "");
        if (linear_as_conv(e, op, &c, &h, &w))
            fprintf(out, "/* linear \"%s\" on a channels-last [H,W,C] = [%d,%d,%d] input: a %dx%d conv to one position */\n"
                         "static const rt_conv_shape %s_shape = { .n = BATCH, .c = %d, .h = %d, .w = %d, .oc = %d, "
                         ".kh = %d, .kw = %d, .sh = 1, .sw = 1, .ph = 0, .pw = 0, .dh = 1, .dw = 1, .groups = 1, "
                         ".oh = 1, .ow = 1 };\n",
                    op->name, h, w, c, h, w, op->ident, c, h, w, op->c, h, w);
        if (op->kind == IR_MAXPOOL || op->kind == IR_AVGPOOL) emit_pool_shape(e, op);
    }
    fprintf(out, "\n/* Per-layer library plans: cuDNN descriptors and algorithms, cuBLASLt layouts. */\n");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (runs_conv(e, op)) fprintf(out, "static rt_cuda_conv *%s_conv;\n", op->ident);
        if (op->conv_bn) fprintf(out, "static rt_cuda_conv_bn *%s_fused;   /* %s */\n", op->ident, ir_conv_bn_name(op->conv_bn));
        if (op->bn_fin_graph) fprintf(out, "static rt_cuda_bn_finalize *%s_bnfin;   /* cuDNN's BN finalize graph */\n", op->ident);
        if (op->conv_bn == IR_CONV_BN_SBR)
            fprintf(out, "static rt_cuda_conv_bn_wgrad *%s_wgrad;   /* ConvBNwgrad: the prologue recomputed in the weight gradient */\n",
                    op->ident);
        if (op->dgrad_bn)
            fprintf(out, "static rt_cuda_conv_bn_dgrad *%s_dgrad;   /* DgradDreluBNBwdWeight: the bn's backward sums in the data gradient */\n",
                    op->ident);
        if (op->attn_sdpa) fprintf(out, "static rt_cuda_sdpa *%s_sdpa;   /* cuDNN's fused attention */\n", op->ident);
        else if (op->kind == IR_LINEAR) fprintf(out, "static rt_cuda_linear *%s_gemm;\n", op->ident);
    }
    fputc('\n', out);
}

static void forward_begin(emitter *e) {
    fprintf(e->out, "static void forward(rt_model_ctx *ctx) {\n    RT_CUDA_DEVICE_LOCALS;\n");
}

/* The op that applies bn op i (ir_op.bn_in_add: an add; bn_in_conv: a conv): its one reader. */
static const char *bn_add_of(const ir_net *net, int i) {
    for (int j = i + 1; j < net->n_ops; j++)
        for (int k = 0; k < net->ops[j].n_in; k++)
            if (net->ops[j].in[k] == i + 1) return net->ops[j].name;
    return "?";
}

/* The bns an add applies (ir_op.add_bns): a, the first input that is such a bn, and b, the
 * other input's bn in a projection block or NULL; vb is that other input's value and b_slot
 * its place among the add's inputs. */
static const ir_op *bn_add_operands(const ir_net *net, const ir_op *op, const ir_op **b, int *vb, int *b_slot) {
    int first = op->in[0] > 0 && net->ops[op->in[0] - 1].bn_in_add ? 0 : 1;
    *b_slot = !first;
    *vb = op->in[!first];
    *b = *vb > 0 && net->ops[*vb - 1].bn_in_add ? &net->ops[*vb - 1] : NULL;
    return &net->ops[op->in[first] - 1];
}

/* Add op j with the bn(s) it applies (ir_op.add_bns, lower.c): act(bn_a(xa) + bn_b(xb) or xb)
 * in one channels-last pass; a is a bn, b the other input (a bn too in a projection block). */
static void bn_add_forward(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    int vb, b_slot;
    const ir_op *b, *a = bn_add_operands(net, op, &b, &vb, &b_slot);
    char xa[128], xb[128];
    ir_value_name(net, a->in[0], xa, sizeof xa);
    ir_value_name(net, b ? b->in[0] : vb, xb, sizeof xb);
    int bits = ir_has_mask(net, j);
    fprintf(out, "    /* bn \"%s\"%s%s%s + add%s in one pass (--no-bn-add: apart)%s */\n", a->name, b ? " and bn \"" : "",
            b ? b->name : "", b ? "\"" : "", op->act ? " + relu" : "",
            bits ? ", and the ReLU's bitmask (--no-relu-mask: none)" : "");
    if (bits)
        fprintf(out, "    cuda_bn_add_relu_bits_nhwc(%s_out, %s_bits, %s, %s_weight, %s_bias, %s_saved, %s_saved + %d,\n",
                op->ident, op->ident, xa, a->ident, a->ident, a->ident, a->ident, a->c);
    else
        fprintf(out, "    cuda_bn_add_relu_nhwc(%s_out, %s, %s_weight, %s_bias, %s_saved, %s_saved + %d,\n", op->ident, xa,
                a->ident, a->ident, a->ident, a->ident, a->c);
    if (b)
        fprintf(out, "                          %s, %s_weight, %s_bias, %s_saved, %s_saved + %d,\n", xb, b->ident,
                b->ident, b->ident, b->ident, b->c);
    else fprintf(out, "                          %s, NULL, NULL, NULL, NULL,\n", xb);
    fprintf(out, "                          BATCH * %ldL, %d, %d);\n", ir_hw(op), op->c, op->act);
}

/* The backward of add op j with its bns (ir_op.add_bwd_fused, lower.c): dReLU from the bits,
 * the add's gradient and each bn's backward in two passes; bn a's input gradient, and bn b's
 * (a projection) or the identity shortcut's gradient, written or added by its route. */
static void bn_add_backward(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    int vb, b_slot;
    const ir_op *b, *a = bn_add_operands(net, op, &b, &vb, &b_slot);
    char xa[128], xb[128], da[128], db[128], bits[128];
    ir_value_name(net, a->in[0], xa, sizeof xa);
    ir_din_target(net, (int)(a - net->ops), 0, da, sizeof da);
    if (b) ir_value_name(net, b->in[0], xb, sizeof xb), ir_din_target(net, vb - 1, 0, db, sizeof db);
    else ir_din_target(net, j, b_slot, db, sizeof db);
    snprintf(bits, sizeof bits, "%s_bits", op->ident);
    fprintf(out, "    /* dReLU (bits) + add + backward of bn \"%s\"%s%s%s in two passes (--no-relu-mask: apart) */\n",
            a->name, b ? " and bn \"" : "", b ? b->name : "", b ? "\"" : ", the shortcut's gradient beside");
    fprintf(out, "    cuda_bn_add_relu_backward_nhwc(%s_dout, %s,\n", op->ident, ir_has_mask(net, j) ? bits : "NULL");
    fprintf(out, "                                   %s, %s_dweight, %s_dbias, %s, %s_weight, %s_saved, %s_saved + %d,\n", da,
            a->ident, a->ident, xa, a->ident, a->ident, a->ident, a->c);
    if (b)
        fprintf(out, "                                   %s, %s_dweight, %s_dbias, %s, %s_weight, %s_saved, %s_saved + %d,\n",
                db, b->ident, b->ident, xb, b->ident, b->ident, b->ident, b->c);
    else
        fprintf(out, "                                   %s, NULL, NULL, NULL, NULL, NULL, NULL,\n", db);
    fprintf(out, "                                   %d, BATCH * %ldL, %d);\n",
            !b && ir_route(net, j, b_slot) == GRAD_ADD, ir_hw(op), op->c);
}

/* The same backward folded through bn a's 1x1 conv3 (ir_op.bn_fold, fuse_bn_fold.c): the
 * shortcut's gradient g written, bn a's dgamma and dbeta, conv3's FP32 weight gradient (1x1:
 * KCRS is KRSC) and its input's gradient, from dz, the bits and conv3's input h with conv3's
 * FP32 weights; conv3's output and its gradient are not touched. */
static void bn_fold_backward(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j], *c = &net->ops[op->bn_fold];
    FILE *out = e->out;
    int vb, b_slot;
    const ir_op *b, *a = bn_add_operands(net, op, &b, &vb, &b_slot);
    char h[128], dh[128], g[128];
    ir_value_name(net, c->in[0], h, sizeof h);
    ir_din_target(net, op->bn_fold, 0, dh, sizeof dh);
    ir_din_target(net, j, b_slot, g, sizeof g);
    fprintf(out, "    /* dReLU (bits) + add + backward of bn \"%s\" folded through conv \"%s\" (--no-bn-fold: apart) */\n",
            a->name, c->name);
    fprintf(out, "    cuda_bn_fold_conv1x1_backward_nhwc(%s_dout, %s%s, %s, %s, %s_weight, %s_dweight, %s,\n", op->ident,
            ir_has_mask(net, j) ? op->ident : "NULL", ir_has_mask(net, j) ? "_bits" : "", g, h, c->ident, c->ident, dh);
    fprintf(out, "                                       %s_dweight, %s_dbias, %s_weight, %s_saved, %s_saved + %d,\n",
            a->ident, a->ident, a->ident, a->ident, a->ident, a->c);
    fprintf(out, "                                       BATCH * %ldL, %d, %d);\n", ir_hw(op), c->in_c, c->c);
}

/* The drop path of residual tail add a (ir_op.tail_conv), or NULL. */
static const ir_op *tail_drop_path(const ir_net *net, const ir_op *a) {
    const ir_op *t = &net->ops[a->in[residual_tail_slot(net, a)] - 1];
    return t->kind == IR_STOCHASTIC_DEPTH ? t : NULL;
}

/* A residual tail (lower: fuse_residual_tail.c), forward or backward, at its add i: the conv's
 * output without its bias, the shortcut, the bias, the layer scale's gamma and the drop path. */
static void residual_tail(emitter *e, int i, int bwd) {
    const ir_net *net = e->net;
    const ir_op *a = &net->ops[i], *p = &net->ops[a->tail_conv], *dp = tail_drop_path(net, a);
    int k = residual_tail_slot(net, a), ls = dp ? dp->in[0] - 1 : a->in[k] - 1;
    FILE *out = e->out;
    char x[128], r[128], rows[64], dx[128], dr[128];
    ir_value_name(net, a->tail_conv + 1, x, sizeof x);
    ir_value_name(net, a->in[1 - k], r, sizeof r);
    fprintf(out, "    /* \"%s\"'s bias, layer scale \"%s\"%s%s%s and this add in one pass */\n", p->name, net->ops[ls].name,
            dp ? ", drop path \"" : "", dp ? dp->name : "", dp ? "\"" : "");
    if (!bwd) {
        fprintf(out, "    cuda_residual_tail_forward(%s_out, %s, %s, %s_bias, %s_weight, %s, %ldL, %s, rt_dev.seed, %d,\n"
                     "                               ctx->first_sample, ctx->training);\n",
                a->ident, x, r, p->ident, net->ops[ls].ident, nchw_args(e, a, rows, sizeof rows),
                (long)a->c * ir_hw(a), dp ? c_float(dp->p) : "0.0f", dp ? dp->salt : 0);
        return;
    }
    ir_din_target(net, ls, 0, dx, sizeof dx);
    int rr = ir_route(net, i, 1 - k);
    if (rr == GRAD_NONE) snprintf(dr, sizeof dr, "NULL");
    else ir_din_target(net, i, 1 - k, dr, sizeof dr);
    fprintf(out, "    cuda_residual_tail_backward(%s, %s, %d, %s_dbias, %s_dweight, %s_dout, %s, %s_bias, %s_weight,\n"
                 "                                %s, %ldL, %s, rt_dev.seed, %d, ctx->first_sample);\n",
            dx, dr, rr == GRAD_ADD, p->ident, net->ops[ls].ident, a->ident, x, p->ident, net->ops[ls].ident,
            nchw_args(e, a, rows, sizeof rows), (long)a->c * ir_hw(a), dp ? c_float(dp->p) : "0.0f", dp ? dp->salt : 0);
}

static void forward_op(emitter *e, int i) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[i];
    FILE *out = e->out;
    char a[128], b[128], rows[64];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    long n = ir_out_elems(net, op);
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR:
        if (op->conv_bn == IR_CONV_BN_SBR) {   /* the previous bn's scale, bias and ReLU in the prologue too */
            const ir_op *bn = &net->ops[op->in[0] - 1];
            fprintf(out, "    /* bn \"%s\" + ReLU in the prologue: reads its input (--no-conv-sbr: apart) */\n", bn->name);
            fprintf(out, "    cuda_conv_bn_forward_sbr(%s_fused, %s_out, %s, %s, %s_%s, %s_scale_bias, ctx->training);\n", id,
                    id, ir_value_name(net, bn->in[0], b, sizeof b), in, id, wname(e), bn->ident);
        } else if (op->conv_bn)   /* the next bn's sums from the epilogue (lower: fuse_conv_bn.c) */
            fprintf(out, "    cuda_conv_bn_forward(%s_fused, %s_out, %s, %s_%s, ctx->training);\n", id, id, in, id, wname(e));
        else if (op->dw_bias)   /* the bias in the depthwise kernels' store (fuse_dw_bias.c) */
            fprintf(out, "    cuda_conv2d_forward_bias(%s_conv, %s_out, %s, %s_%s, %s_bias);\n", id, id, in, id, wname(e), id);
        else if (runs_conv(e, op))
            fprintf(out, "    cuda_conv2d_forward(%s_conv, %s_out, %s, %s_%s);\n", id, id, in, id, wname(e));
        else
            fprintf(out, "    cuda_linear_forward(%s_gemm, %s_out, %s, %s_wact);\n", id, id, in, id);
        /* the bias (and a fused ReLU) in place, or by the activation that reads it (lower.c choose_bias_act) */
        if (op->b_off >= 0 && op->bias_act >= 0)
            fprintf(out, "    /* the bias: added by \"%s\"'s kernel */\n", net->ops[op->bias_act].name);
        else if (op->b_off >= 0 && op->in_tail >= 0)
            fprintf(out, "    /* the bias: added by residual tail \"%s\"'s kernel */\n", net->ops[op->in_tail].name);
        else if (op->dw_bias) fprintf(out, "    /* the bias: added by the conv's call */\n");
        else if (op->ln_bias >= 0)
            fprintf(out, "    /* the bias: added by layer norm \"%s\" as it reads x */\n", net->ops[op->ln_bias].name);
        else if (op->b_off >= 0) fprintf(out, "    fused_%s_bias(%s_out, %s_out, %s_bias);\n", id, id, id, id);
        break;
    case IR_BN:
        /* Caffe's use_global_stats: the running statistics in training too; the evaluation's
         * forward-only schedule: in evaluation alone */
        if (op->bn_frozen || net->forward_only) {
            fprintf(out, "    cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n",
                    id, id, op->c, id, id, op->c, c_float(op->eps));
            if (op->bn_in_pool)
                fprintf(out, "    /* applied inside max pooling \"%s\" (cuda_bn_relu_maxpool_forward_nhwc) */\n",
                        net->ops[i + 1].name);
            else if (!op->bn_in_add)
                fprintf(out, "    fused_%s_apply(%s_out, %s, %s_weight, %s_bias, %s_saved, %s_saved + %d);\n", id, id, in,
                        id, id, id, id, op->c);
            else fprintf(out, "    /* applied inside add \"%s\" (cuda_bn_add_relu_nhwc) */\n", bn_add_of(net, i));
            break;
        }
        if (op->bn_in_conv && op->bn_fin_graph) {   /* cuDNN's BN finalize into the prologue's scale and bias */
            fprintf(out,
                    "    if (ctx->training)\n"
                    "        cuda_bn_finalize_scale_bias(%s_bnfin, %s_saved, %s_saved + %d, %s_running_mean, %s_running_var,\n"
                    "                                    %s_scale_bias, %s_weight, %s_bias, %s, BATCH, %d, %ld, %s, %s);\n"
                    "    else {\n"
                    "        cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n"
                    "        cuda_bn_scale_bias(%s_scale_bias, %s_weight, %s_bias, %s_saved, %s_saved + %d, %d);\n"
                    "    }\n",
                    id, id, id, op->c, id, id, id, id, id, in, op->c, ir_hw(op), c_float(op->momentum), c_float(op->eps),
                    id, id, op->c, id, id, op->c, c_float(op->eps), id, id, id, id, id, op->c, op->c);
            fprintf(out, "    /* applied with its ReLU in conv \"%s\"'s prologue (cuda_conv_bn_forward_sbr) */\n",
                    bn_add_of(net, i));
            break;
        }
        if (op->bn_in_conv) {   /* the statistics into the next conv's prologue's scale and bias (fuse_conv_bn.c) */
            fprintf(out,
                    "    if (ctx->training)\n"
                    "        cuda_conv_bn_stats_scale_bias(%s%s, %s_saved, %s_saved + %d, %s_running_mean, %s_running_var,\n"
                    "                                      %s_scale_bias, %s_weight, %s_bias, %s, BATCH, %d, %ld, %s, %s);\n"
                    "    else {\n"
                    "        cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n"
                    "        cuda_bn_scale_bias(%s_scale_bias, %s_weight, %s_bias, %s_saved, %s_saved + %d, %d);\n"
                    "    }\n",
                    op->bn_sums_in_conv ? net->ops[op->in[0] - 1].ident : "NULL", op->bn_sums_in_conv ? "_fused" : "", id,
                    id, op->c, id, id, id, id, id, in, op->c, ir_hw(op), c_float(op->momentum), c_float(op->eps), id, id,
                    op->c, id, id, op->c, c_float(op->eps), id, id, id, id, id, op->c, op->c);
            fprintf(out, "    /* applied with its ReLU in conv \"%s\"'s prologue (cuda_conv_bn_forward_sbr) */\n",
                    bn_add_of(net, i));
            break;
        }
        if (op->bn_fin_graph)   /* cuDNN's BN finalize of the conv's sums (or, refused, our kernel or pass) */
            fprintf(out,
                    "    if (ctx->training)\n"
                    "        cuda_bn_finalize_stats(%s_bnfin, %s_saved, %s_saved + %d, %s_running_mean, %s_running_var,\n"
                    "                               %s_weight, %s_bias, %s, BATCH, %d, %ld, %s, %s, %d);\n"
                    "    else\n"
                    "        cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n",
                    id, id, id, op->c, id, id, id, id, in, op->c, ir_hw(op), c_float(op->momentum), c_float(op->eps),
                    op->bn_retire, id, id, op->c, id, id, op->c, c_float(op->eps));
        else if (op->bn_sums_in_conv)   /* its conv wrote the sums (or, refused, runs the pass here) */
            fprintf(out,
                    "    if (ctx->training)\n"
                    "        cuda_conv_bn_stats(%s_fused, %s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %s,\n"
                    "                           BATCH, %d, %ld, %s, %s, %d);\n"
                    "    else\n"
                    "        cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n",
                    net->ops[op->in[0] - 1].ident, id, id, op->c, id, id, in, op->c, ir_hw(op), c_float(op->momentum),
                    c_float(op->eps), op->bn_retire, id, id, op->c, id, id, op->c, c_float(op->eps));
        else fprintf(out,
                "    if (ctx->training)\n"
                "        cuda_batchnorm_stats_train%s%s(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %s,\n"
                "                                   BATCH, %d, %ld, %s, %s, %d);\n"
                "    else\n"
                "        cuda_batchnorm_stats_eval(%s_saved, %s_saved + %d, %s_running_mean, %s_running_var, %d, %s);\n",
                sfx(e), op->bn_retire ? "_retire" : "", id, id, op->c, id, id, in, op->c, ir_hw(op), c_float(op->momentum), c_float(op->eps),
                net->sync_bn, id, id, op->c, id, id, op->c, c_float(op->eps));
        if (op->bn_in_pool)   /* lower.c choose_bn_pool */
            fprintf(out, "    /* applied inside max pooling \"%s\" (cuda_bn_relu_maxpool_forward_nhwc) */\n",
                    net->ops[i + 1].name);
        else if (!op->bn_in_add)
            fprintf(out, "    fused_%s_apply(%s_out, %s, %s_weight, %s_bias, %s_saved, %s_saved + %d%s%s%s);\n", id, id, in, id,
                    id, id, id, op->c, ir_has_mask(net, i) ? ", " : "", ir_has_mask(net, i) ? id : "",
                    ir_has_mask(net, i) ? "_bits" : "");
        else fprintf(out, "    /* applied inside add \"%s\" (cuda_bn_add_relu_nhwc) */\n", bn_add_of(net, i));
        break;
    case IR_LN:
        if (op->ln_bias_of >= 0) {   /* and the producer conv's bias, added as x is read (fuse_ln_bias.c) */
            fprintf(out, "    cuda_layernorm_forward_bias(%s_out, %s_saved, %s_saved + %ld, %s, %s_bias, %s_weight, %s_bias, %s, %s);\n",
                    id, id, id, (long)net->batch * ir_hw(op), in, net->ops[op->ln_bias_of].ident, id, id,
                    nchw_args(e, op, rows, sizeof rows), c_float(op->eps));
            break;
        }
        fprintf(out, "    cuda_layernorm_forward(%s_out, %s_saved, %s_saved + %ld, %s, %s_weight, %s_bias, %s, %s);\n",
                id, id, id, (long)net->batch * ir_hw(op), in, id, id, nchw_args(e, op, rows, sizeof rows),
                c_float(op->eps));
        break;
    case IR_RELU: fprintf(out, "    cuda_relu_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_GELU: case IR_ACTIVATION:
        if (op->act_bias_of >= 0) {   /* the producer's bias, then the activation: one pass */
            fprintf(out, "    cuda_bias_act_forward(%s_out, %s, %s_bias, %s, %s);\n", id, in, net->ops[op->act_bias_of].ident,
                    nchw_args(e, op, rows, sizeof rows), op->kind == IR_GELU ? "RT_BIAS_ACT_GELU" : ir_activation_const(op));
            break;
        }
        if (op->kind == IR_GELU) {
            fprintf(out, "    cuda_gelu_forward(%s_out, %s, %ld);\n", id, in, n);
            break;
        }
        fprintf(out, "    cuda_activation_forward(%s_out, %s, %ld, %s);\n", id, in, n, ir_activation_const(op));
        break;
    case IR_MAXPOOL:
        if (op->pool_bn >= 0) {   /* the bn before it, its ReLU and this pooling in one pass (lower.c choose_bn_pool) */
            const ir_op *bn = &net->ops[op->pool_bn];
            char x[128], bits[160];
            snprintf(bits, sizeof bits, "%s%s", ir_has_mask(net, op->pool_bn) ? bn->ident : "NULL",
                     ir_has_mask(net, op->pool_bn) ? "_bits" : "");
            fprintf(out, "    cuda_bn_relu_maxpool_forward_nhwc(%s_out, %s_saved, %s, %s, %s_weight, %s_bias, %s_saved,\n"
                         "                                      %s_saved + %d, &%s_shape);\n",
                    id, id, bits, ir_value_name(net, bn->in[0], x, sizeof x), bn->ident, bn->ident, bn->ident, bn->ident,
                    bn->c, id);
            break;
        }
        fprintf(out, "    cuda_maxpool2d_forward%s(%s_out, %s_saved, %s, &%s_shape);\n", sfx(e), id, id, in, id);
        break;
    case IR_AVGPOOL: fprintf(out, "    cuda_avgpool2d_forward%s(%s_out, %s, &%s_shape);\n", sfx(e), id, in, id); break;
    case IR_GAP:
        fprintf(out, "    cuda_global_avgpool_forward%s(%s_out, %s, BATCH, %d, %d);\n", sfx(e), id, in, op->in_c,
                op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    fused_%s_forward(%s_out, %s, rt_dev.seed, %d, ctx->first_sample * %ldL, ctx->training);\n",
                id, id, in, op->salt, (long)op->c * ir_hw(op));
        break;
    case IR_LRN:
        if (op->lrn_within) {   /* Caffe's WITHIN_CHANNEL: a spatial window */
            fprintf(out, "    cuda_lrn_within_forward%s(%s_out, %s_saved, %s, BATCH, %d, %d, %d, %d, %s, %s, %s);\n", sfx(e),
                    id, id, in, op->c, op->h, op->w, op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta),
                    c_float(op->lrn_k));
            break;
        }
        fprintf(out, "    cuda_lrn_forward(%s_out, %s_saved, %s, %s, %d, %s, %s, %s);\n", id, id, in,
                nchw_args(e, op, rows, sizeof rows), op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta),
                c_float(op->lrn_k));
        break;
    case IR_ADD:
        if (op->add_bns) {
            bn_add_forward(e, i);
            break;
        }
        if (op->tail_conv >= 0) {
            residual_tail(e, i, 0);
            break;
        }
        fprintf(out, "    fused_%s_forward(%s_out", id, id);
        for (int k = 0; k < op->n_in; k++) fprintf(out, ", %s", ir_value_name(net, op->in[k], b, sizeof b));
        fprintf(out, ");\n");
        break;
    case IR_CONCAT: emit_concat(e, i, 0, "const void *", "cuda_concat_forward"); break;
    case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: emit_channel_op(e, i, 0, "cuda_"); break;
    case IR_SPACE_TO_DEPTH:
        fprintf(out, "    cuda_space_to_depth_forward(%s_out, %s, BATCH, %d, %d, %d, %d);\n", id, in, op->in_c, op->in_h,
                op->in_w, op->groups);
        break;
    case IR_LEARNED: fprintf(out, "    cuda_learned_forward(%s_out, %s_weight, BATCH, %ld);\n", id, id, n / net->batch); break;
    case IR_ATTENTION:   /* the runtime's own kernels (attention.cu, window_attention.cu), or cuDNN's SDPA */
        if (op->attn_sdpa) {   /* lower: choose_attention.c */
            fprintf(out, "    cuda_attention_sdpa_forward(%s_sdpa, %s_out, %s_saved, %s, %s_weight, %s_bias);\n", id, id, id, in,
                    id, id);
            break;
        }
        if (op->window) {   /* Swin's shifted windows */
            fprintf(out, "    cuda_window_attention_forward(%s_out, %s_saved, %s, %s_weight, %s_bias, BATCH, %d, %d, %d, %d, %d, "
                    "%d);\n", id, id, in, id, id, op->c, op->h, op->w, op->heads, op->window, op->shift);
            break;
        }
        fprintf(out, "    cuda_attention_forward(%s_out, %s_saved, %s, %s_weight, %s_bias, BATCH, %d, %d, %d);\n", id, id, in,
                id, id, op->c, op->h, op->heads);
        break;
    case IR_LAYER_SCALE: case IR_STOCHASTIC_DEPTH:
        if (op->in_tail >= 0) {
            fprintf(out, "    /* in residual tail \"%s\"'s kernel: no output written */\n", net->ops[op->in_tail].name);
            break;
        }
        if (op->kind == IR_LAYER_SCALE) {
            fprintf(out, "    fused_%s_forward(%s_out, %s, %s_weight);\n", id, id, in, id);
            break;
        }
        fprintf(out, "    cuda_drop_path_forward(%s_out, %s, BATCH, %ld, %s, rt_dev.seed, %d, ctx->first_sample, "
                "ctx->training);\n", id, in, (long)op->c * ir_hw(op), c_float(op->p), op->salt);
        break;
    case IR_STOP_GRADIENT:   /* the identity into its own tensor; no backward */
        fprintf(out, "    rt_cuda_copy_d2d(%s_out, %s, sizeof(act_t) * %ldL);\n", id, in, n);
        break;
    case IR_FLATTEN: case IR_OP_COUNT: break;   /* a view (the walker says so); not an op */
    }
}

static void step_begin(emitter *e) {
    fprintf(e->out, "/* Forward, loss and backward of one batch: device work only, which the runtime captures\n"
                    " * once into a CUDA graph. Gradients are overwritten in G; with several ranks every\n"
                    " * bucket is all-reduced on NCCL's stream as soon as it is complete. */\n"
                    "static void train_step_device(void *arg) {\n"
                    "    rt_model_ctx *ctx = arg;\n"
                    "    RT_CUDA_DEVICE_LOCALS;\n"
                    "    forward(ctx);\n");
}

/* The loss into rt_dev.loss on the device, its gradient times the optimizer's loss scale and
 * the head's weight. A main head of weight 1 writes rt_dev.loss itself; any other head writes
 * its own mean into rt_dev.loss[1], which cuda_loss_add weighs into rt_dev.loss[0] (the main
 * head first, so that the sum starts there). */
static void loss(emitter *e, int head, int dense_target, const char *dlogits, const char *logits, const char *args,
                 double weight) {
    const char *fn = dense_target ? "cuda_target_loss" : "cuda_softmax_xent";
    int own = head > 0 || weight != 1.0;
    char scale[48];
    snprintf(scale, sizeof scale, "%s / BATCH", weight == 1.0 ? "1.0f" : c_float(weight));
    fprintf(e->out, "    %s(%s, %s, %s, rt_dev.y, %s, %s,\n"
                    "    %*srt_cuda_optim_loss_scale(rt_dev.optim));\n",
            fn, own ? "rt_dev.loss + 1" : "rt_dev.loss", dlogits, logits, args, scale, (int)strlen(fn) + 1, "");
    if (own) fprintf(e->out, "    cuda_loss_add(rt_dev.loss, rt_dev.loss + 1, %s, %d);\n", c_float(weight), head == 0);
}

static void backward_op(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    char a[128], d[128], o[128], g[128], rows[64];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    const char *din = ir_din_target(net, j, 0, d, sizeof d);
    /* A fused ReLU's mask is the op's own (activated) output. */
    const char *mask = op->act ? ir_value_name(net, j + 1, g, sizeof g) : "NULL";
    snprintf(o, sizeof o, "%s_dout", id);
    long n = ir_out_elems(net, op);
    switch (op->kind) {
    case IR_CONV: case IR_LINEAR:
        if (op->kind == IR_CONV && op->folded_in >= 0) {   /* fuse_bn_fold.c */
            fprintf(out, "    /* folded into the backward of add \"%s\" (cuda_bn_fold_conv1x1_backward_nhwc) */\n",
                    net->ops[op->folded_in].name);
            break;
        }
        /* the bias gradient; with a fused ReLU, dout is masked in place first */
        if (op->b_off >= 0 && op->in_tail >= 0)
            fprintf(out, "    /* the bias gradient: summed by residual tail \"%s\"'s kernel */\n", net->ops[op->in_tail].name);
        else if (op->b_off >= 0 && op->bias_act >= 0 && net->ops[op->bias_act].act_bgrad)
            fprintf(out, "    /* the bias gradient: summed by \"%s\"'s backward */\n", net->ops[op->bias_act].name);
        else if (op->dw_bias) fprintf(out, "    /* the bias gradient: summed by the conv's backward */\n");
        else if (op->ln_bias >= 0)
            fprintf(out, "    /* the bias gradient: summed by layer norm \"%s\"'s backward */\n", net->ops[op->ln_bias].name);
        else if (op->b_off >= 0)
            fprintf(out, "    cuda_bias_backward(%s_dbias, %s, %s, %s, %s);\n", id, op->act ? o : "NULL", o, mask,
                    nchw_args(e, op, rows, sizeof rows));
        if (op->conv_bn == IR_CONV_BN_SBR) {   /* its input, never written by the fused forward */
            const ir_op *bn = &net->ops[op->in[0] - 1];
            char x[128];
            fprintf(out, "    /* the weight gradient recomputes bn \"%s\" + ReLU from its input (ConvBNwgrad) */\n", bn->name);
            fprintf(out, "    cuda_conv_bn_backward_sbr(%s_wgrad, %s, %s_dweight, %s, %s, %s_work, %s_%s, %s_scale_bias);\n", id,
                    op->dgrad_bn ? "NULL" : din, id, o, ir_value_name(net, bn->in[0], x, sizeof x), id, id, wname(e),
                    bn->ident);
            if (op->dgrad_bn) {   /* the data gradient through bn's ReLU, with bn's backward sums (--no-conv-dgrad-fuse: apart) */
                fprintf(out, "    /* the data gradient through bn \"%s\"'s ReLU and its backward sums (DgradDreluBNBwdWeight) */\n", bn->name);
                fprintf(out, "    cuda_conv_bn_dgrad(%s_dgrad, %s, %s_dweight, %s_dbias, %s, %s_%s, %s, %s_weight, %s_bias, %s_saved, %s_saved + %d);\n",
                        id, din, bn->ident, bn->ident, o, id, wname(e), x, bn->ident, bn->ident, bn->ident, bn->ident, bn->c);
            }
        } else if (op->dw_bias)   /* and the bias gradient, in the depthwise weight gradient's kernel */
            fprintf(out, "    cuda_conv2d_backward_bias(%s_conv, %s, %s_dweight, %s_dbias, %s, %s, %s_%s);\n", id, din, id, id,
                    o, in, id, wname(e));
        else if (runs_conv(e, op))
            fprintf(out, "    cuda_conv2d_backward(%s_conv, %s, %s_dweight, %s, %s, %s_%s);\n", id, din, id, o, in, id,
                    wname(e));
        else
            fprintf(out, "    cuda_linear_backward(%s_gemm, %s, %s_dweight, %s, %s, %s_wact);\n", id, din, id, o, in, id);
        break;
    case IR_BN:
        if (op->bn_frozen) {
            fprintf(out, "    cuda_batchnorm_backward_frozen(%s, %s_dweight, %s_dbias, %s, %s, %s, %s_weight, %s_saved, %s_saved + %d, BATCH, %d, %ld);\n",
                    din, id, id, o, mask, in, id, id, id, op->c, op->c, ir_hw(op));
            break;
        }
        if (op->bn_bwd_in_add) {
            int folded = op->in[0] > 0 && net->ops[op->in[0] - 1].folded_in >= 0;   /* fuse_bn_fold.c */
            fprintf(out, "    /* in the backward of add \"%s\" (cuda_bn_%s_backward_nhwc) */\n", bn_add_of(net, j),
                    folded ? "fold_conv1x1" : "add_relu");
            break;
        }
        if (op->bn_dgrad_in_conv) {   /* the sums (and the ReLU) in the next conv's data gradient: the dx pass */
            int r = j + 1;
            while (r < net->n_ops && !(net->ops[r].dgrad_bn && net->ops[r].in[0] == j + 1)) r++;
            fprintf(out, "    cuda_batchnorm_backward_nhwc_dgrad(%s_dgrad, %s, %s_dweight, %s_dbias, %s, %s_scale_bias, %s, %s_weight, %s_saved, %s_saved + %d, BATCH, %d, %ld);\n",
                    net->ops[r].ident, din, id, id, o, id, in, id, id, id, op->c, op->c, ir_hw(op));
            break;
        }
        if (op->bn_in_conv) {   /* applied in the next conv's prologue: the ReLU recomputed from x, scale and bias */
            fprintf(out, "    cuda_batchnorm_backward_nhwc_sbr(%s, %s_dweight, %s_dbias, %s, %s_scale_bias, %s, %s_weight, %s_saved, %s_saved + %d, BATCH, %d, %ld);\n",
                    din, id, id, o, id, in, id, id, id, op->c, op->c, ir_hw(op));
            break;
        }
        if (op->bn_in_pool) {   /* the max pooling's backward gathered in both passes (lower.c choose_bn_pool) */
            const char *p = net->ops[j + 1].ident;
            fprintf(out, "    cuda_batchnorm_backward_nhwc_pool(%s, %s_dweight, %s_dbias, %s_dout, %s_saved, %s_bits, %s, %s_weight, %s_saved, %s_saved + %d, &%s_shape);\n",
                    din, id, id, p, p, id, in, id, id, id, op->c, p);
            break;
        }
        if (ir_has_mask(net, j)) {   /* the ReLU's bits, not its output (--no-relu-mask: the output) */
            fprintf(out, "    cuda_batchnorm_backward_nhwc_bits(%s, %s_dweight, %s_dbias, %s, %s_bits, %s, %s_weight, %s_saved, %s_saved + %d, BATCH, %d, %ld);\n",
                    din, id, id, o, id, in, id, id, id, op->c, op->c, ir_hw(op));
            break;
        }
        fprintf(out, "    cuda_batchnorm_backward%s%s(%s, %s_dweight, %s_dbias, %s, %s, %s, %s_weight, %s_saved, %s_saved + %d, BATCH, %d, %ld, %d);\n",
                sfx(e), op->bn_retire ? "_retire" : "", din, id, id, o, mask, in, id, id, id, op->c, op->c, ir_hw(op), net->sync_bn);
        break;
    case IR_LN:
        if (op->ln_bias_of >= 0) {   /* and the producer conv's bias gradient (fuse_ln_bias.c) */
            const char *p = net->ops[op->ln_bias_of].ident;
            fprintf(out, "    cuda_layernorm_backward_bias(%s, %s_dweight, %s_dbias, %s_dbias, %s, %s, %s_bias, %s_weight, %s_saved, %s_saved + %ld, %s);\n",
                    din, id, id, p, o, in, p, id, id, id, (long)net->batch * ir_hw(op), nchw_args(e, op, rows, sizeof rows));
            break;
        }
        fprintf(out, "    cuda_layernorm_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_saved + %ld, %s);\n",
                din, id, id, o, in, id, id, id, (long)net->batch * ir_hw(op), nchw_args(e, op, rows, sizeof rows));
        break;
    case IR_RELU: fprintf(out, "    cuda_relu_backward(%s, %s, %s_out, %ld);\n", din, o, id, n); break;
    case IR_GELU: case IR_ACTIVATION:
        if (op->act_bias_of >= 0 && op->act_bgrad) {   /* and the producer's bias gradient (fuse_bias_act_grad.c) */
            const char *p = net->ops[op->act_bias_of].ident;
            fprintf(out, "    cuda_bias_act_backward_bgrad(%s, %s_dbias, %s, %s, %s_bias, %s, %s);\n", din, p, o, in, p,
                    nchw_args(e, op, rows, sizeof rows), op->kind == IR_GELU ? "RT_BIAS_ACT_GELU" : ir_activation_const(op));
            break;
        }
        if (op->act_bias_of >= 0) {   /* act'(x + b), x the producer's output without its bias */
            fprintf(out, "    cuda_bias_act_backward(%s, %s, %s, %s_bias, %s, %s);\n", din, o, in,
                    net->ops[op->act_bias_of].ident, nchw_args(e, op, rows, sizeof rows),
                    op->kind == IR_GELU ? "RT_BIAS_ACT_GELU" : ir_activation_const(op));
            break;
        }
        if (op->kind == IR_GELU) {
            fprintf(out, "    cuda_gelu_backward(%s, %s, %s, %ld);\n", din, o, in, n);
            break;
        }
        fprintf(out, "    cuda_activation_backward(%s, %s, %s, %ld, %s);\n", din, o, in, n, ir_activation_const(op));
        break;
    case IR_MAXPOOL:
        fprintf(out, "    cuda_maxpool2d_backward%s(%s, %s, %s_saved, &%s_shape);\n", sfx(e), din, o, id, id);
        break;
    case IR_AVGPOOL: fprintf(out, "    cuda_avgpool2d_backward%s(%s, %s, &%s_shape);\n", sfx(e), din, o, id); break;
    case IR_GAP:
        fprintf(out, "    cuda_global_avgpool_backward%s(%s, %s, BATCH, %d, %d);\n", sfx(e), din, o, op->in_c,
                op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    fused_%s_backward(%s, %s, rt_dev.seed, %d, ctx->first_sample * %ldL);\n", id, din, o, op->salt,
                (long)op->c * ir_hw(op));
        break;
    case IR_LRN:
        if (op->lrn_within) {
            fprintf(out, "    cuda_lrn_within_backward%s(%s, %s, %s, %s_out, %s_saved, BATCH, %d, %d, %d, %d, %s, %s);\n",
                    sfx(e), din, o, in, id, id, op->c, op->h, op->w, op->lrn_size, c_float(op->lrn_alpha),
                    c_float(op->lrn_beta));
            break;
        }
        fprintf(out, "    cuda_lrn_backward(%s, %s, %s, %s_out, %s_saved, %s, %d, %s, %s);\n", din, o, in, id, id,
                nchw_args(e, op, rows, sizeof rows), op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta));
        break;
    case IR_LAYER_SCALE: case IR_STOCHASTIC_DEPTH:
        if (op->in_tail >= 0) {
            fprintf(out, "    /* in residual tail \"%s\"'s backward */\n", net->ops[op->in_tail].name);
            break;
        }
        if (op->kind == IR_STOCHASTIC_DEPTH) {
            fprintf(out, "    cuda_drop_path_backward(%s, %s, BATCH, %ld, %s, rt_dev.seed, %d, ctx->first_sample, 1);\n",
                    din, o, (long)op->c * ir_hw(op), c_float(op->p), op->salt);
            break;
        }
        fprintf(out, "    cuda_layer_scale_backward(%s, %s_dweight, %s, %s, %s_weight, %s);\n", din, id, o, in, id,
                nchw_args(e, op, rows, sizeof rows));
        break;
    case IR_ADD:
        if (op->bn_fold >= 0) {
            bn_fold_backward(e, j);
            break;
        }
        if (op->add_bwd_fused) {
            bn_add_backward(e, j);
            break;
        }
        if (op->tail_conv >= 0) {
            residual_tail(e, j, 1);
            break;
        }
        /* dout (masked by a fused ReLU) to every input, assigned or added by its route, in
         * one generated kernel */
        fprintf(out, "    fused_%s_backward(%s", id, o);
        if (op->act) fprintf(out, ", %s", mask);
        for (int k = 0; k < op->n_in; k++)
            fprintf(out, ", %s", ir_route(net, j, k) == GRAD_NONE ? "NULL" : ir_grad_name(net, op->in[k], d, sizeof d));
        fprintf(out, ");\n");
        break;
    case IR_CONCAT: emit_concat(e, j, 1, "void *", "cuda_concat_backward"); break;
    case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: emit_channel_op(e, j, 1, "cuda_"); break;
    case IR_SPACE_TO_DEPTH:
        fprintf(out, "    cuda_space_to_depth_backward(%s, %s, BATCH, %d, %d, %d, %d);\n", din, o, op->in_c, op->in_h,
                op->in_w, op->groups);
        break;
    case IR_LEARNED: fprintf(out, "    cuda_learned_backward(%s_dweight, %s, BATCH, %ld);\n", id, o, n / net->batch); break;
    case IR_ATTENTION:
        if (op->attn_sdpa) {
            fprintf(out, "    cuda_attention_sdpa_backward(%s_sdpa, %s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, "
                    "%s_work);\n", id, din, id, id, o, in, id, id, id);
            break;
        }
        if (op->window) {
            fprintf(out, "    cuda_window_attention_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_work, "
                    "BATCH, %d, %d, %d, %d, %d, %d);\n", din, id, id, o, in, id, id, id, op->c, op->h, op->w, op->heads,
                    op->window, op->shift);
            break;
        }
        fprintf(out, "    cuda_attention_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_work, BATCH, %d, %d, %d);\n",
                din, id, id, o, in, id, id, id, op->c, op->h, op->heads);
        break;
    case IR_FLATTEN: case IR_STOP_GRADIENT: case IR_OP_COUNT: break;   /* no backward: views, and the stop */
    }
}

static void step_end(emitter *e) { fprintf(e->out, "}\n\n"); }

/* The cuDNN and cuBLASLt plans of the net's shapes, created at start-up before allocation
 * (`create`), and cuDNN's algorithm search after it on each conv's own buffers (`find`). The
 * evaluation's schedule (forward only) has no gradients: its search is the forward's alone. */
static void emit_plans(emitter *e, const char *create, const char *find) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    int fwd_only = net->forward_only;
    fprintf(out, fwd_only ? "/* The evaluation's library plans (descriptors, layouts), before allocation; returns the\n"
                            " * cuDNN workspace the memory check counts over every conv created so far (training's\n"
                            " * and these): the cap, and the 16-bit weight gradient's room. */\n"
                          : "/* The library plans (descriptors, layouts), before allocation; returns the cuDNN workspace\n"
                            " * the memory check counts for the search: the cap, and the 16-bit weight gradient's room. */\n");
    fprintf(out, "%s {\n", create);
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (runs_conv(e, op))
            fprintf(out, "    %s_conv = rt_cuda_conv_create%s(&%s_shape);\n", op->ident, sfx(e), op->ident);
        if (op->conv_bn)
            fprintf(out, "    %s_fused = rt_cuda_conv_bn_create%s(%s_conv);\n", op->ident,
                    op->conv_bn == IR_CONV_BN_SBR ? "_sbr" : "", op->ident);
        if (op->dgrad_bn)
            fprintf(out, "    %s_dgrad = rt_cuda_conv_bn_dgrad_create(%s_conv);\n", op->ident, op->ident);
        if (op->bn_fin_graph)   /* after the conv that sums its input (fuse_bn_finalize.c) */
            fprintf(out, "    %s_bnfin = rt_cuda_bn_finalize_create(%s_fused, %s_conv);\n", op->ident,
                    net->ops[op->in[0] - 1].ident, net->ops[op->in[0] - 1].ident);
        if (op->conv_bn == IR_CONV_BN_SBR)
            fprintf(out, "    %s_wgrad = rt_cuda_conv_bn_wgrad_create(%s_conv);\n", op->ident, op->ident);
        else if (op->attn_sdpa)
            fprintf(out, "    %s_sdpa = rt_cuda_sdpa_create(BATCH, %d, %d, %d);\n", op->ident, op->c, op->h * op->w, op->heads);
        else if (op->kind == IR_LINEAR)
            fprintf(out, "    %s_gemm = rt_cuda_linear_create(BATCH, %d, %d);\n", op->ident,
                    op->in_c * op->in_h * op->in_w, op->c);
    }
    fprintf(out, "    return rt_cuda_conv_workspace_bound(cap);\n}\n\n");
    fprintf(out, fwd_only ? "/* cuDNN's forward algorithms, timed once after allocation on each conv's own buffers (in\n"
                            " * the arena the training shares). The search overwrites only the output, an activation\n"
                            " * the evaluation computes before reading it; it reads the input and the weights. */\n"
                          : "/* cuDNN's algorithms, timed once after allocation on each conv's own buffers. The search\n"
                            " * overwrites the output, the input gradient and the weight gradient: activations and\n"
                            " * gradients the first step computes before reading them (the runtime zeroes G after);\n"
                            " * it only reads the input, the weights and the output gradient. */\n");
    fprintf(out, "%s {\n"
                 "    RT_CUDA_DEVICE_LOCALS;\n"
                 "    size_t work = 0, w;\n"
                 "    (void)w, (void)cap;\n", find);
    /* lower: the cuDNN graphs' engines timed among up to this many candidates (0: heuristics' first) */
    fprintf(out, "    rt_cuda_graph_autotune(%d);   /* %s */\n", e->s->graph_candidates,
            e->s->graph_candidates ? "each cuDNN graph's engine: the fastest of the candidates timed now (rank 0's)"
                                   : "each cuDNN graph's engine: the heuristics' first (rank 0's; --no-graph-autotune)");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->attn_sdpa)   /* cuDNN's fused attention: its plans, within the workspace the convs' search set */
            fprintf(out, "    if ((w = rt_cuda_sdpa_select(%s_sdpa, %d)) > work)\n        work = w;\n", op->ident, !fwd_only);
        if (!runs_conv(e, op)) continue;
        char a[128], d[128];
        const char *in = ir_value_name(net, op->in[0], a, sizeof a);
        const char *id = op->ident;
        fprintf(out, "    if ((w = rt_cuda_conv_select(%s_conv, cap, %s_out, %s, %s_%s, ", id, id, in, id, wname(e));
        if (fwd_only)
            fprintf(out, "NULL, NULL, NULL)) > work)\n");
        else if (op->folded_in >= 0)   /* fuse_bn_fold.c: no backward of its own, so only its forward is searched */
            fprintf(out, "NULL, NULL, NULL)) > work)   /* backward folded into add \"%s\" */\n",
                    net->ops[op->folded_in].name);
        else
            fprintf(out, "%s_dout, %s, %s_dweight)) > work)\n", id, ir_din_target(net, i, 0, d, sizeof d), id);
        fprintf(out, "        work = w;\n");
        if (op->conv_bn)   /* the fused graph's plan, its workspace joined to the conv's */
            fprintf(out, "    if ((w = rt_cuda_conv_bn_select(%s_fused, cap)) > work)\n        work = w;\n", id);
        if (op->conv_bn == IR_CONV_BN_SBR)   /* its weight gradient's graph, the same way */
            fprintf(out, "    if ((w = rt_cuda_conv_bn_wgrad_select(%s_wgrad, cap)) > work)\n        work = w;\n", id);
        if (op->dgrad_bn)   /* its data gradient's graph, the same way */
            fprintf(out, "    if ((w = rt_cuda_conv_bn_dgrad_select(%s_dgrad, cap)) > work)\n        work = w;\n", id);
    }
    for (int i = 0; i < net->n_ops; i++)   /* the BN finalize graphs, after the convs whose workspace they share */
        if (net->ops[i].bn_fin_graph)
            fprintf(out, "    if ((w = rt_cuda_bn_finalize_select(%s_bnfin, cap)) > work)\n        work = w;\n", net->ops[i].ident);
    fprintf(out, "    return work;\n}\n\n");
}

/* After init: the plans the runtime creates at start-up, the algorithm search on each conv's
 * own buffers, and the channels-last weights. */
static void init_end(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "}\n\n");
    emit_plans(e, "static size_t create_plans(size_t cap)", "static size_t find_algorithms(size_t cap)");
    if (!e->s->opt.nhwc) return;
    fprintf(out, "/* The channels-last copies of the conv weights ([K][R][S][C]) from WA: after every change\n"
                 " * of WA (upload, each optimizer step). */\n"
                 "static void weights_nhwc(void) {\n"
                 "    const act_t *WA = rt_dev.WA;\n"
                 "    act_t *WN = rt_dev.WN;\n");
    for (int i = 0; i < net->n_ops; i++)
        if (runs_conv(e, &net->ops[i]))
            fprintf(out, "    rt_cuda_conv_weight_nhwc(%s_conv, %s_wnhwc, %s_wact);\n", net->ops[i].ident,
                    net->ops[i].ident, net->ops[i].ident);
    fprintf(out, "}\n\n");
}


static void descriptor(emitter *e, int n_tensors) {
    const ir_net *net = e->net;
    static const char *const scaling[] = { "0", "1", "2" };
    char offset[32], sums[32], fold[160];
    snprintf(offset, sizeof offset, "%ld", net->tensors[net->act_of[ir_root(net, net->n_ops)]].offset);
    snprintf(sums, sizeof sums, "%ld", ir_partial_sum_channels(net));
    size_t fold_bytes = ir_bn_fold_scratch_bytes(net);   /* (none: the descriptor as before) */
    fold[0] = 0;
    if (fold_bytes)
        snprintf(fold, sizeof fold, "    .bn_fold_bytes = %zu,   /* the largest bn fold's scratch (fuse_bn_fold.c) */\n", fold_bytes);
    template_var extra[] = {
        { "MATH", precision_enums[e->s->precision] }, { "NHWC", e->s->opt.nhwc ? "1" : "0" },
        { "PARTIAL_SUM_CHANNELS", sums },
        { "LOSS_SCALE", scaling[e->s->loss_scale] },
        { "INIT_SCALE", c_float(e->s->loss_scale ? e->s->init_scale : 0) },
        { "WEIGHTS_NHWC", e->s->opt.nhwc ? "weights_nhwc" : "NULL" }, { "LOGITS_OFFSET", offset },
        { "INPUT_U8", net->input_float ? "0" : "1" }, { "BN_FOLD", fold },
        { "EVAL", e->info->eval_shape ? "    /* evaluation at data.val's resolution: model_eval.c's schedule */\n"
                                        "    .eval_create_plans = model_eval_create_plans,\n"
                                        "    .eval_find_algorithms = model_eval_find_algorithms, .eval_forward = model_eval_forward,\n"
                                        : "" },
    };
    if (e->info->eval_shape)
        fprintf(e->out, "/* model_eval.c: the forward lowered at data.val's resolution, over the same device buffers */\n"
                        "size_t model_eval_create_plans(size_t cap);\n"
                        "size_t model_eval_find_algorithms(size_t cap);\n"
                        "const void *model_eval_forward(rt_model_ctx *ctx);\n\n");
    emit_template(e, "cuda_model_descriptor.c.in", n_tensors, extra, (int)(sizeof extra / sizeof extra[0]));
}

/* model_eval.c's entry points: its own plans and its forward algorithms' search (the
 * workspace is shared: the runtime keeps the larger), and its forward over the shared
 * parameters, arena and input, returning the logits. */
static void eval_end(emitter *e, const char *logits) {
    emit_plans(e, "size_t model_eval_create_plans(size_t cap)", "size_t model_eval_find_algorithms(size_t cap)");
    fprintf(e->out, "/* The logits (act_t, in the arena) of the batch in rt_dev.x, at this resolution. */\n"
                    "const void *model_eval_forward(rt_model_ctx *ctx) {\n"
                    "    unsigned char *arena = rt_dev.arena;\n"
                    "    forward(ctx);\n"
                    "    return %s;\n}\n", logits);
}

const emit_backend emit_cuda_backend = {
    .act_type = "act_t",
    .accumulate_fn = "cuda_tensor_accumulate",
    .copy_fn = "rt_cuda_copy_d2d",
    .zero_fmt = "    rt_cuda_memset0(%s%s, sizeof(float) * %ldL);\n",
    .bucket_ready = "rt_cuda_grad_bucket_ready(",
    .main_template = "cuda_model_main.c.in",
    .banner = banner, .layout_head = layout_head, .param_extra = param_extra, .state = state,
    .forward_begin = forward_begin, .forward_op = forward_op, .step_begin = step_begin, .loss = loss,
    .backward_op = backward_op, .step_end = step_end, .init_end = init_end, .descriptor = descriptor,
    .eval_end = eval_end,
};
