/* Lowers sema's net_desc to the code generator's ir_net: ops over numbered values, C
 * identifiers from layer names, parameter sizes and fan-in, loss layers folded away. */
#include "ir.h"
#include "ir_build.h"
#include "rt_ops.h"   /* rt_activation: the runtime's numbering of the activation family */

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static_assert(RT_ACTIVATION_RELU6 == 0 && RT_ACTIVATION_SIGMOID == 1 && RT_ACTIVATION_SILU == 2 &&
              RT_ACTIVATION_HARDSWISH == 3 && RT_ACTIVATION_HARDSIGMOID == 4 && RT_ACTIVATION_COUNT == 5,
              "ir.h's ir_activation_const lists rt_activation in its order");

static void make_ident(ir_net *net, int i, const char *name) {
    char *id = net->ops[i].ident;
    size_t cap = sizeof net->ops[i].ident - 4, n = 0;
    if (isdigit((unsigned char)name[0])) id[n++] = 'l';
    for (const char *p = name; *p && n < cap; p++) id[n++] = isalnum((unsigned char)*p) ? *p : '_';
    id[n] = '\0';
    /* Two names can sanitize alike ("a.b" and "a_b"): number the later ones. */
    for (int dup = 2;; dup++) {
        int clash = 0;
        for (int k = 0; k < i && !clash; k++) clash = !strcmp(net->ops[k].ident, id);
        if (!clash) break;
        char *tail = id + n;   /* "_2".."_99": at most 3 characters, inside the 4 reserved */
        *tail++ = '_';
        if (dup % 100 >= 10) *tail++ = (char)('0' + dup / 10 % 10);
        *tail++ = (char)('0' + dup % 10);
        *tail = '\0';
    }
}

static ir_op_kind lower_kind(net_kind k) {
    switch (k) {
    case NET_CONV: return IR_CONV;
    case NET_LINEAR: return IR_LINEAR;
    case NET_BN: return IR_BN;
    case NET_LN: return IR_LN;
    case NET_RELU: return IR_RELU;
    case NET_GELU: return IR_GELU;
    case NET_RELU6: case NET_SIGMOID: case NET_SILU: case NET_HARDSWISH: case NET_HARDSIGMOID:
        return IR_ACTIVATION;
    case NET_FLATTEN: return IR_FLATTEN;
    case NET_GAP: return IR_GAP;
    case NET_MAXPOOL: return IR_MAXPOOL;
    case NET_AVGPOOL: case NET_ADAPTIVE_AVGPOOL: return IR_AVGPOOL;
    case NET_DROPOUT: return IR_DROPOUT;
    case NET_LRN: return IR_LRN;
    case NET_ADD: return IR_ADD;
    case NET_CONCAT: return IR_CONCAT;
    case NET_MUL: return IR_MUL;
    case NET_CHANNEL_SHUFFLE: return IR_CHANNEL_SHUFFLE;
    case NET_CHANNEL_SLICE: case NET_SELECT_TOKEN: return IR_CHANNEL_SLICE;
    case NET_TOKENS: return IR_FLATTEN;   /* a view, as flatten: [C, H*W, 1] is [C, H, W]'s memory */
    case NET_RESHAPE: return IR_FLATTEN;  /* a view too: any [C', H', W'] of C*H*W values, in NCHW order */
    case NET_STOP_GRADIENT: return IR_STOP_GRADIENT;
    case NET_LEARNED: return IR_LEARNED;
    case NET_ATTENTION: return IR_ATTENTION;
    case NET_SPACE_TO_DEPTH: return IR_SPACE_TO_DEPTH;
    case NET_LAYER_SCALE: return IR_LAYER_SCALE;
    case NET_STOCHASTIC_DEPTH: return IR_STOCHASTIC_DEPTH;
    case NET_SOFTMAX_CE: case NET_KIND_COUNT: return IR_OP_COUNT;   /* the loss is not an op */
    }
    return IR_OP_COUNT;
}

