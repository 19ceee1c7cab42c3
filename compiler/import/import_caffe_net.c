/* Caffe importer: the net prototxt. Walks the TRAIN-phase layers in order, follows blobs
 * through in-place layers, and prints the trainc net block. */
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"

ic_blob *ic_blob_find(ic_ctx *ic, const char *name) {
    for (int i = ic->n_blobs - 1; i >= 0; i--)
        if (strcmp(ic->blobs[i].name, name) == 0) return &ic->blobs[i];
    return NULL;
}

ic_blob *ic_blob_set(ic_ctx *ic, const char *name, const char *producer, int64_t c, int64_t h, int64_t w) {
    ic_blob *b = ic_blob_find(ic, name);
    if (!b) {
        if (ic->n_blobs == ic->cap_blobs) {
            int cap = ic->cap_blobs ? 2 * ic->cap_blobs : 64;
            ic_blob *grown = realloc(ic->blobs, (size_t)cap * sizeof *grown);
            if (!grown) return NULL;
            ic->blobs = grown, ic->cap_blobs = cap;
        }
        b = &ic->blobs[ic->n_blobs++];
        b->name = name;
    }
    b->producer = producer, b->c = c, b->h = h, b->w = w, b->axes = 4;
    return b;
}

ic_layer *ic_layer_add(ic_ctx *ic, const char *type, const char *name, const ast_node *at) {
    if (strcmp(name, "data") == 0) {
        ic_error(ic, at, "rename the layer", "a layer named \"data\": trainc reserves the name for the net input");
        return NULL;
    }
    if (ic->n_layers == ic->cap_layers) {
        int cap = ic->cap_layers ? 2 * ic->cap_layers : 64;
        ic_layer *grown = realloc(ic->layers, (size_t)cap * sizeof *grown);
        if (!grown) return NULL;
        ic->layers = grown, ic->cap_layers = cap;
    }
    ic_layer *t = &ic->layers[ic->n_layers++];
    memset(t, 0, sizeof *t);
    t->type = type, t->name = name, t->loc = at->loc;
    ic_word(ic, at, "type", &t->caffe_type);
    return t;
}

/* Caffe's NetStateRule against the training net's state (phase TRAIN, level 0, no stages:
 * the solver's train_state, which could add stages, is not imported): the phase must match,
 * level 0 must lie in [min_level, max_level], every `stage` must be in the state (none is)
 * and no `not_stage` may be (none is). */
static int rule_meets_train(ic_ctx *ic, const ast_node *rule, const char *what, int *meets) {
    if (rule->kind != AST_MESSAGE) return ic_error(ic, rule, NULL, "'%s' must be a message { phase: ... }", what);
    if (ic_only_fields(ic, rule, what, KNOWN("phase", "stage", "not_stage", "min_level", "max_level")) < 0) return -1;
    const char *phase = NULL;
    int64_t min_level = INT64_MIN, max_level = INT64_MAX;
    if (ic_word(ic, rule, "phase", &phase) < 0 || ic_int(ic, rule, "min_level", &min_level) < 0 ||
        ic_int(ic, rule, "max_level", &max_level) < 0)
        return -1;
    if (phase && strcmp(phase, "TRAIN") != 0 && strcmp(phase, "TEST") != 0)
        return ic_error(ic, ic_get(rule, "phase"), NULL, "phase must be TRAIN or TEST");
    for (int i = 0; i < rule->n_kids; i++) {
        const ast_node *f = rule->kids[i];
        if ((strcmp(f->text, "stage") == 0 || strcmp(f->text, "not_stage") == 0) && f->a->kind != AST_STRING)
            return ic_error(ic, f->a, NULL, "'%s' must be a string", f->text);
    }
    *meets = (!phase || strcmp(phase, "TRAIN") == 0) && min_level <= 0 && max_level >= 0 && !ic_get(rule, "stage");
    return 0;
}

