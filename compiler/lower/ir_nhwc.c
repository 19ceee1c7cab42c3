/* Channels-last values past a flatten (ir_nhwc.h). */
#include "ir_nhwc.h"

int ir_nhwc_passes_layout(ir_op_kind k) {
    switch (k) {
    case IR_FLATTEN: case IR_RELU: case IR_GELU: case IR_ACTIVATION: case IR_DROPOUT: case IR_STOCHASTIC_DEPTH:
    case IR_STOP_GRADIENT:
        return 1;
    case IR_CONV: case IR_LINEAR: case IR_BN: case IR_LN: case IR_MAXPOOL: case IR_AVGPOOL: case IR_GAP: case IR_LRN:
    case IR_ADD: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: case IR_LAYER_SCALE: case IR_OP_COUNT:
    case IR_LEARNED: case IR_ATTENTION: case IR_SPACE_TO_DEPTH:
        return 0;
    }
    return 0;
}

int ir_nhwc_positions(const ir_net *net, int v, int *c, int *h, int *w) {
    for (;;) {
        int vc = v ? net->ops[v - 1].c : net->in_c, vh = v ? net->ops[v - 1].h : net->in_h;
        int vw = v ? net->ops[v - 1].w : net->in_w;
        if (vh * vw > 1) {
            *c = vc, *h = vh, *w = vw;
            return 1;
        }
        if (v == 0 || !ir_nhwc_passes_layout(net->ops[v - 1].kind)) return 0;
        v = net->ops[v - 1].in[0];
    }
}

/* A linear reading a channels-last tensor with positions (its own input's, or seen through
 * flatten and the other layout-passing ops): the CUDA backend runs it as the conv whose kernel
 * covers the whole [c, h, w] input. The emitter (emit_cuda.c) and the cost model (gpu_cost.c)
 * both ask here, so they cannot disagree. */
int ir_nhwc_linear_as_conv(const ir_net *net, const ir_op *op, int *c, int *h, int *w) {
    return op->kind == IR_LINEAR && ir_nhwc_positions(net, op->in[0], c, h, w);
}
