/* trainc export --format caffemodel: a checkpoint's weights as the .caffemodel Caffe's
 * Net::CopyTrainedLayersFrom reads (a NetParameter whose layers hold their blobs, matched by
 * layer name), written by the runtime's writer (runtime/data/caffemodel.c). Layers go in the
 * net's order: a convolution or inner product with its weights and bias, a bn as Caffe's
 * BatchNorm (running mean, running variance, and a moving-average factor of 1, so that Caffe's
 * division by it leaves them as they are) and the Scale layer after it (gamma, beta; the name
 * the import recorded in caffe_scale, or NAME_scale), a layer_scale as a Scale without bias. */
#include "export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caffe_names.h"
#include "rt_caffemodel.h"
#include "rt_init.h"

int export_write_caffemodel(const char *path, const char *net_name, const ir_net *net, const ast_node *root,
                            const float *params, const float *buffers, int *n_layers, char *err, size_t cap) {
    rt_caffe_layer *layers = calloc((size_t)net->n_ops * 2 + 1, sizeof *layers);
    char (*scale_names)[300] = calloc((size_t)net->n_ops + 1, sizeof *scale_names);
    int n = 0, bad = !layers || !scale_names;
    if (bad) snprintf(err, cap, "out of memory");
    for (int i = 0; !bad && i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        caffe_tensor ct[TORCH_MAX_PER_OP];
        const char *scale = op->kind == IR_BN ? caffe_scale_of(root, op->name) : NULL;
        int k = caffe_tensors_of_op(op, scale, ct);
        if (k < 0) {
            snprintf(err, cap, "layer '%s' (%s) has no Caffe layer to hold its parameters", op->name, ir_ops[op->kind].name);
            bad = 1;
            break;
        }
        if (k == 0) continue;
        rt_caffe_layer *main = &layers[n++], *affine = NULL;
        main->name = op->name, main->type = ct[0].type;
        if (op->kind == IR_BN) {
            main->type = "BatchNorm";
            snprintf(scale_names[i], sizeof scale_names[i], "%s%s", scale ? scale : op->name, scale ? "" : "_scale");
        }
        for (int j = 0; j < k; j++) {
            const caffe_tensor *c = &ct[j];
            rt_caffe_layer *L = main;
            if (op->kind == IR_BN && c->kind != RT_CAFFE_BN_STAT) {
                if (!affine) affine = &layers[n++], affine->name = scale_names[i], affine->type = "Scale";
                L = affine;
            }
            rt_caffe_blob *b = &L->blobs[c->blob];
            if (c->blob + 1 > L->n_blobs) L->n_blobs = c->blob + 1;
            b->ndim = c->t.ndim;
            memcpy(b->shape, c->t.shape, sizeof b->shape);
            b->data = (c->t.kind == TORCH_BUFFER ? buffers : params) + c->t.offset;
        }
        if (op->kind == IR_BN) {   /* the moving-average factor Caffe divides the statistics by */
            rt_caffe_blob *f = &main->blobs[2];
            main->n_blobs = 3, f->ndim = 1, f->shape[0] = 1, f->fill = 1, f->fill_value = 1.0f;
        }
    }
    rt_err e;
    if (!bad && rt_caffemodel_write(path, net_name, layers, n, &e) != RT_OK) {
        snprintf(err, cap, "%s", e.msg);
        bad = 1;
    }
    *n_layers = n;
    free(layers), free(scale_names);
    return bad;
}
