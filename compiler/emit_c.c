/* Emits the specialized C source of a model: parameter and arena layout as named macros,
 * straight-line forward / backward functions with constant shapes, init, and the rt_model
 * descriptor the runtime's trainer drives. Output is deterministic and meant to be read. */
#include "emit_init.h"
#include "ir.h"
#include "emit_names.h"
#include "template.h"
#include "rt_ops.h"   /* rt_conv_winograd_fits: the runtime's own shape predicate */

#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *out;
    const ir_net *net;
    int *grad_written;   /* per value, while emitting backward */
} emitter;

static void emit_banner(FILE *out, const ir_emit_info *info) {
    template_var vars[] = { { "NAME", info->name }, { "VERSION", info->compiler_version },
                            { "SPEC_PATH", info->spec_path }, { "SPEC_HASH", info->spec_hash } };
    if (template_fill(out, "model_header.c.in", vars, 4) != 0) exit(1);
}

static void emit_layout(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "#define BATCH %d\n#define CLASSES %d\n\n", net->batch, net->classes);
    fprintf(out, "/* Parameters (P) and their gradients (G), in floats: reverse schedule order. */\n");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->w_off >= 0)
            fprintf(out, "#define %s_weight (P + %ld)  /* %ld */\n#define %s_dweight (G + %ld)\n",
                    op->ident, op->w_off, op->w_count, op->ident, op->w_off);
        if (op->b_off >= 0)
            fprintf(out, "#define %s_bias (P + %ld)  /* %ld */\n#define %s_dbias (G + %ld)\n",
                    op->ident, op->b_off, op->b_count, op->ident, op->b_off);
        if (op->buf_off >= 0)
            fprintf(out, "#define %s_running_mean (S + %ld)\n#define %s_running_var (S + %ld)\n",
                    op->ident, op->buf_off, op->ident, op->buf_off + op->c);
    }
    fprintf(out, "\n/* Activations, gradients and saved state in the arena, in bytes (plan.txt). */\n");
    for (int t = 0; t < net->n_tensors; t++) {
        const ir_tensor *ts = &net->tensors[t];
        const ir_op *op = &net->ops[ts->op];
        switch (ts->kind) {
        case T_ACT:
            fprintf(out, "#define %s_out ((float *)(arena + %ld))  /* [%d,%d,%d,%d] */\n", op->ident,
                    ts->offset, net->batch, op->c, op->h, op->w);
            break;
        case T_GRAD:
            fprintf(out, "#define %s_dout ((float *)(arena + %ld))\n", op->ident, ts->offset);
            break;
        case T_SAVED:
            fprintf(out, "#define %s_saved ((%s *)(arena + %ld))\n", op->ident,
                    op->kind == IR_MAXPOOL ? "int32_t" : "float", ts->offset);
            break;
        case T_SCRATCH:
            fprintf(out, "#define scratch_%d ((float *)(arena + %ld))  /* for \"%s\" */\n", t, ts->offset,
                    op->name);
            break;
        }
    }
    fputc('\n', out);
}

/* Winograd for the shapes the runtime's Winograd path computes, when there are enough input
 * channels for its transformed-domain GEMMs to pay off (a 1-channel stem is a 9- or 25-deep
 * im2col GEMM): F(4x4,3x3) for 3x3 kernels (0.56-0.73x the GEMM work of F(2x2,3x3) on 28x28,
 * 14x14 and 7x7 maps; bench/RESULTS.md has the measurement), F(2x2,5x5) for 5x5 ones.
 * Returns the algorithm's name for the generated shape, or NULL for im2col. */
static const char *conv_winograd_algo(const ir_op *op) {
    rt_conv_shape s = { .c = op->in_c, .h = op->in_h, .w = op->in_w, .oc = op->c,
                        .kh = op->kh, .kw = op->kw, .sh = op->sh, .sw = op->sw, .ph = op->ph,
                        .pw = op->pw, .dh = op->dh, .dw = op->dw, .groups = op->groups,
                        .oh = op->h, .ow = op->w };
    if (!rt_conv_winograd_fits(&s) || op->in_c < 8) return NULL;
    return op->kh == 3 ? "RT_CONV_WINOGRAD_F4" : "RT_CONV_WINOGRAD";
}

