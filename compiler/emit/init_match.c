/* The spec's `init` block: this spec's layers matched to another spec's by name, with shape
 * checks (sema: every mismatch is an error at check time), and the copy table the trainer
 * applies to a checkpoint of that spec (build: rt_init.h). */
#include "init_match.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "sema_value.h"
#include "caffe_names.h"
#include "torch_names.h"

#define INIT_MAX_DEPTH 8   /* a spec that initializes from itself, directly or not */

/* init.spec is relative to the file it is written in, like extends. */
static void source_path(char *out, size_t cap, const ast_node *init) {
    const char *rel = sv_str(init, SM_INIT, "spec");
    src_loc at = sv_loc(init, SM_INIT, "spec");
    if (rel[0] == '/' || !at.file) { snprintf(out, cap, "%s", rel); return; }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", at.file->path);
    snprintf(out, cap, "%s/%s", dirname(dir), rel);
}

int init_load_source(init_source *src, diag_ctx *diag, const ast_node *root) {
    static int depth;
    memset(src, 0, sizeof *src);
    src->init = sv_msg(root, SM_SPEC, "init");
    if (!src->init || !sv_get(src->init, SM_INIT, "spec")) return 0;   /* none, or a state_dict: no source spec */
    source_path(src->path, sizeof src->path, src->init);
    src_loc at = sv_loc(src->init, SM_INIT, "spec");
    if (depth >= INIT_MAX_DEPTH)
        return diag_error(diag, at, "a spec cannot start from its own weights; name another spec",
                          "init.spec chain is more than %d specs deep (a cycle?)", INIT_MAX_DEPTH), 1;
    diag_ctx sub;
    diag_init(&sub, diag->out);
    depth++;
    int bad = sema_load(&src->doc, &src->res, &sub, src->path);
    depth--;
    src->loaded = 1;
    if (bad)
        return diag_error(diag, at, "fix that spec first, or point init.spec at another one",
                          "init.spec '%s' does not check (%d error%s above)", src->path, sub.n_errors,
                          sub.n_errors == 1 ? "" : "s"), 1;
    return 0;
}

void init_source_free(init_source *src) {
    if (!src->loaded) return;
    sema_result_free(&src->res);
    spec_doc_free(&src->doc);
    src->loaded = 0;
}

static const net_layer *find_layer(const net_desc *net, const char *name) {
    for (int i = 0; i < net->n_layers; i++) if (!strcmp(net->layers[i].name, name)) return &net->layers[i];
    return NULL;
}

static bool holds_weights(const net_layer *L) { return L->params > 0 || L->kind == NET_BN; }

/* What must agree for weights to carry over: kind and every dimension of every tensor. */
static void describe(char *buf, size_t cap, const net_layer *L) {
    switch (L->kind) {
    case NET_CONV:
        snprintf(buf, cap, "conv %lld -> %lld channels, kernel %lldx%lld, groups %lld%s", (long long)L->in.c,
                 (long long)L->conv.out, (long long)L->conv.kernel[0], (long long)L->conv.kernel[1],
                 (long long)L->conv.groups, L->conv.bias ? ", bias" : "");
        break;
    case NET_LINEAR:
        snprintf(buf, cap, "linear %lld -> %lld%s", (long long)L->linear.in, (long long)L->linear.out,
                 L->linear.bias ? ", bias" : "");
        break;
    case NET_LEARNED:   /* a position embedding holds one vector a token: the shape must agree */
        snprintf(buf, cap, "learned [%lld, %lld, %lld]", (long long)L->out.c, (long long)L->out.h, (long long)L->out.w);
        break;
    case NET_ATTENTION:
        snprintf(buf, cap, "attention over %lld channels, %lld heads", (long long)L->out.c, (long long)L->token.heads);
        break;
    default: snprintf(buf, cap, "%s over %lld channels", net_kind_name(L->kind), (long long)L->out.c); break;
    }
}

