/* Reading spec files: load a file's text and parse it into a syntax tree (ast.h). */
#ifndef TRAINC_PARSE_H
#define TRAINC_PARSE_H

#include "ast.h"
#include "diag.h"

/* Flex's bison-bridge names the token value and location types without our prefix. */
#define YYSTYPE SPEC_YYSTYPE
#define YYLTYPE SPEC_YYLTYPE

/* Deepest nesting of braces, brackets and parentheses a spec may use. */
#define PARSE_MAX_DEPTH 200
/* Largest spec file accepted, so a wrong path (a dataset, a binary) fails fast. */
#define PARSE_MAX_FILE_BYTES (8u << 20)

typedef struct parse_ctx {
    diag_ctx *diag;
    ast_arena *arena;
    src_file *file;
    int depth;                  /* current bracket nesting, checked by the lexer */
    ast_node *root;             /* result: the file's top-level MESSAGE */
} parse_ctx;

/* Reads `path` into a src_file (owned by arena). `how`/`from` record the include chain.
 * Reports unreadable, oversized or directory paths as errors at `from` and returns NULL. */
src_file *source_load(ast_arena *arena, diag_ctx *diag, const char *path, const char *how,
                      src_loc from);

/* Parses a loaded file. Returns its top-level MESSAGE, or NULL if it had syntax errors. */
ast_node *parse_source(ast_arena *arena, diag_ctx *diag, src_file *file);

/* Location helper for the lexer and parser. */
src_loc parse_loc(const parse_ctx *ctx, int line, int col);

#endif
