/* The emitter's one walk over a schedule (emit.h): the sections of model.c in order, the
 * same for every backend; the backend's table spells the calls. Output is deterministic
 * and meant to be read. */
#include "emit.h"
#include <math.h>
#include "emit_init.h"
#include "emit_names.h"
#include "template.h"

#include <stdlib.h>
#include <string.h>

static const char *src_path(src_loc loc) { return loc.file ? loc.file->path : "?"; }

void emit_op_comment(emitter *e, const ir_op *op, const char *what) {
    fprintf(e->out, "    /* %s \"%s\" (%s) at %s:%d", what, op->name, ir_op_name(op), src_path(op->loc),
            op->loc.line);
    if (op->act)
        fprintf(e->out, ",\n       with \"%s\" (relu) at %s:%d fused into it", op->act_name, src_path(op->act_loc),
                op->act_loc.line);
    fprintf(e->out, " */\n");
}

void emit_concat(emitter *e, int j, int backward, const char *ptr_type, const char *fn) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    char buf[128];
    fprintf(e->out, "    {\n        %s%s[] = {", ptr_type, backward ? "dins" : "ins");
    for (int k = 0; k < op->n_in; k++)
        fprintf(e->out, "%s%s", k ? ", " : " ",
                backward ? ir_din_target(net, j, k, buf, sizeof buf) : ir_value_name(net, op->in[k], buf, sizeof buf));
    fprintf(e->out, " };\n        static const int channels[] = {");
    for (int k = 0; k < op->n_in; k++) {
        /* each input's channels or tokens as the view it reads has them (a flatten's [C*H*W, 1, 1],
         * a tokens layer's [C, H*W, 1]), not its root's [C, H, W] */
        const ir_op *in = op->in[k] ? &net->ops[op->in[k] - 1] : NULL;
        if (op->tokens) fprintf(e->out, "%s%d", k ? ", " : " ", in ? in->h : net->in_h);
        else fprintf(e->out, "%s%d", k ? ", " : " ", in ? in->c : net->in_c);
    }
    /* channels-last (CUDA --layout nhwc): [N*H*W rows, C, 1 position], a row per position;
     * along tokens: [N*C rows, T, 1], a row of tokens per channel */
    char rows[64];
    if (op->tokens) snprintf(rows, sizeof rows, "BATCH * %d, 1", op->c);
    else if (e->s->opt.nhwc) snprintf(rows, sizeof rows, "BATCH * %ldL, 1", ir_hw(op));
    else snprintf(rows, sizeof rows, "BATCH, %ld", ir_hw(op));
    if (backward) fprintf(e->out, " };\n        %s(dins, %s_dout, channels, %d, %s);\n    }\n", fn, op->ident, op->n_in, rows);
    else fprintf(e->out, " };\n        %s(%s_out, ins, channels, %d, %s);\n    }\n", fn, op->ident, op->n_in, rows);
}

void emit_conv_shape(emitter *e, int i, const char *extra) {
    const ir_op *op = &e->net->ops[i];
    fprintf(e->out,
            "static const rt_conv_shape %s_shape = { .n = BATCH, .c = %d, .h = %d, .w = %d, .oc = %d, .kh = %d, "
            ".kw = %d, .sh = %d, .sw = %d, .ph = %d, .pw = %d, .dh = %d, .dw = %d, .groups = %d, .oh = %d, "
            ".ow = %d%s%s };\n",
            op->ident, op->in_c, op->in_h, op->in_w, op->c, op->kh, op->kw, op->sh, op->sw, op->ph, op->pw, op->dh,
            op->dw, op->groups, op->h, op->w, extra,
            /* the input gradient is added into one another consumer wrote (CPU op, cuDNN beta = 1) */
            ir_route(e->net, i, 0) == GRAD_ADD ? ", .din_add = 1" : "");
}

