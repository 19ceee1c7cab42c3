/* How the emitter names what a schedule holds: the C names of values and gradients, the
 * target of each input's gradient (from its route), and float constants spelled as C. */
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

/* Where backward writes the gradient of input slot k of op j, by its route: "NULL" for the
 * network input, scratch_N for GRAD_SCRATCH (the emitter accumulates it afterwards), else
 * the value's gradient buffer. */
const char *ir_din_target(const ir_net *net, int j, int k, char *buf, size_t cap);

/* v as a C float constant: "%.9g", with ".0" where that would read as an integer, and 'f'
 * ("1.0f", "0.899999976f", "1e-05f"). Returns one of 16 rotating buffers, so up to 16 may
 * appear in one printf. */
const char *c_float(double v);
#endif
