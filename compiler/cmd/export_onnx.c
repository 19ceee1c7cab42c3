/* trainc export --format onnx: the inference graph of a lowered net (opset 13, IR version 8)
 * with the checkpoint's weights as initializers, through onnx.proto compiled by protobuf-c
 * (Debian's python3-onnx ships the .proto; mk/compiler.mk runs protoc-c). One node or a few
 * per op, in schedule order: conv -> Conv, linear -> Flatten + Gemm, bn -> BatchNormalization
 * (running statistics), ln -> its arithmetic over the channel axis (opset 13 has no
 * LayerNormalization), gelu -> the erf form, layer_scale -> Mul, dropout and stochastic depth
 * -> Identity, add -> Sum, and a fused ReLU as its own Relu after the op. The input is
 * "input" [batch, C, H, W] (NCHW floats, normalized as the validation split is), the output
 * "logits" [batch, classes]. What ONNX cannot say (a within-channel LRN) is refused. */
#include "export.h"
#include "output_file.h"

#include <stdio.h>

#ifdef TRAINC_ONNX
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define ONNX_OPSET 13

typedef struct {
    void **owned;             /* every allocation, freed at the end */
    int n_owned, cap_owned;
    Onnx__NodeProto **nodes;
    int n_nodes, cap_nodes;
    Onnx__TensorProto **inits;
    int n_inits, cap_inits;
    int tmp;                  /* counter for intermediate names */
    int *rank;                /* per value: 4 (N, C, H, W) or 2 (N, features) */
} onnx_builder;

static void *own(onnx_builder *b, void *p) {
    if (b->n_owned == b->cap_owned) {
        b->cap_owned = b->cap_owned ? 2 * b->cap_owned : 256;
        b->owned = realloc(b->owned, (size_t)b->cap_owned * sizeof *b->owned);
    }
    return b->owned[b->n_owned++] = p;
}
static void *alloc(onnx_builder *b, size_t n) { return own(b, calloc(1, n ? n : 1)); }
static char *text(onnx_builder *b, const char *s) { return own(b, strdup(s)); }

static char *tmp_name(onnx_builder *b, const char *base, const char *what) {
    char buf[320];
    snprintf(buf, sizeof buf, "%s/%s_%d", base, what, b->tmp++);
    return text(b, buf);
}

