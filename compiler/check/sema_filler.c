/* Sema: fillers (Caffe's initializers) of conv and linear layers. Each type reads only its
 * own fields; any other given is refused rather than ignored. */
#include "sema_filler.h"

#include <string.h>

#include "sema_value.h"

static const char *const fill_names[] = { "", "CONSTANT", "UNIFORM", "GAUSSIAN", "XAVIER", "MSRA" };
static const char *const fan_names[] = { "FAN_IN", "FAN_OUT", "AVERAGE" };
/* the fields each type reads, after "type" */
static const char *const fill_fields[][3] = {
    [NET_FILL_CONSTANT] = { "value" }, [NET_FILL_UNIFORM] = { "min", "max" },
    [NET_FILL_GAUSSIAN] = { "mean", "std" }, [NET_FILL_XAVIER] = { "variance_norm" },
    [NET_FILL_MSRA] = { "variance_norm" },
};

static int read_filler(diag_ctx *diag, const ast_node *layer, schema_msg_id id, const char *field, net_filler *out) {
    memset(out, 0, sizeof *out);
    const ast_node *m = sv_msg(layer, id, field);
    if (!m) return 0;
    out->kind = (net_fill_kind)SV_ENUM(m, SM_FILLER, "type", fill_names);
    for (int i = 0; i < m->n_kids; i++) {
        const char *name = m->kids[i]->text;
        int used = strcmp(name, "type") == 0;
        for (int k = 0; k < 3 && fill_fields[out->kind][k]; k++) used |= strcmp(name, fill_fields[out->kind][k]) == 0;
        if (!used) {
            diag_error(diag, m->kids[i]->loc, "each filler type reads its own fields: CONSTANT value; UNIFORM min, "
                       "max; GAUSSIAN mean, std; XAVIER and MSRA variance_norm",
                       "filler type %s does not use '%s'", fill_names[out->kind], name);
            return 1;
        }
    }
    out->value = sv_float(m, SM_FILLER, "value");
    out->min = sv_float(m, SM_FILLER, "min");
    out->max = sv_float(m, SM_FILLER, "max");
    out->mean = sv_float(m, SM_FILLER, "mean");
    out->std = sv_float(m, SM_FILLER, "std");
    out->fan = (net_fan)SV_ENUM(m, SM_FILLER, "variance_norm", fan_names);
    if (out->kind == NET_FILL_UNIFORM && out->min > out->max) {
        diag_error(diag, m->loc, "give min <= max", "uniform filler with min %g > max %g", out->min, out->max);
        return 1;
    }
    return 0;
}

int sema_read_fillers(diag_ctx *diag, const ast_node *layer, schema_msg_id id, bool bias, net_filler *weight,
                      net_filler *bias_filler) {
    if (read_filler(diag, layer, id, "weight_filler", weight) || read_filler(diag, layer, id, "bias_filler", bias_filler))
        return 1;
    if (!bias && bias_filler->kind != NET_FILL_TORCH) {
        diag_error(diag, sv_loc(layer, id, "bias_filler"), "remove bias_filler, or set bias: true",
                   "a bias_filler on a layer without a bias (bias: false)");
        return 1;
    }
    return 0;
}

int sema_read_filler(diag_ctx *diag, const ast_node *layer, schema_msg_id id, const char *field, net_filler *out) {
    return read_filler(diag, layer, id, field, out);
}