/* Each name in init.fresh / init.freeze must be a layer here that has weights. */
static int check_names(diag_ctx *diag, const ast_node *init, const char *field, const net_desc *net) {
    const ast_node *list = sv_get(init, SM_INIT, field);
    int errors = 0;
    for (int i = 0; list && i < list->n_kids; i++) {
        const net_layer *L = find_layer(net, list->kids[i]->text);
        if (L && holds_weights(L)) continue;
        errors += diag_error(diag, list->kids[i]->loc, "name a layer of this spec's net that has parameters",
                             L ? "init.%s: layer '%s' has no parameters" : "init.%s: no layer named '%s' in this net",
                             field, list->kids[i]->text) == 0;
    }
    return errors;
}

bool init_lists(const ast_node *init, const char *field, const char *name) {
    const ast_node *list = sv_get(init, SM_INIT, field);
    for (int i = 0; list && i < list->n_kids; i++) if (!strcmp(list->kids[i]->text, name)) return true;
    return false;
}

int init_check(diag_ctx *diag, const init_source *src, const net_desc *net) {
    if (!src->init) return 0;
    const ast_node *init = src->init;
    int errors = check_names(diag, init, "fresh", net) + check_names(diag, init, "freeze", net);
    const ast_node *freeze = sv_get(init, SM_INIT, "freeze");
    for (int i = 0; freeze && i < freeze->n_kids; i++)
        if (init_lists(init, "fresh", freeze->kids[i]->text))
            errors += diag_error(diag, freeze->kids[i]->loc, "drop it from one of the two lists",
                                 "init: layer '%s' is both fresh and frozen: it would never learn",
                                 freeze->kids[i]->text) == 0;
    if (!src->loaded) return errors;   /* a state_dict: its keys and shapes are checked at start-up */
    src_loc at = sv_loc(init, SM_INIT, "spec");
    for (int i = 0; i < net->n_layers; i++) {
        const net_layer *L = &net->layers[i];
        if (!holds_weights(L) || init_lists(init, "fresh", L->name)) continue;
        const net_layer *S = find_layer(&src->res.net, L->name);
        char here[160], there[160];
        if (!S) {
            errors += diag_error(diag, at, "list it in init.fresh to initialize it anew, or give it the name it has there",
                                 "init: layer '%s' (%s:%d) has no counterpart in '%s'", L->name,
                                 L->loc.file ? L->loc.file->path : "?", L->loc.line, src->path) == 0;
            continue;
        }
        describe(here, sizeof here, L);
        describe(there, sizeof there, S);
        if (strcmp(here, there))
            errors += diag_error(diag, at, "list it in init.fresh (a new classifier, say), or make the shapes agree",
                                 "init: layer '%s' is %s here but %s in '%s'", L->name, here, there, src->path) == 0;
    }
    return errors;
}

int init_sema(diag_ctx *diag, const ast_node *root, const net_desc *net) {
    init_source src;
    int errors = init_load_source(&src, diag, root);
    if (!errors) errors = init_check(diag, &src, net);
    init_source_free(&src);
    return errors;
}

/* ---- build: the copy table ------------------------------------------------------------ */
static const ir_op *find_op(const ir_net *net, const char *name) {
    for (int i = 0; i < net->n_ops; i++) if (!strcmp(net->ops[i].name, name)) return &net->ops[i];
    return NULL;
}

static void emit_copy(FILE *f, const char *name, const char *suffix, long cpu, long cuda, long dst, long n, int buffer,
                      int *count) {
    fprintf(f, "            { { %ld, %ld }, %ld, %ld, %d, \"%s.%s\" },\n", cpu, cuda, dst, n, buffer, name, suffix);
    (*count)++;
}

static void emit_copies(FILE *f, const ast_node *init, const ir_net *dest, const ir_net src[2], int *count) {
    bool bn_stats = sv_bool(init, SM_INIT, "bn_stats");
    for (int i = 0; i < dest->n_ops; i++) {
        const ir_op *op = &dest->ops[i];
        if (init_lists(init, "fresh", op->name)) continue;
        const ir_op *a = find_op(&src[0], op->name), *b = find_op(&src[1], op->name);
        if (!a || !b) continue;   /* no weights (sema matched every layer that has some) */
        if (op->w_off >= 0) emit_copy(f, op->name, "weight", a->w_off, b->w_off, op->w_off, op->w_count, 0, count);
        if (op->b_off >= 0) emit_copy(f, op->name, "bias", a->b_off, b->b_off, op->b_off, op->b_count, 0, count);
        if (op->buf_off >= 0 && bn_stats)
            emit_copy(f, op->name, "running_stats", a->buf_off, b->buf_off, op->buf_off, 2L * op->c, 1, count);
    }
}

