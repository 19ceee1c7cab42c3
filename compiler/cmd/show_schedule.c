/* `trainc show --schedule`: the lowered schedule, op by op, with every choice lower() made for
 * it on the chosen backend and layout (fusions, algorithms, engines), read from the same
 * lowering `build` emits; nothing here decides. What depends on the machine that runs the
 * trainer is said as such: cuDNN's algorithm search at start-up, and the CPU conv kernels
 * that need AVX-512F or oneDNN's BF16 convolutions, with the rule lowering recorded for them
 * (rt_conv_choice.h: the condition, and what runs where it fails). */
#include "show.h"

#include "ir_nhwc.h"
#include "rt_cuda.h"   /* RT_LN_BGRAD_MAX_C */
#include "rt_depthwise_plan.h"
#include "rt_env.h"

#include <stdio.h>
#include <string.h>

/* A growing "; "-separated list of one op's choices. */
typedef struct {
    char text[1024];
    size_t n;
} choices;

static void say(choices *c, const char *fmt, const char *a) {
    if (c->n >= sizeof c->text - 1) return;
    int w = snprintf(c->text + c->n, sizeof c->text - c->n, "%s", c->n ? "; " : "");
    c->n += (size_t)w;
    if (c->n >= sizeof c->text - 1) return;
    w = snprintf(c->text + c->n, sizeof c->text - c->n, fmt, a ? a : "");
    c->n += (size_t)w < sizeof c->text - c->n ? (size_t)w : sizeof c->text - 1 - c->n;
}

/* The CPU conv's algorithm and, where it needs something of the host, the recorded rule:
 * "A where <condition>, else B (where <condition>, else C)". */
static void cpu_conv_algo(const ir_op *op, choices *c) {
    char text[480];
    const char *rule = ir_conv_host_rule(op->conv_algo), *rule2 = ir_conv_host_rule(op->conv_alt);
    int n = snprintf(text, sizeof text, "%s", ir_conv_algo_text(op, op->conv_algo));
    if (rule && n < (int)sizeof text) n += snprintf(text + n, sizeof text - n, " %s, else %s", rule, ir_conv_algo_text(op, op->conv_alt));
    if (rule && rule2 && op->conv_alt != op->conv_algo && n < (int)sizeof text)
        snprintf(text + n, sizeof text - n, " %s, else %s", rule2, ir_conv_algo_text(op, op->conv_fallback));
    say(c, "%s", text);
}

static void cpu_op(const ir_net *net, const ir_op *op, choices *c) {
    switch (op->kind) {
    case IR_CONV:
        cpu_conv_algo(op, c);
        if (op->act) say(c, "ReLU in the conv's pass%s", "");
        if (op->pools_into >= 0)
            say(c, "max pooling \"%s\" in the same call (one image at a time in cache, where the 1-channel kernel "
                   "runs; else the two ops)", net->ops[op->pools_into].name);
        break;
    case IR_LINEAR:
        if (op->act) say(c, "ReLU in the linear's pass%s", "");
        break;
    case IR_ADD:
        if (op->bn_in > 0) say(c, "bn \"%s\" computed inside this add", net->ops[op->bn_in - 1].name);
        if (op->act) say(c, "ReLU in the add's pass%s", "");
        if (op->mask_in_bn) say(c, "the ReLU's mask applied by that bn's backward%s", "");
        break;
    case IR_BN:
        if (op->into_add) say(c, "runs inside the next add (no stored output)%s", "");
        if (op->act) say(c, "ReLU in the bn's pass%s", "");
        break;
    case IR_MAXPOOL:
        if (op->pooled_in >= 0) say(c, "computed in \"%s\"'s call", net->ops[op->pooled_in].name);
        break;
    default:
        if (op->act) say(c, "ReLU fused%s", "");
        break;
    }
}

