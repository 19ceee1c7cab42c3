/* Fills the templates of templates/ (embedded into trainc at build time): @KEY@ tokens. */
#ifndef TRAINC_TEMPLATE_H
#define TRAINC_TEMPLATE_H
#include <stdio.h>

typedef struct {
    const char *key;    /* without the @s */
    const char *value;
} template_var;

/* The embedded text of templates/NAME (e.g. "model_header.c.in"), or NULL. */
const char *template_text(const char *name);

/* Writes templates/NAME to out with every @KEY@ replaced by its value. Every placeholder
 * must have a value and every value a placeholder; otherwise returns -1 after naming the
 * problem on stderr (a compiler bug, never a user error). */
int template_fill(FILE *out, const char *name, const template_var *vars, int n_vars);
#endif
