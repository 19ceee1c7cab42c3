/* The PyTorch state_dict tensors of a lowered net (torch_names.c): each op's keys, shapes and
 * where its values lie in trainc's params and buffers. `trainc export --format torch` writes
 * them; the spec's init block reads a torchvision state_dict by them. */
#ifndef TRAINC_TORCH_NAMES_H
#define TRAINC_TORCH_NAMES_H

#include "ir.h"

typedef enum {
    TORCH_PARAM = 0,          /* a weight or bias, in params */
    TORCH_BUFFER,             /* a BN running mean or variance, in buffers */
    TORCH_BATCHES,            /* BN's num_batches_tracked: an int64 scalar trainc does not keep */
} torch_tensor_kind;

typedef struct {
    char key[256];            /* "layer1.0.bn1.running_var" (export_tensor.name is as long) */
    torch_tensor_kind kind;
    long offset, count;       /* in floats of params or buffers */
    int ndim;                 /* 0: a scalar */
    long shape[4];
} torch_tensor;

#define TORCH_MAX_PER_OP 5

/* The state_dict entries of op (at most TORCH_MAX_PER_OP), returns how many. torchvision: the
 * keys torchvision's models use (ConvNeXt's layers renamed to features.S.I.block.K and
 * classifier.K, its 1x1 convs as Linear weights, layer scale as [C, 1, 1]); else trainc's
 * layer names with the same shapes. */
int torch_tensors_of_op(const ir_op *op, int torchvision, torch_tensor out[TORCH_MAX_PER_OP]);

#endif
