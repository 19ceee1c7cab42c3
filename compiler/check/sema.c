/* Sema driver: runs the field check, the net and the run stages in order, and hashes the
 * canonical text (training hash and full text hash). A stage runs only when the ones it
 * reads from succeeded. */
#include "sema.h"
#include "init_match.h"
#include "sema_value.h"

#include <stdlib.h>
#include <string.h>

int sema_analyze(sema_result *res, diag_ctx *diag, const ast_node *root) {
    memset(res, 0, sizeof *res);
    res->root = root;
    res->net.loss_layer = -1;
    if (!root) return 1;
    int net_errors = 0;
    int field_errors = sema_check_fields(diag, root, &net_errors);
    const ast_node *net = sv_msg(root, SM_SPEC, "net");
    /* The net is checked even when other messages have field errors: more useful errors
     * per run. The run stage reads everything, so it needs a clean tree. */
    if (!net || net_errors || sema_build_net(&res->net, diag, net) || field_errors) return 1;
    if (sema_build_run(&res->run, diag, root, &res->net)) return 1;
    if (sema_build_eval_net(res, diag, root)) return 1;
    if (init_sema(diag, root, &res->net)) return 1;   /* init { spec: ... } matches another net */
    char *text = spec_print_to_string(root), *training = spec_print_training_to_string(root);
    if (text && training) {
        rt_sha256_hex(text, strlen(text), res->text_hash);
        rt_sha256_hex(training, strlen(training), res->hash);
    }
    free(text);
    free(training);
    if (!res->hash[0]) return diag_error(diag, root->loc, NULL, "out of memory"), 1;
    return 0;
}

void sema_result_free(sema_result *res) {
    net_desc_free(&res->net);
    if (res->has_eval_net) net_desc_free(&res->eval_net);
}

int sema_load(spec_doc *doc, sema_result *res, diag_ctx *diag, const char *path) {
    memset(res, 0, sizeof *res);
    res->net.loss_layer = -1;
    if (spec_load(doc, diag, path) != 0) return 1;
    return sema_analyze(res, diag, doc->root);
}
