/* Resolve, second half: evaluate expressions and expand blocks, repeats, ifs and lets into
 * plain fields. Layers created by a block instance get names prefixed with the instance
 * path (e.g. "layer2.0.conv1"), and their `input`/`inputs` references are resolved: a plain
 * name is local to the instance, "@in" is the instance's input, "/name" is global, "data" is
 * the network input wherever it is written. */
#include "resolve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct binding {
    const char *name;
    ast_node *value;
    struct binding *next;
} binding;

typedef struct scope {
    binding *vars;
    const struct scope *parent;   /* lexical parent: blocks see globals only */
} scope;

typedef struct block_table {
    ast_node **defs;
    int n, cap;
} block_table;

/* Where expanded layers go and how they are named. */
typedef struct layer_ctx {
    const char *prefix;           /* instance path, "" at the top of the net */
    const char *instance_input;   /* what "@in" refers to */
    const char **last_layer;      /* name of the most recently emitted layer (shared) */
    const src_loc *via;           /* innermost `use` being expanded */
    const char *via_block;
    int block_depth;
} layer_ctx;

typedef struct expander {
    ast_arena *arena;
    diag_ctx *diag;
    block_table blocks;
    long n_nodes;
    int overflowed;
    /* Set by `use ... from "x"` until the instance emits its first layer: that layer, if it
     * names no input, reads x rather than the layer emitted before it. */
    const char *pending_input;
    src_loc pending_loc;
} expander;

static ast_node *eval(expander *x, const ast_node *e, const scope *sc, const layer_ctx *lc);
static void expand_body(expander *x, const ast_node *body, ast_node *out, scope *sc,
                        const layer_ctx *lc);

/* ---- values ---- */

static src_loc loc_in(const ast_node *n, const layer_ctx *lc) {
    src_loc loc = n->loc;
    if (lc && lc->via && !loc.via) {
        loc.via = lc->via;
        loc.via_block = lc->via_block;
    }
    return loc;
}

static ast_node *new_node(expander *x, ast_kind kind, src_loc loc) {
    if (++x->n_nodes > RESOLVE_MAX_NODES) {
        if (!x->overflowed)
            diag_error(x->diag, loc, "look for a repeat count or recursion that is too large",
                       "spec expands to more than %d nodes", RESOLVE_MAX_NODES);
        x->overflowed = 1;
    }
    return ast_new(x->arena, kind, loc);
}

static ast_node *make_int(expander *x, int64_t v, src_loc loc) {
    ast_node *n = new_node(x, AST_INT, loc);
    n->ival = v;
    return n;
}

static ast_node *make_float(expander *x, double v, src_loc loc) {
    ast_node *n = new_node(x, AST_FLOAT, loc);
    n->fval = v;
    return n;
}

static ast_node *make_string(expander *x, const char *s, src_loc loc) {
    ast_node *n = new_node(x, AST_STRING, loc);
    n->text = ast_arena_strdup(x->arena, s);
    return n;
}

static int is_number(const ast_node *v) { return v->kind == AST_INT || v->kind == AST_FLOAT; }
static double as_double(const ast_node *v) { return v->kind == AST_INT ? (double)v->ival : v->fval; }

/* Truth value for `if`, `?:`, `&&`, `||`, `!`: numbers, and the identifiers true/false. */
static int truth(expander *x, const ast_node *v, int *ok) {
    *ok = 1;
    if (v->kind == AST_INT) return v->ival != 0;
    if (v->kind == AST_FLOAT) return v->fval != 0.0;
    if (v->kind == AST_IDENT && strcmp(v->text, "true") == 0) return 1;
    if (v->kind == AST_IDENT && strcmp(v->text, "false") == 0) return 0;
    diag_error(x->diag, v->loc, "conditions are numbers or true/false",
               "a %s cannot be used as a condition", ast_kind_name(v->kind));
    *ok = 0;
    return 0;
}

static const ast_node *lookup(const scope *sc, const char *name) {
    for (; sc; sc = sc->parent)
        for (const binding *b = sc->vars; b; b = b->next)
            if (strcmp(b->name, name) == 0) return b->value;
    return NULL;
}

