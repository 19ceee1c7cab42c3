/* CUDA: a conv's bias added by the layer norm that alone reads the conv's output (ConvNeXt's
 * stem: 4x4 stride 4 conv -> channels-last layer norm). The conv writes its output without the
 * bias; every pass of the norm reads x = that output + bias, rounded as the generated bias
 * kernel would have stored it (layernorm.cu ln_x), so the forward and the norm's gradients are
 * the unfused ones bit for bit and nothing more is kept for the backward. The norm's backward
 * also sums the bias gradient, din's channel sums: channels-last in the launch that writes din
 * (ln_rows_input_grad_bgrad_kernel), NCHW in bias.cu's pass over din as before. The separate
 * bias pass each way goes (the forward's in both layouts, the backward's channels-last).
 * --no-ln-bias keeps them apart. */
#include "lower.h"

void choose_ln_bias(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *ln = &net->ops[i];
        if (ln->kind != IR_LN || ln->n_in != 1 || ln->in[0] <= 0) continue;
        if (net->dead && net->dead[i]) continue;
        int v = ln->in[0];
        ir_op *p = &net->ops[v - 1];
        /* a depthwise conv's bias is its own kernels' (fuse_dw_bias.c; --no-dw-bias keeps it in
         * passes of its own, the A/B that flag is for) */
        if (p->kind != IR_CONV || p->b_off < 0 || p->groups > 1) continue;
        /* a fused ReLU, an activation, a residual tail, a fused cuDNN graph or the depthwise
         * kernels: the bias is theirs */
        if (p->act || p->bias_act >= 0 || p->in_tail >= 0 || p->conv_bn || p->dw_bias || p->ln_bias >= 0) continue;
        if (ir_value_readers(net, v) != 1 || v == net->n_ops) continue;
        /* the norm's backward writes the conv's output gradient (one added to another's it is
         * not), and sums it there */
        if (ir_route(net, i, 0) != GRAD_WRITE) continue;
        p->ln_bias = i;
        ln->ln_bias_of = v - 1;
    }
}
