/* The init() lines of a conv or linear op, shared by the C and CUDA emitters. */
#ifndef TRAINC_EMIT_INIT_H
#define TRAINC_EMIT_INIT_H

#include <stdio.h>
#include "ir.h"

/* PyTorch's default initialization in one call, or with fillers one call per parameter
 * (weight first, then bias: the same random stream order as the default). */
void emit_init_params(FILE *out, const ir_op *op);

#endif