static void bind(expander *x, scope *sc, const char *name, ast_node *value) {
    binding *b = ast_arena_alloc(x->arena, sizeof *b);
    b->name = name;
    b->value = value;
    b->next = sc->vars;
    sc->vars = b;
}

static char *format_value_for_string(expander *x, const ast_node *v) {
    char buf[64];
    if (v->kind == AST_INT) snprintf(buf, sizeof buf, "%lld", (long long)v->ival);
    else if (v->kind == AST_FLOAT) snprintf(buf, sizeof buf, "%.17g", v->fval);
    else return v->text ? v->text : "";
    return ast_arena_strdup(x->arena, buf);
}

/* ---- expressions ---- */

static ast_node *eval_arith(expander *x, int op, const ast_node *a, const ast_node *b, src_loc loc) {
    if ((a->kind == AST_STRING || b->kind == AST_STRING) && op == '+') {
        const char *sa = format_value_for_string(x, a), *sb = format_value_for_string(x, b);
        size_t n = strlen(sa) + strlen(sb) + 1;
        char *s = ast_arena_alloc(x->arena, n);
        snprintf(s, n, "%s%s", sa, sb);
        ast_node *r = new_node(x, AST_STRING, loc);
        r->text = s;
        return r;
    }
    if (!is_number(a) || !is_number(b)) {
        diag_error(x->diag, loc, NULL, "operator '%c' needs numbers, not %s and %s", op,
                   ast_kind_name(a->kind), ast_kind_name(b->kind));
        return NULL;
    }
    if (a->kind == AST_INT && b->kind == AST_INT) {
        int64_t r = 0;
        int overflow = 0;
        switch (op) {
        case '+': overflow = __builtin_add_overflow(a->ival, b->ival, &r); break;
        case '-': overflow = __builtin_sub_overflow(a->ival, b->ival, &r); break;
        case '*': overflow = __builtin_mul_overflow(a->ival, b->ival, &r); break;
        case '/': case '%':
            if (b->ival == 0) {
                diag_error(x->diag, loc, NULL, "division by zero");
                return NULL;
            }
            if (a->ival == INT64_MIN && b->ival == -1) { overflow = 1; break; }
            r = op == '/' ? a->ival / b->ival : a->ival % b->ival;
            break;
        }
        if (overflow) {
            diag_error(x->diag, loc, "integers must fit in 64 bits", "integer overflow in '%c'", op);
            return NULL;
        }
        return make_int(x, r, loc);
    }
    double p = as_double(a), q = as_double(b), r = 0;
    switch (op) {
    case '+': r = p + q; break;
    case '-': r = p - q; break;
    case '*': r = p * q; break;
    case '/':
        if (q == 0) {
            diag_error(x->diag, loc, NULL, "division by zero");
            return NULL;
        }
        r = p / q;
        break;
    case '%':
        diag_error(x->diag, loc, NULL, "'%%' needs integers");
        return NULL;
    }
    if (!isfinite(r)) {
        diag_error(x->diag, loc, NULL, "arithmetic result is not a finite number");
        return NULL;
    }
    return make_float(x, r, loc);
}

static int values_equal(const ast_node *a, const ast_node *b) {
    if (is_number(a) && is_number(b)) return as_double(a) == as_double(b);
    if ((a->kind == AST_STRING || a->kind == AST_IDENT) && a->kind == b->kind)
        return strcmp(a->text, b->text) == 0;
    return 0;
}

