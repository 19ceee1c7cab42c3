/* What the CUDA backend does not run yet, refused at build with the layer and what to do
 * (the CPU backend runs all of it). */
#include "lower.h"
#include "rt_ops.h"   /* RT_ATTN_CUDA_MAX_HEAD */

#include <stdio.h>

int cuda_refuse_unsupported(const ir_net *net, const char *spec_path, int nhwc) {
    int errors = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        const char *what = NULL;
        if (op->kind == IR_BN && op->bn_frozen && nhwc) what = "bn use_global_stats: true with --layout nhwc";
        /* token sequences are [C, T, 1] channel-major; channels-last would make them token-major */
        if (nhwc && (op->kind == IR_ATTENTION || op->kind == IR_LEARNED || op->tokens || op->kind == IR_SPACE_TO_DEPTH ||
                     (op->kind == IR_FLATTEN && op->h > 1 && op->w == 1)))
            what = "a token layer (tokens, learned, select_token, attention, concat along tokens) with --layout nhwc";
        /* a reshape to a shape with positions reads the values in [C, H, W] order: stored channels-last,
         * it would be a transpose, not a view */
        else if (nhwc && op->kind == IR_FLATTEN && op->h * op->w > 1)
            what = "a reshape to a shape with positions (stored channels-last it is a transpose, not a view) with "
                   "--layout nhwc";
        if (op->kind == IR_ATTENTION && op->c / op->heads > RT_ATTN_CUDA_MAX_HEAD)
            what = "attention with heads wider than 64 channels (the CUDA kernels keep a head's row in shared memory)";
        if (!what) continue;
        fprintf(stderr, "%s:%d: layer \"%s\": %s is not implemented by the CUDA backend\n"
                        "  hint: build it with --backend cpu%s\n",
                op->loc.file ? op->loc.file->path : spec_path, op->loc.line, op->name, what,
                op->kind == IR_ATTENTION && op->c / op->heads > RT_ATTN_CUDA_MAX_HEAD ? ", or with more heads"
                : nhwc ? ", or without --layout nhwc" : "");
        errors++;
    }
    return errors;
}
