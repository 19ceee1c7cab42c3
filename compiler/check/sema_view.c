/* Sema of reshape and stop_gradient: the layers that pass their input's values on unchanged
 * (reshape sees them as another [C, H, W]; stop_gradient only cuts the backward). Neither has
 * parameters or MACs. */
#include "sema_internal.h"
#include "sema_value.h"

#include <stdio.h>

/* reshape { shape: [C, H, W] }: 0 keeps the input's size at that position, -1 (once) takes
 * what the others leave; the sizes must multiply to the input's C*H*W. */
static int infer_reshape(diag_ctx *diag, net_layer *L, const ast_node *msg) {
    const ast_node *s = sv_get(msg, SM_RESHAPE, "shape");
    if (!s || s->kind != AST_LIST || s->n_kids != 3) return 1;   /* the schema checked it */
    int64_t in[3] = { L->in.c, L->in.h, L->in.w }, out[3], size = in[0] * in[1] * in[2], known = 1;
    int infer = -1;
    char given[96], from[96];
    snprintf(given, sizeof given, "[%lld, %lld, %lld]", (long long)s->kids[0]->ival, (long long)s->kids[1]->ival,
             (long long)s->kids[2]->ival);
    snprintf(from, sizeof from, "[%lld, %lld, %lld]", (long long)in[0], (long long)in[1], (long long)in[2]);
    for (int k = 0; k < 3; k++) {
        out[k] = s->kids[k]->ival == 0 ? in[k] : s->kids[k]->ival;
        if (out[k] != -1) {
            known *= out[k];   /* each size is at most I32 (the schema): three fit in int64 */
            continue;
        }
        if (infer >= 0) {
            diag_error(diag, sv_loc(msg, SM_RESHAPE, "shape"), "give every size but one (-1 infers a single one)",
                       "reshape layer '%s': shape %s has more than one -1", L->name, given);
            return 1;
        }
        infer = k;
    }
    if (infer >= 0 && size % known == 0) out[infer] = size / known, known = size;
    if (known != size) {
        char hint[200];
        snprintf(hint, sizeof hint, "the input %s has %lld values per image; give sizes that multiply to that",
                 from, (long long)size);
        diag_error(diag, sv_loc(msg, SM_RESHAPE, "shape"), hint,
                   "reshape layer '%s': shape %s does not hold the input's %lld values per image", L->name, given,
                   (long long)size);
        return 1;
    }
    L->out = (net_shape){ out[0], out[1], out[2] };
    return 0;
}

int sema_infer_view_op(diag_ctx *diag, net_layer *L, const ast_node *msg) {
    L->out = L->in;
    if (L->kind == NET_RESHAPE) return infer_reshape(diag, L, msg);
    return 0;   /* stop_gradient: the input's shape */
}
