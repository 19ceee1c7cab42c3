/* What the C and CUDA emitters share about a planned net: the C names of its values and
 * gradients, where backward writes each input's gradient, and the calls that finish a
 * gradient (accumulation, bucket hand-over), so both backends route gradients alike. */
#ifndef TRAINC_EMIT_NAMES_H
#define TRAINC_EMIT_NAMES_H
#include <stdio.h>
#include "ir.h"

/* The value whose buffer v uses (flatten is a view of its input). */
static inline int ir_root(const ir_net *net, int v) { return net->alias[v]; }
static inline long ir_hw(const ir_op *op) { return (long)op->h * op->w; }
static inline long ir_out_elems(const ir_net *net, const ir_op *op) {
    return (long)net->batch * op->c * ir_hw(op);
}

/* Name of the buffer holding value v ("x" for the input), and of its gradient. */
const char *ir_value_name(const ir_net *net, int v, char *buf, size_t cap);
const char *ir_grad_name(const ir_net *net, int v, char *buf, size_t cap);

/* Where the gradient of input slot k of op j goes: the value's gradient buffer if this is
 * the first (in backward order) consumer to write it, else a scratch buffer that is then
 * accumulated (*needs_acc = 1). Returns "NULL" for the network input, which needs no
 * gradient. */
const char *ir_din_target(const ir_net *net, int j, int k, char *buf, size_t cap, int *needs_acc);

/* `FN(grad, scratch_S, n);`: adds the scratch gradient of input slot k of op j to the
 * value's gradient; fn is the backend's accumulate function. */
void ir_emit_accumulate(FILE *out, const ir_net *net, int j, int k, const char *fn);

/* For every gradient bucket whose last gradient op j just wrote: `CALLk);` with a comment,
 * where call_open is the backend's hand-over call up to its bucket argument. */
void ir_emit_bucket_ready(FILE *out, const ir_net *net, int j, const char *call_open);
#endif