static ast_node *eval_binary(expander *x, const ast_node *e, const scope *sc, const layer_ctx *lc) {
    src_loc loc = loc_in(e, lc);
    ast_node *a = eval(x, e->a, sc, lc);
    if (!a) return NULL;
    int ok;
    if (e->op == OP_AND || e->op == OP_OR) {
        int ta = truth(x, a, &ok);
        if (!ok) return NULL;
        if (e->op == OP_AND ? !ta : ta) return make_int(x, ta, loc);
        ast_node *b = eval(x, e->b, sc, lc);
        if (!b) return NULL;
        int tb = truth(x, b, &ok);
        return ok ? make_int(x, tb, loc) : NULL;
    }
    ast_node *b = eval(x, e->b, sc, lc);
    if (!b) return NULL;
    switch (e->op) {
    case '+': case '-': case '*': case '/': case '%':
        return eval_arith(x, e->op, a, b, loc);
    case OP_EQ: return make_int(x, values_equal(a, b), loc);
    case OP_NE: return make_int(x, !values_equal(a, b), loc);
    default:
        if (!is_number(a) || !is_number(b)) {
            diag_error(x->diag, loc, NULL, "comparison needs numbers, not %s and %s",
                       ast_kind_name(a->kind), ast_kind_name(b->kind));
            return NULL;
        }
        double p = as_double(a), q = as_double(b);
        int r = e->op == '<' ? p < q : e->op == '>' ? p > q : e->op == OP_LE ? p <= q : p >= q;
        return make_int(x, r, loc);
    }
}

/* An integer result of ceil/floor/round/pow, or an error when it does not fit. */
static ast_node *int_result(expander *x, double v, const char *fn, src_loc loc) {
    if (!(v >= -9.2e18 && v <= 9.2e18)) {
        diag_error(x->diag, loc, NULL, "%s: the value does not fit in an integer", fn);
        return NULL;
    }
    return make_int(x, (int64_t)v, loc);
}

/* Integer power by squaring, exact, or -1 on overflow. */
static int ipow(int64_t b, int64_t e, int64_t *r) {
    int64_t acc = 1;
    while (e > 0) {
        if ((e & 1) && __builtin_mul_overflow(acc, b, &acc)) return -1;
        e >>= 1;
        if (e && __builtin_mul_overflow(b, b, &b)) return -1;
    }
    *r = acc;
    return 0;
}

/* The math functions, as Python's math module and builtins give them (the models' reference
 * code computes channel counts and depths with them): sqrt exp log pow give floats, except
 * pow of two integers with a non-negative exponent (exact); ceil floor round give integers
 * (round: halves to even, as Python's round); abs keeps the argument's type. */
static ast_node *eval_math(expander *x, const char *fn, ast_node **args, int nargs, src_loc loc,
                           int *known) {
    static const struct { const char *name; int nargs; } fns[] = {
        {"sqrt", 1}, {"exp", 1}, {"log", 1}, {"pow", 2}, {"ceil", 1}, {"floor", 1},
        {"round", 1}, {"abs", 1},
    };
    *known = 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (!strcmp(fn, fns[i].name) && nargs == fns[i].nargs) *known = 1;
    if (!*known) return NULL;
    double v = as_double(args[0]), r;
    if (!strcmp(fn, "abs")) {
        if (args[0]->kind == AST_FLOAT) return make_float(x, fabs(v), loc);
        if (args[0]->ival == INT64_MIN) {
            diag_error(x->diag, loc, NULL, "integer overflow in 'abs'");
            return NULL;
        }
        return make_int(x, args[0]->ival < 0 ? -args[0]->ival : args[0]->ival, loc);
    }
    if (!strcmp(fn, "ceil")) return int_result(x, ceil(v), fn, loc);
    if (!strcmp(fn, "floor")) return int_result(x, floor(v), fn, loc);
    if (!strcmp(fn, "round")) return int_result(x, nearbyint(v), fn, loc);
    if (!strcmp(fn, "sqrt")) {
        if (v < 0) {
            diag_error(x->diag, loc, NULL, "sqrt of a negative number (%g)", v);
            return NULL;
        }
        r = sqrt(v);
    } else if (!strcmp(fn, "log")) {
        if (v <= 0) {
            diag_error(x->diag, loc, NULL, "log of a number that is not positive (%g)", v);
            return NULL;
        }
        r = log(v);
    } else if (!strcmp(fn, "exp")) {
        r = exp(v);
    } else {   /* pow */
        if (args[0]->kind == AST_INT && args[1]->kind == AST_INT && args[1]->ival >= 0) {
            int64_t p;
            if (ipow(args[0]->ival, args[1]->ival, &p)) {
                diag_error(x->diag, loc, "integers must fit in 64 bits", "integer overflow in 'pow'");
                return NULL;
            }
            return make_int(x, p, loc);
        }
        double e = as_double(args[1]);
        if (v < 0 && e != floor(e)) {
            diag_error(x->diag, loc, NULL, "pow of a negative number to a fractional power");
            return NULL;
        }
        if (v == 0 && e < 0) {
            diag_error(x->diag, loc, NULL, "pow of zero to a negative power (division by zero)");
            return NULL;
        }
        r = pow(v, e);
    }
    if (!isfinite(r)) {
        diag_error(x->diag, loc, NULL, "%s: the result is not a finite number", fn);
        return NULL;
    }
    return make_float(x, r, loc);
}

