/* The Caffe layers and blobs of a lowered net's parameters (caffe_names.h): a convolution's
 * and an inner product's weights and bias are blobs 0 and 1 of the layer of the same name; a
 * bn is Caffe's BatchNorm (mean, variance, and the moving-average factor in a third blob) and
 * the Scale after it (gamma, beta); a layer_scale a Scale without bias. */
#include "caffe_names.h"

#include <stdio.h>
#include <string.h>

#include "rt_init.h"

static const ast_node *field_of(const ast_node *msg, const char *name) {
    for (int i = 0; i < msg->n_kids; i++)
        if (msg->kids[i]->kind == AST_FIELD && !strcmp(msg->kids[i]->text, name)) return msg->kids[i]->a;
    return NULL;
}

const char *caffe_scale_of(const ast_node *root, const char *bn_name) {
    if (!root) return NULL;
    if (root->kind == AST_FIELD && !strcmp(root->text, "bn") && root->a && root->a->kind == AST_MESSAGE) {
        const ast_node *name = field_of(root->a, "name"), *scale = field_of(root->a, "caffe_scale");
        if (name && name->kind == AST_STRING && !strcmp(name->text, bn_name))
            return scale && scale->kind == AST_STRING ? scale->text : NULL;
        return NULL;
    }
    for (int i = 0; i < root->n_kids; i++) {
        const char *s = caffe_scale_of(root->kids[i], bn_name);
        if (s) return s;
    }
    return root->kind == AST_FIELD ? caffe_scale_of(root->a, bn_name) : NULL;
}

int caffe_tensors_of_op(const ir_op *op, const char *scale, caffe_tensor out[TORCH_MAX_PER_OP]) {
    torch_tensor tt[TORCH_MAX_PER_OP];
    int k = torch_tensors_of_op(op, 0, tt), n = 0;
    if (k == 0) return 0;
    const char *type;
    switch (op->kind) {
    case IR_CONV: type = "Convolution"; break;
    case IR_LINEAR: type = "InnerProduct"; break;
    case IR_BN: type = "BatchNorm"; break;
    case IR_LAYER_SCALE: type = "Scale"; break;
    default: return -1;   /* layer norm: Caffe has no such layer */
    }
    memset(out, 0, sizeof(caffe_tensor) * TORCH_MAX_PER_OP);
    for (int j = 0; j < k; j++) {
        if (tt[j].kind == TORCH_BATCHES) continue;
        caffe_tensor *c = &out[n++];
        c->t = tt[j];
        snprintf(c->layer, sizeof c->layer, "%s", op->name);
        c->type = type;
        const char *suffix = strrchr(tt[j].key, '.') + 1;
        if (op->kind == IR_BN && tt[j].kind == TORCH_BUFFER) {
            c->kind = RT_CAFFE_BN_STAT, c->blob = !strcmp(suffix, "running_var");
        } else if (op->kind == IR_BN) {   /* gamma, beta */
            c->type = "Scale", c->blob = !strcmp(suffix, "bias");
            if (scale) snprintf(c->layer, sizeof c->layer, "%s", scale);
            else c->kind = RT_CAFFE_BN_AFFINE;
        } else {
            c->blob = !strcmp(suffix, "bias");
        }
    }
    return n;
}
