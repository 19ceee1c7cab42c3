/* CUDA: a depthwise conv's bias (ConvNeXt's dwconv) inside the conv's own kernels
 * (conv2d_depthwise.cu): the forward adds it before its store rounds, and the weight
 * gradient's kernel, which reads every output gradient already, sums the bias gradient too.
 * The separate bias pass each way (generated <conv>_bias_kernel; bias.cu's channel sums)
 * goes. The conv's call takes the bias (cuda_conv2d_forward_bias / _backward_bias), so a
 * shape our kernels do not take at run time (TRAINC_CUDA_DEPTHWISE=cudnn) still gets it, from
 * cuDNN and a bias pass. --no-dw-bias keeps the passes apart. */
#include "lower.h"
#include "rt_depthwise_plan.h"   /* the shapes our depthwise kernels take */

void choose_dw_bias(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        if (op->kind != IR_CONV || op->groups <= 1 || op->b_off < 0) continue;
        /* a fused ReLU, a GELU that adds the bias itself, a residual tail or a fused cuDNN
         * graph: the bias is theirs */
        if (op->act || op->bias_act >= 0 || op->in_tail >= 0 || op->conv_bn) continue;
        rt_conv_shape s = { .n = net->batch, .c = op->in_c, .h = op->in_h, .w = op->in_w, .oc = op->c,
                            .kh = op->kh, .kw = op->kw, .sh = op->sh, .sw = op->sw, .ph = op->ph, .pw = op->pw,
                            .dh = op->dh, .dw = op->dw, .groups = op->groups, .oh = op->h, .ow = op->w };
        if (rt_dw_fits(&s)) op->dw_bias = 1;
    }
}
