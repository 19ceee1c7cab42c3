/* The CPU backend's spelling (emit.h): calls into libtrainrt's CPU ops (rt_ops.h) with
 * constant shapes, the conv2d workspace, and the rt_model descriptor from templates/. */
#include "emit.h"
#include "emit_names.h"
#include "template.h"

#include <stdlib.h>
#include <string.h>

static void banner(emitter *e) {
    const emit_info *info = e->info;
    template_var vars[] = { { "NAME", info->name }, { "VERSION", info->compiler_version },
                            { "SPEC_PATH", info->spec_path }, { "SPEC_HASH", info->spec_hash } };
    if (template_fill(e->out, "model_header.c.in", vars, 4) != 0) exit(1);
}

static void layout_head(emitter *e) {
    fprintf(e->out, "#define BATCH %d\n#define CLASSES %d\n\n", e->net->batch, e->net->classes);
    fprintf(e->out, "/* Parameters (P) and their gradients (G), in floats: reverse schedule order. */\n");
}

static void param_extra(emitter *e, const ir_op *op) { (void)e, (void)op; }

/* A conv shape's algorithm record (lower.c choose_conv_algos, rt_conv_choice.h): the
 * algorithm, and where the host may not take it, what runs instead (.alt, then .fallback). */
static void conv_algo_fields(const ir_op *op, char *buf, size_t cap) {
    buf[0] = 0;
    if (ir_conv_host_rule(op->conv_algo))
        snprintf(buf, cap, ", .algo = %s, .alt = %s, .fallback = %s", ir_conv_algo_const(op->conv_algo),
                 ir_conv_algo_const(op->conv_alt), ir_conv_algo_const(op->conv_fallback));
    else if (op->conv_algo != IR_CONV_IM2COL)
        snprintf(buf, cap, ", .algo = %s", ir_conv_algo_const(op->conv_algo));
}

static void state(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    int convs = 0;
    for (int i = 0; i < net->n_ops; i++) convs += net->ops[i].kind == IR_CONV;
    if (convs)
        fprintf(out, "/* Each conv's algorithm, decided by the compiler (.algo; `trainc show --schedule` says it in\n"
                     "   words); .alt and .fallback: what runs where this CPU lacks what .algo needs\n"
                     "   (runtime/include/rt_conv_choice.h's rule). */\n");
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind == IR_CONV) {
            char algo[160], extra[192];
            conv_algo_fields(op, algo, sizeof algo);
            snprintf(extra, sizeof extra, "%s%s", op->act ? ", .act = RT_ACT_RELU" : "", algo);
            emit_conv_shape(e, i, extra);
        }
        if (op->kind == IR_MAXPOOL || op->kind == IR_AVGPOOL) emit_pool_shape(e, op);
    }
    fprintf(out, "\n/* conv2d scratch; its size depends on the thread count, known at start-up. */\n"
                 "static float *work;\n\n");
}

/* The rt_act constant of an op's fused activation. */
static const char *act_const(const ir_op *op) { return op->act ? "RT_ACT_RELU" : "RT_ACT_NONE"; }

static void forward_begin(emitter *e) {
    fprintf(e->out, "static void forward(rt_model_ctx *ctx, const float *x) {\n"
                    "    float *P = ctx->params, *S = ctx->buffers;\n"
                    "    unsigned char *arena = ctx->arena;\n"
                    "    (void)P, (void)S, (void)arena;\n");
}

/* Add op `add`'s forward with the bn it computes (ir_op.bn_in): out = act(bn(x) + residual)
 * in one pass, batch statistics in training, running ones in evaluation. */
