/* The CUDA backend's code generation: the fusion pass over the planned IR, and the emitters
 * of the host schedule (model.c), the per-net fused kernels (kernels.cu) and their header. */
#ifndef TRAINC_EMIT_CUDA_H
#define TRAINC_EMIT_CUDA_H
#include <stdio.h>
#include "ir.h"

/* Which ReLU each op absorbs. A ReLU is fused into the op that produces its input when it is
 * that value's only consumer: conv/linear with bias (bias + ReLU in one kernel; the backward
 * masks and reduces the bias gradient in one kernel), batch norm (apply + ReLU; the backward
 * reads the ReLU's gradient and mask directly) and add (sum + ReLU, both directions). */
typedef enum { FUSE_NONE = 0, FUSE_BIAS_RELU, FUSE_BN_RELU, FUSE_ADD_RELU } cuda_fusion;

typedef struct {
    cuda_fusion *kind;    /* per op: what it fuses with the ReLU it absorbs */
    int *relu_of;         /* per op: index of the absorbed ReLU op, or -1 */
    int *fused_into;      /* per op: the producer a ReLU op was absorbed into, or -1 */
    /* per (add op, input slot): 1 if backward assigns that input's gradient (first writer in
     * backward order), 0 if it accumulates; the generated add kernels are built from it */
    int *add_assign;
} cuda_fuse_plan;

/* Decides the fusions, adjusts tensor lifetimes (an absorbed ReLU's output is written at its
 * producer's step; outputs nobody writes any more take no memory) and re-plans the arena.
 * enable = 0 keeps every op separate (the reference the fused kernels are tested against). */
/* act_bytes: bytes of an activation element on the device (4, or 2 for BF16/FP16): the
 * activations, their gradients and scratch are re-planned at that size. */
void cuda_fuse(cuda_fuse_plan *fp, ir_net *net, int enable, int act_bytes);
void cuda_fuse_free(cuda_fuse_plan *fp);

/* precision.compute as the CUDA runtime names it (rt_cuda_math in rt_cuda.h). */
typedef enum { CUDA_FP32 = 0, CUDA_TF32, CUDA_BF16, CUDA_FP16 } cuda_precision;

typedef struct {
    const ir_emit_info *base;
    cuda_precision precision;
    int loss_scale;       /* 0 none, 1 static, 2 dynamic (precision.loss_scale) */
    double init_scale;
    int fused;            /* 1 if cuda_fuse ran with enable = 1 (for the banner) */
    int nhwc;             /* channels-last activations (trainc build --layout nhwc) */
} cuda_emit_info;

/* The first op the channels-last layout cannot run (why: "path:line: ..."), or -1. */
int cuda_nhwc_check(const ir_net *net, char *why, size_t cap);

void emit_cuda_model(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info);
void emit_cuda_kernels(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info);
void emit_cuda_kernels_header(FILE *out, const ir_net *net, const cuda_fuse_plan *fp, const cuda_emit_info *info);

#endif