static void lower_attrs(ir_op *op, const net_layer *l) {
    op->w_count = op->b_count = 0;
    op->lr_mult[0] = op->lr_mult[1] = op->decay_mult[0] = op->decay_mult[1] = 1.0;
    switch (l->kind) {
    case NET_CONV:
        op->kh = (int)l->conv.kernel[0], op->kw = (int)l->conv.kernel[1];
        op->sh = (int)l->conv.stride[0], op->sw = (int)l->conv.stride[1];
        op->ph = (int)l->conv.pad[0], op->pw = (int)l->conv.pad[1];
        op->dh = (int)l->conv.dilation[0], op->dw = (int)l->conv.dilation[1];
        op->groups = (int)l->conv.groups;
        op->fan_in = (long)(l->in.c / l->conv.groups) * op->kh * op->kw;
        op->w_count = (long)l->conv.out * op->fan_in;
        op->b_count = l->conv.bias ? (long)l->conv.out : 0;
        op->fan_out = (long)l->conv.out * op->kh * op->kw;
        op->wfill = l->conv.weight_filler, op->bfill = l->conv.bias_filler;
        memcpy(op->lr_mult, l->conv.lr_mult, sizeof op->lr_mult);
        memcpy(op->decay_mult, l->conv.decay_mult, sizeof op->decay_mult);
        break;
    case NET_LINEAR:
        op->fan_in = (long)l->linear.in;
        op->w_count = (long)l->linear.out * l->linear.in;
        op->b_count = l->linear.bias ? (long)l->linear.out : 0;
        op->fan_out = (long)l->linear.out;
        op->wfill = l->linear.weight_filler, op->bfill = l->linear.bias_filler;
        memcpy(op->lr_mult, l->linear.lr_mult, sizeof op->lr_mult);
        memcpy(op->decay_mult, l->linear.decay_mult, sizeof op->decay_mult);
        break;
    case NET_BN: case NET_LN:
        op->eps = l->norm.eps, op->momentum = l->norm.momentum;
        op->w_count = op->b_count = (long)l->out.c;
        if (l->kind == NET_BN) {
            op->bn_frozen = l->norm.use_global_stats;
            /* affine: false keeps gamma 1 and beta 0 as tensors that are never updated (lr_mult 0):
             * the kernels stay the affine ones, and nothing trains them */
            if (!l->norm.affine) op->lr_mult[0] = op->lr_mult[1] = 0;
            op->init = l->norm.gamma_init;
        }
        break;
    case NET_MAXPOOL: case NET_AVGPOOL:
        op->kh = (int)l->pool.kernel[0], op->kw = (int)l->pool.kernel[1];
        op->sh = (int)l->pool.stride[0], op->sw = (int)l->pool.stride[1];
        op->ph = (int)l->pool.pad[0], op->pw = (int)l->pool.pad[1];
        break;
    case NET_ADAPTIVE_AVGPOOL:   /* sema checked divisibility: a plain average pool */
        op->kh = op->sh = (int)(l->in.h / l->adaptive.size);
        op->kw = op->sw = (int)(l->in.w / l->adaptive.size);
        break;
    case NET_DROPOUT: case NET_STOCHASTIC_DEPTH: op->p = l->drop.p; break;
    case NET_LRN:
        op->lrn_size = (int)l->lrn.size, op->lrn_alpha = l->lrn.alpha;
        op->lrn_beta = l->lrn.beta, op->lrn_k = l->lrn.k, op->lrn_within = l->lrn.within_channel;
        break;
    case NET_LAYER_SCALE:
        op->init = l->scale.init;
        op->w_count = (long)l->out.c;
        break;
    case NET_MUL: op->mul_gate = l->channel.gate; break;
    case NET_CHANNEL_SHUFFLE: op->groups = (int)l->channel.groups; break;
    case NET_CHANNEL_SLICE: op->ch_start = (int)l->channel.start; break;
    case NET_SELECT_TOKEN: op->ch_start = (int)l->token.index, op->tokens = 1; break;
    case NET_LEARNED:
        op->w_count = (long)(l->out.c * l->out.h * l->out.w);
        op->wfill = l->token.filler;
        break;
    case NET_ATTENTION:
        op->heads = (int)l->token.heads;
        op->window = (int)l->token.window, op->shift = (int)l->token.shift;
        op->fan_in = (long)l->in.c;
        op->w_count = 4 * (long)l->in.c * l->in.c;
        op->b_count = 4 * (long)l->in.c;
        if (op->window)   /* Swin: the relative-position bias table after the two weights */
            op->w_count += (long)(2 * op->window - 1) * (2 * op->window - 1) * op->heads;
        break;
    case NET_RELU6: op->act_fn = RT_ACTIVATION_RELU6; break;
    case NET_SIGMOID: op->act_fn = RT_ACTIVATION_SIGMOID; break;
    case NET_SILU: op->act_fn = RT_ACTIVATION_SILU; break;
    case NET_HARDSWISH: op->act_fn = RT_ACTIVATION_HARDSWISH; break;
    case NET_HARDSIGMOID: op->act_fn = RT_ACTIVATION_HARDSIGMOID; break;
    case NET_CONCAT: op->tokens = l->channel.tokens; break;
    case NET_SPACE_TO_DEPTH: op->groups = (int)l->token.index; break;   /* the block */
    case NET_RELU: case NET_GELU: case NET_FLATTEN: case NET_GAP: case NET_ADD: case NET_TOKENS:
    case NET_RESHAPE: case NET_STOP_GRADIENT: case NET_SOFTMAX_CE: case NET_KIND_COUNT:
        break;   /* no attributes */
    }
}