void emit_pool_shape(emitter *e, const ir_op *op) {
    fprintf(e->out,
            "static const rt_pool_shape %s_shape = { .n = BATCH, .c = %d, .h = %d, .w = %d, .kh = %d, .kw = %d, "
            ".sh = %d, .sw = %d, .ph = %d, .pw = %d, .oh = %d, .ow = %d };\n",
            op->ident, op->in_c, op->in_h, op->in_w, op->kh, op->kw, op->sh, op->sw, op->ph, op->pw, op->h, op->w);
}

/* Parameter macros in schedule order, then every arena tensor at its planned offset. */
static void emit_layout(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    e->be->layout_head(e);
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->w_off >= 0) {
            fprintf(out, "#define %s_weight (P + %ld)  /* %ld */\n", op->ident, op->w_off, op->w_count);
            if (!net->forward_only) fprintf(out, "#define %s_dweight (G + %ld)\n", op->ident, op->w_off);
        }
        e->be->param_extra(e, op);
        if (op->b_off >= 0) {
            fprintf(out, "#define %s_bias (P + %ld)  /* %ld */\n", op->ident, op->b_off, op->b_count);
            if (!net->forward_only) fprintf(out, "#define %s_dbias (G + %ld)\n", op->ident, op->b_off);
        }
        if (op->buf_off >= 0)
            fprintf(out, "#define %s_running_mean (S + %ld)\n#define %s_running_var (S + %ld)\n",
                    op->ident, op->buf_off, op->ident, op->buf_off + op->c);
    }
    fprintf(out, "\n/* Activations, gradients and saved state in the arena, in bytes (plan.txt). */\n");
    const char *act = e->be->act_type;
    for (int t = 0; t < net->n_tensors; t++) {
        const ir_tensor *ts = &net->tensors[t];
        const ir_op *op = &net->ops[ts->op];
        switch (ts->kind) {
        case T_ACT:
            if (e->s->opt.nhwc)
                fprintf(out, "#define %s_out ((%s *)(arena + %ld))  /* [%d,%d,%d,%d] NHWC */\n", op->ident, act,
                        ts->offset, net->batch, op->h, op->w, op->c);
            else
                fprintf(out, "#define %s_out ((%s *)(arena + %ld))  /* [%d,%d,%d,%d] */\n", op->ident, act,
                        ts->offset, net->batch, op->c, op->h, op->w);
            break;
        case T_GRAD:
            fprintf(out, "#define %s_dout ((%s *)(arena + %ld))\n", op->ident, act, ts->offset);
            break;
        case T_SAVED:
            fprintf(out, "#define %s_saved ((%s *)(arena + %ld))\n", op->ident,
                    op->kind != IR_MAXPOOL ? "float" : op->pool_bn >= 0 ? "uint8_t" : "int32_t", ts->offset);
            if (op->bn_in_conv)   /* after mean and inv std: the next conv's prologue's scale and bias */
                fprintf(out, "#define %s_scale_bias ((%s *)(arena + %ld))  /* [2][%d] */\n", op->ident, act,
                        ts->offset + 2L * op->c * (long)sizeof(float), op->c);
            break;
        case T_MASK:   /* a ReLU bitmask: bit i of byte i/8 where the ReLU passed element i */
            fprintf(out, "#define %s_bits ((uint8_t *)(arena + %ld))  /* %ld bytes */\n", op->ident, ts->offset,
                    ts->bytes);
            break;
        case T_SCRATCH:
            if (net->work_of && net->work_of[ts->op] == t) {   /* an op's backward workspace: FP32, or a
                                                                  * prologue's recomputed output */
                fprintf(out, "#define %s_work ((%s *)(arena + %ld))\n", op->ident,
                        op->kind == IR_CONV ? act : "float", ts->offset);
                break;
            }
            fprintf(out, "#define scratch_%d ((%s *)(arena + %ld))  /* for \"%s\" */\n", t, act, ts->offset,
                    op->name);
            break;
        }
    }
    fputc('\n', out);
}