/* Caffe's rule: with include rules the layer is in the net when one of them is met; with
 * exclude rules it is out when one of them is met. *keep: 1 in the training net. */
static int in_train_phase(ic_ctx *ic, const ast_node *L, int *keep) {
    int n_include = ast_count_fields(L, "include"), any_include = 0;
    *keep = 1;
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        int inc = strcmp(f->text, "include") == 0;
        if (f->kind != AST_FIELD || (!inc && strcmp(f->text, "exclude") != 0)) continue;
        int meets = 0;
        if (rule_meets_train(ic, f->a, f->text, &meets) < 0) return -1;
        if (inc) any_include |= meets;
        else if (meets) *keep = 0;
    }
    if (n_include && !any_include) *keep = 0;
    return 0;
}

/* A layer left out of the training net: its tops are remembered, so that a training layer
 * reading one of them is told why the blob is missing. */
static void remember_test_tops(ic_ctx *ic, const ast_node *L, const char *name, const char *type) {
    for (int i = 0; i < L->n_kids && ic->n_test_tops < IC_MAX_TEST_TOPS; i++) {
        const ast_node *f = L->kids[i];
        if (f->kind != AST_FIELD || strcmp(f->text, "top") != 0 || f->a->kind != AST_STRING) continue;
        if (ic_blob_find(ic, f->a->text)) continue;   /* a training layer writes it too */
        ic->test_tops[ic->n_test_tops++] = (ic_test_top){ f->a->text, name, type ? type : "?" };
    }
}

const ic_test_top *ic_test_top_find(const ic_ctx *ic, const char *blob) {
    for (int i = 0; i < ic->n_test_tops; i++)
        if (strcmp(ic->test_tops[i].blob, blob) == 0) return &ic->test_tops[i];
    return NULL;
}

int ic_propagate_down(ic_ctx *ic, const ast_node *L, const char *name, int first_plain, int *stop) {
    int n = ast_count_fields(L, "propagate_down"), bottoms = ast_count_fields(L, "bottom");
    if (!n) return 0;
    if (n != bottoms)
        return ic_error(ic, ic_get(L, "propagate_down"), "give one propagate_down per bottom, or none",
                        "layer \"%s\": %d propagate_down entries for %d bottoms (Caffe's rule: none or one each)", name, n,
                        bottoms);
    int k = 0, b = 0;
    const char *bottom_names[IC_MAX_INPUTS] = { 0 };
    for (int i = 0; i < L->n_kids && b < IC_MAX_INPUTS; i++)
        if (strcmp(L->kids[i]->text, "bottom") == 0 && L->kids[i]->a->kind == AST_STRING) bottom_names[b++] = L->kids[i]->a->text;
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        if (strcmp(f->text, "propagate_down") != 0) continue;
        int down = 1;
        if (f->a->kind != AST_IDENT || (strcmp(f->a->text, "true") != 0 && strcmp(f->a->text, "false") != 0))
            return ic_error(ic, f->a, NULL, "'propagate_down' must be true or false");
        down = strcmp(f->a->text, "true") == 0;
        int idx = k++;
        /* false where no gradient goes anyway: a loss's labels, the net's input */
        const ic_blob *blob = idx < b && bottom_names[idx] ? ic_blob_find(ic, bottom_names[idx]) : NULL;
        if (down || idx >= first_plain || (blob && strcmp(blob->producer, "data") == 0)) continue;
        if (stop && idx < IC_MAX_INPUTS) {   /* a stop_gradient before the layer (ic_bottom_input) */
            stop[idx] = 1;
            continue;
        }
        return ic_error(ic, f, "remove the layer if it only reports, or remove propagate_down to train through it",
                        "loss layer \"%s\": propagate_down: false on its scores \"%s\" makes a loss that trains "
                        "nothing; a trainc loss head trains the layers before it", name,
                        idx < b && bottom_names[idx] ? bottom_names[idx] : "?");
    }
    return 0;
}

