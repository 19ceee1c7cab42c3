/* CUDA channels-last BF16: an identity block's output backward (dReLU from the bits + the add +
 * bn3's backward) folded through its 1x1 stride-1 conv3 (bn_fold_conv1x1_backward.cu): one pass
 * over dz and the bits writes the shortcut's gradient g and its channel sums, cuBLASLt gives
 * sum g h^T and sum h h^T over conv3's input h, and closed forms give bn3's dgamma and dbeta,
 * conv3's weight gradient and h's gradient. conv3's output is never read back and bn3's input
 * gradient (conv3's output gradient) is neither written nor read; conv3's and bn3's backward
 * emit nothing. Where it applies: an add whose fused backward (add_bwd_fused) runs one bn
 * (the identity shortcut's gradient written, not added: the op writes g), that bn's input a
 * 1x1 stride-1 unpadded ungrouped conv without bias or activation that the bn alone reads,
 * whose input is a stored tensor (not a scale-bias-ReLU prologue's) that conv3 alone reads,
 * its gradient written by conv3 (the fold writes it at the add's backward step instead).
 * BF16 only: FP16's conv3 reads bn2 through its sbr prologue, so h is never stored.
 * --no-bn-fold keeps the add's two passes and conv3's data and weight gradients. */
#include "lower.h"

#include "rt_devmem.h"   /* rt_devmem_bn_fold_bytes */

#include <limits.h>

/* conv3's index when add i folds, else -1. */
static int fold_conv(const ir_net *net, int i) {
    const ir_op *a = &net->ops[i];
    if (a->kind != IR_ADD || !a->add_bwd_fused || a->add_bns != 1 || a->n_in != 2 || a->in[0] == a->in[1]) return -1;
    if (net->dead && net->dead[i]) return -1;
    int k = a->in[0] > 0 && net->ops[a->in[0] - 1].bn_bwd_in_add ? 0 : 1;
    int vb = a->in[k], vs = a->in[1 - k];
    if (vb <= 0 || !net->ops[vb - 1].bn_bwd_in_add || vs <= 0) return -1;
    if (ir_route(net, i, 1 - k) != GRAD_WRITE) return -1;   /* the fold writes g: an added one would need it apart */
    const ir_op *bn = &net->ops[vb - 1];
    int vc = bn->in[0];
    if (vc <= 0 || ir_value_readers(net, vc) != 1) return -1;
    const ir_op *c = &net->ops[vc - 1];
    if (c->kind != IR_CONV || c->kh != 1 || c->kw != 1 || c->sh != 1 || c->sw != 1 || c->ph != 0 || c->pw != 0 ||
        c->groups != 1 || c->b_off >= 0 || c->act || c->bias_act >= 0 || c->in_tail >= 0 || c->dw_bias ||
        c->ln_bias >= 0 || c->conv_bn == IR_CONV_BN_SBR || c->dgrad_bn)
        return -1;
    if (c->h != c->in_h || c->w != c->in_w || c->in_c % 8 || c->c % 8) return -1;
    int vh = c->in[0];
    if (vh <= 0 || ir_value_readers(net, vh) != 1 || net->ops[vh - 1].bn_in_conv || net->act_of[net->alias[vh]] < 0) return -1;
    if (ir_route(net, vc - 1, 0) != GRAD_WRITE) return -1;
    if ((long)net->batch * c->h * c->w > INT_MAX) return -1;   /* cuBLASLt's int extents */
    return vc - 1;
}

int choose_bn_fold(schedule *s) {
    ir_net *net = &s->net;
    if (s->precision != CUDA_BF16) return 0;
    int any = 0;
    for (int i = 0; i < net->n_ops; i++) {
        int c = fold_conv(net, i);
        if (c < 0) continue;
        net->ops[i].bn_fold = c;
        net->ops[c].folded_in = i;
        any = 1;
    }
    return any;
}

size_t ir_bn_fold_scratch_bytes(const ir_net *net) {
    size_t most = 0;
    for (int i = 0; i < net->n_ops; i++) {
        if (net->ops[i].bn_fold < 0) continue;
        const ir_op *c = &net->ops[net->ops[i].bn_fold];
        size_t b = rt_devmem_bn_fold_bytes(c->in_c, c->c, net->act_bytes, NULL);
        if (b > most) most = b;
    }
    return most;
}