/* The backend's forward of op i, one level deeper (inside a block). */
static void forward_op_indented(emitter *e, int i) {
    char *text = NULL;
    size_t len = 0;
    FILE *saved = e->out, *mem = open_memstream(&text, &len);
    if (!mem) {   /* no memory for the buffer: the same code, unindented */
        e->be->forward_op(e, i);
        return;
    }
    e->out = mem;
    e->be->forward_op(e, i);
    fclose(mem);
    e->out = saved;
    for (char *line = text, *end; line && *line; line = end ? end + 1 : NULL) {
        end = strchr(line, '\n');
        fprintf(e->out, "%s%.*s\n", *line && *line != '\n' ? "    " : "", end ? (int)(end - line) : (int)strlen(line), line);
    }
    free(text);
}

static void emit_forward(emitter *e) {
    e->be->forward_begin(e);
    for (int i = 0; i < e->net->n_ops; i++) {
        const ir_op *op = &e->net->ops[i];
        if (op->kind == IR_FLATTEN) {
            char a[128];
            fprintf(e->out, "    /* layer \"%s\" (flatten) at %s:%d: a view of %s, no code */\n", op->name,
                    src_path(op->loc), op->loc.line, ir_value_name(e->net, op->in[0], a, sizeof a));
            continue;
        }
        if (op->train_only && e->net->forward_only) {
            fprintf(e->out, "    /* layer \"%s\" at %s:%d: feeds an auxiliary loss head only, not run in evaluation */\n",
                    op->name, src_path(op->loc), op->loc.line);
            continue;
        }
        emit_op_comment(e, op, "layer");
        if (op->train_only) {   /* the evaluation's logits do not depend on it */
            fprintf(e->out, "    if (ctx->training) {  /* an auxiliary head's branch: training only */\n");
            forward_op_indented(e, i);
            fprintf(e->out, "    }\n");
            continue;
        }
        if (e->net->forward_only && (op->kind == IR_DROPOUT || op->kind == IR_STOCHASTIC_DEPTH)) {
            char a[128];   /* the evaluation's forward: the identity, a copy into the op's own tensor */
            fprintf(e->out, "    %s(%s_out, %s, sizeof(%s) * %ldL);  /* the identity in evaluation */\n", e->be->copy_fn,
                    op->ident, ir_value_name(e->net, op->in[0], a, sizeof a), e->be->act_type, ir_out_elems(e->net, op));
            continue;
        }
        e->be->forward_op(e, i);
    }
    fprintf(e->out, "}\n\n");
}

/* The loss between forward and backward, fused with its gradient: which, and its arguments,
 * the same for every backend and every head (ir_net.heads); the backend spells the call. */
static void emit_loss(emitter *e) {
    const ir_net *net = e->net;
    const char *scaled = e->s->loss_scale ? " (times the loss scale)" : "";
    char args[160];
    int dense = net->loss_bce || net->mixed_targets;
    if (!dense) {
        fprintf(e->out, "    /* softmax cross-entropy, label smoothing %g, fused with its gradient%s */\n",
                net->label_smoothing, scaled);
        snprintf(args, sizeof args, "BATCH, CLASSES, %s", c_float(net->label_smoothing));
    } else {   /* the targets: labels, and with mixing their partner labels and weights (rt_data.h) */
        fprintf(e->out, "    /* %s against the label-smoothed (%g)%s one-hot target,\n"
                        "     * fused with its gradient%s */\n",
                net->loss_bce ? "sigmoid binary cross-entropy per class" : "softmax cross-entropy", net->label_smoothing,
                net->mixed_targets ? ", mixed" : "", scaled);
        snprintf(args, sizeof args, "%d, BATCH, CLASSES, %d, %s, %s", net->mixed_targets, net->loss_bce,
                 c_float(net->label_smoothing), c_float(net->bce_threshold));
    }
    int heads = net->n_heads > 0 ? net->n_heads : 1;
    for (int h = 0; h < heads; h++) {
        int v = ir_root(net, net->n_heads > 0 ? net->heads[h].value : net->n_ops);
        double weight = net->n_heads > 0 ? net->heads[h].weight : 1.0;
        char dlogits[128], logits[128];
        if (h > 0)
            fprintf(e->out, "    /* auxiliary head \"%s\" at %s:%d, loss_weight %g: the same loss of its logits,\n"
                            "     * added to the step's times its weight, its gradient scaled alike */\n",
                    net->heads[h].name, src_path(net->heads[h].loc), net->heads[h].loc.line, weight);
        else if (heads > 1)
            fprintf(e->out, "    /* the main head, loss_weight %g: top-1 and evaluation read its logits */\n", weight);
        e->be->loss(e, h, dense, ir_grad_name(net, v, dlogits, sizeof dlogits), ir_value_name(net, v, logits, sizeof logits),
                    args, weight);
    }
}