static void bn_add_forward(emitter *e, const ir_op *add) {
    const ir_net *net = e->net;
    const ir_op *bn = &net->ops[add->bn_in - 1];
    char x[128], r[128];
    ir_value_name(net, bn->in[0], x, sizeof x);
    ir_value_name(net, add->in[add->in[0] == add->bn_in], r, sizeof r);
    const char *id = add->ident, *b = bn->ident;
    if (!net->forward_only)
        fprintf(e->out, "    if (ctx->training)\n"
                        "        batchnorm_add_forward_train(%s_out, %s_saved, %s_saved + %d, %s_running_mean, %s_running_var,\n"
                        "                                    %s, %s, %s_weight, %s_bias, BATCH, %d, %ld, %s, %s, %s);\n"
                        "    else\n",
                id, b, b, bn->c, b, b, x, r, b, b, bn->c, ir_hw(bn), c_float(bn->momentum), c_float(bn->eps),
                act_const(add));
    const char *indent = net->forward_only ? "" : "    ";   /* under the else */
    fprintf(e->out, "    %sbatchnorm_add_forward_eval(%s_out, %s, %s, %s_weight, %s_bias, %s_running_mean, %s_running_var,\n"
                    "    %s                           BATCH, %d, %ld, %s, %s);\n",
            indent, id, x, r, b, b, b, b, indent, bn->c, ir_hw(bn), c_float(bn->eps), act_const(add));
}

