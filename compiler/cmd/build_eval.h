/* The evaluation resolution at build time (data.val's crop other than net.input_shape): a
 * second schedule lowered at that shape, whose forward model_eval.c holds (both backends;
 * CUDA adds its fused kernels, kernels_eval.cu). */
#ifndef TRAINC_BUILD_EVAL_H
#define TRAINC_BUILD_EVAL_H
#include "lower.h"
#include "sema.h"

/* Lowers res->eval_net into *eval (for CUDA with idents apart from those of train, the
 * training schedule) and appends its run settings (.eval_h, .eval_w, .eval_arena_bytes) to
 * *run_c. Returns 0, or 1 after one error naming spec_path. */
int build_eval_lower(schedule *eval, const sema_result *res, const build_options *opt, const char *spec_path,
                     const ir_net *train, char **run_c);
#endif