const char *ic_bottom_input(ic_ctx *ic, const ast_node *L, const char *layer, const ic_blob *b, int stop) {
    if (!stop) return b->producer;
    size_t len = strlen(layer) + strlen(b->name) + 7;
    char *name = ast_arena_alloc(ic->arena, len);
    snprintf(name, len, "%s/stop_%s", layer, b->name);
    for (int i = 0; i < ic->n_layers; i++)   /* one stop per layer and blob (a blob read twice) */
        if (!strcmp(ic->layers[i].name, name)) return name;
    ic_layer *t = ic_layer_add(ic, "stop_gradient", name, L);
    if (!t) return NULL;
    t->inputs[t->n_inputs++] = b->producer;
    t->caffe_type = "propagate_down: false";
    return name;
}

int ic_missing_blob(ic_ctx *ic, const ast_node *at, const char *layer, const char *name) {
    const ic_test_top *t = ic_test_top_find(ic, name);
    if (t && (ic_is_data_layer(t->type) || strcmp(t->type, "Input") == 0))
        return ic_error(ic, at, "give the net a TRAIN-phase data layer (include { phase: TRAIN }, or no include) or an "
                        "Input layer that writes it",
                        "layer \"%s\" reads blob \"%s\", which only the %s layer \"%s\" writes, and that layer is not "
                        "in Caffe's training net (its include/exclude rules): the training net has no data", layer, name,
                        t->type, t->layer);
    if (t)
        return ic_error(ic, at, "a layer of the training net must write the blob; check the include/exclude rules",
                        "layer \"%s\" reads blob \"%s\", which only layer \"%s\" (%s) writes, and that layer is not in "
                        "Caffe's training net (its include/exclude rules)", layer, name, t->layer, t->type);
    return ic_error(ic, at, "a bottom must be the top of an earlier layer (or of the Input layer)",
                    "layer \"%s\" reads blob \"%s\", which no earlier layer writes", layer, name);
}

/* The Input layer (or the old top-level input/input_shape/input_dim): batch and [C, H, W]. */
static int read_input_layer(ic_ctx *ic, const ast_node *L) {
    const ast_node *p = NULL, *shape = NULL;
    const char *top = NULL;
    if (ic_only_fields(ic, L, "the Input layer", (const char *const[]){ "name", "type", "top", "input_param", "include", NULL }) < 0 ||
        ic_msg(ic, L, "input_param", &p) < 0 || ic_word(ic, L, "top", &top) < 0)
        return -1;
    if (ic->have_input) return ic_error(ic, L, "trainc nets read one input image", "a second Input layer");
    if (!p || ic_msg(ic, p, "shape", &shape) <= 0 || !top)
        return ic_error(ic, L, "write input_param { shape { dim: N dim: C dim: H dim: W } } and top: \"data\"",
                        "the Input layer needs a top and one input_param { shape { ... } }");
    int64_t dims[4];
    int n = 0;
    for (int i = 0; i < shape->n_kids; i++) {
        const ast_node *f = shape->kids[i];
        if (f->kind != AST_FIELD || strcmp(f->text, "dim") != 0 || f->a->kind != AST_INT || f->a->ival < 1)
            return ic_error(ic, f, NULL, "a shape is a list of 'dim: N' with N >= 1");
        if (n == 4) return ic_error(ic, f, "trainc nets read images [N, C, H, W]", "an input shape with more than 4 dims");
        dims[n++] = f->a->ival;
    }
    if (n != 4) return ic_error(ic, shape, "trainc nets read images [N, C, H, W]", "an input shape with %d dims", n);
    ic->batch = dims[0], ic->in_c = dims[1], ic->in_h = dims[2], ic->in_w = dims[3];
    ic->have_input = 1;
    return ic_blob_set(ic, top, "data", dims[1], dims[2], dims[3]) ? 0 : -1;
}

/* SoftmaxWithLoss: trainc's softmax_ce. Several are loss heads (GoogLeNet's auxiliary
 * classifiers): each reads its bottom and keeps its loss_weight; the last one, which must end
 * the net (ic_import_net), is the main head. */