static ast_node *eval_call(expander *x, const ast_node *e, const scope *sc, const layer_ctx *lc) {
    src_loc loc = loc_in(e, lc);
    static const char *const builtins[] = { "min", "max", "int", "float", "sqrt", "exp", "log",
                                            "pow", "ceil", "floor", "round", "abs", NULL };
    int nargs = e->n_kids;
    ast_node *args[16];
    if (nargs > 16) {
        diag_error(x->diag, loc, NULL, "too many arguments to '%s'", e->text);
        return NULL;
    }
    for (int i = 0; i < nargs; i++)
        if (!(args[i] = eval(x, e->kids[i], sc, lc))) return NULL;
    for (int i = 0; i < nargs; i++)
        if (!is_number(args[i])) {
            diag_error(x->diag, args[i]->loc, NULL, "'%s' needs numbers", e->text);
            return NULL;
        }
    if (!strcmp(e->text, "min") || !strcmp(e->text, "max")) {
        if (nargs < 1) {
            diag_error(x->diag, loc, NULL, "'%s' needs at least one argument", e->text);
            return NULL;
        }
        int want_max = e->text[1] == 'a';
        ast_node *best = args[0];
        for (int i = 1; i < nargs; i++) {
            double d = as_double(args[i]) - as_double(best);
            if (want_max ? d > 0 : d < 0) best = args[i];
        }
        return best;
    }
    if ((!strcmp(e->text, "int") || !strcmp(e->text, "float")) && nargs == 1) {
        if (e->text[0] == 'f') return make_float(x, as_double(args[0]), loc);
        return int_result(x, floor(as_double(args[0])), "int", loc);
    }
    int known;
    ast_node *r = eval_math(x, e->text, args, nargs, loc, &known);
    if (known) return r;
    const char *near = diag_suggest(e->text, builtins);
    char hint[160];
    snprintf(hint, sizeof hint, near ? "did you mean '%s'?" : "functions: min, max, int, float, sqrt, "
             "exp, log, pow(x, y), ceil, floor, round, abs%s", near ? near : "");
    diag_error(x->diag, loc, hint, "unknown function '%s' (or wrong number of arguments)", e->text);
    return NULL;
}