static void cuda_op(const schedule *s, const ir_op *op, choices *c) {
    const ir_net *net = &s->net;
    int ch, h, w;
    switch (op->kind) {
    case IR_CONV: {
        rt_conv_shape sh = { .n = net->batch, .c = op->in_c, .h = op->in_h, .w = op->in_w, .oc = op->c, .kh = op->kh,
                             .kw = op->kw, .sh = op->sh, .sw = op->sw, .ph = op->ph, .pw = op->pw, .dh = op->dh,
                             .dw = op->dw, .groups = op->groups, .oh = op->h, .ow = op->w };
        int own_dw = op->groups > 1 && rt_dw_fits(&sh) && !rt_env_is(RT_ENV_TRAINC_CUDA_DEPTHWISE, "cudnn");
        if (own_dw) say(c, "depthwise: our direct kernels (conv2d_depthwise.cu)%s", "");
        else if (op->conv_bn == IR_CONV_BN_SBR) {
            char text[400];
            snprintf(text, sizeof text, "cuDNN graph %s: reads bn \"%s\"'s input and applies its scale, bias and ReLU "
                     "in its prologue, the next bn's sums from its epilogue (unfused, saying why, where cuDNN refuses it "
                     "at start-up)", ir_conv_bn_name(op->conv_bn), net->ops[op->in[0] - 1].name);
            say(c, "%s", text);
        }
        else if (op->conv_bn)
            say(c, "cuDNN graph %s: the next bn's sums from its epilogue (unfused, saying why, where cuDNN refuses "
                   "it at start-up)", ir_conv_bn_name(op->conv_bn));
        else say(c, "cuDNN (algorithms searched at start-up)%s", "");
        if (op->dw_bias && own_dw)
            say(c, "adds its bias in the store; backward: the bias gradient summed in the weight gradient's kernel "
                   "(fuse_dw_bias.c)%s", "");
        else if (op->dw_bias)
            say(c, "its bias in a pass of its own each way after cuDNN (TRAINC_CUDA_DEPTHWISE=cudnn)%s", "");
        if (!op->conv_bn && op->conv_bn_why) say(c, "no fused conv + statistics: %s", op->conv_bn_why);
        if (op->sbr_why) say(c, "no previous bn's scale-bias-ReLU in its prologue: %s", op->sbr_why);
        if (op->conv_bn == IR_CONV_BN_SBR)
            say(c, "backward: cuDNN graph ConvBNwgrad recomputes bn \"%s\"'s output from its input, scale and bias "
                   "inside the weight gradient (unfused, saying why, where cuDNN refuses it)", net->ops[op->in[0] - 1].name);
        if (op->dgrad_bn)
            say(c, "backward: cuDNN graph DgradDreluBNBwdWeight: the data gradient through bn \"%s\"'s ReLU (recomputed "
                   "from its input and statistics) with that bn's backward sums from its epilogue (unfused, saying why, "
                   "where cuDNN refuses it)", net->ops[op->in[0] - 1].name);
        if (op->dgrad_why) say(c, "no fused data gradient with the previous bn's backward sums: %s", op->dgrad_why);
        if (op->bias_act >= 0) say(c, "its bias added by \"%s\"'s kernel", net->ops[op->bias_act].name);
        if (op->ln_bias >= 0)
            say(c, "its bias added by layer norm \"%s\" as it reads x, and its gradient summed by that norm's backward "
                   "(fuse_ln_bias.c)", net->ops[op->ln_bias].name);
        if (op->folded_in >= 0)
            say(c, "backward: its weight and data gradients inside add \"%s\"'s, the bn's backward folded through it "
                   "(no launch of its own; its output gradient never written)", net->ops[op->folded_in].name);
        break;
    }
    case IR_LINEAR:
        if (s->opt.nhwc && ir_nhwc_linear_as_conv(net, op, &ch, &h, &w)) say(c, "runs as a cuDNN conv over the channels-last positions%s", "");
        else say(c, "cuBLASLt%s", "");
        if (op->bias_act >= 0) say(c, "its bias added by \"%s\"'s kernel", net->ops[op->bias_act].name);
        break;
    case IR_LN:
        if (op->ln_bias_of >= 0) {
            char text[400];
            snprintf(text, sizeof text, "adds \"%s\"'s bias as it reads x (no bias pass); backward: that bias's gradient "
                     "summed %s (fuse_ln_bias.c)", net->ops[op->ln_bias_of].name,
                     (s->opt.nhwc || (long)op->h * op->w == 1) && op->c <= RT_LN_BGRAD_MAX_C
                         ? "where din is written (layernorm.cu)" : "by bias.cu's pass over din");
            say(c, "%s", text);
        }
        break;
    case IR_GELU: case IR_ACTIVATION:
        if (op->act_bias_of >= 0) say(c, "adds \"%s\"'s bias in the same pass (bias_act.cu)", net->ops[op->act_bias_of].name);
        if (op->act_bgrad)
            say(c, "backward: \"%s\"'s bias gradient summed in this pass (bias_act_bgrad.cu)", net->ops[op->act_bias_of].name);
        break;
    case IR_BN:
        if (op->bn_sums_in_conv) say(c, "statistics summed in the conv's epilogue, only finalized here%s", "");
        if (op->bn_fin_graph)
            say(c, "finalized by cuDNN's BN finalize graph (mean, inv std, running statistics%s; our kernel, saying why, "
                   "where cuDNN refuses it)", op->bn_in_conv ? ", the prologue's scale and bias" : "");
        else if (op->bn_fin_why) say(c, "finalized by our kernel, not cuDNN's BN finalize graph: %s", op->bn_fin_why);
        if (op->bn_retire && op->bn_sums_in_conv)   /* and its statistics where cuDNN refuses the conv at start-up */
            say(c, "gradient sums finished by each channel tile's last block%s", "");
        else if (op->bn_retire) say(c, "statistics and gradient sums finished by each channel tile's last block%s", "");
        if (op->bn_in_add) say(c, "applied inside the add that reads it (its output never written)%s", "");
        if (op->bn_in_conv)
            say(c, "finalized into a per-channel scale and bias, applied with its ReLU in the next conv's prologue "
                   "(its output never written, save where cuDNN refuses the graph); the backward recomputes the "
                   "ReLU from its input%s", "");
        if (op->bn_dgrad_in_conv)
            say(c, "backward: its ReLU and gradient sums in the next conv's data gradient; its own pass only the "
                   "input gradient%s", "");
        if (op->bn_in_pool)
            say(c, "applied with its ReLU inside max pooling \"%s\" (its output never written); its backward "
                   "gathers dy from the pooling's gradient and byte argmax in both passes (the pooling has no "
                   "backward launch, the bn's output gradient is never written)", s->net.ops[op - s->net.ops + 1].name);
        if (op->relu_mask) say(c, "writes a ReLU bitmask; the backward reads the bits%s", "");
        if (op->bn_bwd_in_add) say(c, "backward inside the add's two-pass backward%s", "");
        break;
    case IR_ADD:
        if (op->add_bns == 2) say(c, "both branches' bns applied in this pass (bn + bn + add%s)", op->act ? " + ReLU" : "");
        else if (op->add_bns == 1) say(c, "the bn applied in this pass (bn + add%s)", op->act ? " + ReLU" : "");
        if (op->relu_mask) say(c, "writes a ReLU bitmask%s", "");
        if (op->bn_fold >= 0)
            say(c, "backward: dReLU + the add's gradient + the bn's backward folded through 1x1 conv \"%s\" "
                   "(bn_fold_conv1x1_backward.cu: one pass writes the shortcut's gradient and its sums, cuBLASLt "
                   "products and closed forms give dgamma, dbeta, the conv's weight and input gradients; "
                   "fuse_bn_fold.c)", net->ops[op->bn_fold].name);
        else if (op->add_bwd_fused) say(c, "backward: dReLU + the add's gradient + the bns' backward in two passes%s", "");
        if (op->tail_conv >= 0)
            say(c, "residual tail: \"%s\"'s bias, the layer scale, drop path and this add in one pass each way "
                   "(residual_tail.cu)", net->ops[op->tail_conv].name);
        break;
    case IR_LAYER_SCALE: case IR_STOCHASTIC_DEPTH:
        if (op->in_tail >= 0) say(c, "inside residual tail \"%s\" (its output never written)", net->ops[op->in_tail].name);
        break;
    case IR_MAXPOOL:
        if (op->pool_bn >= 0)
            say(c, "applies bn \"%s\" and its ReLU in the same pass (bn_relu_maxpool_nhwc.cu: out, a byte argmax (the "
                   "window offset) and the bn's bits); backward: inside the bn's",
                net->ops[op->pool_bn].name);
        break;
    case IR_ATTENTION:
        if (op->attn_sdpa)
            say(c, "core on cuDNN's fused SDPA (graph API), projections our kernels (attention_sdpa.cu; a direction "
                   "cuDNN refuses at start-up runs our kernels, saying why)%s", "");
        else say(c, "our kernels (%s)", op->window ? "window_attention.cu" : "attention.cu");
        if (op->attn_sdpa_why) say(c, "no cuDNN fused attention: %s", op->attn_sdpa_why);
        break;
    default:
        break;
    }
    if ((op->kind == IR_CONV || op->kind == IR_LINEAR) && op->in_tail >= 0)
        say(c, "its bias added, and its gradient summed, by residual tail \"%s\"", net->ops[op->in_tail].name);
    if (op->act && op->kind != IR_ADD && op->kind != IR_BN && s->opt.fuse) say(c, "ReLU in the bias kernel%s", "");
}