static int read_loss(ic_ctx *ic, const ast_node *L) {
    if (ic_only_fields(ic, L, "the loss layer",
                       (const char *const[]){ "name", "type", "bottom", "top", "include", "exclude", "loss_weight",
                                              "loss_param", "softmax_param", "propagate_down", NULL }) < 0)
        return -1;
    const char *lname = "loss";
    if (ic_word(ic, L, "name", &lname) < 0 || ic_propagate_down(ic, L, lname, 1, NULL) < 0) return -1;   /* labels: no gradient */
    const ast_node *lp = NULL;
    if (ic_msg(ic, L, "loss_param", &lp) < 0) return -1;
    if (lp) {
        if (ic_only_fields(ic, lp, "loss_param", (const char *const[]){ "normalization", "normalize", NULL }) < 0) return -1;
        const char *norm = "VALID";
        if (ic_word(ic, lp, "normalization", &norm) < 0) return -1;
        if (strcmp(norm, "VALID") != 0 && strcmp(norm, "BATCH_SIZE") != 0)
            return ic_error(ic, ic_get(lp, "normalization"), "use VALID or BATCH_SIZE (the mean over the batch)",
                            "loss normalization %s has no trainc equivalent", norm);
    }
    double weight = 1;
    if (ic_float(ic, L, "loss_weight", &weight) < 0) return -1;
    if (!(weight > 0))
        return ic_error(ic, ic_get(L, "loss_weight"), "remove the layer (a loss Caffe only reports) or give it a weight > 0",
                        "loss_weight %s: a trainc loss head has a positive weight", ic_num(weight));
    const char *name = NULL, *bottom = NULL;
    if (ic_word(ic, L, "name", &name) < 0 || ic_word(ic, L, "bottom", &bottom) < 0) return -1;
    ic_blob *b = bottom ? ic_blob_find(ic, bottom) : NULL;
    if (!b) return ic_error(ic, L, NULL, "the loss layer reads no known blob");
    if (ic->have_loss && b->c != ic->classes)
        return ic_error(ic, L, "give every loss head the same classes", "the loss reads %lld class scores, an earlier "
                        "loss %lld", (long long)b->c, (long long)ic->classes);
    if (b->h != 1 || b->w != 1)
        return ic_error(ic, L, "put an InnerProduct layer or global pooling before the loss",
                        "the loss reads a [%lld, %lld, %lld] blob; trainc's loss reads class scores",
                        (long long)b->c, (long long)b->h, (long long)b->w);
    ic_layer *t = ic_layer_add(ic, "softmax_ce", name ? name : "loss", L);
    if (!t) return -1;
    t->inputs[t->n_inputs++] = b->producer;
    if (weight != 1) ic_append(t->args, sizeof t->args, " loss_weight: %s", ic_num(weight));
    ic->have_loss = 1;
    ic->classes = b->c;
    return 0;
}

/* A Softmax layer: its probabilities only feed reports (Accuracy, Silence, or nothing), as in
 * nets that compute top-1 on them; then it is left out (the argmax of the logits is the same).
 * A Softmax that feeds a computation has no trainc layer (trainc's loss holds the softmax). */
