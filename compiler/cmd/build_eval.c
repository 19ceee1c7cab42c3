/* The evaluation resolution at build time (build_eval.h): lower() once more, at the eval shape. */
#include "build_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int build_eval_lower(schedule *eval, const sema_result *res, const build_options *opt, const char *spec_path,
                     char **run_c) {
    const run_config *run = &res->run;
    if (opt->backend == BACKEND_CUDA) {
        fprintf(stderr, "%s: error: evaluation at %lldx%lld, another resolution than net.input_shape (%lldx%lld), is "
                        "not implemented by the CUDA backend\n"
                        "  hint: build with --backend cpu, or set data.val.center_crop to the input size\n",
                spec_path, (long long)run->eval_h, (long long)run->eval_w, (long long)res->net.input.h,
                (long long)res->net.input.w);
        return 1;
    }
    sema_result at_eval = *res;   /* the same run, the net at the eval shape */
    at_eval.net = res->eval_net;
    if (lower(eval, &at_eval, opt, 0, spec_path) != 0) return 1;
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