static void forward_op(emitter *e, int i) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[i];
    FILE *out = e->out;
    char a[128], b[128];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    long n = ir_out_elems(net, op);
    if (op->pooled_in >= 0) {   /* lower.c choose_conv_pool */
        fprintf(out, "    /* in \"%s\"'s call above */\n", net->ops[op->pooled_in].name);
        return;
    }
    switch (op->kind) {
    case IR_CONV:
        if (op->pools_into >= 0) {
            const char *pool = net->ops[op->pools_into].ident;
            fprintf(out, "    /* with the next layer's pooling: each image's output pooled while in cache */\n"
                         "    conv2d_relu_maxpool_forward(%s_out, %s_saved, %s_out, %s, %s_weight, %s%s, work,\n"
                         "                                &%s_shape, &%s_shape);\n",
                    pool, pool, id, in, id, op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_bias" : "", id, pool);
            break;
        }
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
        if (op->into_add) {
            fprintf(out, "    /* computed by \"%s\" below, with the add: its output is not stored */\n", net->ops[i + 1].name);
            break;
        }
        /* Caffe's use_global_stats: the running statistics in training too; the evaluation's
         * forward-only schedule: in evaluation alone */
        if (op->bn_frozen || net->forward_only) {
            fprintf(out, "    batchnorm_forward_eval(%s_out, %s, %s_weight, %s_bias, %s_running_mean, %s_running_var,\n"
                         "                           BATCH, %d, %ld, %s, %s);\n",
                    id, in, id, id, id, id, op->c, ir_hw(op), c_float(op->eps), act_const(op));
            break;
        }
        /* sync_bn: the same op with its statistics all-reduced over the ranks */
        fprintf(out,
                "    if (ctx->training)\n"
                "        %sbatchnorm_forward_train(%s%s_out, %s_saved, %s_saved + %d, %s_running_mean,\n"
                "                                %s_running_var, %s, %s_weight, %s_bias, BATCH, %d, %ld, %s, %s,\n"
                "                                %s);\n"
                "    else\n"
                "        batchnorm_forward_eval(%s_out, %s, %s_weight, %s_bias, %s_running_mean, %s_running_var,\n"
                "                               BATCH, %d, %ld, %s, %s);\n",
                net->sync_bn ? "sync_" : "", net->sync_bn ? "ctx->comm, " : "", id, id, id, op->c, id, id,
                in, id, id, op->c, ir_hw(op), c_float(op->momentum), c_float(op->eps), act_const(op), id, in, id, id, id, id,
                op->c, ir_hw(op), c_float(op->eps), act_const(op));
        break;
    case IR_LN:
        fprintf(out, "    layernorm_forward(%s_out, %s_saved, %s_saved + %ld, %s, %s_weight, %s_bias, BATCH, %d, %ld, %s);\n",
                id, id, id, (long)net->batch * ir_hw(op), in, id, id, op->c, ir_hw(op), c_float(op->eps));
        break;
    case IR_RELU: fprintf(out, "    relu_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_GELU: fprintf(out, "    gelu_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_ACTIVATION:
        fprintf(out, "    activation_forward(%s_out, %s, %ld, %s);\n", id, in, n, ir_activation_const(op));
        break;
    case IR_MAXPOOL: fprintf(out, "    maxpool2d_forward(%s_out, %s_saved, %s, &%s_shape);\n", id, id, in, id); break;
    case IR_AVGPOOL: fprintf(out, "    avgpool2d_forward(%s_out, %s, &%s_shape);\n", id, in, id); break;
    case IR_GAP:
        fprintf(out, "    global_avgpool_forward(%s_out, %s, BATCH, %d, %d);\n", id, in, op->in_c, op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    dropout_forward(%s_out, %s, %ld, %s, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample * %ldL, ctx->training);\n", id, in, n, c_float(op->p), op->salt, n / net->batch);
        break;
    case IR_LRN:
        if (op->lrn_within)   /* Caffe's WITHIN_CHANNEL: a spatial window */
            fprintf(out, "    lrn_within_forward(%s_out, %s_saved, %s, BATCH, %d, %d, %d, %d, %s, %s, %s);\n", id, id,
                    in, op->c, op->h, op->w, op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta),
                    c_float(op->lrn_k));
        else
            fprintf(out, "    lrn_forward(%s_out, %s_saved, %s, BATCH, %d, %ld, %d, %s, %s, %s);\n", id, id,
                    in, op->c, ir_hw(op), op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta), c_float(op->lrn_k));
        break;
    case IR_ADD:   /* a fused ReLU goes with the last input's add */
        if (op->bn_in) {
            bn_add_forward(e, op);
            break;
        }
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
    case IR_CONCAT: emit_concat(e, i, 0, "const float *", "concat_forward"); break;
    case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: emit_channel_op(e, i, 0, ""); break;
    case IR_SPACE_TO_DEPTH:
        fprintf(out, "    space_to_depth_forward(%s_out, %s, BATCH, %d, %d, %d, %d);\n", id, in, op->in_c, op->in_h, op->in_w,
                op->groups);
        break;
    case IR_LEARNED: fprintf(out, "    learned_forward(%s_out, %s_weight, BATCH, %ld);\n", id, id, n / net->batch); break;
    case IR_ATTENTION:
        if (op->window) {   /* Swin's shifted windows */
            fprintf(out, "    window_attention_forward(%s_out, %s_saved, %s, %s_weight, %s_bias, BATCH, %d, %d, %d, %d, %d, %d);\n",
                    id, id, in, id, id, op->c, op->h, op->w, op->heads, op->window, op->shift);
            break;
        }
        fprintf(out, "    attention_forward(%s_out, %s_saved, %s, %s_weight, %s_bias, BATCH, %d, %d, %d);\n", id, id, in, id,
                id, op->c, op->h, op->heads);
        break;
    case IR_LAYER_SCALE:
        fprintf(out, "    layer_scale_forward(%s_out, %s, %s_weight, BATCH, %d, %ld);\n", id, in, id, op->c, ir_hw(op));
        break;
    case IR_STOCHASTIC_DEPTH:
        fprintf(out, "    drop_path_forward(%s_out, %s, BATCH, %ld, %s, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample, ctx->training);\n", id, in, (long)op->c * ir_hw(op), c_float(op->p), op->salt);
        break;
    case IR_STOP_GRADIENT: fprintf(out, "    stop_gradient_forward(%s_out, %s, %ld);\n", id, in, n); break;
    case IR_FLATTEN: case IR_OP_COUNT: break;   /* a view (the walker says so); not an op */
    }
}

static void step_begin(emitter *e) {
    fprintf(e->out, "static double train_step(rt_model_ctx *ctx, const void *x, const int32_t *y) {\n"
                    "    float *P = ctx->params, *G = ctx->grads;\n"
                    "    unsigned char *arena = ctx->arena;\n"
                    "    (void)P, (void)G;\n"
                    "    forward(ctx, x);\n");
}

