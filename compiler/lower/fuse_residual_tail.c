/* CUDA: a residual block's tail in one kernel each way (ConvNeXt's pwconv2 bias -> layer scale
 * -> drop path -> add; residual_tail.cu), where the chain's values have no other reader, so
 * neither the layer scale's nor the drop path's output is ever written, and the backward
 * reads the add's output gradient once for the shortcut's gradient, the conv's and both
 * parameter gradients. */
#include "lower.h"

/* The op producing value v when that value has this one reader, else NULL. */
static ir_op *sole(ir_net *net, int v) { return v > 0 && ir_value_readers(net, v) == 1 ? &net->ops[v - 1] : NULL; }

/* The conv at the head of add a's input slot k's chain, or -1. */
static int tail_head(ir_net *net, const ir_op *a, int k) {
    ir_op *t = sole(net, a->in[k]);
    if (t && t->kind == IR_STOCHASTIC_DEPTH) t = sole(net, t->in[0]);
    if (!t || t->kind != IR_LAYER_SCALE) return -1;
    int ls = (int)(t - net->ops);
    ir_op *p = sole(net, t->in[0]);
    if (!p || (p->kind != IR_CONV && p->kind != IR_LINEAR) || p->b_off < 0 || p->act || p->bias_act >= 0 ||
        p->conv_bn || p->in_tail >= 0)
        return -1;
    /* the fused backward writes the conv's output gradient itself, where the layer scale did */
    if (ir_route(net, ls, 0) != GRAD_WRITE) return -1;
    return (int)(p - net->ops);
}

void choose_residual_tail(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *a = &net->ops[i];
        if (a->kind != IR_ADD || a->n_in != 2 || a->act || a->add_bns || a->add_bwd_fused || a->in[0] == a->in[1])
            continue;
        for (int k = 0; k < 2 && a->tail_conv < 0; k++) {
            int p = tail_head(net, a, k);
            if (p < 0) continue;
            a->tail_conv = p;
            for (int v = a->in[k]; v != p + 1; v = net->ops[v - 1].in[0]) net->ops[v - 1].in_tail = i;
            net->ops[p].in_tail = i;
        }
    }
}

/* The input slot of tail add a that its chain feeds. */
int residual_tail_slot(const ir_net *net, const ir_op *a) {
    int v = a->in[0];
    return v > 0 && net->ops[v - 1].in_tail == (int)(a - net->ops) ? 0 : 1;
}