/* Whether layer l's output is the logits: only flatten views and the loss follow it, or
 * (an auxiliary head's) its one reader is a loss head, directly or through such views. */
static int produces_logits(const net_desc *nd, int l) {
    int last = 1;
    for (int k = l + 1; k < nd->n_layers && last; k++)
        if (nd->layers[k].kind != NET_FLATTEN && nd->layers[k].kind != NET_RESHAPE && nd->layers[k].kind != NET_SOFTMAX_CE)
            last = 0;
    if (last) return 1;
    for (int v = l;;) {
        int reader = -1, n = 0;
        for (int k = v + 1; k < nd->n_layers; k++)
            for (int i = 0; i < nd->layers[k].n_inputs; i++)
                if (nd->layers[k].inputs[i] == v) reader = k, n++;
        if (n != 1) return 0;
        if (nd->layers[reader].kind == NET_SOFTMAX_CE) return 1;
        if (nd->layers[reader].kind != NET_FLATTEN && nd->layers[reader].kind != NET_TOKENS &&
            nd->layers[reader].kind != NET_RESHAPE)
            return 0;
        v = reader;
    }
}

/* A relu can run inside the op that produces its input when that op is a conv, linear, batch
 * norm or add without an activation yet and the relu is its output's only reader: then the
 * pre-activation tensor is never needed, and backward masks with the activated output. The
 * backend says what else it needs (ir_lowering). */
static int fusable_relu(const ir_net *net, const net_desc *nd, int l, int in_value, const int *readers,
                        const ir_lowering *how) {
    const net_layer *relu = &nd->layers[l];
    if (!how->fuse_relu || relu->kind != NET_RELU || relu->n_inputs != 1 || in_value == 0 ||
        readers[relu->inputs[0]] != 1)
        return 0;
    if (how->relu_not_last && produces_logits(nd, l)) return 0;
    const ir_op *prod = &net->ops[in_value - 1];
    if (prod->act) return 0;
    switch (prod->kind) {
    case IR_CONV: case IR_LINEAR: return !how->relu_needs_bias || prod->b_count > 0;
    case IR_BN: case IR_ADD: return 1;
    case IR_LN: case IR_RELU: case IR_GELU: case IR_ACTIVATION: case IR_MAXPOOL: case IR_AVGPOOL: case IR_GAP:
    case IR_DROPOUT: case IR_LRN: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: case IR_FLATTEN: case IR_LAYER_SCALE: case IR_STOCHASTIC_DEPTH: case IR_OP_COUNT:
    case IR_LEARNED: case IR_ATTENTION: case IR_SPACE_TO_DEPTH: case IR_STOP_GRADIENT:
        return 0;
    }
    return 0;
}

/* How many op inputs read value v (an op reading it twice counts twice). */
int ir_value_readers(const ir_net *net, int v) {
    int n = 0;
    for (int i = 0; i < net->n_ops; i++)
        for (int k = 0; k < net->ops[i].n_in; k++) n += net->ops[i].in[k] == v;
    return n;
}

/* A two-input add right after a bn that only it reads (a residual block's bn2, or the
 * projection's bn) computes that bn itself: act(bn(x) + residual) in one pass, so the
 * normalized tensor is never written and read back. The bn must normalize with batch
 * statistics (not frozen) and have no ReLU of its own. */
static void fuse_bn_into_adds(ir_net *net) {
    for (int j = 1; j < net->n_ops; j++) {
        ir_op *add = &net->ops[j], *bn = &net->ops[j - 1];
        int v = j;   /* the bn's value */
        if (add->kind != IR_ADD || add->n_in != 2 || bn->kind != IR_BN || bn->act || bn->bn_frozen ||
            (add->in[0] == v) == (add->in[1] == v) || ir_value_readers(net, v) != 1)
            continue;
        add->bn_in = v;
        bn->into_add = 1;
    }
}

/* Marks the ops whose outputs reach auxiliary loss heads only: walking back from the main
 * head's logits (the last op), every op it depends on runs in evaluation; the rest (GoogLeNet's
 * and Inception's side classifiers) feed a training loss alone. */
