/* Shape inference for one layer: attributes with defaults, output shape, parameter count
 * (torchvision conventions), forward MACs (conv and linear only) and fp32 activation bytes.
 * Every product is overflow-checked: a huge spec gets a diagnostic, never a wrapped number. */
#include "sema_internal.h"
#include "sema_filler.h"
#include "sema_value.h"

#include <stdio.h>
#include <string.h>

/* Checked arithmetic that reports once per layer and then yields 0. */
typedef struct {
    diag_ctx *diag;
    const net_layer *layer;
    int failed;
} calc;

static void overflow(calc *c) {
    if (c->failed) return;
    c->failed = 1;
    diag_error(c->diag, c->layer->loc, "check out, kernel, groups and the input shape",
               "sizes of layer '%s' overflow 64 bits", c->layer->name);
}

static int64_t mul(calc *c, int64_t a, int64_t b) {
    int64_t r;
    if (c->failed) return 0;
    if (__builtin_mul_overflow(a, b, &r)) { overflow(c); return 0; }
    return r;
}

static int64_t add(calc *c, int64_t a, int64_t b) {
    int64_t r;
    if (c->failed) return 0;
    if (__builtin_add_overflow(a, b, &r)) { overflow(c); return 0; }
    return r;
}

static void shape_text(char *buf, size_t cap, net_shape s) {
    snprintf(buf, cap, "[%lld, %lld, %lld]", (long long)s.c, (long long)s.h, (long long)s.w);
}

static net_shape input_shape(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? net->input : net->layers[idx].out;
}

static const char *input_name(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? "data" : net->layers[idx].name;
}

int sema_shape_bytes(diag_ctx *diag, src_loc loc, const char *what, net_shape s, int64_t *bytes) {
    int64_t r;
    if (__builtin_mul_overflow(s.c, s.h, &r) || __builtin_mul_overflow(r, s.w, &r) ||
        __builtin_mul_overflow(r, (int64_t)4, &r)) {
        diag_error(diag, loc, "reduce the channels or the spatial size",
                   "the size of %s overflows 64 bits", what);
        return 1;
    }
    if (bytes) *bytes = r;
    return 0;
}

/* Output length of a sliding window over `in` (torch floor mode); -1 if it does not fit. */
static int64_t window_out(calc *c, int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                          int64_t dilation) {
    int64_t padded = add(c, in, mul(c, 2, pad));
    int64_t span = add(c, mul(c, dilation, kernel - 1), 1);
    if (c->failed) return 0;
    if (padded < span) return -1;
    return (padded - span) / stride + 1;
}

/* Ceil mode (Caffe's pooling, torch ceil_mode=True): ceil((in + 2 pad - kernel) / stride) + 1,
 * less one when that last window would start past the input and its left padding (Caffe
 * applies this only with padding; without it the window it drops would be empty). Called
 * after window_out found the kernel fits, so nothing overflows or goes negative. */
static int64_t ceil_window_out(int64_t in, int64_t kernel, int64_t stride, int64_t pad) {
    int64_t out = (in + 2 * pad - kernel + stride - 1) / stride + 1;
    if ((out - 1) * stride >= in + pad) out--;
    return out;
}

static int kernel_too_big(diag_ctx *diag, const net_layer *L, const int64_t k[2],
                          const int64_t pad[2]) {
    char shape[80], hint[160];
    shape_text(shape, sizeof shape, L->in);
    snprintf(hint, sizeof hint, "the input is %s with padding %lldx%lld; use a smaller kernel or "
             "more padding", shape, (long long)pad[0], (long long)pad[1]);
    diag_error(diag, L->loc, hint, "kernel %lldx%lld of layer '%s' is larger than its padded input",
               (long long)k[0], (long long)k[1], L->name);
    return 1;
}

