/* Semantic analysis of a resolved spec: every field checked against the schema, the net
 * resolved and shape-checked into a net_desc (net.h), the run settled into a run_config
 * (run_config.h), and the spec hash computed. Errors go through diag; counts, not aborts. */
#ifndef TRAINC_SEMA_H
#define TRAINC_SEMA_H

#include "ast.h"
#include "diag.h"
#include "net.h"
#include "resolve.h"
#include "run_config.h"
#include "rt_sha256.h"

typedef struct sema_result {
    net_desc net;
    run_config run;
    /* The net again at the evaluation resolution (run.eval_h x run.eval_w, data.val's crop),
     * when it differs from net.input_shape: same layers and parameters, other shapes. */
    net_desc eval_net;
    bool has_eval_net;
    /* The run's identity, which gates resume: SHA-256 of the canonical text less the fields
     * that do not change training (spec_print_training_to_string). */
    char hash[RT_SHA256_HEX_LEN + 1];
    char text_hash[RT_SHA256_HEX_LEN + 1];   /* SHA-256 of the whole canonical text */
    const ast_node *root;               /* the resolved tree it was computed from */
} sema_result;

/* Analyses a resolved tree. Returns 0 when the spec is valid; otherwise errors were reported
 * and the result is partial (free it all the same). */
int sema_analyze(sema_result *res, diag_ctx *diag, const ast_node *root);
void sema_result_free(sema_result *res);

/* spec_load + sema_analyze: what every command runs first. */
int sema_load(spec_doc *doc, sema_result *res, diag_ctx *diag, const char *path);

/* The stages, exposed for tests. Each returns the number of errors it reported.
 * sema_check_fields also reports how many of them were inside `net` (may be NULL). */
int sema_check_fields(diag_ctx *diag, const ast_node *root, int *net_errors);
int sema_build_net(net_desc *net, diag_ctx *diag, const ast_node *net_msg);
/* The same at another input shape (input = NULL: net.input_shape). */
int sema_build_net_at(net_desc *net, diag_ctx *diag, const ast_node *net_msg, const net_shape *input);
/* res->eval_net when res->run asks for an evaluation resolution (sema_eval.c). */
int sema_build_eval_net(sema_result *res, diag_ctx *diag, const ast_node *root);
int sema_build_run(run_config *run, diag_ctx *diag, const ast_node *root, const net_desc *net);

#endif