/* Backward of op j: the backend's call, then the scratch gradients it wrote added where
 * their route says, then the all-reduce of every bucket op j completed. */
static void emit_backward(emitter *e, int j) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    if (op->kind != IR_FLATTEN && net->dead && net->dead[j]) {   /* plan.c mark_dead */
        if (op->w_off >= 0 || op->b_off >= 0)
            fprintf(out, "    /* layer \"%s\" (%s): no gradient reaches it (every path to the loss passes a\n"
                         "     * stop_gradient): its backward does not run, its parameters' gradients are zero */\n",
                    op->name, ir_op_name(op));
        if (op->w_off >= 0) fprintf(out, e->be->zero_fmt, op->ident, "_dweight", op->w_count);
        if (op->b_off >= 0) fprintf(out, e->be->zero_fmt, op->ident, "_dbias", op->b_count);
    } else if (op->kind != IR_FLATTEN && op->kind != IR_STOP_GRADIENT &&
        (ir_route(net, j, 0) != GRAD_NONE || op->w_off >= 0 || op->kind == IR_ADD || op->kind == IR_CONCAT ||
         op->kind == IR_MUL)) {   /* a learned tensor reads no input but has a gradient */
        emit_op_comment(e, op, "backward of");
        e->be->backward_op(e, j);
        for (int k = 0; k < op->n_in; k++) {
            if (ir_route(net, j, k) != GRAD_SCRATCH) continue;
            char g[128];
            int v = ir_root(net, op->in[k]);
            fprintf(out, "    %s(%s, scratch_%d, %ld);\n", e->be->accumulate_fn, ir_grad_name(net, v, g, sizeof g),
                    net->scratch_of[j * IR_MAX_INPUTS + k], ir_value_elems(net, v));
        }
    }
    for (int k = 0; k < net->n_buckets; k++)
        if (net->buckets[k].ready_op == j)
            fprintf(out, "    %s%d);  /* bucket %d complete: %ld grads from \"%s\" to here */\n", e->be->bucket_ready,
                    k, k, net->buckets[k].count, net->ops[net->buckets[k].first_op].name);
}

