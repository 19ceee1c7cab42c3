/* `trainc show --json`'s "trainer" member: what `trainc build` emits for the chosen backend,
 * read from the same lowering (lower.h) — arena bytes, parameter layout and the gradient
 * buckets — so a test can hold the two against each other. */
#include "show.h"

#include <stdio.h>

void show_json_trainer(FILE *out, const char *path, const sema_result *res, const build_options *opt) {
    fputs(",\n  \"trainer\": ", out);
    schedule s;
    if (!res->run.has_run || lower(&s, res, opt, 0, path) != 0) {
        fputs("null\n", out);
        return;
    }
    const ir_net *net = &s.net;
    fprintf(out, "{\"backend\": \"%s\", \"layout\": \"%s\", \"batch\": %d, \"ops\": %d,\n"
                 "    \"arena_bytes\": %ld, \"arena_naive_bytes\": %ld, \"n_params\": %ld, \"param_count\": %ld, "
                 "\"n_buffers\": %ld,\n    \"buckets\": [",
            opt->backend == BACKEND_CUDA ? "cuda" : "cpu", opt->nhwc ? "nhwc" : "nchw", net->batch, net->n_ops,
            net->arena_bytes, net->arena_naive_bytes, net->n_params, net->param_count, net->n_buffers);
    for (int k = 0; k < net->n_buckets; k++)
        fprintf(out, "%s[%ld, %ld]", k ? ", " : "", net->buckets[k].offset, net->buckets[k].count);
    fputs("]}\n", out);
    schedule_free(&s);
}
