/* Names of a schedule's values, gradients and constants in generated code (emit_names.h). */
#include "emit_names.h"

#include <string.h>

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

const char *ir_din_target(const ir_net *net, int j, int k, char *buf, size_t cap) {
    switch (ir_route(net, j, k)) {
    case GRAD_NONE: return "NULL";
    case GRAD_SCRATCH: snprintf(buf, cap, "scratch_%d", net->scratch_of[j * IR_MAX_INPUTS + k]); return buf;
    case GRAD_WRITE: case GRAD_ADD: case GRAD_SHARED: break;
    }
    return ir_grad_name(net, net->ops[j].in[k], buf, cap);
}

const char *c_float(double v) {
    static char bufs[16][40];
    static int next;
    char *b = bufs[next++ % 16];
    int n = snprintf(b, 36, "%.9g", v);
    if (strspn(b, "-0123456789") == (size_t)n) memcpy(b + n, ".0", 3), n += 2;
    b[n] = 'f', b[n + 1] = '\0';
    return b;
}
