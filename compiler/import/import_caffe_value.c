/* Caffe importer: reading protobuf-text values with type checks, errors and notes. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"

ast_node *ic_get(const ast_node *msg, const char *name) {
    return msg ? ast_find_field(msg, name) : NULL;
}

static ast_node *field_node(const ast_node *msg, const char *name) {
    if (!msg) return NULL;
    for (int i = 0; i < msg->n_kids; i++)
        if (msg->kids[i]->kind == AST_FIELD && strcmp(msg->kids[i]->text, name) == 0) return msg->kids[i];
    return NULL;
}

int ic_error(ic_ctx *ic, const ast_node *at, const char *hint, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    src_loc loc = at ? at->loc : (src_loc){ 0 };
    diag_error(ic->diag, loc, hint, "%s", msg);
    return -1;
}

void ic_where(char *buf, size_t cap, const ast_node *at) {
    const char *path = at && at->loc.file ? at->loc.file->path : "?";
    const char *slash = strrchr(path, '/');
    snprintf(buf, cap, "%s:%d", slash ? slash + 1 : path, at ? at->loc.line : 0);
}

static void vnote(ic_ctx *ic, const ast_node *at, const char *prefix, const char *fmt, va_list ap) {
    if (ic->n_notes >= IC_MAX_NOTES) return;
    char msg[512], where[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    ic_where(where, sizeof where, at);
    size_t n = strlen(prefix) + strlen(where) + strlen(msg) + 8;
    char *note = ast_arena_alloc(ic->arena, n);
    snprintf(note, n, "%s%s: %s", prefix, where, msg);
    ic->notes[ic->n_notes++] = note;
}

void ic_note(ic_ctx *ic, const ast_node *at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vnote(ic, at, "", fmt, ap);
    va_end(ap);
}

static int vapproximate(ic_ctx *ic, const ast_node *at, const char *hint, const char *fmt, va_list ap) {
    if (ic->opt->approximate) {
        vnote(ic, at, "approximated: ", fmt, ap);
        ic->n_approximations++;
        return 0;
    }
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return ic_error(ic, at, hint, "%s", msg);
}

int ic_approximate(ic_ctx *ic, const ast_node *at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vapproximate(ic, at,
                          "trainc cannot say this yet; 'trainc import caffe --approximate' uses trainc's own "
                          "behaviour instead and notes each such setting in the spec",
                          fmt, ap);
    va_end(ap);
    return rc;
}

int ic_approximate_hint(ic_ctx *ic, const ast_node *at, const char *hint, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vapproximate(ic, at, hint, fmt, ap);
    va_end(ap);
    return rc;
}

void ic_append(char *buf, size_t cap, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

/* A number, allowing a leading minus (parsed as a unary expression). */
static int number_of(const ast_node *v, double *out, int *is_int) {
    int neg = 0;
    if (v->kind == AST_UNARY && v->op == '-' && v->a) neg = 1, v = v->a;
    if (v->kind == AST_INT) *out = (double)v->ival, *is_int = 1;
    else if (v->kind == AST_FLOAT) *out = v->fval, *is_int = 0;
    else return 0;
    if (neg) *out = -*out;
    return 1;
}

int ic_int(ic_ctx *ic, const ast_node *msg, const char *name, int64_t *out) {
    ast_node *f = field_node(msg, name);
    if (!f) return 0;
    double v;
    int is_int;
    if (!number_of(f->a, &v, &is_int) || !is_int)
        return ic_error(ic, f->a, NULL, "'%s' must be an integer", name);
    *out = (int64_t)v;
    return 1;
}

int ic_float(ic_ctx *ic, const ast_node *msg, const char *name, double *out) {
    ast_node *f = field_node(msg, name);
    if (!f) return 0;
    int is_int;
    if (!number_of(f->a, out, &is_int)) return ic_error(ic, f->a, NULL, "'%s' must be a number", name);
    return 1;
}

int ic_word(ic_ctx *ic, const ast_node *msg, const char *name, const char **out) {
    ast_node *f = field_node(msg, name);
    if (!f) return 0;
    if (f->a->kind != AST_IDENT && f->a->kind != AST_STRING)
        return ic_error(ic, f->a, NULL, "'%s' must be a word or a string", name);
    *out = f->a->text;
    return 1;
}

int ic_bool(ic_ctx *ic, const ast_node *msg, const char *name, int *out) {
    const char *w = NULL;
    int rc = ic_word(ic, msg, name, &w);
    if (rc <= 0) return rc;
    if (strcmp(w, "true") == 0) *out = 1;
    else if (strcmp(w, "false") == 0) *out = 0;
    else return ic_error(ic, ic_get(msg, name), NULL, "'%s' must be true or false", name);
    return 1;
}

int ic_msg(ic_ctx *ic, const ast_node *msg, const char *name, const ast_node **out) {
    ast_node *f = field_node(msg, name);
    if (!f) return 0;
    if (f->a->kind != AST_MESSAGE) return ic_error(ic, f->a, NULL, "'%s' must be a message { ... }", name);
    if (ast_count_fields(msg, name) > 1)
        return ic_error(ic, field_node(msg, name), NULL, "'%s' is given more than once", name);
    *out = f->a;
    return 1;
}

int ic_only_fields(ic_ctx *ic, const ast_node *msg, const char *what, const char *const *known) {
    int bad = 0;
    for (int i = 0; i < msg->n_kids; i++) {
        const ast_node *k = msg->kids[i];
        if (k->kind != AST_FIELD) {
            ic_error(ic, k, "a Caffe prototxt is plain protobuf text", "unexpected %s in %s", ast_kind_name(k->kind),
                     what);
            bad = -1;
            continue;
        }
        int found = 0;
        for (const char *const *n = known; *n; n++) found |= strcmp(*n, k->text) == 0;
        if (found) continue;
        const char *near = diag_suggest(k->text, known);
        char hint[256];
        if (near) snprintf(hint, sizeof hint, "did you mean '%s'?", near);
        else snprintf(hint, sizeof hint, "the importer does not translate it; remove it or write the spec by hand");
        ic_error(ic, k, hint, "%s has a field '%s' that trainc cannot honour", what, k->text);
        bad = -1;
    }
    return bad;
}

const char *ic_num(double v) {
    static char ring[8][32];
    static int next;
    char *buf = ring[next++ % 8];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, sizeof ring[0], "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}
