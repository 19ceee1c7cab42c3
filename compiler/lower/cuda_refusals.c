/* What the CUDA backend does not run yet, refused at build with the layer and what to do
 * (the CPU backend runs all of it). */
#include "lower.h"

#include <stdio.h>

int cuda_refuse_unsupported(const ir_net *net, const char *spec_path) {
    int errors = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        const char *what = NULL;
        if (op->kind == IR_LRN && op->lrn_within) what = "lrn region WITHIN_CHANNEL";
        if (op->kind == IR_BN && op->bn_frozen) what = "bn use_global_stats: true";
        if (!what) continue;
        fprintf(stderr, "%s:%d: layer \"%s\": %s is not implemented by the CUDA backend\n"
                        "  hint: build it with --backend cpu\n",
                op->loc.file ? op->loc.file->path : spec_path, op->loc.line, op->name, what);
        errors++;
    }
    return errors;
}
