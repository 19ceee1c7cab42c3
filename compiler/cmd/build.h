/* `trainc build` and `trainc emit`: spec → generated C → trainer binary. */
#ifndef TRAINC_BUILD_H
#define TRAINC_BUILD_H

#include "lower.h"   /* build_options */

/* Writes model.c and plan.txt for the spec into emit_dir. Returns 0 or 1 (errors reported). */
int build_emit(const char *spec_path, const char *emit_dir, int quiet);
/* build_emit into emit_dir (default OUT_BIN.src), then compiles and links OUT_BIN. */
int build_binary(const char *spec_path, const char *out_bin, const char *emit_dir);
/* The same with a backend: CUDA writes model.c, kernels.cu, kernels.h and plan.txt. */
int build_emit_opts(const char *spec_path, const char *emit_dir, int quiet, const build_options *opt);
int build_binary_opts(const char *spec_path, const char *out_bin, const char *emit_dir, const build_options *opt);
/* Compiles emit_dir's CUDA sources with the toolchain recorded in BUILD_DIR/cuda.env (written
 * by `make cuda`), links OUT_BIN against BUILD_DIR's runtime and HOME's headers; run executes
 * one command. build_cuda.c. */
/* The libraries a trainer needs beyond the runtime's (BIN.src/link_libs.txt, written with
 * the sources): space-separated into out, "" when none. */
int build_link_libs(const char *emit_dir, char *out, size_t cap);
int build_cuda_binary(const char *home, const char *build_dir, const char *emit_dir, const char *out_bin,
                      int (*run)(char *const argv[]));
#endif
