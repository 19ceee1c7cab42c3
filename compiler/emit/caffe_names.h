/* Where each parameter tensor of a lowered net lives in a Caffe .caffemodel (caffe_names.c):
 * the Caffe layer, its type and which of its blobs, for the init block's reader
 * (rt_init_named.caffe_*) and for `trainc export --format caffemodel`. */
#ifndef TRAINC_CAFFE_NAMES_H
#define TRAINC_CAFFE_NAMES_H

#include "ast.h"
#include "ir.h"
#include "torch_names.h"

typedef struct {
    torch_tensor t;           /* the tensor under trainc's own name ("conv1.weight"), kind, offset, shape */
    char layer[256];          /* the Caffe layer that holds it */
    const char *type;         /* that layer's Caffe type: Convolution, InnerProduct, BatchNorm, Scale */
    int blob;                 /* which of its blobs */
    int kind;                 /* rt_caffe_kind: plain, a BatchNorm statistic, a bn's gamma/beta */
} caffe_tensor;

/* The bn's caffe_scale field (the Scale layer `trainc import caffe` folded into it), or NULL. */
const char *caffe_scale_of(const ast_node *root, const char *bn_name);

/* op's tensors as Caffe holds them (at most TORCH_MAX_PER_OP, num_batches_tracked left out);
 * returns how many, or -1 when op has parameters but no Caffe layer holds them (layer norm). A
 * bn's gamma and beta: in the Scale named scale (caffe_scale) as plain blobs 0 and 1, or
 * without one RT_CAFFE_BN_AFFINE (the reader finds the Scale after the BatchNorm) in a Scale
 * that the writer names NAME_scale. */
int caffe_tensors_of_op(const ir_op *op, const char *scale, caffe_tensor out[TORCH_MAX_PER_OP]);

#endif
