/* Gradient buckets: parameters are laid out in reverse schedule order (plan.c), the order
 * in which backward finishes their gradients, so a run of consecutive tensors is one
 * contiguous buffer that is complete at a known point of backward. The trainer all-reduces
 * each bucket as soon as that point is reached, overlapping communication with the rest of
 * backward. */
#include "ir.h"

#include <stdlib.h>

/* One parameter tensor in layout order. */
typedef struct { int op; long offset, count; } param_ref;

static int list_params(const ir_net *net, param_ref *out) {
    int n = 0;
    for (int i = net->n_ops - 1; i >= 0; i--) {   /* the order of ir_layout_params */
        const ir_op *op = &net->ops[i];
        if (op->w_off >= 0) out[n++] = (param_ref){ i, op->w_off, op->w_count };
        if (op->b_off >= 0) out[n++] = (param_ref){ i, op->b_off, op->b_count };
    }
    return n;
}

void ir_plan_buckets(ir_net *net, double bucket_mb) {
    param_ref *p = calloc((size_t)2 * net->n_ops + 1, sizeof *p);
    net->buckets = calloc((size_t)2 * net->n_ops + 1, sizeof *net->buckets);
    if (!p || !net->buckets) {
        fprintf(stderr, "error: out of memory while planning gradient buckets\n");
        exit(1);
    }
    /* MiB, as torch DDP's bucket_cap_mb. */
    double cap_floats = bucket_mb * 1048576.0 / sizeof(float);
    int n = list_params(net, p);
    net->n_buckets = 0;
    ir_bucket *b = NULL;
    for (int t = 0; t < n; t++) {
        if (!b || (double)(p[t].offset + p[t].count - b->offset) > cap_floats) {
            b = &net->buckets[net->n_buckets++];
            *b = (ir_bucket){ .offset = p[t].offset, .first_op = p[t].op, .ready_op = -1 };
        }
        b->count = p[t].offset + p[t].count - b->offset;   /* the span, alignment gaps included */
        b->n_tensors++;
        if (b->ready_op != p[t].op) b->n_layers++;
        b->ready_op = p[t].op;   /* layout order = backward order: the last one decides */
    }
    free(p);
}

void ir_print_buckets(FILE *out, const ir_net *net, double bucket_mb) {
    fprintf(out, "# Gradient buckets (cap %g MiB): all-reduced in this order, each as soon as backward\n"
                 "# has written its last gradient. Offsets and sizes in floats of the gradient buffer.\n",
            bucket_mb);
    fprintf(out, "%-6s %10s %10s %12s %7s  %s\n", "bucket", "offset", "params", "bytes", "tensors",
            "layers (backward order)");
    for (int k = 0; k < net->n_buckets; k++) {
        const ir_bucket *b = &net->buckets[k];
        fprintf(out, "%-6d %10ld %10ld %12ld %7d  ", k, b->offset, b->count, b->count * (long)sizeof(float),
                b->n_tensors);
        if (b->first_op == b->ready_op) fprintf(out, "%s\n", net->ops[b->first_op].name);
        else fprintf(out, "%s .. %s (%d layers)\n", net->ops[b->first_op].name, net->ops[b->ready_op].name,
                     b->n_layers);
    }
    fprintf(out, "%d bucket%s, %ld params, %ld bytes\n", net->n_buckets, net->n_buckets == 1 ? "" : "s",
            net->n_params, net->n_params * (long)sizeof(float));
}