static int reporting_softmax(ic_ctx *ic, const ast_node *L, const char *name) {
    const char *top = NULL;
    if (ic_only_fields(ic, L, "the Softmax layer", KNOWN("name", "type", "bottom", "top", "include", "exclude",
                                                          "softmax_param", "propagate_down")) < 0 ||
        ic_word(ic, L, "top", &top) < 0)
        return -1;
    for (int i = ic->cur + 1; top && i < ic->root->n_kids; i++) {
        const ast_node *f = ic->root->kids[i];
        if (strcmp(f->text, "layer") != 0 || f->a->kind != AST_MESSAGE) continue;
        const ast_node *R = f->a;
        const char *rtype = "?", *rname = "?";
        ic_word(ic, R, "type", &rtype), ic_word(ic, R, "name", &rname);
        int reads = 0;
        for (int k = 0; k < R->n_kids; k++)
            if (!strcmp(R->kids[k]->text, "bottom") && R->kids[k]->a->kind == AST_STRING && !strcmp(R->kids[k]->a->text, top))
                reads = 1;
        if (!reads || !strcmp(rtype, "Accuracy") || !strcmp(rtype, "Silence")) continue;
        return ic_error(ic, ic_get(L, "type"), "read the logits with SoftmaxWithLoss (it applies the softmax), and keep "
                        "a Softmax only for reports (Accuracy)", "Softmax layer \"%s\": its probabilities feed layer "
                        "\"%s\" (%s); trainc has the softmax only inside its loss", name, rname, rtype);
    }
    ic_note(ic, L, "layer \"%s\" (Softmax) left out: its probabilities only feed reports, and the trainer reports "
            "top-1 itself (the same argmax as the logits')", name);
    return 0;
}

static int import_one(ic_ctx *ic, const ast_node *L, const ast_node *next, int *consumed) {
    const char *type = NULL, *name = "?";
    *consumed = 0;
    if (ic_word(ic, L, "type", &type) < 0 || ic_word(ic, L, "name", &name) < 0) return -1;
    int keep;
    if (in_train_phase(ic, L, &keep) < 0) return -1;
    const ast_node *inc = ic_get(L, "include");
    const ast_node *phase = inc && inc->a->kind == AST_MESSAGE ? ic_get(inc->a, "phase") : NULL;
    int test_phase = phase && phase->a->kind == AST_IDENT && strcmp(phase->a->text, "TEST") == 0;
    if (type && ic_is_data_layer(type) && (keep || (test_phase && !ic->val_layer))) {
        if (keep) return ic_data_layer(ic, L, type, name, 1);
        ic->val_layer = L;   /* read once the net has a training data layer to go with it */
        remember_test_tops(ic, L, name, type);
        return 0;
    }
    if (!keep) {
        if (test_phase)
            ic_note(ic, L, "layer \"%s\" (%s) is only in Caffe's TEST phase; left out", name, type ? type : "?");
        else
            ic_note(ic, L, "layer \"%s\" (%s) is not in Caffe's training net (its include/exclude rules); left out",
                    name, type ? type : "?");
        remember_test_tops(ic, L, name, type);
        return 0;
    }
    if (type && strcmp(type, "Input") == 0) return read_input_layer(ic, L);
    /* before or after the loss: Accuracy only reports, and the trainer reports top-1 itself */
    if (type && (strcmp(type, "Accuracy") == 0 || strcmp(type, "Silence") == 0)) {
        ic_note(ic, L, "layer \"%s\" (%s) left out: the trainer reports validation top-1 itself", name, type);
        return 0;
    }
    if (type && strcmp(type, "Softmax") == 0) return reporting_softmax(ic, L, name);
    if (type && strcmp(type, "SoftmaxWithLoss") == 0) return read_loss(ic, L);
    return ic_import_layer(ic, L, next, consumed);
}

/* Fields only a SolverParameter has: a file with them and no layer is a solver. */
static const char *solver_field(const ast_node *root) {
    static const char *const fields[] = { "base_lr", "max_iter", "lr_policy", "net", "train_net", "test_iter",
                                          "solver_mode", "snapshot_prefix", "momentum", "weight_decay", NULL };
    if (ic_get(root, "layer") || ic_get(root, "layers")) return NULL;
    for (const char *const *f = fields; *f; f++)
        if (ic_get(root, *f)) return *f;
    return NULL;
}

/* NVCaffe's net-level precision: default_forward_type / default_backward_type (the storage of
 * activations and gradients) FLOAT16 is trainc's compute FP16, FLOAT its FP32 default; the
 * math types are the accumulation, FP32 in trainc's FP16 (FLOAT16 math is approximate);
 * global_grad_scale is a static loss scale, or the start of a dynamic one with
 * global_grad_scale_adaptive. eltwise_mem_sharing only shares memory: nothing to carry over. */