static ast_node *eval(expander *x, const ast_node *e, const scope *sc, const layer_ctx *lc) {
    if (x->overflowed) return NULL;
    src_loc loc = loc_in(e, lc);
    switch (e->kind) {
    case AST_INT: case AST_FLOAT: case AST_STRING: {
        ast_node *v = new_node(x, e->kind, loc);
        v->ival = e->ival;
        v->fval = e->fval;
        v->text = e->text;
        return v;
    }
    case AST_IDENT: {
        const ast_node *v = lookup(sc, e->text);
        if (!v) {   /* not a variable: an enum symbol or true/false, for sema to judge */
            ast_node *id = new_node(x, AST_IDENT, loc);
            id->text = e->text;
            return id;
        }
        ast_node *copy = ast_clone(x->arena, v);
        copy->loc = loc;
        return copy;
    }
    case AST_LIST: {
        ast_node *list = new_node(x, AST_LIST, loc);
        for (int i = 0; i < e->n_kids; i++) {
            ast_node *v = eval(x, e->kids[i], sc, lc);
            if (v) ast_append(x->arena, list, v);
        }
        return list;
    }
    case AST_MESSAGE: {
        ast_node *msg = new_node(x, AST_MESSAGE, loc);
        scope inner = { NULL, sc };
        layer_ctx plain = *lc;
        plain.last_layer = NULL;   /* fields inside a message are not layers */
        expand_body(x, e, msg, &inner, &plain);
        return msg;
    }
    case AST_UNARY: {
        ast_node *a = eval(x, e->a, sc, lc);
        if (!a) return NULL;
        if (e->op == '!') {
            int ok, t = truth(x, a, &ok);
            return ok ? make_int(x, !t, loc) : NULL;
        }
        if (a->kind == AST_INT) {
            if (a->ival == INT64_MIN) {
                diag_error(x->diag, loc, NULL, "integer overflow in '-'");
                return NULL;
            }
            return make_int(x, -a->ival, loc);
        }
        if (a->kind == AST_FLOAT) return make_float(x, -a->fval, loc);
        diag_error(x->diag, loc, NULL, "'-' needs a number, not a %s", ast_kind_name(a->kind));
        return NULL;
    }
    case AST_BINARY: return eval_binary(x, e, sc, lc);
    case AST_TERNARY: {
        ast_node *c = eval(x, e->a, sc, lc);
        if (!c) return NULL;
        int ok, t = truth(x, c, &ok);
        if (!ok) return NULL;
        return eval(x, t ? e->b : e->c, sc, lc);
    }
    case AST_INDEX: {
        ast_node *list = eval(x, e->a, sc, lc), *idx = eval(x, e->b, sc, lc);
        if (!list || !idx) return NULL;
        if (list->kind != AST_LIST || idx->kind != AST_INT) {
            diag_error(x->diag, loc, NULL, "indexing needs a list and an integer, not %s[%s]",
                       ast_kind_name(list->kind), ast_kind_name(idx->kind));
            return NULL;
        }
        if (idx->ival < 0 || idx->ival >= list->n_kids) {
            diag_error(x->diag, loc, NULL, "index %lld is outside the list (length %d)",
                       (long long)idx->ival, list->n_kids);
            return NULL;
        }
        return list->kids[idx->ival];
    }
    case AST_CALL: return eval_call(x, e, sc, lc);
    default:
        diag_error(x->diag, loc, NULL, "a %s is not a value", ast_kind_name(e->kind));
        return NULL;
    }
}

/* ---- layers and blocks ---- */

static const char *join_name(expander *x, const char *prefix, const char *name) {
    if (!prefix || !*prefix) return ast_arena_strdup(x->arena, name);
    size_t n = strlen(prefix) + strlen(name) + 2;
    char *s = ast_arena_alloc(x->arena, n);
    snprintf(s, n, "%s.%s", prefix, name);
    return s;
}

/* A name written "/name" is global: it keeps no instance or repeat prefix (layer names,
 * `as` prefixes and input references alike). */
static const char *place_name(expander *x, const char *prefix, const char *name) {
    return name[0] == '/' ? ast_arena_strdup(x->arena, name + 1) : join_name(x, prefix, name);
}

static void qualify_reference(expander *x, ast_node *v, const layer_ctx *lc) {
    if (v->kind != AST_STRING) return;
    if (strcmp(v->text, "@in") == 0) v->text = (char *)lc->instance_input;
    else if (strcmp(v->text, "data") == 0) return;   /* the network input, from anywhere */
    else if (v->text[0] == '/') v->text = v->text + 1;
    else v->text = (char *)join_name(x, lc->prefix, v->text);
}

