/* Resolve, first half: load files, splice `include`s and merge `extends` bases. */
#include "resolve.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

typedef struct load_stack {
    const char *real;               /* realpath of a file being loaded */
    const char *shown;              /* its path as the user wrote it, for messages */
    const struct load_stack *up;
} load_stack;

/* "a.spec -> b.inc -> a.spec": the files from the first load of `cycle_start` down to the
 * innermost one (stack), then `path` again, which closes the cycle. */
static void format_cycle(char *buf, size_t cap, const load_stack *stack,
                         const load_stack *cycle_start, const char *path) {
    const load_stack *chain[RESOLVE_MAX_INCLUDE_DEPTH + 2];
    int n = 0;
    for (const load_stack *s = stack; s && n < RESOLVE_MAX_INCLUDE_DEPTH + 1; s = s->up) {
        chain[n++] = s;
        if (s == cycle_start) break;
    }
    size_t k = 0;
    buf[0] = '\0';
    for (int i = n - 1; i >= 0 && k < cap; i--)
        k += (size_t)snprintf(buf + k, cap - k, "%s -> ", chain[i]->shown);
    if (k < cap) snprintf(buf + k, cap - k, "%s", path);
}

typedef struct resolver {
    ast_arena *arena;
    diag_ctx *diag;
} resolver;

static ast_node *load_raw(resolver *r, const char *path, const char *how, src_loc from,
                          const load_stack *stack, int depth);

/* Joins a path written in `file` to that file's directory. */
static char *path_relative_to(resolver *r, const src_file *file, const char *path) {
    if (path[0] == '/' || !file) return ast_arena_strdup(r->arena, path);
    char *copy = ast_arena_strdup(r->arena, file->path);
    const char *dir = dirname(copy);
    size_t n = strlen(dir) + strlen(path) + 2;
    char *joined = ast_arena_alloc(r->arena, n);
    if (strcmp(dir, ".") == 0) snprintf(joined, n, "%s", path);
    else snprintf(joined, n, "%s/%s", dir, path);
    return joined;
}

/* Replaces every INCLUDE statement in msg (and in nested bodies) by the included
 * file's statements. */
static void splice_includes(resolver *r, ast_node *msg, const load_stack *stack, int depth) {
    if (!msg) return;
    if (msg->kind != AST_MESSAGE) {
        for (int i = 0; i < msg->n_kids; i++) splice_includes(r, msg->kids[i], stack, depth);
        splice_includes(r, msg->a, stack, depth);
        splice_includes(r, msg->b, stack, depth);
        splice_includes(r, msg->c, stack, depth);
        return;
    }
    ast_node **old = msg->kids;
    int n_old = msg->n_kids;
    msg->kids = NULL;
    msg->n_kids = msg->cap_kids = 0;
    for (int i = 0; i < n_old; i++) {
        ast_node *s = old[i];
        if (s->kind != AST_INCLUDE) {
            splice_includes(r, s, stack, depth);
            ast_append(r->arena, msg, s);
            continue;
        }
        char *path = path_relative_to(r, s->loc.file, s->text);
        ast_node *inc = load_raw(r, path, "included", s->loc, stack, depth + 1);
        if (!inc) continue;
        for (int k = 0; k < inc->n_kids; k++) {
            if (inc->kids[k]->kind == AST_FIELD && strcmp(inc->kids[k]->text, "extends") == 0) {
                diag_error(r->diag, inc->kids[k]->loc, "use 'extends' only in the spec that derives",
                           "'extends' inside an included file");
                continue;
            }
            ast_append(r->arena, msg, inc->kids[k]);
        }
    }
}

static const char *literal_name(const ast_node *msg) {
    if (!msg || msg->kind != AST_MESSAGE) return NULL;
    ast_node *f = ast_find_field(msg, "name");
    return f && f->a && f->a->kind == AST_STRING ? f->a->text : NULL;
}

static void merge_messages(resolver *r, ast_node *base, const ast_node *derived);

/* The base statement that a derived FIELD overrides, or NULL (then it is appended). Messages
 * with a `name` match the base message of the same field and name (e.g. a layer); other
 * messages match the only base field of that name; scalars match the first. */
static ast_node *find_override_target(ast_node *base, const ast_node *field) {
    const char *name = literal_name(field->a);
    ast_node *match = NULL;
    int count = 0;
    for (int i = 0; i < base->n_kids; i++) {
        ast_node *b = base->kids[i];
        if (b->kind != AST_FIELD || strcmp(b->text, field->text) != 0) continue;
        if (name) {
            const char *bn = literal_name(b->a);
            if (bn && strcmp(bn, name) == 0) return b;
            continue;
        }
        if (!match) match = b;
        count++;
    }
    if (name) return NULL;
    if (field->a && field->a->kind == AST_MESSAGE && count != 1) return NULL;
    return match;
}

static void remove_fields_named(ast_node *msg, const char *name, const ast_node *keep) {
    int w = 0;
    for (int i = 0; i < msg->n_kids; i++) {
        ast_node *k = msg->kids[i];
        if (k != keep && k->kind == AST_FIELD && strcmp(k->text, name) == 0) continue;
        msg->kids[w++] = k;
    }
    msg->n_kids = w;
}

