/* Sema stage 2: the net. Layers in spec order become net_desc entries; names are checked
 * unique, inputs resolved to earlier layers, then each layer's shape is inferred
 * (sema_shape.c) and the totals summed with overflow checks. */
#include "sema.h"
#include "sema_internal.h"
#include "sema_value.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {
#define NET_KIND_NAME(id, name) name,
    NET_LAYER_KINDS(NET_KIND_NAME)
#undef NET_KIND_NAME
};
static_assert(sizeof kind_names / sizeof kind_names[0] == NET_KIND_COUNT,
              "net.h: every layer kind needs a name");

/* Every layer kind has a schema message of the same name; this fails to compile otherwise. */
const schema_msg_id sema_layer_msg[] = {
#define NET_KIND_MSG(id, name) SM_##id,
    NET_LAYER_KINDS(NET_KIND_MSG)
#undef NET_KIND_MSG
};
static_assert(sizeof sema_layer_msg / sizeof sema_layer_msg[0] == NET_KIND_COUNT,
              "net.h: every layer kind needs a schema message");

const char *net_kind_name(net_kind kind) {
    return (unsigned)kind < NET_KIND_COUNT ? kind_names[kind] : "?";
}

static int kind_of(const char *field) {
    for (int k = 0; k < NET_KIND_COUNT; k++)
        if (strcmp(kind_names[k], field) == 0) return k;
    return -1;
}

void net_desc_free(net_desc *net) {
    free(net->layers);
    memset(net, 0, sizeof *net);
}

int net_find(const net_desc *net, const char *name) {
    for (int i = 0; i < net->n_layers; i++)
        if (strcmp(net->layers[i].name, name) == 0) return i;
    return -1;
}

/* ---- name → index map (open addressing), so nets of 100k layers stay linear ---- */
typedef struct { const char **keys; int *vals; size_t cap; } name_map;