/* The loss, returned to the trainer; y: the batch's targets (rt_data.h). A head's weight
 * scales its gradient (dscale) and its term of the sum; weight 1 reads as it always has. */
static void loss(emitter *e, int head, int dense_target, const char *dlogits, const char *logits, const char *args,
                 double weight) {
    const char *fn = dense_target ? "target_loss_forward" : "softmax_xent_forward";
    if (weight == 1.0) {
        fprintf(e->out, "    %s %s(%s, %s, y, %s, 1.0f / BATCH);\n", head ? "loss +=" : "double loss =", fn, dlogits,
                logits, args);
        return;
    }
    fprintf(e->out, "    %s %s * %s(%s, %s, y, %s, %s / BATCH);\n", head ? "loss +=" : "double loss =",
            c_float(weight), fn, dlogits, logits, args, c_float(weight));
}

static void backward_op(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    char a[128], d[128], o[128];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    const char *id = op->ident;
    const char *din = ir_din_target(net, j, 0, d, sizeof d);
    snprintf(o, sizeof o, "%s_dout", id);
    long n = ir_out_elems(net, op);
    if (op->pooled_in >= 0) {   /* lower.c choose_conv_pool */
        fprintf(out, "    /* in \"%s\"'s call below */\n", net->ops[op->pooled_in].name);
        return;
    }
    switch (op->kind) {
    case IR_CONV:
        if (op->pools_into >= 0) {
            const char *pool = net->ops[op->pools_into].ident;
            fprintf(out, "    /* with the next layer's pooling: its gradient expanded per image while in cache */\n"
                         "    conv2d_relu_maxpool_backward(%s_dweight, %s%s, %s_dout, %s_out, %s_saved, %s, %s_out, %s,\n"
                         "                                 %s_weight, work, &%s_shape, &%s_shape);\n",
                    id, op->b_off >= 0 ? id : "NULL", op->b_off >= 0 ? "_dbias" : "", pool, pool, pool, o, id, in,
                    id, id, pool);
            break;
        }
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
        if (op->bn_frozen) {
            /* the running statistics live in the buffers S, which only this backward reads */
            fprintf(out, "    { const float *S = ctx->buffers;\n"
                         "      batchnorm_backward_frozen(%s, %s_dweight, %s_dbias, %s, %s%s, %s, %s_weight, %s_running_mean,\n"
                         "                                %s_running_var, BATCH, %d, %ld, %s); }\n",
                    din, id, id, o, op->act ? id : "NULL", op->act ? "_out" : "", in, id, id, id, op->c, ir_hw(op),
                    c_float(op->eps));
            break;
        }
        if (op->into_add && net->ops[j + 1].mask_in_bn) {   /* the add's ReLU mask, applied to o in place */
            fprintf(out, "    batchnorm_add_backward(%s, %s_dweight, %s_dbias, %s, %s_out, %s, %s_weight, %s_bias, %s_saved,\n"
                         "                           %s_saved + %d, BATCH, %d, %ld);\n",
                    din, id, id, o, net->ops[j + 1].ident, in, id, id, id, id, op->c, op->c, ir_hw(op));
            break;
        }
        /* a fused ReLU's mask is recomputed from the input: the activated output is not read */
        fprintf(out, "    %sbatchnorm_backward(%s%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_bias, %s_saved,\n"
                     "                       %s_saved + %d, BATCH, %d, %ld, %s);\n",
                net->sync_bn ? "sync_" : "", net->sync_bn ? "ctx->comm, " : "", din, id, id, o,
                in, id, id, id, id, op->c, op->c, ir_hw(op), act_const(op));
        break;
    case IR_LN:
        fprintf(out, "    layernorm_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_saved + %ld, BATCH, %d, %ld);\n",
                din, id, id, o, in, id, id, id, (long)net->batch * ir_hw(op), op->c, ir_hw(op));
        break;
    case IR_RELU: fprintf(out, "    relu_backward(%s, %s, %s_out, %ld);\n", din, o, id, n); break;
    case IR_GELU: fprintf(out, "    gelu_backward(%s, %s, %s, %ld);\n", din, o, in, n); break;
    case IR_ACTIVATION:
        fprintf(out, "    activation_backward(%s, %s, %s, %ld, %s);\n", din, o, in, n, ir_activation_const(op));
        break;
    case IR_MAXPOOL: fprintf(out, "    maxpool2d_backward(%s, %s, %s_saved, &%s_shape);\n", din, o, id, id); break;
    case IR_AVGPOOL: fprintf(out, "    avgpool2d_backward(%s, %s, &%s_shape);\n", din, o, id); break;
    case IR_GAP:
        fprintf(out, "    global_avgpool_backward(%s, %s, BATCH, %d, %d);\n", din, o, op->in_c, op->in_h * op->in_w);
        break;
    case IR_DROPOUT:
        fprintf(out, "    dropout_backward(%s, %s, %ld, %s, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample * %ldL, 1);\n", din, o, n, c_float(op->p), op->salt, n / net->batch);
        break;
    case IR_LRN:
        if (op->lrn_within)
            fprintf(out, "    lrn_within_backward(%s, %s, %s, %s_out, %s_saved, BATCH, %d, %d, %d, %d, %s, %s);\n", din,
                    o, in, id, id, op->c, op->h, op->w, op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta));
        else
            fprintf(out, "    lrn_backward(%s, %s, %s, %s_out, %s_saved, BATCH, %d, %ld, %d, %s, %s);\n", din, o, in,
                    id, id, op->c, ir_hw(op), op->lrn_size, c_float(op->lrn_alpha), c_float(op->lrn_beta));
        break;
    case IR_LAYER_SCALE:
        fprintf(out, "    layer_scale_backward(%s, %s_dweight, %s, %s, %s_weight, BATCH, %d, %ld);\n", din, id, o, in,
                id, op->c, ir_hw(op));
        break;
    case IR_STOCHASTIC_DEPTH:
        fprintf(out, "    drop_path_backward(%s, %s, BATCH, %ld, %s, rt_hash_u64(ctx->step_seed, %d, 0), "
                "ctx->first_sample, 1);\n", din, o,
                (long)op->c * ir_hw(op), c_float(op->p), op->salt);
        break;
    case IR_ADD:
        if (op->mask_in_bn)
            fprintf(out, "    /* the fused relu's backward: in \"%s\"'s, next */\n", net->ops[j - 1].name);
        else if (op->act)   /* the fused relu's backward, in place on this op's dout */
            fprintf(out, "    relu_backward(%s, %s, %s_out, %ld);\n", o, o, id, n);
        /* The gradient of a sum is dout itself: nothing to do where the input's gradient is
         * dout's buffer (plan.c), else a copy for the first writer and an add for others. */
        for (int k = 0; k < op->n_in; k++) {
            char g[128];
            ir_grad_route route = ir_route(net, j, k);
            if (route != GRAD_NONE) ir_grad_name(net, op->in[k], g, sizeof g);
            switch (route) {
            case GRAD_NONE: break;
            case GRAD_SHARED: fprintf(out, "    /* %s is %s: no copy */\n", g, o); break;
            case GRAD_WRITE: fprintf(out, "    memcpy(%s, %s, %ld * sizeof(float));\n", g, o, n); break;
            case GRAD_ADD: case GRAD_SCRATCH: fprintf(out, "    tensor_accumulate(%s, %s, %ld);\n", g, o, n); break;
            }
        }
        break;
    case IR_CONCAT: emit_concat(e, j, 1, "float *", "concat_backward"); break;
    case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: emit_channel_op(e, j, 1, ""); break;
    case IR_SPACE_TO_DEPTH:
        fprintf(out, "    space_to_depth_backward(%s, %s, BATCH, %d, %d, %d, %d);\n", din, o, op->in_c, op->in_h, op->in_w,
                op->groups);
        break;
    case IR_LEARNED: fprintf(out, "    learned_backward(%s_dweight, %s, BATCH, %ld);\n", id, o, n / net->batch); break;
    case IR_ATTENTION:
        if (op->window) {
            fprintf(out, "    window_attention_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_work, BATCH, %d, %d,\n"
                         "                              %d, %d, %d, %d);\n",
                    din, id, id, o, in, id, id, id, op->c, op->h, op->w, op->heads, op->window, op->shift);
            break;
        }
        fprintf(out, "    attention_backward(%s, %s_dweight, %s_dbias, %s, %s, %s_weight, %s_saved, %s_work, BATCH, %d, %d, %d);\n",
                din, id, id, o, in, id, id, id, op->c, op->h, op->heads);
        break;
    case IR_FLATTEN: case IR_STOP_GRADIENT: case IR_OP_COUNT: break;   /* no backward: views, and the stop */
    }
}

