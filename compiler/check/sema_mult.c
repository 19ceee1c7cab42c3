/* Sema: a conv or linear layer's Caffe multipliers lr_mult / decay_mult, one per parameter
 * blob in Caffe's order: [weight, bias]. */
#include "sema_filler.h"

#include "sema_value.h"

static int read_mult(diag_ctx *diag, const ast_node *layer, schema_msg_id id, const char *field, bool bias,
                     double out[2]) {
    out[0] = out[1] = 1.0;
    const ast_node *list = sv_get(layer, id, field);
    if (!list) return 0;
    int blobs = bias ? 2 : 1;
    if (list->n_kids < 1 || list->n_kids > blobs) {
        diag_error(diag, list->loc, bias ? "give [weight, bias] or one value for the weight"
                                         : "the layer has bias: false, so give one value, for the weight",
                   "%s needs 1 to %d values, not %d", field, blobs, list->n_kids);
        return 1;
    }
    for (int i = 0; i < list->n_kids; i++) out[i] = sv_number(list->kids[i]);
    return 0;
}

int sema_read_mults(diag_ctx *diag, const ast_node *layer, schema_msg_id id, bool bias, double lr_mult[2],
                    double decay_mult[2]) {
    return read_mult(diag, layer, id, "lr_mult", bias, lr_mult) ||
           read_mult(diag, layer, id, "decay_mult", bias, decay_mult);
}
