/* Sema: a conv or linear layer's weight_filler / bias_filler (schema message "filler"). */
#ifndef TRAINC_SEMA_FILLER_H
#define TRAINC_SEMA_FILLER_H

#include "diag.h"
#include "net.h"
#include "schema.h"

/* Reads weight_filler and bias_filler of a layer message of schema id `id`; absent ones are
 * NET_FILL_TORCH. A field the filler's type does not use, or a bias_filler on a layer with
 * bias: false, is an error (returns 1). */
int sema_read_fillers(diag_ctx *diag, const ast_node *layer, schema_msg_id id, bool bias, net_filler *weight,
                      net_filler *bias_filler);
/* One filler field of a layer (the learned layer's weight_filler); absent: NET_FILL_TORCH. */
int sema_read_filler(diag_ctx *diag, const ast_node *layer, schema_msg_id id, const char *field, net_filler *out);
/* Reads lr_mult and decay_mult (sema_mult.c): [weight, bias], default 1 each; one value sets the
 * weight's only; more values than the layer has blobs is an error (returns 1). */
int sema_read_mults(diag_ctx *diag, const ast_node *layer, schema_msg_id id, bool bias, double lr_mult[2],
                    double decay_mult[2]);

#endif
