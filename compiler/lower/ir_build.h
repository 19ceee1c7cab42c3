/* Lowering from sema's net (net.h) to the code generator's IR (ir.h). */
#ifndef TRAINC_IR_BUILD_H
#define TRAINC_IR_BUILD_H
#include "ir.h"
#include "net.h"

/* What a backend's schedule needs from lowering (lower.c fills it per backend and options). */
typedef struct {
    long align_bytes;      /* arena tensors (CPU 64; CUDA 256 for cuBLASLt and cuDNN) */
    long param_align;      /* parameter tensors, in elements (CPU 1: packed; CUDA 128) */
    int act_bytes;         /* an activation element: 4, or 2 (16-bit activations) */
    int fuse_relu;         /* fold a relu into its producer where safe (ir_op.act) */
    int relu_needs_bias;   /* conv / linear take a relu only with a bias (CUDA: the bias kernel
                            * applies it; the CPU conv and linear apply it themselves) */
    int relu_not_last;     /* a relu that produces the logits stays its own op (CUDA) */
    int share_add_grads;   /* adds hand their gradient buffer to their inputs (GRAD_SHARED) */
    int fuse_bn_add;       /* a bn right before the add that alone reads it runs inside the add
                            * (ir_op.bn_slot; CPU, without sync BN) */
} ir_lowering;

/* Builds, lays out parameters and plans memory the way `how` says. Returns 0, or -1 if the
 * net cannot be lowered (no layers, too many inputs to one op). */
int ir_build(ir_net *net, const net_desc *nd, int batch, double label_smoothing, const ir_lowering *how);
#endif