static void emit_shapes(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    int k3 = 0, k5 = 0;
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].kind == IR_CONV && conv_winograd_algo(&net->ops[i])) {
            if (net->ops[i].kh == 3) k3 = 1; else k5 = 1;
        }
    if (k3)
        fprintf(out, "/* .algo = RT_CONV_WINOGRAD_F4: 3x3 stride-1 pad-1 convolutions run as Winograd F(4x4,3x3),\n"
                     "   up to 4x fewer multiply-adds than im2col + GEMM. */\n");
    if (k5)
        fprintf(out, "/* .algo = RT_CONV_WINOGRAD: 5x5 stride-1 pad-2 convolutions run as Winograd F(2x2,5x5),\n"
                     "   up to 2.8x fewer multiply-adds than im2col + GEMM. */\n");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind == IR_CONV)
            fprintf(out,
                    "static const rt_conv_shape %s_shape = { .n = BATCH, .c = %d, .h = %d, .w = %d, "
                    ".oc = %d, .kh = %d, .kw = %d, .sh = %d, .sw = %d, .ph = %d, .pw = %d, .dh = %d, "
                    ".dw = %d, .groups = %d, .oh = %d, .ow = %d%s%s%s%s };\n",
                    op->ident, op->in_c, op->in_h, op->in_w, op->c, op->kh, op->kw, op->sh, op->sw,
                    op->ph, op->pw, op->dh, op->dw, op->groups, op->h, op->w,
                    op->act ? ", .act = RT_ACT_RELU" : "",
                    conv_winograd_algo(op) ? ", .algo = " : "",
                    conv_winograd_algo(op) ? conv_winograd_algo(op) : "",
                    net->conv_din_add[i] ? ", .din_add = 1" : "");
        if (op->kind == IR_MAXPOOL || op->kind == IR_AVGPOOL)
            fprintf(out,
                    "static const rt_pool_shape %s_shape = { .n = BATCH, .c = %d, .h = %d, .w = %d, "
                    ".kh = %d, .kw = %d, .sh = %d, .sw = %d, .ph = %d, .pw = %d, .oh = %d, .ow = %d };\n",
                    op->ident, op->in_c, op->in_h, op->in_w, op->kh, op->kw, op->sh, op->sw, op->ph,
                    op->pw, op->h, op->w);
    }
    fprintf(out, "\n/* conv2d scratch; its size depends on the thread count, known at start-up. */\n"
                 "static float *work;\n\n");
}

static void emit_comment(FILE *out, const ir_op *op, const char *what) {
    fprintf(out, "    /* %s \"%s\" (%s) at %s:%d", what, op->name, ir_op_names[op->kind],
            op->loc.file ? op->loc.file->path : "?", op->loc.line);
    if (op->act)
        fprintf(out, ",\n       with \"%s\" (relu) at %s:%d fused into it", op->act_name,
                op->act_loc.file ? op->act_loc.file->path : "?", op->act_loc.line);
    fprintf(out, " */\n");
}

/* The rt_act constant of an op's fused activation. */
static const char *act_const(const ir_op *op) { return op->act ? "RT_ACT_RELU" : "RT_ACT_NONE"; }

