/* The spec's `init` block (init_match.c): load the source spec, match layers by name with
 * shape checks, and emit the trainer's rt_init_config. */
#ifndef TRAINC_INIT_MATCH_H
#define TRAINC_INIT_MATCH_H

#include <stdbool.h>
#include "ir.h"
#include "sema.h"

typedef struct {
    const ast_node *init;     /* the init message, NULL: none */
    char path[4096];          /* init.spec resolved against the file it is written in */
    spec_doc doc;
    sema_result res;
    int loaded;
} init_source;

/* Loads and analyses init.spec (if the spec has an init block); errors are reported. */
int init_load_source(init_source *src, diag_ctx *diag, const ast_node *root);
void init_source_free(init_source *src);
/* Every layer with weights matches one of the source (or is listed fresh); fresh and
 * freeze name layers with weights. Returns the number of errors reported. */
int init_check(diag_ctx *diag, const init_source *src, const net_desc *net);
/* init_load_source + init_check, for sema. */
int init_sema(diag_ctx *diag, const ast_node *root, const net_desc *net);
bool init_lists(const ast_node *init, const char *field, const char *name);
/* The `.init = &(const rt_init_config){...},` member of the run config ("" without an init
 * block), malloc'd; NULL with a message in err. */
char *init_emit_config(const sema_result *res, const ir_net *dest, int cuda, char *err, size_t cap);

#endif
