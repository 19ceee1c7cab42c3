/* CUDA: a bias + activation's backward (bias_act.cu, lower.c choose_bias_act: ConvNeXt's
 * pwconv1 -> GELU, a ViT MLP's fc1 -> GELU) also sums its conv's or linear's bias gradient
 * (bias_act_bgrad.cu), where it writes that conv's output gradient: din is written once and
 * summed on the way, where the conv's backward read it back in a pass of its own. */
#include "lower.h"

void choose_bias_act_grad(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *a = &net->ops[i];
        if ((a->kind != IR_GELU && a->kind != IR_ACTIVATION) || a->act_bias_of < 0) continue;
        if (net->dead && net->dead[i]) continue;
        /* the fused kernel writes the conv's output gradient; one added to another's it is not */
        if (ir_route(net, i, 0) != GRAD_WRITE) continue;
        a->act_bgrad = 1;
    }
}
