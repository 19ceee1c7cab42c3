/* The evaluation resolution at build time (build_eval.h): lower() once more, at the eval shape. */
#include "build_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUDA: the eval schedule's fused kernels (kernels_eval.cu) are linked beside the training
 * schedule's, named after op idents: the eval ops' idents get a prefix no training op's
 * ident starts the same name with ("eval_", else "eval2_", ...), so no launcher is named twice. */
static void prefix_idents(ir_net *eval, const ir_net *train) {
    char prefix[16];
    for (int k = 1;; k++) {
        if (k == 1) snprintf(prefix, sizeof prefix, "eval_");
        else snprintf(prefix, sizeof prefix, "eval%d_", k);
        int clash = 0;
        for (int i = 0; i < train->n_ops && !clash; i++)
            clash = strncmp(train->ops[i].ident, prefix, strlen(prefix)) == 0;
        if (!clash) break;
    }
    for (int i = 0; i < eval->n_ops; i++) {
        char id[sizeof eval->ops[i].ident];
        if (snprintf(id, sizeof id, "%s%s", prefix, eval->ops[i].ident) >= (int)sizeof id)
            snprintf(id, sizeof id, "%s%d", prefix, i);   /* too long: its index, as no ident starts with a digit */
        memcpy(eval->ops[i].ident, id, sizeof id);
    }
}

int build_eval_lower(schedule *eval, const sema_result *res, const build_options *opt, const char *spec_path,
                     const ir_net *train, char **run_c) {
    const run_config *run = &res->run;
    sema_result at_eval = *res;   /* the same run, the net at the eval shape */
    at_eval.net = res->eval_net;
    if (lower(eval, &at_eval, opt, 0, spec_path) != 0) return 1;
    ir_plan_forward_only(&eval->net);   /* it runs no backward: its arena holds the forward's tensors */
    if (opt->backend == BACKEND_CUDA) choose_conv_bn(eval, 0);   /* forward only: no fused statistics */
    if (opt->backend == BACKEND_CUDA) prefix_idents(&eval->net, train);
    char line[160];
    snprintf(line, sizeof line, "    .eval_h = %lld, .eval_w = %lld, .eval_arena_bytes = %ld,\n", (long long)run->eval_h,
             (long long)run->eval_w, eval->net.arena_bytes);
    size_t n = strlen(*run_c), m = strlen(line);
    char *both = realloc(*run_c, n + m + 1);
    if (!both) return 1;
    memcpy(both + n, line, m + 1);
    *run_c = both;
    return 0;
}