/* torch's default initialization; every backend initializes host memory the same way, so
 * both start from the same weights (tests/gpu checks it). */
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
            fprintf(out, "    rt_init_const(%s_weight, %d, %s);\n    rt_init_const(%s_bias, %d, 0.0f);\n"
                         "    rt_init_const(%s_running_mean, %d, 0.0f);\n    rt_init_const(%s_running_var, %d, 1.0f);\n",
                    id, op->c, c_float(op->init), id, op->c, id, op->c, id, op->c);   /* gamma_init: 1 unless set */
            break;
        case IR_LN:
            fprintf(out, "    rt_init_const(%s_weight, %d, 1.0f);\n    rt_init_const(%s_bias, %d, 0.0f);\n", id,
                    op->c, id, op->c);
            break;
        case IR_LAYER_SCALE:
            fprintf(out, "    rt_init_const(%s_weight, %d, %s);\n", id, op->c, c_float(op->init));
            break;
        case IR_LEARNED: emit_init_params(out, op); break;   /* its filler: zeros unless given */
        case IR_ATTENTION: {   /* torch's MultiheadAttention._reset_parameters */
            long c = op->c, cc = (long)op->c * op->c;
            if (op->window) {   /* torchvision's Swin: trunc_normal_(std 0.02), cut at +-2 (100 std: nothing), zero biases */
                fprintf(out, "    rt_init_normal(%s_weight, %ld, 0.0f, 0.02f, &r);   /* qkv, proj, relative_position_bias_table */\n"
                             "    rt_init_const(%s_bias, %ld, 0.0f);\n", id, op->w_count, id, 4 * c);
                break;
            }
            fprintf(out, "    rt_init_uniform(%s_weight, %ld, %s, %s, &r);   /* in_proj_weight: xavier_uniform_ */\n"
                         "    rt_init_kaiming_uniform(%s_weight + %ld, %ld, %ld, 2.2360679774997898, &r);   /* out_proj: Linear's default */\n"
                         "    rt_init_const(%s_bias, %ld, 0.0f);   /* in_proj_bias and out_proj.bias: zeros */\n",
                    id, 3 * cc, c_float(-sqrt(6.0 / (4.0 * c))), c_float(sqrt(6.0 / (4.0 * c))), id, 3 * cc, cc, c, id, 4 * c);
            break;
        }
        case IR_RELU: case IR_GELU: case IR_ACTIVATION: case IR_MAXPOOL: case IR_AVGPOOL: case IR_GAP: case IR_DROPOUT:
        case IR_LRN:
        case IR_ADD: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: case IR_FLATTEN:
        case IR_STOCHASTIC_DEPTH: case IR_SPACE_TO_DEPTH: case IR_STOP_GRADIENT: case IR_OP_COUNT:
            break;   /* no parameters */
        }
    }
    e->be->init_end(e);
}

/* ", 1, lr, decay" (rt_param_tensor.has_mult, ...) for a blob with a Caffe multiplier other
 * than 1, else "": tables of nets without multipliers read as before. */
static const char *tensor_mults(const ir_op *op, int blob) {
    static char text[96];
    text[0] = '\0';
    if (op->lr_mult[blob] != 1.0 || op->decay_mult[blob] != 1.0)
        snprintf(text, sizeof text, ", 1, %s, %s", c_float(op->lr_mult[blob]), c_float(op->decay_mult[blob]));
    return text;
}

/* The parameter tensors in offset order and the gradient buckets. Returns the tensors. */
static int emit_tables(emitter *e) {
    const ir_net *net = e->net;
    FILE *out = e->out;
    fprintf(out, "static const rt_param_tensor tensors[] = {\n");
    int n = 0;
    for (int i = net->n_ops - 1; i >= 0; i--) {   /* offset order */
        const ir_op *op = &net->ops[i];
        /* rt_param_tensor.no_decay: the op table's classes (ir.h IR_OPS) */
        int kind = ir_ops[op->kind].weight_class, bias_kind = ir_ops[op->kind].bias_class;
        if (op->w_off >= 0)
            fprintf(out, "    { \"%s.weight\", %ld, %ld, %d%s },\n", op->name, op->w_off, op->w_count, kind,
                    tensor_mults(op, 0)), n++;
        if (op->b_off >= 0)
            fprintf(out, "    { \"%s.bias\", %ld, %ld, %d%s },\n", op->name, op->b_off, op->b_count, bias_kind,
                    tensor_mults(op, 1)), n++;
    }
    fprintf(out, "};\n\n/* Gradient buckets (offset, count in floats), in the order backward completes them. */\n"
                 "static const rt_grad_bucket buckets[] = {\n");
    for (int k = 0; k < net->n_buckets; k++)
        fprintf(out, "    { %ld, %ld },\n", net->buckets[k].offset, net->buckets[k].count);
    if (net->n_buckets == 0) fprintf(out, "    { 0, 0 },  /* no parameters: C has no empty arrays */\n");
    fprintf(out, "};\n\n");
    return n;
}

