/* What check and show count but no backend's runtime runs yet, refused by trainc build with
 * the layer and what to do: Swin's windowed attention (attention { window shift }), whose
 * parameters and MACs specs/models/swin_t.spec states exactly. */
#include "lower.h"

#include <stdio.h>

int refuse_unbuilt(const ir_net *net, const char *spec_path) {
    int errors = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind != IR_ATTENTION || op->window == 0) continue;
        fprintf(stderr, "%s:%d: layer \"%s\": windowed attention (window %d%s) has no runtime op yet: check and show "
                        "count it, trainc build cannot train it\n"
                        "  hint: global attention over a token sequence (attention without window) is built\n",
                op->loc.file ? op->loc.file->path : spec_path, op->loc.line, op->name, op->window,
                op->shift ? ", shifted" : "");
        errors++;
    }
    return errors;
}