static int infer_conv(calc *c, net_layer *L, const ast_node *msg) {
    net_conv_attr *a = &L->conv;
    a->out = sv_int(msg, SM_CONV, "out");
    sv_pair(msg, SM_CONV, "kernel", a->kernel);
    sv_pair(msg, SM_CONV, "stride", a->stride);
    sv_pair(msg, SM_CONV, "pad", a->pad);
    sv_pair(msg, SM_CONV, "dilation", a->dilation);
    a->groups = sv_int(msg, SM_CONV, "groups");
    a->bias = sv_bool(msg, SM_CONV, "bias");
    if (sema_read_fillers(c->diag, msg, SM_CONV, a->bias, &a->weight_filler, &a->bias_filler) ||
        sema_read_mults(c->diag, msg, SM_CONV, a->bias, a->lr_mult, a->decay_mult))
        return 1;
    if (L->in.c % a->groups || a->out % a->groups) {
        char hint[160];
        snprintf(hint, sizeof hint, "groups must divide both the %lld input and the %lld output "
                 "channels", (long long)L->in.c, (long long)a->out);
        diag_error(c->diag, sv_loc(msg, SM_CONV, "groups"), hint,
                   "groups %lld of layer '%s' does not divide its channels", (long long)a->groups,
                   L->name);
        return 1;
    }
    int64_t oh = window_out(c, L->in.h, a->kernel[0], a->stride[0], a->pad[0], a->dilation[0]);
    int64_t ow = window_out(c, L->in.w, a->kernel[1], a->stride[1], a->pad[1], a->dilation[1]);
    if (c->failed) return 1;
    if (oh < 0 || ow < 0) return kernel_too_big(c->diag, L, a->kernel, a->pad);
    L->out = (net_shape){a->out, oh, ow};
    int64_t per_out = mul(c, mul(c, L->in.c / a->groups, a->kernel[0]), a->kernel[1]);
    L->params = add(c, mul(c, a->out, per_out), a->bias ? a->out : 0);
    L->macs = mul(c, mul(c, mul(c, a->out, oh), ow), per_out);
    return c->failed;
}

static int infer_linear(calc *c, net_layer *L, const ast_node *msg, const char *from) {
    net_linear_attr *a = &L->linear;
    a->in = mul(c, mul(c, L->in.c, L->in.h), L->in.w);
    a->out = sv_int(msg, SM_LINEAR, "out");
    a->bias = sv_bool(msg, SM_LINEAR, "bias");
    if (sema_read_fillers(c->diag, msg, SM_LINEAR, a->bias, &a->weight_filler, &a->bias_filler) ||
        sema_read_mults(c->diag, msg, SM_LINEAR, a->bias, a->lr_mult, a->decay_mult))
        return 1;
    if (c->failed) return 1;
    if (sv_has(msg, SM_LINEAR, "in") && sv_int(msg, SM_LINEAR, "in") != a->in) {
        char shape[80], hint[200];
        shape_text(shape, sizeof shape, L->in);
        snprintf(hint, sizeof hint, "its input '%s' has shape %s, i.e. %lld features",
                 from, shape, (long long)a->in);
        diag_error(c->diag, sv_loc(msg, SM_LINEAR, "in"), hint,
                   "linear layer '%s' says in: %lld but is fed %lld features", L->name,
                   (long long)sv_int(msg, SM_LINEAR, "in"), (long long)a->in);
        return 1;
    }
    L->out = (net_shape){a->out, 1, 1};
    L->params = add(c, mul(c, a->in, a->out), a->bias ? a->out : 0);
    L->macs = mul(c, a->in, a->out);
    return c->failed;
}

static int infer_pool(calc *c, net_layer *L, const ast_node *msg, schema_msg_id sm) {
    net_pool_attr *a = &L->pool;
    sv_pair(msg, sm, "kernel", a->kernel);
    if (sv_has(msg, sm, "stride")) sv_pair(msg, sm, "stride", a->stride);
    else memcpy(a->stride, a->kernel, sizeof a->stride);
    sv_pair(msg, sm, "pad", a->pad);
    if (a->pad[0] * 2 > a->kernel[0] || a->pad[1] * 2 > a->kernel[1]) {
        diag_error(c->diag, sv_loc(msg, sm, "pad"), "padding may be at most half the kernel",
                   "pad %lldx%lld of layer '%s' is more than half its %lldx%lld kernel",
                   (long long)a->pad[0], (long long)a->pad[1], L->name, (long long)a->kernel[0],
                   (long long)a->kernel[1]);
        return 1;
    }
    a->ceil_mode = sv_bool(msg, sm, "ceil_mode");
    int64_t oh = window_out(c, L->in.h, a->kernel[0], a->stride[0], a->pad[0], 1);
    int64_t ow = window_out(c, L->in.w, a->kernel[1], a->stride[1], a->pad[1], 1);
    if (c->failed) return 1;
    if (oh < 0 || ow < 0) return kernel_too_big(c->diag, L, a->kernel, a->pad);
    if (a->ceil_mode) {
        oh = ceil_window_out(L->in.h, a->kernel[0], a->stride[0], a->pad[0]);
        ow = ceil_window_out(L->in.w, a->kernel[1], a->stride[1], a->pad[1]);
    }
    L->out = (net_shape){L->in.c, oh, ow};
    return 0;
}

