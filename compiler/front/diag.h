/* Diagnostics: `file:line:col: error: message`, the source line, a caret, an optional hint,
 * and the include/extends and block-instantiation chain. Errors are counted, not fatal. */
#ifndef TRAINC_DIAG_H
#define TRAINC_DIAG_H

#include <stdio.h>
#include "ast.h"

#define DIAG_MAX_ERRORS 20

typedef struct diag_ctx {
    FILE *out;                  /* stderr normally; a memory stream in tests */
    int n_errors;
    int stopped;                /* set once DIAG_MAX_ERRORS were reported */
} diag_ctx;

void diag_init(diag_ctx *diag, FILE *out);
/* Reports an error at loc (loc.file may be NULL for errors about the command line).
 * hint may be NULL. Returns 0 so callers can `return diag_error(...)`. */
int diag_error(diag_ctx *diag, src_loc loc, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A note attached to the previous error ("first defined here"). */
void diag_note(diag_ctx *diag, src_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* True once the error limit was reached: passes should stop early. */
int diag_should_stop(const diag_ctx *diag);

/* Closest candidate to `word` among `candidates` (NULL-terminated) by edit distance,
 * or NULL when nothing is close enough to suggest. */
const char *diag_suggest(const char *word, const char *const *candidates);

#endif