static void mark_train_only(ir_net *net) {
    for (int i = 0; i < net->n_ops; i++) net->ops[i].train_only = 1;
    net->ops[net->n_ops - 1].train_only = 0;
    for (int i = net->n_ops - 1; i >= 0; i--)
        for (int k = 0; !net->ops[i].train_only && k < net->ops[i].n_in; k++)
            if (net->ops[i].in[k] > 0) net->ops[net->ops[i].in[k] - 1].train_only = 0;
}

int ir_build(ir_net *net, const net_desc *nd, int batch, double label_smoothing, const ir_lowering *how) {
    memset(net, 0, sizeof *net);
    net->align_bytes = how->align_bytes;
    net->param_align = how->param_align;
    net->act_bytes = how->act_bytes;
    net->ops = calloc((size_t)nd->n_layers + 1, sizeof *net->ops);
    int *value_of = calloc((size_t)nd->n_layers + 1, sizeof *value_of);
    int *readers = calloc((size_t)nd->n_layers + 1, sizeof *readers);   /* per layer */
    if (!net->ops || !value_of || !readers) return -1;
    for (int l = 0; l < nd->n_layers; l++)
        for (int k = 0; k < nd->layers[l].n_inputs; k++)
            if (nd->layers[l].inputs[k] != NET_INPUT_DATA) readers[nd->layers[l].inputs[k]]++;
    net->batch = batch;
    net->in_c = (int)nd->input.c, net->in_h = (int)nd->input.h, net->in_w = (int)nd->input.w;
    net->classes = (int)nd->classes;
    net->label_smoothing = label_smoothing;
    double main_weight = 1.0;
    for (int l = 0; l < nd->n_layers; l++) {
        const net_layer *src = &nd->layers[l];
        int first_in = src->n_inputs ? src->inputs[0] : NET_INPUT_DATA;
        int in_value = first_in == NET_INPUT_DATA ? 0 : value_of[first_in];
        if (src->kind == NET_SOFTMAX_CE) {   /* a loss head: emitted after the last op, not an op */
            value_of[l] = in_value;
            if (l == nd->n_layers - 1) main_weight = src->loss.weight;   /* the main head (sema_net.c) */
            else {
                if (net->n_heads + 1 >= NET_MAX_HEADS) return -1;
                net->heads[++net->n_heads].value = in_value;   /* [0] is the main's, set below */
                net->heads[net->n_heads].weight = src->loss.weight;
                net->heads[net->n_heads].name = src->name;
                net->heads[net->n_heads].loc = src->loc;
            }
            continue;
        }
        if (fusable_relu(net, nd, l, in_value, readers, how)) {
            ir_op *prod = &net->ops[in_value - 1];
            prod->act = 1;
            prod->act_name = src->name;
            prod->act_loc = src->loc;
            value_of[l] = in_value;
            continue;
        }
        ir_op *op = &net->ops[net->n_ops];
        op->kind = lower_kind(src->kind);
        op->name = src->name;
        op->loc = src->loc;
        op->salt = l;
        op->n_in = src->n_inputs ? src->n_inputs : 1;
        if (op->n_in > IR_MAX_INPUTS) return -1;
        for (int k = 0; k < op->n_in; k++) {
            int in = src->n_inputs ? src->inputs[k] : NET_INPUT_DATA;
            op->in[k] = in == NET_INPUT_DATA ? 0 : value_of[in];
        }
        op->c = (int)src->out.c, op->h = (int)src->out.h, op->w = (int)src->out.w;
        op->in_c = (int)src->in.c, op->in_h = (int)src->in.h, op->in_w = (int)src->in.w;
        lower_attrs(op, src);
        make_ident(net, net->n_ops, src->name);
        value_of[l] = ++net->n_ops;
    }
    free(value_of);
    free(readers);
    net->n_heads++;
    net->heads[0].value = net->n_ops;
    net->heads[0].weight = main_weight;
    net->heads[0].name = nd->loss_layer >= 0 ? nd->layers[nd->loss_layer].name : "the loss";
    net->heads[0].loc = nd->loss_layer >= 0 ? nd->layers[nd->loss_layer].loc : (src_loc){ 0 };
    mark_train_only(net);
    if (how->fuse_bn_add) fuse_bn_into_adds(net);
    ir_layout_params(net);
    net->share_add_grads = how->share_add_grads;
    ir_plan(net);
    return net->n_ops > 0 ? 0 : -1;
}
