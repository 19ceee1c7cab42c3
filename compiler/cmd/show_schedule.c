/* `trainc show --schedule`: the lowered schedule, op by op, with every choice lower() made for
 * it on the chosen backend and layout (fusions, algorithms, engines), read from the same
 * lowering `build` emits; nothing here decides. What the runtime still picks by the machine it
 * runs on is said as such: cuDNN's algorithm search at start-up, AVX-512 or not for the CPU's
 * fused conv + pooling, and the CPU conv's special kernels (one input channel, oneDNN BF16,
 * stride 2), which runtime/cpu/ops/conv2d.c still chooses by shape, CPU and precision. */
#include "show.h"

#include "ir_nhwc.h"
#include "rt_depthwise_plan.h"
#include "rt_env.h"

#include <stdio.h>
#include <string.h>

/* A growing "; "-separated list of one op's choices. */
typedef struct {
    char text[512];
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

static const char *cpu_conv_algo(const ir_op *op) {
    switch (op->conv_algo) {
    case IR_CONV_WINOGRAD_F4: return "Winograd F(4x4,3x3)";
    case IR_CONV_WINOGRAD: return op->kh == 5 ? "Winograd F(2x2,5x5)" : "Winograd F(2x2,3x3)";
    case IR_CONV_IM2COL: break;
    }
    return "im2col + GEMM";
}

static void cpu_op(const ir_net *net, const ir_op *op, choices *c) {
    switch (op->kind) {
    case IR_CONV:
        say(c, "%s", cpu_conv_algo(op));
        /* not yet decided here: runtime/cpu/ops/conv2d.c still picks among its special
         * kernels by shape, CPU and precision before the algorithm lowered */
        say(c, "(the runtime may take its one-channel, oneDNN BF16 or stride-2 kernels instead, by shape and CPU%s)",
            "");
        if (op->act) say(c, "ReLU in the conv's pass%s", "");
        if (op->pools_into >= 0)
            say(c, "max pooling \"%s\" in the same call (one image at a time in cache; AVX-512 kernel where the CPU "
                   "has it, else the two ops)", net->ops[op->pools_into].name);
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
        if (op->groups > 1 && rt_dw_fits(&sh) && !rt_env_is(RT_ENV_TRAINC_CUDA_DEPTHWISE, "cudnn"))
            say(c, "depthwise: our direct kernels (conv2d_depthwise.cu)%s", "");
        else if (op->conv_bn)
            say(c, "cuDNN graph %s: the next bn's sums from its epilogue (unfused, saying why, where cuDNN refuses "
                   "it at start-up)", ir_conv_bn_name(op->conv_bn));
        else say(c, "cuDNN (algorithms searched at start-up)%s", "");
        if (!op->conv_bn && op->conv_bn_why) say(c, "no fused conv + statistics: %s", op->conv_bn_why);
        if (op->bias_act >= 0) say(c, "its bias added by \"%s\"'s kernel", net->ops[op->bias_act].name);
        break;
    }
    case IR_LINEAR:
        if (s->opt.nhwc && ir_nhwc_linear_as_conv(net, op, &ch, &h, &w)) say(c, "runs as a cuDNN conv over the channels-last positions%s", "");
        else say(c, "cuBLASLt%s", "");
        if (op->bias_act >= 0) say(c, "its bias added by \"%s\"'s kernel", net->ops[op->bias_act].name);
        break;
    case IR_GELU: case IR_ACTIVATION:
        if (op->act_bias_of >= 0) say(c, "adds \"%s\"'s bias in the same pass (bias_act.cu)", net->ops[op->act_bias_of].name);
        break;
    case IR_BN:
        if (op->bn_sums_in_conv) say(c, "statistics summed in the conv's epilogue, only finalized here%s", "");
        if (op->bn_retire) say(c, "statistics and gradient sums finished by each channel tile's last block%s", "");
        if (op->bn_in_add) say(c, "applied inside the add that reads it (its output never written)%s", "");
        if (op->relu_mask) say(c, "writes a ReLU bitmask; the backward reads the bits%s", "");
        if (op->bn_bwd_in_add) say(c, "backward inside the add's two-pass backward%s", "");
        break;
    case IR_ADD:
        if (op->add_bns == 2) say(c, "both branches' bns applied in this pass (bn + bn + add%s)", op->act ? " + ReLU" : "");
        else if (op->add_bns == 1) say(c, "the bn applied in this pass (bn + add%s)", op->act ? " + ReLU" : "");
        if (op->relu_mask) say(c, "writes a ReLU bitmask%s", "");
        if (op->add_bwd_fused) say(c, "backward: dReLU + the add's gradient + the bns' backward in two passes%s", "");
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
        fprintf(out, "%-4d %-28s %-16s %s\n", i, op->name, ir_ops[op->kind].name, c.n ? c.text : "-");
    }
    schedule_free(&s);
    return 0;
}