static Onnx__NodeProto *node(onnx_builder *b, const char *op, const char *name, int n_in, const char *const *in,
                             const char *out) {
    Onnx__NodeProto *n = alloc(b, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = text(b, op);
    n->name = tmp_name(b, name, op);
    n->n_input = (size_t)n_in;
    n->input = alloc(b, (size_t)n_in * sizeof(char *));
    for (int i = 0; i < n_in; i++) n->input[i] = text(b, in[i]);
    n->n_output = 1;
    n->output = alloc(b, sizeof(char *));
    n->output[0] = text(b, out);
    if (b->n_nodes == b->cap_nodes) {
        b->cap_nodes = b->cap_nodes ? 2 * b->cap_nodes : 256;
        b->nodes = realloc(b->nodes, (size_t)b->cap_nodes * sizeof *b->nodes);
    }
    b->nodes[b->n_nodes++] = n;
    return n;
}

static Onnx__AttributeProto *attr(onnx_builder *b, Onnx__NodeProto *n, const char *name) {
    Onnx__AttributeProto **grown = alloc(b, (n->n_attribute + 1) * sizeof *grown);
    if (n->n_attribute) memcpy(grown, n->attribute, n->n_attribute * sizeof *grown);
    n->attribute = grown;
    Onnx__AttributeProto *a = alloc(b, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = text(b, name);
    n->attribute[n->n_attribute++] = a;
    return a;
}
static void attr_int(onnx_builder *b, Onnx__NodeProto *n, const char *name, long v) {
    Onnx__AttributeProto *a = attr(b, n, name);
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i = 1, a->i = v;
}
static void attr_float(onnx_builder *b, Onnx__NodeProto *n, const char *name, double v) {
    Onnx__AttributeProto *a = attr(b, n, name);
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f = 1, a->f = (float)v;
}
static void attr_ints(onnx_builder *b, Onnx__NodeProto *n, const char *name, int count, const long *v) {
    Onnx__AttributeProto *a = attr(b, n, name);
    a->has_type = 1, a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    a->n_ints = (size_t)count;
    a->ints = alloc(b, (size_t)count * sizeof(int64_t));
    for (int i = 0; i < count; i++) a->ints[i] = v[i];
}

/* A float initializer (raw little-endian data); data may be NULL for `fill`. */
static const char *init_tensor(onnx_builder *b, const char *name, int ndim, const long *dims, const float *data,
                               float fill) {
    Onnx__TensorProto *t = alloc(b, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = text(b, name);
    t->has_data_type = 1, t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->n_dims = (size_t)ndim;
    t->dims = alloc(b, (size_t)ndim * sizeof(int64_t));
    long count = 1;
    for (int i = 0; i < ndim; i++) t->dims[i] = dims[i], count *= dims[i];
    float *copy = alloc(b, (size_t)count * sizeof(float));
    for (long i = 0; i < count; i++) copy[i] = data ? data[i] : fill;
    t->has_raw_data = 1, t->raw_data.len = (size_t)count * sizeof(float), t->raw_data.data = (uint8_t *)copy;
    if (b->n_inits == b->cap_inits) {
        b->cap_inits = b->cap_inits ? 2 * b->cap_inits : 256;
        b->inits = realloc(b->inits, (size_t)b->cap_inits * sizeof *b->inits);
    }
    b->inits[b->n_inits++] = t;
    return t->name;
}

static const char *value_name(const ir_net *net, int v) { return v == 0 ? "input" : net->ops[v - 1].name; }

/* A per-channel tensor shaped to broadcast over value v: [C, 1, 1] on (N, C, H, W), [C] on (N, C). */
static const char *channel_tensor(onnx_builder *b, const char *name, int rank, long c, const float *data, float fill) {
    long dims[3] = { c, 1, 1 };
    return init_tensor(b, name, rank == 4 ? 3 : 1, dims, data, fill);
}

/* op's result under its own name, then a Relu when one is fused into it. */
static const char *result(onnx_builder *b, const ir_op *op) {
    return op->act ? tmp_name(b, op->name, "pre_relu") : op->name;
}
static void finish(onnx_builder *b, const ir_op *op, const char *pre) {
    if (op->act) node(b, "Relu", op->name, 1, &pre, op->name);
}

static int pool_ceil(const ir_op *op) {   /* whether the output size needs ceil mode */
    int floor_h = (op->in_h + 2 * op->ph - op->kh) / op->sh + 1, floor_w = (op->in_w + 2 * op->pw - op->kw) / op->sw + 1;
    return op->h != floor_h || op->w != floor_w;
}

static int emit_op(onnx_builder *b, const ir_net *net, const ir_op *op, int v, const float *params,
                   const float *buffers, char *err, size_t cap) {
    char pname[320];
    const char *in0 = value_name(net, op->in[0]);
    int rank = b->rank[op->in[0]];
    b->rank[v] = rank;
    switch (op->kind) {
    case IR_CONV: {
        const char *pre = result(b, op);
        const char *ins[3] = { in0, NULL, NULL };
        long wd[4] = { op->c, op->w_count / ((long)op->c * op->kh * op->kw), op->kh, op->kw };
        snprintf(pname, sizeof pname, "%s.weight", op->name);
        ins[1] = init_tensor(b, pname, 4, wd, params + op->w_off, 0);
        if (op->b_off >= 0) snprintf(pname, sizeof pname, "%s.bias", op->name),
                            ins[2] = init_tensor(b, pname, 1, &wd[0], params + op->b_off, 0);
        Onnx__NodeProto *n = node(b, "Conv", op->name, op->b_off >= 0 ? 3 : 2, ins, pre);
        long k[2] = { op->kh, op->kw }, s[2] = { op->sh, op->sw }, d[2] = { op->dh, op->dw };
        long p[4] = { op->ph, op->pw, op->ph, op->pw };
        attr_ints(b, n, "kernel_shape", 2, k), attr_ints(b, n, "strides", 2, s), attr_ints(b, n, "pads", 4, p);
        attr_ints(b, n, "dilations", 2, d), attr_int(b, n, "group", op->groups);
        finish(b, op, pre);
        return 0;
    }
    case IR_LINEAR: {
        long in_features = op->w_count / op->c;
        if (in_features != (long)op->in_c * op->in_h * op->in_w) {
            snprintf(err, cap, "linear '%s' applies per position, which the ONNX export does not write yet", op->name);
            return 1;
        }
        const char *flat = in0;
        if (rank == 4) {
            flat = tmp_name(b, op->name, "flat");
            attr_int(b, node(b, "Flatten", op->name, 1, &in0, flat), "axis", 1);
        }
        const char *pre = result(b, op);
        const char *ins[3] = { flat, NULL, NULL };
        long wd[2] = { op->c, in_features };
        snprintf(pname, sizeof pname, "%s.weight", op->name);
        ins[1] = init_tensor(b, pname, 2, wd, params + op->w_off, 0);
        if (op->b_off >= 0) snprintf(pname, sizeof pname, "%s.bias", op->name),
                            ins[2] = init_tensor(b, pname, 1, wd, params + op->b_off, 0);
        attr_int(b, node(b, "Gemm", op->name, op->b_off >= 0 ? 3 : 2, ins, pre), "transB", 1);
        finish(b, op, pre);
        b->rank[v] = 2;
        return 0;
    }
    case IR_BN: {
        const char *pre = result(b, op);
        const char *ins[5] = { in0 };
        snprintf(pname, sizeof pname, "%s.weight", op->name);
        ins[1] = channel_tensor(b, pname, 2, op->c, op->w_off >= 0 ? params + op->w_off : NULL, 1.0f);
        snprintf(pname, sizeof pname, "%s.bias", op->name);
        ins[2] = channel_tensor(b, pname, 2, op->c, op->b_off >= 0 ? params + op->b_off : NULL, 0.0f);
        snprintf(pname, sizeof pname, "%s.running_mean", op->name);
        ins[3] = channel_tensor(b, pname, 2, op->c, buffers + op->buf_off, 0);
        snprintf(pname, sizeof pname, "%s.running_var", op->name);
        ins[4] = channel_tensor(b, pname, 2, op->c, buffers + op->buf_off + op->c, 0);
        Onnx__NodeProto *n = node(b, "BatchNormalization", op->name, 5, ins, pre);
        attr_float(b, n, "epsilon", op->eps), attr_float(b, n, "momentum", 1.0 - op->momentum);
        finish(b, op, pre);
        return 0;
    }
    case IR_LN: {   /* (x - mean_c) / sqrt(var_c + eps) * gamma + beta, statistics over the channels */
        long axes[1] = { 1 };
        const char *mean = tmp_name(b, op->name, "mean"), *dev = tmp_name(b, op->name, "centered");
        const char *sq = tmp_name(b, op->name, "squared"), *var = tmp_name(b, op->name, "var");
        const char *ve = tmp_name(b, op->name, "var_eps"), *sd = tmp_name(b, op->name, "std");
        const char *nrm = tmp_name(b, op->name, "normalized"), *sc = tmp_name(b, op->name, "scaled");
        long one = 1;
        snprintf(pname, sizeof pname, "%s.eps", op->name);
        const char *eps = init_tensor(b, pname, 0, &one, NULL, (float)op->eps);
        Onnx__NodeProto *n = node(b, "ReduceMean", op->name, 1, &in0, mean);
        attr_ints(b, n, "axes", 1, axes), attr_int(b, n, "keepdims", 1);
        node(b, "Sub", op->name, 2, (const char *[]){ in0, mean }, dev);
        node(b, "Mul", op->name, 2, (const char *[]){ dev, dev }, sq);
        n = node(b, "ReduceMean", op->name, 1, &sq, var);
        attr_ints(b, n, "axes", 1, axes), attr_int(b, n, "keepdims", 1);
        node(b, "Add", op->name, 2, (const char *[]){ var, eps }, ve);
        node(b, "Sqrt", op->name, 1, &ve, sd);
        node(b, "Div", op->name, 2, (const char *[]){ dev, sd }, nrm);
        snprintf(pname, sizeof pname, "%s.weight", op->name);
        const char *g = channel_tensor(b, pname, rank, op->c, params + op->w_off, 0);
        snprintf(pname, sizeof pname, "%s.bias", op->name);
        const char *bb = channel_tensor(b, pname, rank, op->c, params + op->b_off, 0);
        node(b, "Mul", op->name, 2, (const char *[]){ nrm, g }, sc);
        node(b, "Add", op->name, 2, (const char *[]){ sc, bb }, op->name);
        return 0;
    }
    case IR_RELU: node(b, "Relu", op->name, 1, &in0, op->name); return 0;
    case IR_GELU: {   /* x * 0.5 * (1 + erf(x / sqrt(2))), as torch's exact GELU */
        long one = 1;
        char n1[320], n2[320], n3[320];
        snprintf(n1, sizeof n1, "%s.sqrt2", op->name), snprintf(n2, sizeof n2, "%s.one", op->name);
        snprintf(n3, sizeof n3, "%s.half", op->name);
        const char *r2 = init_tensor(b, n1, 0, &one, NULL, (float)sqrt(2.0));
        const char *c1 = init_tensor(b, n2, 0, &one, NULL, 1.0f), *ch = init_tensor(b, n3, 0, &one, NULL, 0.5f);
        const char *a = tmp_name(b, op->name, "scaled"), *e = tmp_name(b, op->name, "erf");
        const char *p1 = tmp_name(b, op->name, "plus1"), *hx = tmp_name(b, op->name, "half_x");
        node(b, "Div", op->name, 2, (const char *[]){ in0, r2 }, a);
        node(b, "Erf", op->name, 1, &a, e);
        node(b, "Add", op->name, 2, (const char *[]){ e, c1 }, p1);
        node(b, "Mul", op->name, 2, (const char *[]){ in0, ch }, hx);
        node(b, "Mul", op->name, 2, (const char *[]){ hx, p1 }, op->name);
        return 0;
    }
    case IR_MAXPOOL:
    case IR_AVGPOOL: {
        Onnx__NodeProto *n = node(b, op->kind == IR_MAXPOOL ? "MaxPool" : "AveragePool", op->name, 1, &in0, op->name);
        long k[2] = { op->kh, op->kw }, s[2] = { op->sh, op->sw }, p[4] = { op->ph, op->pw, op->ph, op->pw };
        attr_ints(b, n, "kernel_shape", 2, k), attr_ints(b, n, "strides", 2, s), attr_ints(b, n, "pads", 4, p);
        if (pool_ceil(op)) attr_int(b, n, "ceil_mode", 1);
        if (op->kind == IR_AVGPOOL) attr_int(b, n, "count_include_pad", 1);   /* torch's default, Caffe's */
        return 0;
    }
    case IR_GAP: node(b, "GlobalAveragePool", op->name, 1, &in0, op->name); return 0;
    case IR_DROPOUT:
    case IR_STOCHASTIC_DEPTH: node(b, "Identity", op->name, 1, &in0, op->name); return 0;
    case IR_LRN: {
        if (op->lrn_within) {
            snprintf(err, cap, "lrn '%s' is WITHIN_CHANNEL, which ONNX's LRN does not compute", op->name);
            return 1;
        }
        Onnx__NodeProto *n = node(b, "LRN", op->name, 1, &in0, op->name);
        attr_int(b, n, "size", op->lrn_size), attr_float(b, n, "alpha", op->lrn_alpha);
        attr_float(b, n, "beta", op->lrn_beta), attr_float(b, n, "bias", op->lrn_k);
        return 0;
    }
    case IR_ADD: {
        const char *pre = result(b, op);
        const char *ins[IR_MAX_INPUTS];
        for (int i = 0; i < op->n_in; i++) ins[i] = value_name(net, op->in[i]);
        node(b, "Sum", op->name, op->n_in, ins, pre);
        finish(b, op, pre);
        return 0;
    }
    case IR_CONCAT: {
        const char *ins[IR_MAX_INPUTS];
        for (int i = 0; i < op->n_in; i++) ins[i] = value_name(net, op->in[i]);
        /* along tokens: our [N, C, T, 1] sequences join on their T axis */
        attr_int(b, node(b, "Concat", op->name, op->n_in, ins, op->name), "axis", op->tokens ? 2 : 1);
        return 0;
    }
    case IR_STOP_GRADIENT:   /* the identity in a forward graph */
        node(b, "Identity", op->name, 1, &in0, op->name);
        return 0;
    case IR_FLATTEN:
        if (op->h * op->w > 1) {   /* tokens, or a reshape with positions: a Reshape with a shape tensor */
            snprintf(err, cap, "layer '%s' (tokens or reshape to [%d, %d, %d]) has no ONNX form yet: export the "
                     "weights with --format torch instead", op->name, op->c, op->h, op->w);
            return 1;
        }
        attr_int(b, node(b, "Flatten", op->name, 1, &in0, op->name), "axis", 1);
        b->rank[v] = 2;
        return 0;
    case IR_LAYER_SCALE: {
        snprintf(pname, sizeof pname, "%s.weight", op->name);
        const char *g = channel_tensor(b, pname, rank, op->c, params + op->w_off, 0);
        node(b, "Mul", op->name, 2, (const char *[]){ in0, g }, op->name);
        return 0;
    }
    case IR_ACTIVATION: {   /* rt_activation's order: relu6, sigmoid, silu, hardswish, hardsigmoid */
        int fn = op->act_fn;
        if (fn == 1) { node(b, "Sigmoid", op->name, 1, &in0, op->name); return 0; }
        if (fn == 4 || fn == 3) {   /* torch's hardsigmoid: relu6(x + 3) / 6 */
            const char *hs = fn == 4 ? op->name : tmp_name(b, op->name, "hardsigmoid");
            Onnx__NodeProto *n = node(b, "HardSigmoid", op->name, 1, &in0, hs);
            attr_float(b, n, "alpha", 1.0 / 6.0), attr_float(b, n, "beta", 0.5);
            if (fn == 3) node(b, "Mul", op->name, 2, (const char *[]){ in0, hs }, op->name);   /* x * hardsigmoid(x) */
            return 0;
        }
        if (fn == 2) {   /* x * sigmoid(x) */
            const char *sg = tmp_name(b, op->name, "sigmoid");
            node(b, "Sigmoid", op->name, 1, &in0, sg);
            node(b, "Mul", op->name, 2, (const char *[]){ in0, sg }, op->name);
            return 0;
        }
        break;   /* relu6: not written yet (Clip takes its bounds as tensors) */
    }
    case IR_MUL: {   /* x times a [C,1,1] gate or a tensor of x's shape: ONNX's broadcasting */
        const char *ins[2] = { in0, value_name(net, op->in[1]) };
        node(b, "Mul", op->name, 2, ins, op->name);
        return 0;
    }
    case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: break;   /* not written yet (select_token too) */
    case IR_LEARNED: break;   /* not written yet: an initializer, expanded over the batch */
    case IR_SPACE_TO_DEPTH: break;   /* ONNX's SpaceToDepth orders the channels (dh*b + dw)*C + c, not Swin's */
    case IR_ATTENTION:   /* the standard domain has no self-attention op before opset 23 */
        snprintf(err, cap, "layer '%s' (attention): the ONNX opsets this export writes have no multi-head "
                 "attention op (the standard one arrived in opset 23): export the weights with --format torch instead",
                 op->name);
        return 1;
    case IR_OP_COUNT: break;
    }
    snprintf(err, cap, "op '%s' has no ONNX form yet: export the weights with --format torch instead", op->name);
    return 1;
}

static Onnx__ValueInfoProto *value_info(onnx_builder *b, const char *name, int rank, const long *dims) {
    Onnx__ValueInfoProto *v = alloc(b, sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = text(b, name);
    Onnx__TypeProto *t = alloc(b, sizeof *t);
    onnx__type_proto__init(t);
    Onnx__TypeProto__Tensor *tt = alloc(b, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1, tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    Onnx__TensorShapeProto *sh = alloc(b, sizeof *sh);
    onnx__tensor_shape_proto__init(sh);
    sh->n_dim = (size_t)rank;
    sh->dim = alloc(b, (size_t)rank * sizeof *sh->dim);
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = alloc(b, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (i == 0) d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM, d->dim_param = text(b, "batch");
        else d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE, d->dim_value = dims[i];
        sh->dim[i] = d;
    }
    tt->shape = sh;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, t->tensor_type = tt;
    v->type = t;
    return v;
}

int export_write_onnx(const char *path, const ir_net *net, const float *params, const float *buffers,
                      const char *model_name, const char *doc, int *n_written, char *err, size_t cap) {
    /* Only the ops the main head's logits (the last op) depend on: an auxiliary head's branch
     * feeds its training loss alone, and inference has no use for it. */
    char *live = calloc((size_t)net->n_ops, 1);
    live[net->n_ops - 1] = 1;
    for (int i = net->n_ops - 1; i >= 0; i--)
        for (int k = 0; live[i] && k < net->ops[i].n_in; k++)
            if (net->ops[i].in[k] > 0) live[net->ops[i].in[k] - 1] = 1;
    *n_written = 0;
    onnx_builder b;
    memset(&b, 0, sizeof b);
    b.rank = alloc(&b, (size_t)(net->n_ops + 1) * sizeof(int));
    b.rank[0] = 4;
    int bad = 0;
    for (int i = 0; i < net->n_ops && !bad; i++)
        if (live[i]) {
            bad = emit_op(&b, net, &net->ops[i], i + 1, params, buffers, err, cap);
            ++*n_written;
        }
    free(live);
    if (!bad && b.rank[net->n_ops] != 2) {
        const char *last = net->ops[net->n_ops - 1].name;   /* logits with spatial dims of 1 */
        attr_int(&b, node(&b, "Flatten", "logits", 1, &last, "logits"), "axis", 1);
    } else if (!bad) {
        const char *last = net->ops[net->n_ops - 1].name;
        node(&b, "Identity", "logits", 1, &last, "logits");
    }
    int rc = 1;
    if (!bad) {
        Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
        g.name = text(&b, model_name);
        g.n_node = (size_t)b.n_nodes, g.node = b.nodes;
        g.n_initializer = (size_t)b.n_inits, g.initializer = b.inits;
        long in_dims[4] = { 0, net->in_c, net->in_h, net->in_w }, out_dims[2] = { 0, net->classes };
        Onnx__ValueInfoProto *in = value_info(&b, "input", 4, in_dims), *out = value_info(&b, "logits", 2, out_dims);
        g.n_input = 1, g.input = &in, g.n_output = 1, g.output = &out;
        Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT, *opsets = &opset;
        opset.domain = text(&b, ""), opset.has_version = 1, opset.version = ONNX_OPSET;
        Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
        m.has_ir_version = 1, m.ir_version = ONNX__VERSION__IR_VERSION;
        m.n_opset_import = 1, m.opset_import = &opsets;
        m.producer_name = text(&b, "trainc"), m.doc_string = text(&b, doc);
        m.graph = &g;
        size_t len = onnx__model_proto__get_packed_size(&m);
        uint8_t *buf = malloc(len);
        onnx__model_proto__pack(&m, buf);
        rc = output_write_all(path, buf, len, err, cap);
        free(buf);
    }
    for (int i = 0; i < b.n_owned; i++) free(b.owned[i]);
    free(b.owned), free(b.nodes), free(b.inits);
    return rc;
}
#else
int export_write_onnx(const char *path, const ir_net *net, const float *params, const float *buffers,
                      const char *model_name, const char *doc, int *n_written, char *err, size_t cap) {
    (void)path, (void)net, (void)params, (void)buffers, (void)model_name, (void)doc, (void)n_written;
    snprintf(err, cap, "this trainc was built without ONNX support (WITH_ONNX=0: no protobuf-c)");
    return 1;
}
#endif
