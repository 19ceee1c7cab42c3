/* What one backend's runtime does not run yet, refused by trainc build with the layer and what
 * to do: Swin's windowed attention (attention { window shift }) on CUDA. */
#include "lower.h"

#include <stdio.h>

int refuse_unbuilt(const ir_net *net, const char *spec_path, int cuda) {
    int errors = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind != IR_ATTENTION || op->window == 0 || !cuda) continue;
        fprintf(stderr, "%s:%d: layer \"%s\": windowed attention (window %d%s) has no CUDA op yet\n"
                        "  hint: build it with --backend cpu (runtime/cpu/ops/window_attention.c)\n",
                op->loc.file ? op->loc.file->path : spec_path, op->loc.line, op->name, op->window,
                op->shift ? ", shifted" : "");
        errors++;
    }
    return errors;
}
