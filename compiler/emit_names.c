/* Names and gradient routing shared by the C and CUDA emitters (see emit_names.h). */
#include "emit_names.h"

const char *ir_value_name(const ir_net *net, int v, char *buf, size_t cap) {
    v = ir_root(net, v);
    if (v == 0) return "x";
    snprintf(buf, cap, "%s_out", net->ops[v - 1].ident);
    return buf;
}

const char *ir_grad_name(const ir_net *net, int v, char *buf, size_t cap) {
    snprintf(buf, cap, "%s_dout", net->ops[ir_root(net, v) - 1].ident);
    return buf;
}

const char *ir_din_target(const ir_net *net, int j, int k, char *buf, size_t cap, int *needs_acc) {
    int v = ir_root(net, net->ops[j].in[k]);
    *needs_acc = 0;
    if (v == 0) return "NULL";
    int s = net->scratch_of[j * IR_MAX_INPUTS + k];
    if (s >= 0) {
        snprintf(buf, cap, "scratch_%d", s);
        *needs_acc = 1;
        return buf;
    }
    return ir_grad_name(net, v, buf, cap);
}

void ir_emit_accumulate(FILE *out, const ir_net *net, int j, int k, const char *fn) {
    int v = ir_root(net, net->ops[j].in[k]);
    char g[128];
    fprintf(out, "    %s(%s, scratch_%d, %ld);\n", fn, ir_grad_name(net, v, g, sizeof g),
            net->scratch_of[j * IR_MAX_INPUTS + k], ir_value_elems(net, v));
}

void ir_emit_bucket_ready(FILE *out, const ir_net *net, int j, const char *call_open) {
    for (int k = 0; k < net->n_buckets; k++)
        if (net->buckets[k].ready_op == j)
            fprintf(out, "    %s%d);  /* bucket %d complete: %ld grads from \"%s\" to here */\n", call_open, k, k,
                    net->buckets[k].count, net->ops[net->buckets[k].first_op].name);
}