/* Gives an expanded layer its full name and resolves its input references. */
static void finish_layer(expander *x, ast_node *layer_field, const layer_ctx *lc) {
    ast_node *msg = layer_field->a;
    ast_node *name = ast_find_field(msg, "name");
    if (name && name->a->kind == AST_STRING) {
        name->a->text = (char *)place_name(x, lc->prefix, name->a->text);
        *lc->last_layer = name->a->text;
    } else if (!name) {
        /* Unnamed layers are named after their type and source line, stable under edits
         * elsewhere in the spec. */
        char buf[64];
        snprintf(buf, sizeof buf, "%s@%d", layer_field->text, layer_field->loc.line);
        ast_node *f = new_node(x, AST_FIELD, layer_field->loc);
        f->text = "name";
        f->a = make_string(x, join_name(x, lc->prefix, buf), layer_field->loc);
        ast_append(x->arena, msg, f);
        *lc->last_layer = f->a->text;
    }
    for (int i = 0; i < msg->n_kids; i++) {
        ast_node *f = msg->kids[i];
        if (f->kind != AST_FIELD) continue;
        if (strcmp(f->text, "input") == 0) qualify_reference(x, f->a, lc);
        if (strcmp(f->text, "inputs") == 0 && f->a->kind == AST_LIST)
            for (int k = 0; k < f->a->n_kids; k++) qualify_reference(x, f->a->kids[k], lc);
    }
    if (x->pending_input) {
        if (!ast_find_field(msg, "input") && !ast_find_field(msg, "inputs")) {
            ast_node *f = new_node(x, AST_FIELD, x->pending_loc);
            f->text = "input";
            f->a = make_string(x, x->pending_input, x->pending_loc);   /* already a full name */
            ast_append(x->arena, msg, f);
        }
        x->pending_input = NULL;
    }
}

static const ast_node *find_block(const expander *x, const char *name) {
    for (int i = 0; i < x->blocks.n; i++)
        if (strcmp(x->blocks.defs[i]->text, name) == 0) return x->blocks.defs[i];
    return NULL;
}

static void expand_use(expander *x, const ast_node *use, ast_node *out, scope *sc,
                       const layer_ctx *lc) {
    src_loc loc = loc_in(use, lc);
    const ast_node *def = find_block(x, use->text);
    if (!def) {
        const char *names[64];
        int n = 0;
        for (int i = 0; i < x->blocks.n && n < 63; i++) names[n++] = x->blocks.defs[i]->text;
        names[n] = NULL;
        const char *near = diag_suggest(use->text, names);
        char hint[160];
        snprintf(hint, sizeof hint, "did you mean '%s'?", near ? near : "");
        diag_error(x->diag, loc, near ? hint : "define it with: block NAME(params) { ... }",
                   "no block named '%s'", use->text);
        return;
    }
    const ast_node *params = def;   /* BLOCK_DEF keeps its parameters in kids */
    if (use->n_kids != params->n_kids) {
        diag_error(x->diag, loc, NULL, "block '%s' takes %d argument%s, %d given", def->text,
                   params->n_kids, params->n_kids == 1 ? "" : "s", use->n_kids);
        diag_note(x->diag, def->loc, "'%s' is defined here", def->text);
        return;
    }
    if (!lc->last_layer) {
        diag_error(x->diag, loc, "use blocks inside 'net { ... }' or inside another block",
                   "'use' outside a net");
        return;
    }
    if (lc->block_depth >= RESOLVE_MAX_BLOCK_DEPTH) {
        int recursive = 0;
        for (const src_loc *v = &loc; v && !recursive; v = v->via)
            recursive = v->via_block && strcmp(v->via_block, def->text) == 0;
        char hint[200];
        if (recursive)
            snprintf(hint, sizeof hint, "block '%.64s' uses itself without end; stop the recursion "
                     "with an if on one of its parameters", def->text);
        else
            snprintf(hint, sizeof hint, "does a block use itself?");
        diag_error(x->diag, loc, hint, "blocks nested deeper than %d", RESOLVE_MAX_BLOCK_DEPTH);
        return;
    }
    /* Blocks see the globals and their parameters, not the caller's locals. */
    const scope *globals = sc;
    while (globals->parent) globals = globals->parent;
    scope inner = { NULL, globals };
    for (int i = 0; i < use->n_kids; i++) {
        ast_node *v = eval(x, use->kids[i], sc, lc);
        if (!v) return;
        bind(x, &inner, params->kids[i]->text, v);
    }
    layer_ctx sub = *lc;
    if (use->a) {
        ast_node *as = eval(x, use->a, sc, lc);
        if (!as) return;
        if (as->kind != AST_STRING && as->kind != AST_INT) {
            diag_error(x->diag, as->loc, NULL, "'as' needs a string name");
            return;
        }
        sub.prefix = place_name(x, lc->prefix, format_value_for_string(x, as));
    }
    sub.instance_input = *lc->last_layer;
    if (use->b) {   /* `from "layer"`: the instance's input, named as the caller names inputs */
        ast_node *from = eval(x, use->b, sc, lc);
        if (!from) return;
        if (from->kind != AST_STRING) {
            diag_error(x->diag, from->loc, "e.g. use inception(64) from \"pool2\"",
                       "'from' needs a layer name (a string), not a %s", ast_kind_name(from->kind));
            return;
        }
        qualify_reference(x, from, lc);
        sub.instance_input = from->text;
    }
    src_loc *via = ast_arena_alloc(x->arena, sizeof *via);
    *via = loc;
    sub.via = via;
    sub.via_block = def->text;
    sub.block_depth = lc->block_depth + 1;
    const char *outer_pending = x->pending_input;
    src_loc outer_loc = x->pending_loc;
    if (use->b) {
        x->pending_input = sub.instance_input;
        x->pending_loc = loc_in(use->b, lc);
    }
    expand_body(x, def->a, out, &inner, &sub);
    if (use->b && x->pending_input == sub.instance_input) {   /* the block emitted no layer */
        x->pending_input = outer_pending;
        x->pending_loc = outer_loc;
    }
}