static int infer_adaptive(calc *c, net_layer *L, const ast_node *msg) {
    int64_t size = L->adaptive.size = sv_int(msg, SM_ADAPTIVE_AVGPOOL, "size");
    if (L->in.h % size || L->in.w % size) {
        char shape[80], hint[160];
        shape_text(shape, sizeof shape, L->in);
        snprintf(hint, sizeof hint, "the input is %s; its height and width must be multiples of "
                 "size", shape);
        diag_error(c->diag, sv_loc(msg, SM_ADAPTIVE_AVGPOOL, "size"), hint,
                   "adaptive_avgpool layer '%s' cannot pool %lldx%lld to %lldx%lld", L->name,
                   (long long)L->in.h, (long long)L->in.w, (long long)size, (long long)size);
        return 1;
    }
    L->out = (net_shape){L->in.c, size, size};
    return 0;
}

/* add: all inputs alike; concat: same H and W, channels summed. */
static int infer_merge(calc *c, const net_desc *net, net_layer *L) {
    net_shape first = L->in, out = L->in;
    for (int k = 1; k < L->n_inputs; k++) {
        net_shape s = input_shape(net, L->inputs[k]);
        int same = L->kind == NET_ADD ? s.c == first.c && s.h == first.h && s.w == first.w
                                      : s.h == first.h && s.w == first.w;
        if (!same) {
            char a[80], b[80], hint[320];
            shape_text(a, sizeof a, first);
            shape_text(b, sizeof b, s);
            snprintf(hint, sizeof hint, "'%s' is %s but '%s' is %s", input_name(net, L->inputs[0]),
                     a, input_name(net, L->inputs[k]), b);
            if (L->kind == NET_ADD)
                diag_error(c->diag, L->loc, hint, "inputs of add layer '%s' have different shapes%s",
                           L->name, s.c != first.c ? " (channel mismatch)" : "");
            else
                diag_error(c->diag, L->loc, hint,
                           "inputs of concat layer '%s' differ in height or width", L->name);
            return 1;
        }
        if (L->kind == NET_CONCAT) out.c = add(c, out.c, s.c);
    }
    L->out = out;
    return c->failed;
}

