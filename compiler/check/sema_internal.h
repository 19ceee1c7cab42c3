/* Shared between the sema stages; not part of sema's public interface. */
#ifndef TRAINC_SEMA_INTERNAL_H
#define TRAINC_SEMA_INTERNAL_H

#include "diag.h"
#include "net.h"
#include "schema.h"

/* The schema message of each layer kind, indexed by net_kind. */
extern const schema_msg_id sema_layer_msg[];

/* Fills attributes, output shape, params, MACs and activation bytes of net->layers[i], whose
 * inputs are resolved and have shapes. Returns nonzero after reporting an error. */
int sema_infer_layer(diag_ctx *diag, net_desc *net, int i, const ast_node *msg, schema_msg_id sm);

/* mul, channel_shuffle, channel_slice (sema_channel.c): attributes and output shape of L,
 * whose inputs have shapes in[0..n_inputs). Returns nonzero after reporting an error. */
int sema_infer_channel_op(diag_ctx *diag, const net_desc *net, net_layer *L, const ast_node *msg);
/* tokens, learned, select_token, attention and concat along tokens (sema_token.c): the same,
 * with their parameters and MACs. */
int sema_infer_token_op(diag_ctx *diag, const net_desc *net, net_layer *L, const ast_node *msg);

/* reshape and stop_gradient (sema_view.c): their output shape, checked. */
int sema_infer_view_op(diag_ctx *diag, net_layer *L, const ast_node *msg);

/* C*H*W*4 with overflow checks; reports at loc naming `what`. bytes may be NULL. */
int sema_shape_bytes(diag_ctx *diag, src_loc loc, const char *what, net_shape s, int64_t *bytes);

#endif
