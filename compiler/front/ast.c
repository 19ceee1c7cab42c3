/* Syntax-tree nodes, the arena they live in, and small lookups over messages. */
#include "ast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chunks of at least 64 KiB; each allocation is 16-byte aligned. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_chunk;

struct ast_arena {
    arena_chunk *head;
};

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "error: out of memory (%zu bytes) while reading the spec\n", n);
        exit(1);
    }
    return p;
}

ast_arena *ast_arena_new(void) {
    ast_arena *arena = xmalloc(sizeof *arena);
    arena->head = NULL;
    return arena;
}

void ast_arena_free(ast_arena *arena) {
    if (!arena) return;
    arena_chunk *c = arena->head;
    while (c) {
        arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    free(arena);
}

void *ast_arena_alloc(ast_arena *arena, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    arena_chunk *c = arena->head;
    if (!c || c->cap - c->used < bytes) {
        size_t cap = bytes > 65536 ? bytes : 65536;
        c = xmalloc(sizeof *c + cap);
        c->used = 0;
        c->cap = cap;
        c->next = arena->head;
        arena->head = c;
    }
    void *p = c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

char *ast_arena_strndup(ast_arena *arena, const char *s, size_t n) {
    char *p = ast_arena_alloc(arena, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *ast_arena_strdup(ast_arena *arena, const char *s) {
    return s ? ast_arena_strndup(arena, s, strlen(s)) : NULL;
}

ast_node *ast_new(ast_arena *arena, ast_kind kind, src_loc loc) {
    ast_node *n = ast_arena_alloc(arena, sizeof *n);
    n->kind = kind;
    n->loc = loc;
    return n;
}

void ast_append(ast_arena *arena, ast_node *parent, ast_node *kid) {
    if (parent->n_kids == parent->cap_kids) {
        int cap = parent->cap_kids ? parent->cap_kids * 2 : 4;
        ast_node **kids = ast_arena_alloc(arena, sizeof *kids * (size_t)cap);
        if (parent->n_kids) memcpy(kids, parent->kids, sizeof *kids * (size_t)parent->n_kids);
        parent->kids = kids;
        parent->cap_kids = cap;
    }
    parent->kids[parent->n_kids++] = kid;
}

ast_node *ast_clone(ast_arena *arena, const ast_node *node) {
    if (!node) return NULL;
    ast_node *copy = ast_new(arena, node->kind, node->loc);
    copy->op = node->op;
    copy->ival = node->ival;
    copy->fval = node->fval;
    copy->text = node->text;   /* strings are immutable once in the arena */
    for (int i = 0; i < node->n_kids; i++) ast_append(arena, copy, ast_clone(arena, node->kids[i]));
    copy->a = ast_clone(arena, node->a);
    copy->b = ast_clone(arena, node->b);
    copy->c = ast_clone(arena, node->c);
    return copy;
}

ast_node *ast_find_field(const ast_node *msg, const char *name) {
    if (!msg) return NULL;
    for (int i = 0; i < msg->n_kids; i++) {
        ast_node *k = msg->kids[i];
        if (k->kind == AST_FIELD && strcmp(k->text, name) == 0) return k;
    }
    return NULL;
}

int ast_count_fields(const ast_node *msg, const char *name) {
    int n = 0;
    for (int i = 0; msg && i < msg->n_kids; i++)
        if (msg->kids[i]->kind == AST_FIELD && strcmp(msg->kids[i]->text, name) == 0) n++;
    return n;
}

const char *ast_kind_name(ast_kind kind) {
    static const char *const names[] = {
        "integer", "number", "string", "identifier", "list", "message",
        "expression", "expression", "expression", "index expression", "call",
        "field", "include", "block", "use", "repeat", "if", "let",
    };
    _Static_assert(sizeof names / sizeof names[0] == AST_KIND_COUNT, "one name per ast_kind");
    return (unsigned)kind < AST_KIND_COUNT ? names[kind] : "?";
}