/* Every tensor of the net outside init.fresh under its state_dict key, for a .safetensors
 * source (init_state_dict.c), and the Caffe layer and blob that hold it, for a .caffemodel
 * (caffemodel.c); BN statistics unless bn_stats is false. */
static int emit_named(FILE *f, const ast_node *init, const ir_net *dest, const ast_node *root) {
    bool bn_stats = sv_bool(init, SM_INIT, "bn_stats");
    int n = 0;
    for (int i = dest->n_ops - 1; i >= 0; i--) {
        const ir_op *op = &dest->ops[i];
        if (init_lists(init, "fresh", op->name)) continue;
        torch_tensor tv[TORCH_MAX_PER_OP], own[TORCH_MAX_PER_OP];
        caffe_tensor ct[TORCH_MAX_PER_OP];
        int k = torch_tensors_of_op(op, 1, tv);
        torch_tensors_of_op(op, 0, own);
        int nc = caffe_tensors_of_op(op, op->kind == IR_BN ? caffe_scale_of(root, op->name) : NULL, ct);
        for (int j = 0; j < k; j++) {
            if (tv[j].kind == TORCH_BATCHES || (tv[j].kind == TORCH_BUFFER && !bn_stats)) continue;
            /* caffe_tensors_of_op keeps torch_tensors_of_op's order; only num_batches_tracked (last) is left out */
            const caffe_tensor *c = j < nc ? &ct[j] : NULL;
            fprintf(f, "            { \"%s\", \"%s\", %ld, %ld, %d, %d, { %ld, %ld, %ld, %ld }, \"%s\", %d, %d },\n",
                    tv[j].key, strcmp(tv[j].key, own[j].key) ? own[j].key : "", tv[j].offset, tv[j].count,
                    tv[j].kind == TORCH_BUFFER, tv[j].ndim, tv[j].shape[0], tv[j].shape[1], tv[j].shape[2],
                    tv[j].shape[3], c ? c->layer : "", c ? c->blob : 0, c ? c->kind : 0);
            n++;
        }
    }
    return n;
}

static int emit_frozen(FILE *f, const ast_node *init, const ir_net *dest) {
    int n = 0;
    for (int i = 0; i < dest->n_ops; i++) {
        const ir_op *op = &dest->ops[i];
        if (!init_lists(init, "freeze", op->name)) continue;
        if (op->w_off >= 0) fprintf(f, "            { %ld, %ld },  /* %s.weight */\n", op->w_off, op->w_count, op->name), n++;
        if (op->b_off >= 0) fprintf(f, "            { %ld, %ld },  /* %s.bias */\n", op->b_off, op->b_count, op->name), n++;
    }
    return n;
}

/* The config of an init block without init.spec: the checkpoint is a state_dict. */
static void emit_state_dict_config(FILE *f, const ast_node *init, const ir_net *dest, const ast_node *root) {
    const ast_node *fresh = sv_get(init, SM_INIT, "fresh");
    fprintf(f, "    /* init: a PyTorch state_dict (.safetensors), matched by torchvision's keys */\n");
    fprintf(f, "    .init = &(const rt_init_config){\n        .checkpoint = \"%s\", .source_spec = \"\", .source_hash = \"\",\n"
               "        .copies = (const rt_init_copy[]){ { { 0, 0 }, 0, 0, 0, \"\" } },\n"
               "        .frozen = (const rt_init_range[]){\n", sv_str(init, SM_INIT, "checkpoint"));
    int n = emit_frozen(f, init, dest);
    fprintf(f, "            { 0, 0 }\n        },\n        .n_frozen = %d, .n_fresh = %d,\n", n, fresh ? fresh->n_kids : 0);
    fprintf(f, "        .named = (const rt_init_named[]){\n");
    n = emit_named(f, init, dest, root);
    fprintf(f, "            { \"\", \"\", 0, 0, 0, 0, { 0, 0, 0, 0 }, \"\", 0, 0 }\n        },\n        .n_named = %d,\n", n);
#ifdef TRAINC_WITH_LMDB   /* the caffemodel reader needs protobuf-c: linked by this trainer alone (build.c) */
    fprintf(f, "        .apply_caffemodel = rt_init_apply_caffemodel,\n");
#endif
    fprintf(f, "    },\n");
}

