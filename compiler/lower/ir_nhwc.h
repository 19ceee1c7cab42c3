/* Channels-last values past a flatten (--layout nhwc): which tensor with positions a value's
 * data is laid out as, so a linear, a dropout and the checks read it in the spec's C,H,W
 * order (ir_nhwc.c). */
#ifndef TRAINC_IR_NHWC_H
#define TRAINC_IR_NHWC_H

#include "ir.h"

/* Whether op kind k passes a channels-last layout through unchanged when its output has no
 * positions: flatten (a view) and the elementwise ops (relu, gelu, dropout, stochastic depth). */
int ir_nhwc_passes_layout(ir_op_kind k);

/* 1 when value v holds a channels-last tensor with positions (h * w > 1), its own or one seen
 * through flatten and elementwise ops: *c, *h, *w get that tensor's per-image shape, whose
 * [H][W][C] order the data follows (the spec's flatten order is C,H,W). 0 otherwise. */
int ir_nhwc_positions(const ir_net *net, int v, int *c, int *h, int *w);
/* Whether a linear runs as a conv over a channels-last input with positions (its c, h, w). */
int ir_nhwc_linear_as_conv(const ir_net *net, const ir_op *op, int *c, int *h, int *w);

#endif