static void expand_statement(expander *x, const ast_node *s, ast_node *out, scope *sc,
                             const layer_ctx *lc) {
    switch (s->kind) {
    case AST_FIELD: {
        int is_layer = lc->last_layer && s->a->kind == AST_MESSAGE;
        ast_node *v = eval(x, s->a, sc, lc);
        if (!v) return;
        ast_node *f = new_node(x, AST_FIELD, loc_in(s, lc));
        f->text = s->text;
        f->a = v;
        if (is_layer) finish_layer(x, f, lc);
        ast_append(x->arena, out, f);
        return;
    }
    case AST_LET: {
        ast_node *v = eval(x, s->a, sc, lc);
        if (v) bind(x, sc, s->text, v);
        return;
    }
    case AST_IF: {
        ast_node *c = eval(x, s->a, sc, lc);
        if (!c) return;
        int ok, t = truth(x, c, &ok);
        if (!ok) return;
        const ast_node *branch = t ? s->b : s->c;
        if (!branch) return;
        scope inner = { NULL, sc };
        if (branch->kind == AST_IF) expand_statement(x, branch, out, &inner, lc);
        else expand_body(x, branch, out, &inner, lc);
        return;
    }
    case AST_REPEAT: {
        ast_node *count = eval(x, s->a, sc, lc);
        if (!count) return;
        if (count->kind != AST_INT || count->ival < 0 || count->ival > 100000) {
            diag_error(x->diag, count->loc, NULL,
                       "repeat count must be an integer from 0 to 100000");
            return;
        }
        for (int64_t i = 0; i < count->ival && !x->overflowed && !diag_should_stop(x->diag); i++) {
            scope inner = { NULL, sc };
            bind(x, &inner, s->text, make_int(x, i, s->loc));
            layer_ctx sub = *lc;
            char idx[24];
            snprintf(idx, sizeof idx, "%lld", (long long)i);
            if (lc->last_layer) sub.prefix = join_name(x, lc->prefix, idx);
            expand_body(x, s->b, out, &inner, &sub);
        }
        return;
    }
    case AST_USE:
        expand_use(x, s, out, sc, lc);
        return;
    case AST_BLOCK_DEF:
        return;   /* collected beforehand */
    default:
        diag_error(x->diag, loc_in(s, lc), NULL, "unexpected %s here", ast_kind_name(s->kind));
    }
}