static void emit_forward_op(emitter *e, int i) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[i];
    FILE *out = e->out;
    char a[128], b[128];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    if (op->kind == IR_FLATTEN) {
        fprintf(out, "    /* layer \"%s\" (flatten) at %s:%d: a view of %s, no code */\n", op->name,
                op->loc.file ? op->loc.file->path : "?", op->loc.line, in);
        return;
    }
    emit_comment(out, op, "layer");
    long n = ir_out_elems(net, op);
    switch (op->kind) {
    case IR_CONV:
        fprintf(out, "    conv2d_forward(%s_out, %s, %s_weight, %s%s, work, &%s_shape);\n", id, in, id,
                op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_bias" : "", id);
        break;
    case IR_LINEAR:
        fprintf(out, "    linear_forward(%s_out, %s, %s_weight, %s%s, BATCH, %d, %d);\n", id, in, id,
                op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_bias" : "",
                op->in_c * op->in_h * op->in_w, op->c);
        if (op->act)   /* dense outputs are small: an in-place pass costs little */
            fprintf(out, "    relu_forward(%s_out, %s_out, %ld);\n", id, id, n);
        break;
    case IR_BN:
        /* sync_bn: the same op with its statistics all-reduced over the ranks */
        fprintf(out,
                "    if (ctx->training)\n"
                "        %sbatchnorm_forward_train(%s%s_out, %s_saved, %s_saved + %d, %s_running_mean,\n"
                "                                %s_running_var, %s, %s_weight, %s_bias, BATCH, %d, %ld, %.9gf, %.9gf,\n"
                "                                %s);\n"
                "    else\n"
                "        batchnorm_forward_eval(%s_out, %s, %s_weight, %s_bias, %s_running_mean, %s_running_var,\n"
                "                               BATCH, %d, %ld, %.9gf, %s);\n",
                net->sync_bn ? "sync_" : "", net->sync_bn ? "ctx->comm, " : "", id, id, id, op->c, id, id,
                in, id, id, op->c, ir_hw(op), op->momentum, op->eps, act_const(op), id, in, id, id, id, id,
                op->c, ir_hw(op), op->eps, act_const(op));
        break;
    case IR_LN:
        fprintf(out, "    layernorm_forward(%s_out, %s_saved, %s_saved + %ld, %s, %s_weight, %s_bias, BATCH, %d, %ld, %.9gf);\n",
                id, id, id, (long)net->batch * ir_hw(op), in, id, id, op->c, ir_hw(op), op->eps);
        break;
    case IR_RELU: fprintf(out, "    relu_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_GELU: fprintf(out, "    gelu_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_MAXPOOL: fprintf(out, "    maxpool2d_forward(%s_out, %s_saved, %s, &%s_shape);\n", id, id, in, id); break;
    case IR_AVGPOOL: fprintf(out, "    avgpool2d_forward(%s_out, %s, &%s_shape);\n", id, in, id); break;
    case IR_GAP:
        fprintf(out, "    global_avgpool_forward(%s_out, %s, BATCH, %d, %d);\n", id, in, op->in_c, op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    dropout_forward(%s_out, %s, %ld, %.9gf, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample * %ldL, ctx->training);\n", id, in, n, op->p, i, n / net->batch);
        break;
    case IR_LRN:
        fprintf(out, "    lrn_forward(%s_out, %s_saved, %s, BATCH, %d, %ld, %d, %.9gf, %.9gf, %.9gf);\n", id, id,
                in, op->c, ir_hw(op), op->lrn_size, op->lrn_alpha, op->lrn_beta, op->lrn_k);
        break;
    case IR_ADD:   /* a fused ReLU goes with the last input's add */
        for (int k = 1; k < op->n_in; k++) {
            char sum[128];   /* the running sum of the earlier inputs */
            snprintf(sum, sizeof sum, "%s_out", id);
            const char *first = k == 1 ? in : sum;
            ir_value_name(net, op->in[k], b, sizeof b);
            if (op->act && k == op->n_in - 1)
                fprintf(out, "    add_act_forward(%s_out, %s, %s, %ld, RT_ACT_RELU);\n", id, first, b, n);
            else
                fprintf(out, "    add_forward(%s_out, %s, %s, %ld);\n", id, first, b, n);
        }
        break;
    case IR_CONCAT: {
        fprintf(out, "    {\n        const float *ins[] = {");
        for (int k = 0; k < op->n_in; k++)
            fprintf(out, "%s%s", k ? ", " : " ", ir_value_name(net, op->in[k], b, sizeof b));
        fprintf(out, " };\n        static const int channels[] = {");
        for (int k = 0; k < op->n_in; k++) {
            int v = ir_root(net, op->in[k]);
            fprintf(out, "%s%d", k ? ", " : " ", v ? net->ops[v - 1].c : net->in_c);
        }
        fprintf(out, " };\n        concat_forward(%s_out, ins, channels, %d, BATCH, %ld);\n    }\n", id,
                op->n_in, ir_hw(op));
        break;
    }
    case IR_LAYER_SCALE:
        fprintf(out, "    layer_scale_forward(%s_out, %s, %s_weight, BATCH, %d, %ld);\n", id, in, id, op->c, ir_hw(op));
        break;
    case IR_DROP_PATH:
        fprintf(out, "    drop_path_forward(%s_out, %s, BATCH, %ld, %.9gf, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample, ctx->training);\n", id, in, (long)op->c * ir_hw(op), op->p, i);
        break;
    default: break;
    }
}

static const char *din_target(emitter *e, int j, int k, char *buf, size_t cap, int *needs_acc) {
    return ir_din_target(e->net, j, k, buf, cap, needs_acc);
}

static void emit_accumulate(emitter *e, int j, int k) {
    ir_emit_accumulate(e->out, e->net, j, k, "tensor_accumulate");
}

static void emit_backward_op(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    if (op->kind == IR_FLATTEN) return;
    char a[128], d[128], o[128];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    int acc = 0;
    const char *din = din_target(e, j, 0, d, sizeof d, &acc);
    snprintf(o, sizeof o, "%s_dout", id);
    long n = ir_out_elems(net, op);
    int no_din = strcmp(din, "NULL") == 0;
    if (no_din && op->w_off < 0 && op->kind != IR_ADD && op->kind != IR_CONCAT) return;
    emit_comment(out, op, "backward of");
    switch (op->kind) {
    case IR_CONV:
        fprintf(out, "    conv2d_backward(%s, %s_dweight, %s%s, %s, %s%s, %s, %s_weight, work, &%s_shape);\n",
                din, id, op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_dbias" : "", o,
                op->act ? id : "NULL", op->act ? "_out" : "", in, id, id);
        break;
    case IR_LINEAR:
        if (op->act)   /* the fused relu's backward, in place on this op's dout */
            fprintf(out, "    relu_backward(%s, %s, %s_out, %ld);\n", o, o, id, n);
        fprintf(out, "    linear_backward(%s, %s_dweight, %s%s, %s, %s, %s_weight, BATCH, %d, %d);\n", din, id,
                op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_dbias" : "", o, in, id,
                op->in_c * op->in_h * op->in_w, op->c);
        break;
    case IR_BN:
        fprintf(out, "    %sbatchnorm_backward(%s%s, %s_dweight, %s_dbias, %s, %s%s, %s, %s_weight, %s_saved,\n"
                     "                       %s_saved + %d, BATCH, %d, %ld);\n",
                net->sync_bn ? "sync_" : "", net->sync_bn ? "ctx->comm, " : "", din, id, id, o,
                op->act ? id : "NULL", op->act ? "_out" : "", in, id, id, id, op->c, op->c, ir_hw(op));
        break;
    case IR_LN:
        fprintf(out, "    layernorm_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_saved + %ld, BATCH, %d, %ld);\n",
                din, id, id, o, in, id, id, id, (long)net->batch * ir_hw(op), op->c, ir_hw(op));
        break;
    case IR_RELU: fprintf(out, "    relu_backward(%s, %s, %s_out, %ld);\n", din, o, id, n); break;
    case IR_GELU: fprintf(out, "    gelu_backward(%s, %s, %s, %ld);\n", din, o, in, n); break;
    case IR_MAXPOOL: fprintf(out, "    maxpool2d_backward(%s, %s, %s_saved, &%s_shape);\n", din, o, id, id); break;
    case IR_AVGPOOL: fprintf(out, "    avgpool2d_backward(%s, %s, &%s_shape);\n", din, o, id); break;
    case IR_GAP:
        fprintf(out, "    global_avgpool_backward(%s, %s, BATCH, %d, %d);\n", din, o, op->in_c, op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    dropout_backward(%s, %s, %ld, %.9gf, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample * %ldL, 1);\n", din, o, n, op->p, j, n / net->batch);
        break;
    case IR_LRN:
        fprintf(out, "    lrn_backward(%s, %s, %s, %s_out, %s_saved, BATCH, %d, %ld, %d, %.9gf, %.9gf);\n", din, o, in,
                id, id, op->c, ir_hw(op), op->lrn_size, op->lrn_alpha, op->lrn_beta);
        break;
    case IR_LAYER_SCALE:
        fprintf(out, "    layer_scale_backward(%s, %s_dweight, %s, %s, %s_weight, BATCH, %d, %ld);\n", din, id, o, in,
                id, op->c, ir_hw(op));
        break;
    case IR_DROP_PATH:
        fprintf(out, "    drop_path_backward(%s, %s, BATCH, %ld, %.9gf, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample, 1);\n", din, o,
                (long)op->c * ir_hw(op), op->p, j);
        break;
    case IR_ADD:
        if (op->act)   /* the fused relu's backward, in place on this op's dout */
            fprintf(out, "    relu_backward(%s, %s, %s_out, %ld);\n", o, o, id, n);
        /* The gradient of a sum is dout itself: nothing to do where the input's gradient is
         * dout's buffer (plan.c), else a copy for the first writer and an add for others. */
        for (int k = 0; k < op->n_in; k++) {
            int v = ir_root(net, op->in[k]);
            if (v == 0) continue;
            char g[128];
            ir_grad_name(net, v, g, sizeof g);
            if (net->grad_shared[j * IR_MAX_INPUTS + k])
                fprintf(out, "    /* %s is %s: no copy */\n", g, o);
            else if (!e->grad_written[v] && v != ir_root(net, net->n_ops))
                fprintf(out, "    memcpy(%s, %s, %ld * sizeof(float));\n", g, o, n);
            else
                fprintf(out, "    tensor_accumulate(%s, %s, %ld);\n", g, o, n);
            e->grad_written[v] = 1;
        }
        return;
    case IR_CONCAT: {
        char bufs[IR_MAX_INPUTS][128];
        int accs[IR_MAX_INPUTS];
        fprintf(out, "    {\n        float *dins[] = {");
        for (int k = 0; k < op->n_in; k++)
            fprintf(out, "%s%s", k ? ", " : " ", din_target(e, j, k, bufs[k], sizeof bufs[k], &accs[k]));
        fprintf(out, " };\n        static const int channels[] = {");
        for (int k = 0; k < op->n_in; k++) {
            int v = ir_root(net, op->in[k]);
            fprintf(out, "%s%d", k ? ", " : " ", v ? net->ops[v - 1].c : net->in_c);
        }
        fprintf(out, " };\n        concat_backward(dins, %s, channels, %d, BATCH, %ld);\n    }\n", o, op->n_in, ir_hw(op));
        for (int k = 0; k < op->n_in; k++) {
            if (accs[k]) emit_accumulate(e, j, k);
            e->grad_written[ir_root(net, op->in[k])] = 1;
        }
        return;
    }
    default: break;
    }
    if (acc) emit_accumulate(e, j, 0);
    e->grad_written[ir_root(net, op->in[0])] = 1;
}

/* Starts the all-reduce of every gradient bucket whose last gradient op j just wrote. */
static void emit_bucket_ready(emitter *e, int j) {
    ir_emit_bucket_ready(e->out, e->net, j, "rt_grad_bucket_ready(ctx->comm, ");
}

static void emit_functions(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    int last = ir_root(net, net->n_ops);
    char lg[128], lo[128];
    fprintf(out, "static void forward(rt_model_ctx *ctx, const float *x) {\n"
                 "    float *P = ctx->params, *S = ctx->buffers;\n"
                 "    unsigned char *arena = ctx->arena;\n"
                 "    (void)P, (void)S, (void)arena;\n");
    for (int i = 0; i < net->n_ops; i++) emit_forward_op(e, i);
    fprintf(out, "}\n\n");

    fprintf(out, "static double train_step(rt_model_ctx *ctx, const void *x, const int32_t *y) {\n"
                 "    float *P = ctx->params, *G = ctx->grads;\n"
                 "    unsigned char *arena = ctx->arena;\n"
                 "    (void)P, (void)G;\n"
                 "    forward(ctx, x);\n"
                 "    /* softmax cross-entropy, label smoothing %g, fused with its gradient */\n"
                 "    double loss = softmax_xent_forward(%s, %s, y, BATCH, CLASSES, %.9gf, 1.0f / BATCH);\n",
            net->label_smoothing, ir_grad_name(net, last, lg, sizeof lg), ir_value_name(net, last, lo, sizeof lo),
            net->label_smoothing);
    e->grad_written = calloc((size_t)net->n_ops + 1, sizeof(int));
    e->grad_written[last] = 1;
    for (int j = net->n_ops - 1; j >= 0; j--) {
        emit_backward_op(e, j);
        emit_bucket_ready(e, j);
    }
    free(e->grad_written);
    fprintf(out, "    return loss;\n}\n\n");

    fprintf(out, "static void eval_forward(rt_model_ctx *ctx, const void *x, float *logits) {\n"
                 "    unsigned char *arena = ctx->arena;\n"
                 "    forward(ctx, x);\n"
                 "    memcpy(logits, %s, sizeof(float) * BATCH * CLASSES);\n}\n\n",
            ir_value_name(net, last, lo, sizeof lo));
    fprintf(out, "static const float *logits(const rt_model_ctx *ctx) {\n"
                 "    unsigned char *arena = ctx->arena;\n"
                 "    return %s;\n}\n\n", ir_value_name(net, last, lo, sizeof lo));
}

static void emit_init(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "/* torch's default initialization; BN/LN start as identity. */\n"
                 "static void init(float *P, float *S, uint64_t seed) {\n"
                 "    rt_rng r;\n    rt_rng_init(&r, seed, RT_STREAM_INIT);\n"
                 "    (void)S;\n");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        const char *id = op->ident;
        switch (op->kind) {
        case IR_CONV: case IR_LINEAR:
            emit_init_params(out, op);
            break;
        case IR_BN:
            fprintf(out, "    rt_init_const(%s_weight, %d, 1.0f);\n    rt_init_const(%s_bias, %d, 0.0f);\n"
                         "    rt_init_const(%s_running_mean, %d, 0.0f);\n    rt_init_const(%s_running_var, %d, 1.0f);\n",
                    id, op->c, id, op->c, id, op->c, id, op->c);
            break;
        case IR_LN:
            fprintf(out, "    rt_init_const(%s_weight, %d, 1.0f);\n    rt_init_const(%s_bias, %d, 0.0f);\n", id,
                    op->c, id, op->c);
            break;
        case IR_LAYER_SCALE:
            fprintf(out, "    rt_init_const(%s_weight, %d, %.9gf);\n", id, op->c, op->init);
            break;
        default: break;
        }
    }
    fprintf(out, "    long work_elems = 1;\n");
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].kind == IR_CONV)
            fprintf(out, "    if (conv2d_workspace_elems(&%s_shape) > work_elems) work_elems = conv2d_workspace_elems(&%s_shape);\n",
                    net->ops[i].ident, net->ops[i].ident);
    fprintf(out, "    if (!work) work = rt_alloc_aligned((size_t)work_elems * sizeof(float));\n}\n\n");
}

