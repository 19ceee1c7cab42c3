/* The channel ops' calls, the same on both backends but for the runtime's prefix: mul (an SE
 * gate, or an elementwise product), channel_shuffle and channel_slice. Channels-last (CUDA
 * --layout nhwc) a tensor is N*H*W rows of C channels at one position each, which shuffle and
 * slice take as it is; a gate, one value per image and channel, needs the layout named. */
#include "emit.h"
#include "emit_names.h"

/* "BATCH, C, HW", or channels-last "BATCH * HWL, C, 1". */
static const char *rows_of(const emitter *e, const ir_op *op, int c, char *buf, size_t cap) {
    if (e->s->opt.nhwc) snprintf(buf, cap, "BATCH * %ldL, %d, 1", ir_hw(op), c);
    else snprintf(buf, cap, "BATCH, %d, %ld", c, ir_hw(op));
    return buf;
}

void emit_channel_op(emitter *e, int j, int backward, const char *prefix) {
    const ir_net *net = e->net;
    const ir_op *op = &net->ops[j];
    FILE *out = e->out;
    const char *id = op->ident;
    int cuda = prefix[0] != '\0';
    char a[128], b[128], da[128], db[128], rows[64], shape[96];
    const char *in = ir_value_name(net, op->in[0], a, sizeof a);
    switch (op->kind) {
    case IR_MUL: {
        const char *g = ir_value_name(net, op->in[1], b, sizeof b);
        /* a gate: [C] per image over HW positions; else elementwise, C*HW values per image */
        if (op->mul_gate) snprintf(shape, sizeof shape, "BATCH, %d, %ld", op->c, ir_hw(op));
        else snprintf(shape, sizeof shape, "BATCH, %d, 1", op->c * (int)ir_hw(op));
        const char *layout = !cuda ? "" : op->mul_gate && e->s->opt.nhwc ? ", 1" : ", 0";
        if (!backward)
            fprintf(out, "    %schannel_mul_forward(%s_out, %s, %s, %s%s);\n", prefix, id, in, g, shape, layout);
        else
            fprintf(out, "    %schannel_mul_backward(%s, %s, %s_dout, %s, %s, %s%s);\n", prefix,
                    ir_din_target(net, j, 0, da, sizeof da), ir_din_target(net, j, 1, db, sizeof db), id, in, g,
                    shape, layout);
        return;
    }
    case IR_CHANNEL_SHUFFLE:
        if (!backward)
            fprintf(out, "    %schannel_shuffle_forward(%s_out, %s, %s, %d);\n", prefix, id, in,
                    rows_of(e, op, op->c, rows, sizeof rows), op->groups);
        else
            fprintf(out, "    %schannel_shuffle_backward(%s, %s_dout, %s, %d);\n", prefix,
                    ir_din_target(net, j, 0, da, sizeof da), id, rows_of(e, op, op->c, rows, sizeof rows), op->groups);
        return;
    case IR_CHANNEL_SLICE:
        if (op->tokens) {   /* select_token: rows of T tokens, one per (image, channel) */
            snprintf(rows, sizeof rows, "BATCH * %d, %d, 1", op->c, op->in_h);
            if (!backward)
                fprintf(out, "    %schannel_slice_forward(%s_out, %s, %s, %d, 1);\n", prefix, id, in, rows, op->ch_start);
            else
                fprintf(out, "    %schannel_slice_backward(%s, %s_dout, %s, %d, 1);\n", prefix,
                        ir_din_target(net, j, 0, da, sizeof da), id, rows, op->ch_start);
            return;
        }
        if (!backward)
            fprintf(out, "    %schannel_slice_forward(%s_out, %s, %s, %d, %d);\n", prefix, id, in,
                    rows_of(e, op, op->in_c, rows, sizeof rows), op->ch_start, op->c);
        else
            fprintf(out, "    %schannel_slice_backward(%s, %s_dout, %s, %d, %d);\n", prefix,
                    ir_din_target(net, j, 0, da, sizeof da), id, rows_of(e, op, op->in_c, rows, sizeof rows),
                    op->ch_start, op->c);
        return;
    default:
        fprintf(out, "    /* emit_channel_op: not a channel op */\n");
        return;
    }
}
