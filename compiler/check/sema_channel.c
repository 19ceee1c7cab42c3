/* Sema of the channel ops: mul (a per-channel gate or an elementwise product), channel_shuffle
 * and channel_slice: their attributes, checks and output shapes. None has parameters or MACs
 * (MACs count conv and linear only). */
#include "sema_internal.h"
#include "sema_value.h"

#include <stdio.h>

static net_shape shape_of(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? net->input : net->layers[idx].out;
}

static const char *name_of(const net_desc *net, int idx) {
    return idx == NET_INPUT_DATA ? "data" : net->layers[idx].name;
}

static int infer_mul(diag_ctx *diag, const net_desc *net, net_layer *L) {
    net_shape x = shape_of(net, L->inputs[0]), g = shape_of(net, L->inputs[1]);
    int gate = g.c == x.c && g.h == 1 && g.w == 1, same = g.c == x.c && g.h == x.h && g.w == x.w;
    if (!gate && !same) {
        char hint[320];
        snprintf(hint, sizeof hint, "'%s' is [%lld, %lld, %lld]; the second input must be [%lld, 1, 1] "
                 "(a per-channel gate, e.g. after gap, conv 1x1 and sigmoid) or [%lld, %lld, %lld]",
                 name_of(net, L->inputs[0]), (long long)x.c, (long long)x.h, (long long)x.w, (long long)x.c,
                 (long long)x.c, (long long)x.h, (long long)x.w);
        diag_error(diag, L->loc, hint, "mul layer '%s': '%s' is [%lld, %lld, %lld], which does not multiply '%s'",
                   L->name, name_of(net, L->inputs[1]), (long long)g.c, (long long)g.h, (long long)g.w,
                   name_of(net, L->inputs[0]));
        return 1;
    }
    L->out = x;
    L->channel.gate = g.h == 1 && g.w == 1;
    return 0;
}

int sema_infer_channel_op(diag_ctx *diag, const net_desc *net, net_layer *L, const ast_node *msg) {
    L->out = L->in;
    switch (L->kind) {
    case NET_MUL: return infer_mul(diag, net, L);
    case NET_CHANNEL_SHUFFLE:
        L->channel.groups = sv_int(msg, SM_CHANNEL_SHUFFLE, "groups");
        if (L->in.c % L->channel.groups) {
            diag_error(diag, sv_loc(msg, SM_CHANNEL_SHUFFLE, "groups"), "groups must divide the channels",
                       "channel_shuffle layer '%s': %lld channels do not split into %lld groups", L->name,
                       (long long)L->in.c, (long long)L->channel.groups);
            return 1;
        }
        return 0;
    case NET_CHANNEL_SLICE: {
        int64_t start = sv_int(msg, SM_CHANNEL_SLICE, "start"), end = sv_int(msg, SM_CHANNEL_SLICE, "end");
        if (end > L->in.c || start >= end) {
            char hint[160];
            snprintf(hint, sizeof hint, "take channels with 0 <= start < end <= %lld", (long long)L->in.c);
            diag_error(diag, sv_loc(msg, SM_CHANNEL_SLICE, end > L->in.c ? "end" : "start"), hint,
                       "channel_slice layer '%s': channels [%lld, %lld) of an input with %lld", L->name,
                       (long long)start, (long long)end, (long long)L->in.c);
            return 1;
        }
        L->channel.start = start;
        L->out.c = end - start;
        return 0;
    }
    default:
        return 1;
    }
}