static void emit_string_literal(FILE *out, const char *s) {
    fputs("    \"", out);
    for (; *s; s++) {
        if (*s == '\n') fputs(s[1] ? "\\n\"\n    \"" : "\\n", out);
        else if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 32) fprintf(out, "\\%03o", (unsigned char)*s);
        else fputc(*s, out);
    }
    fputs("\"", out);
}

static void emit_descriptor(emitter *e, const ir_emit_info *info) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "static const rt_param_tensor tensors[] = {\n");
    int n = 0;
    for (int i = net->n_ops - 1; i >= 0; i--) {   /* offset order */
        const ir_op *op = &net->ops[i];
        int norm = op->kind == IR_BN || op->kind == IR_LN || op->kind == IR_LAYER_SCALE;
        if (op->w_off >= 0)
            fprintf(out, "    { \"%s.weight\", %ld, %ld, %d },\n", op->name, op->w_off, op->w_count, norm), n++;
        if (op->b_off >= 0)
            fprintf(out, "    { \"%s.bias\", %ld, %ld, 1 },\n", op->name, op->b_off, op->b_count), n++;
    }
    fprintf(out, "};\n\n/* Gradient buckets (offset, count in floats), in the order backward completes them. */\n"
                 "static const rt_grad_bucket buckets[] = {\n");
    for (int k = 0; k < net->n_buckets; k++)
        fprintf(out, "    { %ld, %ld },\n", net->buckets[k].offset, net->buckets[k].count);
    if (net->n_buckets == 0) fprintf(out, "    { 0, 0 },  /* no parameters: C has no empty arrays */\n");
    fprintf(out, "};\n\nstatic const char spec_text[] =\n");
    emit_string_literal(out, info->spec_text);
    fprintf(out, ";\n\n");
    char num[10][32];
    long nums[10] = { net->in_c, net->in_h, net->in_w, net->n_params, net->n_buffers, net->arena_bytes,
                      net->arena_naive_bytes, n, net->n_buckets, net->param_count };
    for (int k = 0; k < 10; k++) snprintf(num[k], sizeof num[k], "%ld", nums[k]);
    template_var vars[] = {
        { "NAME", info->name }, { "SPEC_PATH", info->spec_path }, { "SPEC_HASH", info->spec_hash },
        { "VERSION", info->compiler_version }, { "IN_C", num[0] }, { "IN_H", num[1] }, { "IN_W", num[2] },
        { "N_PARAMS", num[3] }, { "N_BUFFERS", num[4] }, { "ARENA_BYTES", num[5] },
        { "ARENA_NAIVE_BYTES", num[6] }, { "N_TENSORS", num[7] }, { "N_BUCKETS", num[8] },
        { "PARAM_COUNT", num[9] },
    };
    if (template_fill(out, "model_descriptor.c.in", vars, (int)(sizeof vars / sizeof vars[0])) != 0) exit(1);
    if (info->run_config_c) {
        template_var run[] = { { "RUN_CONFIG", info->run_config_c } };
        if (template_fill(out, "model_main.c.in", run, 1) != 0) exit(1);
    }
}