static void merge_messages(resolver *r, ast_node *base, const ast_node *derived) {
    for (int i = 0; i < derived->n_kids; i++) {
        ast_node *d = derived->kids[i];
        if (d->kind == AST_FIELD) {
            ast_node *target = find_override_target(base, d);
            if (!target) {
                ast_append(r->arena, base, d);
            } else if (d->a->kind == AST_MESSAGE && target->a->kind == AST_MESSAGE) {
                merge_messages(r, target->a, d->a);
            } else {
                target->a = d->a;
                target->loc = d->loc;
                if (d->a->kind != AST_MESSAGE) remove_fields_named(base, d->text, target);
            }
        } else if (d->kind == AST_BLOCK_DEF) {
            int replaced = 0;
            for (int k = 0; k < base->n_kids; k++) {
                ast_node *b = base->kids[k];
                if (b->kind == AST_BLOCK_DEF && strcmp(b->text, d->text) == 0) {
                    base->kids[k] = d;
                    replaced = 1;
                }
            }
            if (!replaced) ast_append(r->arena, base, d);
        } else {
            ast_append(r->arena, base, d);
        }
    }
}

/* Applies a top-level `extends: "base.spec"`: the base (itself resolved the same way) with
 * the derived statements merged over it. */
static ast_node *apply_extends(resolver *r, ast_node *root, const load_stack *stack, int depth) {
    ast_node *ext = NULL;
    for (int i = 0; i < root->n_kids; i++) {
        ast_node *k = root->kids[i];
        if (k->kind != AST_FIELD || strcmp(k->text, "extends") != 0) continue;
        if (ext) {
            diag_error(r->diag, k->loc, "a spec extends at most one base; use include for more",
                       "'extends' given twice");
            return root;
        }
        ext = k;
    }
    if (!ext) return root;
    if (!ext->a || ext->a->kind != AST_STRING) {
        diag_error(r->diag, ext->loc, "write extends: \"path/to/base.spec\"",
                   "'extends' needs a string path");
        return root;
    }
    char *path = path_relative_to(r, ext->loc.file, ext->a->text);
    ast_node *base = load_raw(r, path, "extended", ext->loc, stack, depth + 1);
    if (!base) return root;
    remove_fields_named(root, "extends", NULL);
    merge_messages(r, base, root);
    return base;
}

static ast_node *load_raw(resolver *r, const char *path, const char *how, src_loc from,
                          const load_stack *stack, int depth) {
    if (depth > RESOLVE_MAX_INCLUDE_DEPTH) {
        diag_error(r->diag, from, NULL, "include/extends nested deeper than %d files",
                   RESOLVE_MAX_INCLUDE_DEPTH);
        return NULL;
    }
    char real[PATH_MAX];
    if (realpath(path, real)) {
        for (const load_stack *s = stack; s; s = s->up)
            if (strcmp(s->real, real) == 0) {
                int ext = strcmp(how, "extended") == 0;
                if (s == stack) {
                    diag_error(r->diag, from, "remove the cycle", "'%s' %s itself (cycle)", path,
                               ext ? "extends" : "includes");
                } else {
                    char cycle[2048], hint[160];
                    format_cycle(cycle, sizeof cycle, stack, s, path);
                    snprintf(hint, sizeof hint, "remove one of these %s so that no file pulls itself in",
                             ext ? "extends" : "includes");
                    diag_error(r->diag, from, hint, "%s cycle: %s", ext ? "extends" : "include",
                               cycle);
                }
                return NULL;
            }
    } else {
        snprintf(real, sizeof real, "%s", path);
    }
    src_file *file = source_load(r->arena, r->diag, path, how, from);
    if (!file) return NULL;
    ast_node *root = parse_source(r->arena, r->diag, file);
    if (!root) return NULL;
    load_stack here = { real, path, stack };
    splice_includes(r, root, &here, depth);
    return apply_extends(r, root, &here, depth);
}

ast_node *resolve_includes_and_extends(ast_arena *arena, diag_ctx *diag, src_file *file) {
    resolver r = { arena, diag };
    ast_node *root = parse_source(arena, diag, file);
    if (!root) return NULL;
    char real[PATH_MAX];
    if (!realpath(file->path, real)) snprintf(real, sizeof real, "%s", file->path);
    load_stack here = { real, file->path, NULL };
    splice_includes(&r, root, &here, 0);
    return apply_extends(&r, root, &here, 0);
}

static int finish_load(spec_doc *doc, diag_ctx *diag, src_file *file) {
    int errors_before = diag->n_errors;
    ast_node *raw = resolve_includes_and_extends(doc->arena, diag, file);
    if (raw && diag->n_errors == errors_before) doc->root = expand_spec(doc->arena, diag, raw);
    if (diag->n_errors > errors_before) doc->root = NULL;
    return doc->root ? 0 : -1;
}

int spec_load(spec_doc *doc, diag_ctx *diag, const char *path) {
    doc->arena = ast_arena_new();
    doc->path = path;
    doc->root = NULL;
    src_loc none = { 0 };
    src_file *file = source_load(doc->arena, diag, path, "given", none);
    if (!file) return -1;
    return finish_load(doc, diag, file);
}

int spec_load_buffer(spec_doc *doc, diag_ctx *diag, const char *name, const char *data, size_t len) {
    doc->arena = ast_arena_new();
    doc->path = name;
    doc->root = NULL;
    src_file *file = ast_arena_alloc(doc->arena, sizeof *file);
    file->path = ast_arena_strdup(doc->arena, name);
    file->text = ast_arena_strndup(doc->arena, data, len);
    file->len = len;
    file->how = "given";
    return finish_load(doc, diag, file);
}

void spec_doc_free(spec_doc *doc) {
    ast_arena_free(doc->arena);
    doc->arena = NULL;
    doc->root = NULL;
}