static size_t name_hash(const char *s) {
    size_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static int map_init(name_map *m, int n) {
    m->cap = 16;
    while (m->cap < (size_t)n * 2 + 1) m->cap *= 2;
    m->keys = calloc(m->cap, sizeof *m->keys);
    m->vals = calloc(m->cap, sizeof *m->vals);
    return m->keys && m->vals;
}

static void map_free(name_map *m) { free(m->keys); free(m->vals); }

/* Returns the existing index for key, or inserts val and returns -1. */
static int map_put(name_map *m, const char *key, int val) {
    size_t i = name_hash(key) & (m->cap - 1);
    for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
    m->keys[i] = key;
    m->vals[i] = val;
    return -1;
}

static int map_get(const name_map *m, const char *key) {
    size_t i = name_hash(key) & (m->cap - 1);
    for (; m->keys[i]; i = (i + 1) & (m->cap - 1))
        if (strcmp(m->keys[i], key) == 0) return m->vals[i];
    return -1;
}

/* ---- inputs ---- */
static void suggest_layer(char *hint, size_t cap, const net_desc *net, int upto, const char *name) {
    /* Candidates: the layers before this one (only they can be inputs), capped for speed. */
    enum { MAX_CANDS = 4096 };
    static const char *cands[MAX_CANDS + 2];
    int n = 0, from = upto > MAX_CANDS ? upto - MAX_CANDS : 0;
    for (int i = from; i < upto; i++) cands[n++] = net->layers[i].name;
    cands[n++] = "data";
    cands[n] = NULL;
    const char *near = diag_suggest(name, cands);
    if (near) snprintf(hint, cap, "did you mean '%s'?", near);
    else snprintf(hint, cap, "an input must name an earlier layer, or \"data\" for the network input");
}

static int resolve_one(diag_ctx *diag, net_desc *net, const name_map *names, int i,
                       const ast_node *ref) {
    net_layer *L = &net->layers[i];
    const char *name = ref->text;
    if (strcmp(name, "data") == 0) return NET_INPUT_DATA;
    int j = map_get(names, name);
    if (j == i) {
        diag_error(diag, ref->loc, "inputs must be earlier layers, so a net has no cycles",
                   "layer '%s' takes its own output as input", L->name);
        return -2;
    }
    if (j > i) {
        diag_error(diag, ref->loc, "inputs must be earlier layers, so a net has no cycles; move "
                   "the layer or fix the name", "input '%s' of layer '%s' refers to a later layer",
                   name, L->name);
        diag_note(diag, net->layers[j].loc, "'%s' is defined here", name);
        return -2;
    }
    if (j < 0) {
        char hint[200];
        suggest_layer(hint, sizeof hint, net, i, name);
        diag_error(diag, ref->loc, hint, "input '%.64s' of layer '%s' does not exist", name,
                   L->name);
        return -2;
    }
    return j;
}

static int resolve_inputs(diag_ctx *diag, net_desc *net, const name_map *names, int i,
                          const ast_node *msg, schema_msg_id sm) {
    net_layer *L = &net->layers[i];
    const ast_node *one = sv_get(msg, sm, "input"), *many = sv_get(msg, sm, "inputs");
    int multi = L->kind == NET_ADD || L->kind == NET_CONCAT || L->kind == NET_MUL;
    if (L->kind == NET_LEARNED) {   /* a tensor of parameters: it reads nothing */
        if (one || many) {
            diag_error(diag, (one ? one : many)->loc, "remove input / inputs",
                       "learned layer '%s' reads no input", L->name);
            return 1;
        }
        L->n_inputs = 0;
        L->inputs[0] = NET_INPUT_DATA;
        return 0;
    }
    if (!one && !many) {
        if (multi) {
            diag_error(diag, L->loc, L->kind == NET_MUL ? "e.g. inputs: [\"features\", \"gate\"]"
                                                        : "e.g. inputs: [\"conv2\", \"@in\"]",
                       "'%s' layer '%s' needs 'inputs' with %s layers", net_kind_name(L->kind), L->name,
                       L->kind == NET_MUL ? "two" : "two or more");
            return 1;
        }
        L->n_inputs = 1;
        L->inputs[0] = i > 0 ? i - 1 : NET_INPUT_DATA;
        return 0;
    }
    if (one) {
        many = NULL;
        if (multi) {
            diag_error(diag, one->loc, "e.g. inputs: [\"conv2\", \"@in\"]",
                       "'%s' layer '%s' needs 'inputs' with %s layers, not 'input'", net_kind_name(L->kind),
                       L->name, L->kind == NET_MUL ? "two" : "two or more");
            return 1;
        }
        int j = resolve_one(diag, net, names, i, one);
        if (j == -2) return 1;
        L->n_inputs = 1;
        L->inputs[0] = j;
        return 0;
    }
    if (L->kind == NET_MUL && many->n_kids != 2) {
        diag_error(diag, many->loc, "e.g. inputs: [\"features\", \"gate\"]",
                   "mul layer '%s' takes two inputs, not %d", L->name, many->n_kids);
        return 1;
    }
    if (multi && many->n_kids < 2) {
        diag_error(diag, many->loc, NULL, "'%s' layer '%s' needs two or more inputs, not %d",
                   net_kind_name(L->kind), L->name, many->n_kids);
        return 1;
    }
    if (!multi && many->n_kids != 1) {
        diag_error(diag, many->loc, "only add, concat and mul combine several inputs",
                   "'%s' layer '%s' takes one input, not %d", net_kind_name(L->kind), L->name,
                   many->n_kids);
        return 1;
    }
    if (many->n_kids > NET_MAX_INPUTS) {
        diag_error(diag, many->loc, "chain several add/concat layers instead",
                   "layer '%s' has %d inputs; the limit is %d", L->name, many->n_kids,
                   NET_MAX_INPUTS);
        return 1;
    }
    L->n_inputs = many->n_kids;
    for (int k = 0; k < many->n_kids; k++) {
        int j = resolve_one(diag, net, names, i, many->kids[k]);
        if (j == -2) return 1;
        L->inputs[k] = j;
    }
    return 0;
}

/* ---- the net ---- */
static int collect_layers(net_desc *net, diag_ctx *diag, const ast_node *net_msg,
                          const ast_node ***msgs, name_map *names) {
    int n = 0;
    for (int i = 0; i < net_msg->n_kids; i++)
        if (net_msg->kids[i]->kind == AST_FIELD && kind_of(net_msg->kids[i]->text) >= 0) n++;
    net->layers = calloc((size_t)n + 1, sizeof *net->layers);
    *msgs = calloc((size_t)n + 1, sizeof **msgs);
    if (!net->layers || !*msgs || !map_init(names, n)) {
        diag_error(diag, net_msg->loc, NULL, "out of memory for %d layers", n);
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < net_msg->n_kids; i++) {
        const ast_node *f = net_msg->kids[i];
        int kind = f->kind == AST_FIELD ? kind_of(f->text) : -1;
        if (kind < 0) continue;
        net_layer *L = &net->layers[net->n_layers];
        L->kind = (net_kind)kind;
        L->loc = f->loc;
        L->name = sv_has(f->a, sema_layer_msg[kind], "name") ? sv_str(f->a, sema_layer_msg[kind], "name")
                                                             : f->text;
        (*msgs)[net->n_layers] = f->a;
        if (strcmp(L->name, "data") == 0) {
            diag_error(diag, L->loc, "\"data\" means the network input; pick another name",
                       "a layer may not be named \"data\"");
            errors++;
        }
        int prev = map_put(names, L->name, net->n_layers);
        if (prev >= 0) {
            diag_error(diag, L->loc, strchr(L->name, '@')
                       ? "unnamed layers are named TYPE@LINE; give one of them a name"
                       : "layer names must be unique; inputs refer to them",
                       "duplicate layer name '%s'", L->name);
            diag_note(diag, net->layers[prev].loc, "'%s' first defined here", L->name);
            errors++;
        }
        net->n_layers++;
    }
    if (net->n_layers == 0) {
        diag_error(diag, net_msg->loc, "add layers such as conv { out: 16 kernel: 3 }",
                   "the net has no layers");
        errors++;
    }
    return errors;
}

/* How many layers read layer l's output. */
static int readers_of(const net_desc *net, int l) {
    int n = 0;
    for (int i = 0; i < net->n_layers; i++)
        for (int k = 0; k < net->layers[i].n_inputs; k++) n += net->layers[i].inputs[k] == l;
    return n;
}

/* A loss head whose class scores come through a stop_gradient (directly or through views
 * after it) would send its gradient nowhere: an error at the head H. */
static int stopped_head(diag_ctx *diag, const net_desc *net, int l, const net_layer *H) {
    while (l >= 0 && (net->layers[l].kind == NET_FLATTEN || net->layers[l].kind == NET_TOKENS ||
                      net->layers[l].kind == NET_RESHAPE))
        l = net->layers[l].inputs[0];
    if (l < 0 || net->layers[l].kind != NET_STOP_GRADIENT) return 0;
    if (H->kind == NET_SOFTMAX_CE)
        diag_error(diag, H->loc, "stop the gradient on a branch, not before a loss", "loss head '%s' reads its class "
                   "scores through stop_gradient '%s': its loss would train nothing", H->name, net->layers[l].name);
    else
        diag_error(diag, H->loc, "stop the gradient on a branch, not before a loss", "the loss reads the net's last "
                   "layer '%s' through stop_gradient '%s': it would train nothing", H->name, net->layers[l].name);
    return 1;
}

/* The loss heads (softmax_ce layers; README "Loss heads"): the last layer is the main head
 * (or, when it is no softmax_ce, an implicit one after it), which must read the last layer
 * that is not a loss, as top-1, evaluation and the exports read the net's output there. Every
 * head reads net.classes values (the main head's input sets classes when the spec does not)
 * from a layer that no other layer reads, itself or through the flatten, tokens and reshape
 * views between, and none through a stop_gradient: its gradient is the loss's alone, which the plan writes before backward. */
static int check_heads(diag_ctx *diag, net_desc *net, const ast_node *net_msg) {
    int last_op = net->n_layers - 1;
    while (last_op >= 0 && net->layers[last_op].kind == NET_SOFTMAX_CE) last_op--;
    if (last_op < 0) {
        diag_error(diag, net->layers[0].loc, "add the layers that compute the class scores before the loss",
                   "the net has only loss layers");
        return 1;
    }
    const net_layer *L = &net->layers[last_op];
    const net_layer *M = net->loss_layer >= 0 ? &net->layers[net->loss_layer] : NULL;
    if (M && M->inputs[0] != last_op) {
        char hint[240];
        snprintf(hint, sizeof hint, "the last layer is the main head and reads the last layer that is no loss "
                 "('%.64s'): put the auxiliary heads' layers before the main head's", L->name);
        diag_error(diag, M->loc, hint, "softmax_ce layer '%s' (the main head) reads '%s', not the net's last "
                   "layer", M->name, M->inputs[0] >= 0 ? net->layers[M->inputs[0]].name : "data");
        return 1;
    }
    int64_t size = net_shape_size(L->out);
    if (!sv_has(net_msg, SM_NET, "classes")) net->classes = size;
    else if ((net->classes = sv_int(net_msg, SM_NET, "classes")) != size) {
        char hint[160];
        snprintf(hint, sizeof hint, "the last layer's output size must equal net.classes (%lld)",
                 (long long)net->classes);
        diag_error(diag, L->loc, hint, "last layer '%s' outputs %lld values but net.classes is %lld",
                   L->name, (long long)size, (long long)net->classes);
        diag_note(diag, sv_loc(net_msg, SM_NET, "classes"), "classes given here");
        return 1;
    }
    int errors = !M && stopped_head(diag, net, last_op, L), heads = 0;
    for (int i = 0; i < net->n_layers && !diag_should_stop(diag); i++) {
        const net_layer *H = &net->layers[i];
        if (H->kind != NET_SOFTMAX_CE) continue;
        if (stopped_head(diag, net, H->inputs[0], H)) {
            errors++;
            continue;
        }
        int in = H->inputs[0];
        if (++heads > NET_MAX_HEADS) {
            diag_error(diag, H->loc, NULL, "softmax_ce layer '%s': more than %d loss heads", H->name, NET_MAX_HEADS);
            return errors + 1;
        }
        if (in < 0) {
            diag_error(diag, H->loc, "give it input: the layer of class scores it reads",
                       "softmax_ce layer '%s' reads the network input; a loss reads class scores", H->name);
            errors++;
            continue;
        }
        if (net_shape_size(net->layers[in].out) != net->classes) {
            char hint[160];
            snprintf(hint, sizeof hint, "a loss head reads net.classes (%lld) class scores", (long long)net->classes);
            diag_error(diag, H->loc, hint, "softmax_ce layer '%s' reads '%s', which outputs %lld values",
                       H->name, net->layers[in].name, (long long)net_shape_size(net->layers[in].out));
            errors++;
            continue;
        }
        int l = in;
        while (l >= 0 && readers_of(net, l) == 1 &&
               (net->layers[l].kind == NET_FLATTEN || net->layers[l].kind == NET_TOKENS ||
                net->layers[l].kind == NET_RESHAPE))
            l = net->layers[l].inputs[0];
        if (l >= 0 && readers_of(net, l) == 1) continue;
        diag_error(diag, H->loc, "give each head a layer of its own (a linear, say) that nothing else reads",
                   "softmax_ce layer '%s' reads '%s', which %s: a head's class scores must go to its loss alone",
                   H->name, l >= 0 ? net->layers[l].name : "data",
                   l >= 0 ? "other layers read too" : "is the network input");
        errors++;
    }
    return errors;
}

/* A layer whose output nothing reads is a mistake (a branch left out of a concat, a name
 * misspelled in an `inputs` list): its MACs and parameters would count in `show` and its
 * weights would train on no gradient. The net's output (the last layer, or the loss's input)
 * and every loss head (softmax_ce, main or auxiliary) are read by the loss. */
static int check_unused(diag_ctx *diag, const net_desc *net) {
    char *read = calloc((size_t)net->n_layers + 1, 1);
    if (!read) return 0;
    for (int i = 0; i < net->n_layers; i++)
        for (int k = 0; k < net->layers[i].n_inputs; k++)
            if (net->layers[i].inputs[k] >= 0) read[net->layers[i].inputs[k]] = 1;
    int out = net->loss_layer >= 0 ? net->loss_layer : net->n_layers - 1, errors = 0;
    for (int i = 0; i < net->n_layers && !diag_should_stop(diag); i++) {
        if (read[i] || i == out || net->layers[i].kind == NET_SOFTMAX_CE) continue;   /* a head ends a path */
        const net_layer *L = &net->layers[i];
        char hint[240];
        snprintf(hint, sizeof hint, "only the net's last layer ('%.64s') may go unread: read '%.64s' "
                 "from a later layer's input or inputs, or delete it", net->layers[out].name, L->name);
        diag_error(diag, L->loc, hint, "layer '%s' is unused: no layer reads its output", L->name);
        errors++;
    }
    free(read);
    return errors;
}

int sema_build_net(net_desc *net, diag_ctx *diag, const ast_node *net_msg) {
    return sema_build_net_at(net, diag, net_msg, NULL);
}

int sema_build_net_at(net_desc *net, diag_ctx *diag, const ast_node *net_msg, const net_shape *input) {
    memset(net, 0, sizeof *net);
    net->loss_layer = -1;
    const ast_node *shape = sv_get(net_msg, SM_NET, "input_shape");
    if (!shape || shape->kind != AST_LIST || shape->n_kids != 3) return 1;
    net->input = (net_shape){shape->kids[0]->ival, shape->kids[1]->ival, shape->kids[2]->ival};
    if (input) net->input = *input;
    if (sema_shape_bytes(diag, shape->loc, "input_shape", net->input, NULL)) return 1;

    const ast_node **msgs = NULL;
    name_map names = {0};
    int errors = collect_layers(net, diag, net_msg, &msgs, &names);
    int broken_names = errors;
    /* ok[i]: layer i has a shape; layers fed by a broken one are skipped, not re-reported. */
    char *ok = calloc((size_t)net->n_layers + 1, 1);
    for (int i = 0; !broken_names && ok && i < net->n_layers && !diag_should_stop(diag); i++) {
        net_layer *L = &net->layers[i];
        schema_msg_id sm = sema_layer_msg[L->kind];
        if (resolve_inputs(diag, net, &names, i, msgs[i], sm)) { errors++; continue; }
        int fed = 1;
        for (int k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] >= 0 && !ok[L->inputs[k]]) fed = 0;
        if (!fed) continue;
        if (sema_infer_layer(diag, net, i, msgs[i], sm)) { errors++; continue; }
        ok[i] = 1;
        if (__builtin_add_overflow(net->params, L->params, &net->params) ||
            __builtin_add_overflow(net->macs, L->macs, &net->macs) ||
            __builtin_add_overflow(net->act_bytes, L->act_bytes, &net->act_bytes)) {
            diag_error(diag, L->loc, "the net is far too large", "net totals overflow 64 bits at layer '%s'",
                       L->name);
            errors++;
            break;
        }
    }
    if (!errors && net->n_layers > 0) errors += check_unused(diag, net);
    if (!errors && net->n_layers > 0) errors += check_heads(diag, net, net_msg);
    free(ok);
    free(msgs);
    map_free(&names);
    return errors;
}