static void expand_body(expander *x, const ast_node *body, ast_node *out, scope *sc,
                        const layer_ctx *lc) {
    for (int i = 0; i < body->n_kids && !x->overflowed && !diag_should_stop(x->diag); i++)
        expand_statement(x, body->kids[i], out, sc, lc);
}

/* Block definitions are global, wherever they appear; a name may be defined once. */
static void collect_blocks(expander *x, const ast_node *msg) {
    for (int i = 0; msg && i < msg->n_kids; i++) {
        ast_node *s = msg->kids[i];
        if (s->kind == AST_BLOCK_DEF) {
            const ast_node *prev = find_block(x, s->text);
            if (prev) {
                diag_error(x->diag, s->loc, "rename one of them", "block '%s' defined twice", s->text);
                diag_note(x->diag, prev->loc, "first defined here");
                continue;
            }
            for (int a = 0; a < s->n_kids; a++)
                for (int b = 0; b < a; b++)
                    if (strcmp(s->kids[a]->text, s->kids[b]->text) == 0)
                        diag_error(x->diag, s->kids[a]->loc, NULL, "parameter '%s' appears twice",
                                   s->kids[a]->text);
            if (x->blocks.n == x->blocks.cap) {
                int cap = x->blocks.cap ? x->blocks.cap * 2 : 8;
                ast_node **defs = ast_arena_alloc(x->arena, sizeof *defs * (size_t)cap);
                if (x->blocks.n) memcpy(defs, x->blocks.defs, sizeof *defs * (size_t)x->blocks.n);
                x->blocks.defs = defs;
                x->blocks.cap = cap;
            }
            x->blocks.defs[x->blocks.n++] = s;
        } else if (s->kind == AST_FIELD && s->a && s->a->kind == AST_MESSAGE) {
            collect_blocks(x, s->a);
        }
    }
}

ast_node *expand_spec(ast_arena *arena, diag_ctx *diag, ast_node *raw) {
    expander x = { .arena = arena, .diag = diag };
    collect_blocks(&x, raw);
    scope globals = { NULL, NULL };
    layer_ctx top = { .prefix = "", .instance_input = "data" };
    ast_node *out = ast_new(arena, AST_MESSAGE, raw->loc);

    /* `vars { name: value ... }` binds globals, in order, and is not part of the result. */
    for (int i = 0; i < raw->n_kids; i++) {
        ast_node *s = raw->kids[i];
        if (s->kind != AST_FIELD || strcmp(s->text, "vars") != 0) continue;
        if (s->a->kind != AST_MESSAGE) {
            diag_error(diag, s->loc, "write vars { name: value ... }", "'vars' must be a message");
            continue;
        }
        for (int k = 0; k < s->a->n_kids; k++) {
            ast_node *v = s->a->kids[k];
            if (v->kind != AST_FIELD) {
                diag_error(diag, v->loc, NULL, "only 'name: value' entries belong in 'vars'");
                continue;
            }
            ast_node *val = eval(&x, v->a, &globals, &top);
            if (val) bind(&x, &globals, v->text, val);
        }
    }
    for (int i = 0; i < raw->n_kids && !x.overflowed; i++) {
        ast_node *s = raw->kids[i];
        if (s->kind == AST_FIELD && strcmp(s->text, "vars") == 0) continue;
        if (s->kind == AST_FIELD && strcmp(s->text, "net") == 0 && s->a->kind == AST_MESSAGE) {
            /* The net's statements are layers, in order; "data" is the network input. */
            const char *last = "data";
            layer_ctx net = top;
            net.last_layer = &last;
            ast_node *msg = ast_new(arena, AST_MESSAGE, s->a->loc);
            scope inner = { NULL, &globals };
            expand_body(&x, s->a, msg, &inner, &net);
            ast_node *f = ast_new(arena, AST_FIELD, s->loc);
            f->text = s->text;
            f->a = msg;
            ast_append(arena, out, f);
            continue;
        }
        expand_statement(&x, s, out, &globals, &top);
    }
    return out;
}