/* printf's %g drops the '.' of whole numbers, and "0f" is not C: turn every integer
 * token directly followed by 'f' (and not part of an identifier) into "0.0f". */
void write_with_float_literals_fixed(FILE *out, const char *s) {
    int in_string = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '"' && (p == s || p[-1] != '\\')) in_string = !in_string;
        if (in_string) {
            fputc(*p, out);
            continue;
        }
        int starts_number = (*p >= '0' && *p <= '9') &&
                            (p == s || !(p[-1] == '_' || p[-1] == '.' || (p[-1] >= '0' && p[-1] <= '9') ||
                                         (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z'))) &&
                            !(p - s >= 2 && (p[-1] == '-' || p[-1] == '+') && (p[-2] == 'e' || p[-2] == 'E'));
        if (starts_number) {
            const char *q = p;
            while (*q >= '0' && *q <= '9') q++;
            if (*q == 'f' && !(q[1] == '_' || (q[1] >= 'a' && q[1] <= 'z') || (q[1] >= 'A' && q[1] <= 'Z'))) {
                fwrite(p, 1, (size_t)(q - p), out);
                fputs(".0f", out);
                p = q;
                continue;
            }
        }
        fputc(*p, out);
    }
}

static void emit_all(FILE *out, const ir_net *net, const ir_emit_info *info);

void ir_emit_c(FILE *out, const ir_net *net, const ir_emit_info *info) {
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return;
    emit_all(mem, net, info);
    fclose(mem);
    write_with_float_literals_fixed(out, buf);
    free(buf);
}

static void emit_all(FILE *out, const ir_net *net, const ir_emit_info *info) {
    emitter e = { out, net, NULL };
    emit_banner(out, info);
    emit_layout(&e);
    emit_shapes(&e);
    emit_functions(&e);
    emit_init(&e);
    emit_descriptor(&e, info);
}