static int read_precision(ic_ctx *ic, const ast_node *root) {
    const char *fwd = "FLOAT", *bwd = "FLOAT", *fmath = "FLOAT", *bmath = "FLOAT";
    double scale = 1;
    int adaptive = 0;
    if (ic_word(ic, root, "default_forward_type", &fwd) < 0 || ic_word(ic, root, "default_backward_type", &bwd) < 0 ||
        ic_word(ic, root, "default_forward_math", &fmath) < 0 || ic_word(ic, root, "default_backward_math", &bmath) < 0 ||
        ic_float(ic, root, "global_grad_scale", &scale) < 0 || ic_bool(ic, root, "global_grad_scale_adaptive", &adaptive) < 0)
        return -1;
    if (ic_get(root, "eltwise_mem_sharing"))
        ic_note(ic, ic_get(root, "eltwise_mem_sharing"), "eltwise_mem_sharing: how NVCaffe shares memory; trainc plans its own");
    static const char *const types[] = { "default_forward_type", "default_backward_type" };
    const char *vals[] = { fwd, bwd };
    for (int i = 0; i < 2; i++)
        if (strcmp(vals[i], "FLOAT") != 0 && strcmp(vals[i], "FLOAT16") != 0)
            return ic_error(ic, ic_get(root, types[i]), "use FLOAT or FLOAT16", "%s %s has no trainc precision", types[i],
                            vals[i]);
    if (strcmp(fwd, bwd) != 0)
        return ic_error(ic, ic_get(root, "default_backward_type"), "give both the same type",
                        "default_forward_type %s with default_backward_type %s: trainc computes forward and backward "
                        "in one precision", fwd, bwd);
    if (scale <= 0) return ic_error(ic, ic_get(root, "global_grad_scale"), NULL, "global_grad_scale must be > 0");
    if (strcmp(fwd, "FLOAT") == 0) {
        if (ic_get(root, "default_forward_type")) ic_note(ic, ic_get(root, "default_forward_type"), "default_forward_type FLOAT: trainc's FP32 default");
        if (scale != 1 || adaptive)
            return ic_error(ic, ic_get(root, "global_grad_scale") ? ic_get(root, "global_grad_scale") : root,
                            "remove global_grad_scale with FLOAT types", "loss scaling in FP32 has no trainc equivalent");
        return 0;
    }
    if (strcmp(fmath, "FLOAT16") == 0 || strcmp(bmath, "FLOAT16") == 0)
        if (ic_approximate(ic, ic_get(root, strcmp(fmath, "FLOAT16") == 0 ? "default_forward_math" : "default_backward_math"),
                           "FLOAT16 math accumulates in half precision; trainc's FP16 accumulates in FP32") < 0)
            return -1;
    if (adaptive)
        snprintf(ic->precision, sizeof ic->precision, "precision { compute: FP16 loss_scale: DYNAMIC init_scale: %s }", ic_num(scale));
    else if (scale != 1)
        snprintf(ic->precision, sizeof ic->precision, "precision { compute: FP16 loss_scale: STATIC init_scale: %s }", ic_num(scale));
    else
        snprintf(ic->precision, sizeof ic->precision, "precision { compute: FP16 loss_scale: NONE }");
    return 0;
}

/* Intel Caffe's multinode: model-parallel layer ranges (trainc is data parallel only) and the
 * layer types whose gradients MLSL compresses for the all-reduce (lossy: trainc all-reduces
 * the FP32 gradients as they are, so that is an approximation). */
