/* Lowering from sema's net (net.h) to the code generator's IR (ir.h). */
#ifndef TRAINC_IR_BUILD_H
#define TRAINC_IR_BUILD_H
#include "ir.h"
#include "net.h"

/* Builds, lays out parameters and plans memory. With fuse_relu, a relu that is the only
 * reader of a conv/linear/bn output becomes that op's `act` (the CPU backend); the CUDA
 * backend keeps relus as ops and fuses them in its own pass (fuse_cuda.c). Returns 0, or -1
 * if the net cannot be lowered (no layers, too many inputs to one op). */
int ir_build(ir_net *net, const net_desc *nd, int batch, double label_smoothing, int fuse_relu);
#endif