static int infer_kind(calc *c, net_desc *net, int i, const ast_node *msg, schema_msg_id sm) {
    net_layer *L = &net->layers[i];
    L->out = L->in;
    switch (L->kind) {
    case NET_CONV: return infer_conv(c, L, msg);
    case NET_LINEAR: return infer_linear(c, L, msg, input_name(net, L->inputs[0]));
    case NET_BN:
        L->norm.eps = sv_float(msg, SM_BN, "eps");
        L->norm.momentum = sv_float(msg, SM_BN, "momentum");
        L->norm.use_global_stats = sv_bool(msg, SM_BN, "use_global_stats");
        L->norm.affine = sv_bool(msg, SM_BN, "affine");
        L->norm.gamma_init = sv_float(msg, SM_BN, "gamma_init");
        if (!L->norm.affine && L->norm.gamma_init != 1.0) {   /* without affine gamma stays 1 */
            diag_error(c->diag, sv_loc(msg, SM_BN, "gamma_init"), "remove gamma_init, or set affine: true",
                       "gamma_init %g on bn '%s' with affine: false (no gamma to start there)", L->norm.gamma_init,
                       L->name);
            c->failed = 1;
        }
        if (!L->norm.affine && sv_has(msg, SM_BN, "caffe_scale")) {   /* no gamma and beta for a Scale to hold */
            diag_error(c->diag, sv_loc(msg, SM_BN, "caffe_scale"), "remove caffe_scale, or set affine: true",
                       "caffe_scale on bn '%s' with affine: false (no gamma and beta to keep in a Scale layer)", L->name);
            c->failed = 1;
        }
        L->params = L->norm.affine ? mul(c, 2, L->in.c) : 0;
        return c->failed;
    case NET_LN:
        L->norm.eps = sv_float(msg, SM_LN, "eps");
        L->params = mul(c, 2, L->in.c);
        return c->failed;
    case NET_LAYER_SCALE:
        L->scale.init = sv_float(msg, SM_LAYER_SCALE, "init");
        L->params = L->in.c;
        return 0;
    case NET_DROPOUT:
        L->drop.p = sv_float(msg, SM_DROPOUT, "p");
        return 0;
    case NET_STOCHASTIC_DEPTH:
        L->drop.p = sv_float(msg, SM_STOCHASTIC_DEPTH, "p");
        return 0;
    case NET_LRN:
        L->lrn.size = sv_int(msg, SM_LRN, "size");
        L->lrn.alpha = sv_float(msg, SM_LRN, "alpha");
        L->lrn.beta = sv_float(msg, SM_LRN, "beta");
        L->lrn.k = sv_float(msg, SM_LRN, "k");
        static const char *const regions[] = { "ACROSS_CHANNELS", "WITHIN_CHANNEL" };
        L->lrn.within_channel = SV_ENUM(msg, SM_LRN, "region", regions) == 1;
        if (L->lrn.within_channel && L->lrn.size % 2 == 0) {
            diag_error(c->diag, sv_loc(msg, SM_LRN, "size"), "use an odd size (Caffe allows only odd ones)",
                       "lrn layer '%s': WITHIN_CHANNEL needs an odd size, not %lld", L->name, (long long)L->lrn.size);
            return 1;
        }
        return 0;
    case NET_RELU: case NET_GELU: case NET_RELU6: case NET_SIGMOID: case NET_SILU: case NET_HARDSWISH:
    case NET_HARDSIGMOID:
        return 0;
    case NET_FLATTEN:
        L->out = (net_shape){mul(c, mul(c, L->in.c, L->in.h), L->in.w), 1, 1};
        return c->failed;
    case NET_RESHAPE: case NET_STOP_GRADIENT: return sema_infer_view_op(c->diag, L, msg);
    case NET_GAP: L->out = (net_shape){L->in.c, 1, 1}; return 0;
    case NET_MAXPOOL: case NET_AVGPOOL: return infer_pool(c, L, msg, sm);
    case NET_ADAPTIVE_AVGPOOL: return infer_adaptive(c, L, msg);
    case NET_CONCAT:
        if (!strcmp(sv_str(msg, SM_CONCAT, "axis"), "TOKENS")) return sema_infer_token_op(c->diag, net, L, msg);
        return infer_merge(c, net, L);
    case NET_ADD: return infer_merge(c, net, L);
    case NET_TOKENS: case NET_LEARNED: case NET_SELECT_TOKEN: case NET_ATTENTION: case NET_SPACE_TO_DEPTH:
        return sema_infer_token_op(c->diag, net, L, msg);
    case NET_MUL: case NET_CHANNEL_SHUFFLE: case NET_CHANNEL_SLICE:
        return sema_infer_channel_op(c->diag, net, L, msg);
    case NET_SOFTMAX_CE:   /* the last layer is the main head, any other an auxiliary one (sema_net.c) */
        L->loss.weight = sv_float(msg, SM_SOFTMAX_CE, "loss_weight");
        if (i == net->n_layers - 1) net->loss_layer = i;
        return 0;
    case NET_KIND_COUNT: break;
    }
    return 1;
}

int sema_infer_layer(diag_ctx *diag, net_desc *net, int i, const ast_node *msg, schema_msg_id sm) {
    net_layer *L = &net->layers[i];
    calc c = {diag, L, 0};
    for (int k = 0; k < L->n_inputs; k++) {   /* a loss's output is a number for the trainer, no tensor */
        const net_layer *from = L->inputs[k] >= 0 ? &net->layers[L->inputs[k]] : NULL;
        if (!from || from->kind != NET_SOFTMAX_CE) continue;
        diag_error(diag, L->loc, "name the layer it reads with input: (after an auxiliary head, the previous "
                   "layer is that loss)", "layer '%s' reads softmax_ce '%s', a loss: no layer may read a loss",
                   L->name, from->name);
        return 1;
    }
    L->in = input_shape(net, L->inputs[0]);
    if (infer_kind(&c, net, i, msg, sm)) return 1;
    if (L->out.c <= 0 || L->out.h <= 0 || L->out.w <= 0) {
        diag_error(diag, L->loc, NULL, "layer '%s' has an empty output", L->name);
        return 1;
    }
    return sema_shape_bytes(diag, L->loc, "the layer's output", L->out, &L->act_bytes);
}