static int read_multinode(ic_ctx *ic, const ast_node *root) {
    const ast_node *mn = NULL;
    if (ic_msg(ic, root, "multinode", &mn) < 0) return -1;
    if (!mn) return 0;
    if (ic_only_fields(ic, mn, "multinode", KNOWN("model_parallel", "compress_layer_type_list")) < 0) return -1;
    if (ic_get(mn, "model_parallel"))
        return ic_error(ic, ic_get(mn, "model_parallel"), "remove model_parallel: trainc splits the batch over its "
                        "ranks (parallel { ranks })", "Intel Caffe's multinode model_parallel splits layers over "
                        "nodes; trainc trains data parallel only");
    if (ic_get(mn, "compress_layer_type_list") &&
        ic_approximate(ic, ic_get(mn, "compress_layer_type_list"), "Intel Caffe's multinode compress_layer_type_list "
                       "compresses those layers' gradients for the all-reduce (lossy); trainc all-reduces them exactly") < 0)
        return -1;
    return 0;
}

int ic_import_net(ic_ctx *ic, const ast_node *root) {
    const char *sf = solver_field(root);
    if (sf) {
        const char *net = NULL;
        char hint[512];
        if (ic_get(root, "net") && ic_get(root, "net")->a->kind == AST_STRING) net = ic_get(root, "net")->a->text;
        else if (ic_get(root, "train_net") && ic_get(root, "train_net")->a->kind == AST_STRING)
            net = ic_get(root, "train_net")->a->text;
        snprintf(hint, sizeof hint, "give the net first and the solver second: trainc import caffe %s %s -o SPEC",
                 net ? net : "NET.prototxt", ic->opt->net_path);
        return ic_error(ic, ic_get(root, sf), hint, "%s is a Caffe solver (it has '%s' and no layer), given where the "
                        "net belongs", ic->opt->net_path, sf);
    }
    if (ic_only_fields(ic, root, "the net", (const char *const[]){ "name", "layer", "layers", "force_backward",
                                                                   "state", "debug_info", "input", "input_shape",
                                                                   "input_dim", "default_forward_type",
                                                                   "default_backward_type", "default_forward_math",
                                                                   "default_backward_math", "global_grad_scale",
                                                                   "global_grad_scale_adaptive", "eltwise_mem_sharing",
                                                                   "bn_stats_batch_size", "multinode", NULL }) < 0 ||
        read_multinode(ic, root) < 0 ||
        read_precision(ic, root) < 0)
        return -1;
    if (ic_word(ic, root, "name", &ic->net_name) < 0) return -1;
    if (ic_get(root, "force_backward")) ic_note(ic, ic_get(root, "force_backward"), "force_backward: trainc computes every gradient it needs");
    if (ic_get(root, "debug_info")) ic_note(ic, ic_get(root, "debug_info"), "debug_info: not carried over");
    static const char *const legacy[] = { "layers", "input", "input_shape", "input_dim", "state", NULL };
    for (const char *const *f = legacy; *f; f++)
        if (ic_get(root, *f))
            return ic_error(ic, ic_get(root, *f),
                            strcmp(*f, "layers") == 0
                                ? "upgrade it with Caffe's tools/upgrade_net_proto_text, which writes 'layer' messages"
                                : "declare the input as a layer: layer { name: \"data\" type: \"Input\" top: \"data\" "
                                  "input_param { shape { dim: N dim: C dim: H dim: W } } }",
                            "'%s' is an old Caffe net format the importer does not read", *f);
    int bad = 0;
    for (int i = 0; i < root->n_kids && !bad && !diag_should_stop(ic->diag); i++) {
        const ast_node *f = root->kids[i];
        if (strcmp(f->text, "layer") != 0) continue;
        if (f->a->kind != AST_MESSAGE) return ic_error(ic, f->a, NULL, "'layer' must be a message");
        int j = i + 1;
        while (j < root->n_kids && strcmp(root->kids[j]->text, "layer") != 0) j++;
        const ast_node *next = j < root->n_kids && root->kids[j]->a->kind == AST_MESSAGE ? root->kids[j]->a : NULL;
        int consumed = 0;
        ic->n_caffe_layers++;
        ic->root = root, ic->cur = i;
        /* stop at the first error: later layers would only repeat it through missing blobs */
        bad = import_one(ic, f->a, next, &consumed);
        if (consumed) i = j;
    }
    if (bad) return -1;
    if (ic->val_layer && ic->train_data.set) {
        const char *vtype = "?", *vname = "?";
        ic_word(ic, ic->val_layer, "type", &vtype);
        ic_word(ic, ic->val_layer, "name", &vname);
        if (ic_data_layer(ic, ic->val_layer, vtype, vname, 0) < 0) return -1;
        const ic_data *t = &ic->train_data, *v = &ic->val_data;
        if (v->c != t->c || v->h != t->h || v->w != t->w)
            return ic_error(ic, ic->val_layer, "give both phases images of one size", "the TEST-phase data are %dx%dx%d "
                            "images, the TRAIN-phase data %dx%dx%d", v->c, v->h, v->w, t->c, t->h, t->w);
        int same = t->scale == v->scale && t->n_mean == v->n_mean && strcmp(t->type, v->type) == 0 &&
                   !t->mean_file == !v->mean_file && (!t->mean_file || strcmp(t->mean_file, v->mean_file) == 0) &&
                   t->db_h == v->db_h && t->db_w == v->db_w;
        for (int i = 0; same && i < t->n_mean; i++) same = t->mean[i] == v->mean[i];
        if (!same)
            return ic_error(ic, ic_get(ic->val_layer, "transform_param") ? ic_get(ic->val_layer, "transform_param") : ic->val_layer,
                            "give both phases the same data layer type, scale and mean_value",
                            "the TEST-phase data layer \"%s\" reads or scales its data otherwise than the TRAIN-phase \"%s\"; "
                            "the trainer reads both sets alike", vname, t->name);
    } else if (ic->val_layer) {
        const char *vname = "?";
        ic_word(ic, ic->val_layer, "name", &vname);
        ic_note(ic, ic->val_layer, "layer \"%s\": a TEST-phase data layer beside an Input layer; left out (give data.val "
                "in a spec that extends this one)", vname);
    }
    if (!ic->have_input)
        return ic_error(ic, root, "add layer { name: \"data\" type: \"Input\" top: \"data\" input_param { shape { dim: N dim: C dim: H dim: W } } }",
                        "the net has no Input layer");
    if (!ic->have_loss)
        return ic_error(ic, root, "end the net with a SoftmaxWithLoss layer", "the net has no SoftmaxWithLoss layer");
    if (strcmp(ic->layers[ic->n_layers - 1].type, "softmax_ce") != 0) {   /* the last loss, the main head, ends the net */
        int i = ic->n_layers - 1;
        while (strcmp(ic->layers[i].type, "softmax_ce") != 0) i--;
        ast_node at = { .loc = ic->layers[i + 1].loc };
        return ic_error(ic, &at, "move the main loss layer to the end (the last SoftmaxWithLoss is the main head)",
                        "layer \"%s\" after the last loss layer", ic->layers[i + 1].name);
    }
    /* Intel Caffe's BatchNorm statistics over sub-batches of this size (0: the whole batch) */
    int64_t bn_stats = 0;
    if (ic_int(ic, root, "bn_stats_batch_size", &bn_stats) < 0) return -1;
    if (bn_stats > 0 && bn_stats != ic->batch)
        return ic_error(ic, ic_get(root, "bn_stats_batch_size"), "remove bn_stats_batch_size, or make it the TRAIN batch",
                        "bn_stats_batch_size %lld: Intel Caffe's BatchNorm takes its statistics over sub-batches of %lld "
                        "of the %lld a rank computes; trainc's bn over the rank's whole batch", (long long)bn_stats,
                        (long long)bn_stats, (long long)ic->batch);
    if (bn_stats > 0)
        ic_note(ic, ic_get(root, "bn_stats_batch_size"), "bn_stats_batch_size %lld: the TRAIN batch, over which trainc's "
                "bn takes its statistics too", (long long)bn_stats);
    return 0;
}
