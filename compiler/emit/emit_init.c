/* Emits the initialization of conv and linear parameters: PyTorch's default, or the spec's
 * fillers (Caffe's formulas, with the fan chosen by variance_norm computed here). */
#include "emit_init.h"
#include "emit_names.h"

#include <math.h>

static double fan_of(const ir_op *op, net_fan fan) {
    if (fan == NET_FAN_OUT) return (double)op->fan_out;
    if (fan == NET_FAN_AVERAGE) return (op->fan_in + op->fan_out) / 2.0;
    return (double)op->fan_in;
}

static void emit_one(FILE *out, const ir_op *op, const char *what, long n, const net_filler *f, int is_bias) {
    const char *id = op->ident;
    double fan = fan_of(op, f->fan);
    switch (f->kind) {
    case NET_FILL_TORCH:
        if (is_bias) {
            double bound = 1.0 / sqrt((double)op->fan_in);
            fprintf(out, "    rt_init_uniform(%s_%s, %ld, %s, %s, &r);   /* torch: +-1/sqrt(fan_in %ld) */\n", id,
                    what, n, c_float(-bound), c_float(bound), op->fan_in);
        } else {
            fprintf(out, "    rt_init_kaiming_uniform(%s_%s, %ld, %ld, 2.2360679774997898, &r);   /* torch default, a = sqrt(5) */\n", id,
                    what, n, op->fan_in);
        }
        break;
    case NET_FILL_CONSTANT: fprintf(out, "    rt_init_const(%s_%s, %ld, %s);\n", id, what, n, c_float(f->value)); break;
    case NET_FILL_UNIFORM:
        fprintf(out, "    rt_init_uniform(%s_%s, %ld, %s, %s, &r);\n", id, what, n, c_float(f->min), c_float(f->max));
        break;
    case NET_FILL_GAUSSIAN:
        fprintf(out, "    rt_init_normal(%s_%s, %ld, %s, %s, &r);\n", id, what, n, c_float(f->mean), c_float(f->std));
        break;
    case NET_FILL_XAVIER:
        fprintf(out, "    rt_init_uniform(%s_%s, %ld, %s, %s, &r);   /* xavier: +-sqrt(3/%g) */\n", id, what, n,
                c_float(-sqrt(3.0 / fan)), c_float(sqrt(3.0 / fan)), fan);
        break;
    case NET_FILL_MSRA:
        fprintf(out, "    rt_init_normal(%s_%s, %ld, 0.0f, %s, &r);   /* msra: sqrt(2/%g) */\n", id, what, n,
                c_float(sqrt(2.0 / fan)), fan);
        break;
    }
}

void emit_init_params(FILE *out, const ir_op *op) {
    int has_bias = op->b_off >= 0;
    if (op->wfill.kind == NET_FILL_TORCH && (!has_bias || op->bfill.kind == NET_FILL_TORCH)) {
        fprintf(out, "    rt_init_torch_default(%s_weight, %ld, %s%s, %ld, %ld, &r);\n", op->ident, op->w_count,
                has_bias ? op->ident : "NULL", has_bias ? "_bias" : "", has_bias ? op->b_count : 0, op->fan_in);
        return;
    }
    emit_one(out, op, "weight", op->w_count, &op->wfill, 0);
    if (has_bias) emit_one(out, op, "bias", op->b_count, &op->bfill, 1);
}