static void step_end(emitter *e) {
    const ir_net *net = e->net;
    char lo[128];
    const char *logits = ir_value_name(net, ir_root(net, net->n_ops), lo, sizeof lo);
    fprintf(e->out, "    return loss;\n}\n\n");
    if (e->info->eval_shape)
        fprintf(e->out, "void model_eval_shape_forward(rt_model_ctx *ctx, const void *x, float *logits);   /* model_eval.c */\n\n"
                        "/* Evaluation runs at data.val's resolution: a forward lowered at that shape. */\n"
                        "static void eval_forward(rt_model_ctx *ctx, const void *x, float *logits) {\n"
                        "    model_eval_shape_forward(ctx, x, logits);\n}\n\n");
    else
        fprintf(e->out, "static void eval_forward(rt_model_ctx *ctx, const void *x, float *logits) {\n"
                        "    unsigned char *arena = ctx->arena;\n"
                        "    forward(ctx, x);\n"
                        "    memcpy(logits, %s, sizeof(float) * BATCH * CLASSES);\n}\n\n", logits);
    fprintf(e->out, "static const float *logits(const rt_model_ctx *ctx) {\n"
                    "    unsigned char *arena = ctx->arena;\n"
                    "    return %s;\n}\n\n", logits);
}

/* The conv2d workspace: as large as the largest conv needs at the thread count of the run. */
static void init_end(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "    long work_elems = 1;\n");
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].kind == IR_CONV)
            fprintf(out, "    if (conv2d_workspace_elems(&%s_shape) > work_elems) work_elems = conv2d_workspace_elems(&%s_shape);\n",
                    net->ops[i].ident, net->ops[i].ident);
    fprintf(out, "    if (!work) work = rt_alloc_aligned((size_t)work_elems * sizeof(float));\n}\n\n");
}

