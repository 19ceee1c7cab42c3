/* Syntax tree of a spec: protobuf-text messages plus trainc's extensions (include, blocks,
 * repeat, if, let). Every node carries the file, line and column it came from.
 *
 * After resolve (resolve.h) a tree holds only AST_MESSAGE, AST_FIELD, AST_LIST and the literal
 * kinds (AST_INT, AST_FLOAT, AST_STRING, AST_IDENT): includes are spliced, `extends` is merged,
 * blocks are expanded and every expression has been evaluated. Sema reads that resolved form. */
#ifndef TRAINC_AST_H
#define TRAINC_AST_H

#include <stdint.h>
#include <stddef.h>

typedef struct src_file src_file;
typedef struct src_loc src_loc;

/* A position in a spec. `via` chains the block instantiations that produced a node
 * (innermost first); the include/extends chain lives in the file itself. */
struct src_loc {
    const src_file *file;
    int line, col;              /* 1-based */
    const src_loc *via;         /* `use` statement that expanded this node, or NULL */
    const char *via_block;      /* name of the block instantiated there */
};

/* A loaded spec file and where it was pulled in from (NULL for the root file). */
struct src_file {
    char *path;                 /* as written by the user or joined to the includer's dir */
    char *text;                 /* whole contents, NUL-terminated */
    size_t len;
    const char *how;            /* "included" or "extended", for diagnostics */
    src_loc from;               /* the include/extends statement; from.file NULL for root */
    src_file *next;             /* all files of one load, for freeing */
};

typedef enum {
    /* values */
    AST_INT, AST_FLOAT, AST_STRING, AST_IDENT, AST_LIST, AST_MESSAGE,
    /* expressions (gone after resolve) */
    AST_UNARY, AST_BINARY, AST_TERNARY, AST_INDEX, AST_CALL,
    /* statements inside a message body */
    AST_FIELD, AST_INCLUDE, AST_BLOCK_DEF, AST_USE, AST_REPEAT, AST_IF, AST_LET,
    AST_KIND_COUNT
} ast_kind;

typedef struct ast_node ast_node;
/* One node shape for all kinds; which members are used depends on `kind`:
 *   INT: ival (text = literal)     FLOAT: fval (text = literal)     STRING: text (unescaped)
 *   IDENT: text                    LIST: kids = items               MESSAGE: kids = statements
 *   UNARY: op, a                   BINARY: op, a, b                 TERNARY: a ? b : c
 *   INDEX: a[b]                    CALL: text(kids)
 *   FIELD: text = field name, a = value
 *   INCLUDE: text = path           LET: text = name, a = value
 *   BLOCK_DEF: text = name, kids = parameter IDENTs, a = body MESSAGE
 *   USE: text = block name, kids = arguments, a = `as` prefix expression or NULL,
 *        b = `from` input-layer expression or NULL
 *   REPEAT: text = loop variable, a = count, b = body MESSAGE
 *   IF: a = condition, b = then-body MESSAGE, c = else-body MESSAGE/IF or NULL */
struct ast_node {
    ast_kind kind;
    src_loc loc;
    int op;                     /* operator token for UNARY/BINARY (e.g. '+', OP_EQ) */
    int64_t ival;
    double fval;
    char *text;
    ast_node **kids;
    int n_kids, cap_kids;
    ast_node *a, *b, *c;
};

/* Operators beyond single characters. */
enum { OP_EQ = 256, OP_NE, OP_LE, OP_GE, OP_AND, OP_OR };

/* All nodes and strings of one load live in an arena freed at once. */
typedef struct ast_arena ast_arena;
ast_arena *ast_arena_new(void);
void ast_arena_free(ast_arena *arena);
void *ast_arena_alloc(ast_arena *arena, size_t bytes);
char *ast_arena_strdup(ast_arena *arena, const char *s);
char *ast_arena_strndup(ast_arena *arena, const char *s, size_t n);

ast_node *ast_new(ast_arena *arena, ast_kind kind, src_loc loc);
void ast_append(ast_arena *arena, ast_node *parent, ast_node *kid);
ast_node *ast_clone(ast_arena *arena, const ast_node *node);

/* Lookup helpers over a resolved MESSAGE. */
ast_node *ast_find_field(const ast_node *msg, const char *name);   /* first FIELD named */
int ast_count_fields(const ast_node *msg, const char *name);
const char *ast_kind_name(ast_kind kind);

#endif
