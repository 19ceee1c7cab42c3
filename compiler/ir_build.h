/* Lowering from sema's net (net.h) to the code generator's IR (ir.h). */
#ifndef TRAINC_IR_BUILD_H
#define TRAINC_IR_BUILD_H
#include "ir.h"
#include "net.h"

/* Builds, lays out parameters and plans memory, for the CPU backend (`cpu`) or the CUDA one.
 * CPU: a relu that is the only reader of a conv/linear/bn output becomes that op's `act`,
 * adds hand their gradient buffers to their inputs, parameters are packed. CUDA: relus stay
 * ops (fuse_cuda.c fuses its own way), tensors and parameters are aligned for cuBLASLt and
 * cuDNN (ir.h). Returns 0, or -1 if the net cannot be lowered (no layers, too many inputs to
 * one op). */
int ir_build(ir_net *net, const net_desc *nd, int batch, double label_smoothing, int cpu);
#endif