void emit_string_literal(FILE *out, const char *s) {
    fputs("    \"", out);
    for (; *s; s++) {
        if (*s == '\n') fputs(s[1] ? "\\n\"\n    \"" : "\\n", out);
        else if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 32) fprintf(out, "\\%03o", (unsigned char)*s);
        else fputc(*s, out);
    }
    fputs("\"", out);
}

void emit_template(emitter *e, const char *name, int n_tensors, const template_var *extra, int n_extra) {
    const ir_net *net = e->net;
    const emit_info *info = e->info;
    char num[10][32];
    long nums[10] = { net->in_c, net->in_h, net->in_w, net->n_params, net->n_buffers, net->arena_bytes,
                      net->arena_naive_bytes, n_tensors, net->n_buckets, net->param_count };
    for (int k = 0; k < 10; k++) snprintf(num[k], sizeof num[k], "%ld", nums[k]);
    template_var vars[32] = {
        { "NAME", info->name }, { "SPEC_PATH", info->spec_path }, { "SPEC_HASH", info->spec_hash },
        { "VERSION", info->compiler_version }, { "IN_C", num[0] }, { "IN_H", num[1] }, { "IN_W", num[2] },
        { "N_PARAMS", num[3] }, { "N_BUFFERS", num[4] }, { "ARENA_BYTES", num[5] },
        { "ARENA_NAIVE_BYTES", num[6] }, { "N_TENSORS", num[7] }, { "N_BUCKETS", num[8] },
        { "PARAM_COUNT", num[9] },
    };
    int n = 14;
    for (int k = 0; k < n_extra && n < 32; k++) vars[n++] = extra[k];
    /* a template takes only the keys it names: drop the ones it does not use */
    const char *text = template_text(name);
    int used = 0;
    for (int k = 0; k < n; k++) {
        char key[64];
        snprintf(key, sizeof key, "@%s@", vars[k].key);
        if (text && strstr(text, key)) vars[used++] = vars[k];
    }
    if (template_fill(e->out, name, vars, used) != 0) exit(1);
}

/* The walk over schedule s, for its backend. */
static emitter emitter_for(FILE *out, const schedule *s, const emit_info *info) {
    emitter e = { out, s, &s->net, info, s->opt.backend == BACKEND_CUDA ? &emit_cuda_backend : &emit_cpu_backend };
    return e;
}

void emit_model_eval(FILE *out, const schedule *s, const emit_info *info) {
    emitter e = emitter_for(out, s, info);
    e.be->banner(&e);
    fprintf(out, "/* The evaluation forward at data.val's resolution, %dx%d: the same parameters as model.c,\n"
                 " * shapes and arena offsets of their own (the arena is as large as the larger plan).\n"
                 " * Forward only: no gradients and no backward; batch norm normalizes with its running\n"
                 " * statistics, dropout and drop-path are the identity. */\n\n",
            e.net->in_h, e.net->in_w);
    emit_layout(&e);
    e.be->state(&e);
    emit_forward(&e);
    char lo[128];
    e.be->eval_end(&e, ir_value_name(e.net, ir_root(e.net, e.net->n_ops), lo, sizeof lo));
}

void emit_model(FILE *out, const schedule *s, const emit_info *info) {
    emitter e = emitter_for(out, s, info);
    e.be->banner(&e);
    emit_layout(&e);
    e.be->state(&e);
    emit_forward(&e);
    e.be->step_begin(&e);
    emit_loss(&e);
    for (int j = e.net->n_ops - 1; j >= 0; j--) emit_backward(&e, j);
    e.be->step_end(&e);
    emit_init(&e);
    int n_tensors = emit_tables(&e);
    fprintf(out, "static const char spec_text[] =\n");
    emit_string_literal(out, info->spec_text);
    fprintf(out, ";\n\n");
    e.be->descriptor(&e, n_tensors);
    if (info->run_config_c) {
        template_var run[] = { { "RUN_CONFIG", info->run_config_c } };
        if (template_fill(out, e.be->main_template, run, 1) != 0) exit(1);
    }
}
