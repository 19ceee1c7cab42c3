/* Resolving a spec: splice `include`s, merge `extends` bases with field-level overrides,
 * expand parameterized blocks, repeats and conditionals, and evaluate every expression.
 * The result is a plain tree of messages, fields, lists and literals (see ast.h). */
#ifndef TRAINC_RESOLVE_H
#define TRAINC_RESOLVE_H

#include <stdio.h>
#include "ast.h"
#include "diag.h"

#define RESOLVE_MAX_INCLUDE_DEPTH 32
#define RESOLVE_MAX_BLOCK_DEPTH 64
#define RESOLVE_MAX_NODES 1000000     /* stops specs that expand without bound */

typedef struct spec_doc {
    ast_arena *arena;
    const char *path;
    ast_node *root;             /* resolved top-level MESSAGE, NULL after errors */
} spec_doc;

/* Loads, parses and resolves the spec at path. Returns 0 on success; otherwise the errors
 * were reported through diag and doc->root is NULL. Free with spec_doc_free either way. */
int spec_load(spec_doc *doc, diag_ctx *diag, const char *path);
/* Same, from memory (used by the fuzzer); `include`/`extends` resolve relative to the cwd. */
int spec_load_buffer(spec_doc *doc, diag_ctx *diag, const char *name, const char *data, size_t len);
void spec_doc_free(spec_doc *doc);

/* Internal stages, exposed for tests. */
ast_node *resolve_includes_and_extends(ast_arena *arena, diag_ctx *diag, src_file *file);
ast_node *expand_spec(ast_arena *arena, diag_ctx *diag, ast_node *raw);

/* Prints a resolved tree in canonical text form (one field per line, fixed indentation,
 * numbers in shortest round-trip form). Two specs that resolve alike print alike; the
 * text hash is the SHA-256 of this text. */
void spec_print(FILE *out, const ast_node *root);
char *spec_print_to_string(const ast_node *root);   /* malloc'd */
/* The same without the top-level fields that do not change training (name, description,
 * reference): the text of the training hash that gates resume. malloc'd. */
char *spec_print_training_to_string(const ast_node *root);

#endif