int show_schedule(FILE *out, const char *path, const sema_result *res, const build_options *opt) {
    if (!res->run.has_run) {
        fprintf(stderr, "trainc: %s has no data or solver: no trainer to schedule\n", path);
        return 1;
    }
    schedule s;
    if (lower(&s, res, opt, 0, path) != 0) return 1;
    const ir_net *net = &s.net;
    int cuda = opt->backend == BACKEND_CUDA;
    fprintf(out, "# %s: the %s training step as lowered (%s%s), batch %d per rank: each op and what lower() chose\n",
            path, cuda ? "CUDA" : "CPU", cuda ? (opt->nhwc ? "channels-last" : "NCHW") : "NCHW",
            cuda && !opt->fuse ? ", unfused" : "", net->batch);
    fprintf(out, "%-4s %-28s %-16s %s\n", "op", "layer", "kind", "choices");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        choices c = { "", 0 };
        if (cuda) cuda_op(&s, op, &c);
        else cpu_op(net, op, &c);
        if (op->train_only) say(&c, "training only (an auxiliary head's branch: evaluation skips it)%s", "");
        if (net->dead && net->dead[i] && op->kind != IR_FLATTEN)   /* plan.c mark_dead */
            say(&c, "%s", op->w_off >= 0 || op->b_off >= 0 ? "no backward: every path to the loss is stopped, its gradients zero"
                                                           : "no backward: every path to the loss is stopped");
        if (op->kind == IR_STOP_GRADIENT) say(&c, "%s", "a copy; sends no gradient back");
        fprintf(out, "%-4d %-28s %-16s %s\n", i, op->name, ir_ops[op->kind].name, c.n ? c.text : "-");
    }
    int graphs = 0;   /* ops with a cuDNN graph (fused convs, BN finalize, fused attention) */
    for (int i = 0; cuda && i < net->n_ops; i++)
        graphs += net->ops[i].conv_bn || net->ops[i].dgrad_bn || net->ops[i].bn_fin_graph || net->ops[i].attn_sdpa;
    if (graphs && s.graph_candidates)
        fprintf(out, "cuDNN graphs: each graph's engine timed at start-up among up to %d of the heuristics' candidates "
                     "(scratch operands; at most 2 runtime-compiled; one shape timed once), the fastest kept; with "
                     "several ranks rank 0 times and every rank runs rank 0's choice\n",
                s.graph_candidates);
    else if (graphs)
        fprintf(out, "cuDNN graphs: each graph's engine the heuristics' first, untimed (--no-graph-autotune); with "
                     "several ranks rank 0's on every rank\n");
    for (int h = 0; net->n_heads > 1 && h < net->n_heads; h++) {   /* the loss step's heads, in order */
        int v = net->alias[net->heads[h].value];
        fprintf(out, "loss %-28s %-16s on \"%s\", loss_weight %g%s\n", net->heads[h].name, h ? "auxiliary head" : "main head",
                v ? net->ops[v - 1].name : "data", net->heads[h].weight, h ? "" : "; top-1 and evaluation read it");
    }
    schedule_free(&s);
    return 0;
}