static void descriptor(emitter *e, int n_tensors) { emit_template(e, "model_descriptor.c.in", n_tensors, NULL, 0); }

/* model_eval.c's entry: its conv workspace, then the forward into the shared arena. */
static void eval_end(emitter *e, const char *logits) {
    fprintf(e->out, "static void eval_init(void) {\n");
    init_end(e);   /* the conv workspace of these shapes, and the closing brace */
    fprintf(e->out, "void model_eval_shape_forward(rt_model_ctx *ctx, const void *x, float *logits) {\n"
                    "    unsigned char *arena = ctx->arena;\n"
                    "    eval_init();\n"
                    "    forward(ctx, x);\n"
                    "    memcpy(logits, %s, sizeof(float) * BATCH * CLASSES);\n}\n", logits);
}

const emit_backend emit_cpu_backend = {
    .act_type = "float",
    .accumulate_fn = "tensor_accumulate",
    .copy_fn = "memcpy",
    .zero_fmt = "    memset(%s%s, 0, sizeof(float) * %ldL);\n",
    .bucket_ready = "rt_grad_bucket_ready(ctx->comm, ",
    .main_template = "model_main.c.in",
    .banner = banner, .layout_head = layout_head, .param_extra = param_extra, .state = state,
    .forward_begin = forward_begin, .forward_op = forward_op, .step_begin = step_begin, .loss = loss,
    .backward_op = backward_op, .step_end = step_end, .init_end = init_end, .descriptor = descriptor,
    .eval_end = eval_end,
};