char *init_emit_config(const sema_result *res, const ir_net *dest, int cuda, char *err, size_t cap) {
    diag_ctx diag;
    diag_init(&diag, stderr);
    init_source src;
    if (init_load_source(&src, &diag, res->root)) {
        init_source_free(&src);
        snprintf(err, cap, "init.spec cannot be loaded");
        return NULL;
    }
    if (!src.init) return strdup("");
    const ast_node *init = src.init;
    if (!src.loaded) {   /* no init.spec: a state_dict, read by key alone */
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f) return snprintf(err, cap, "out of memory"), NULL;
        if (cuda && sv_get(init, SM_INIT, "freeze")) {
            fclose(f), free(text);
            snprintf(err, cap, "init.freeze is not supported by the CUDA backend yet (its optimizer step runs on "
                               "the device); build with --backend cpu or drop init.freeze");
            return NULL;
        }
        emit_state_dict_config(f, init, dest, res->root);
        fclose(f);
        return text;
    }
    if (cuda && sv_get(init, SM_INIT, "freeze")) {
        init_source_free(&src);
        snprintf(err, cap, "init.freeze is not supported by the CUDA backend yet (its optimizer step runs on "
                           "the device); build with --backend cpu or drop init.freeze");
        return NULL;
    }
    /* The source's parameter layout as each backend's build lays it out (CUDA aligns them). */
    schedule lowered[2];
    memset(lowered, 0, sizeof lowered);
    build_options on_cpu = { .backend = BACKEND_CPU, .fuse = 1 }, on_cuda = { .backend = BACKEND_CUDA, .fuse = 1 };
    int bad = lower(&lowered[0], &src.res, &on_cpu, 0, src.path) || lower(&lowered[1], &src.res, &on_cuda, 0, src.path);
    ir_net layouts[2] = { lowered[0].net, lowered[1].net };
    char *text = NULL;
    size_t len = 0;
    FILE *f = bad ? NULL : open_memstream(&text, &len);
    if (f) {
        const ast_node *fresh = sv_get(init, SM_INIT, "fresh");
        fprintf(f, "    /* init: weights of \"%s\" (spec hash %.12s...), matched by layer name */\n", src.path,
                src.res.hash);
        fprintf(f, "    .init = &(const rt_init_config){\n        .checkpoint = \"%s\", .source_spec = \"%s\",\n"
                   "        .source_hash = \"%s\",\n        .src_params = { %ld, %ld }, .src_buffers = { %ld, %ld },\n",
                sv_str(init, SM_INIT, "checkpoint"), src.path, src.res.hash, layouts[0].n_params, layouts[1].n_params,
                layouts[0].n_buffers, layouts[1].n_buffers);
        int n = 0;
        fprintf(f, "        .copies = (const rt_init_copy[]){\n");
        emit_copies(f, init, dest, layouts, &n);
        fprintf(f, "            { { 0, 0 }, 0, 0, 0, \"\" }   /* end: C has no empty arrays */\n        },\n"
                   "        .n_copies = %d,\n        .frozen = (const rt_init_range[]){\n", n);
        n = emit_frozen(f, init, dest);
        fprintf(f, "            { 0, 0 }\n        },\n        .n_frozen = %d, .n_fresh = %d,\n", n,
                fresh ? fresh->n_kids : 0);
        fprintf(f, "        .named = (const rt_init_named[]){\n");
        n = emit_named(f, init, dest, res->root);
        fprintf(f, "            { \"\", \"\", 0, 0, 0, 0, { 0, 0, 0, 0 }, \"\", 0, 0 }\n        },\n        .n_named = %d,\n    },\n", n);
        fclose(f);
    }
    schedule_free(&lowered[0]);
    schedule_free(&lowered[1]);
    init_source_free(&src);
    if (!text) snprintf(err, cap, "init: the source net cannot be laid out");
    return text;
}
