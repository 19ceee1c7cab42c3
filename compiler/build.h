/* `trainc build` and `trainc emit`: spec → generated C → trainer binary. */
#ifndef TRAINC_BUILD_H
#define TRAINC_BUILD_H

/* Writes model.c and plan.txt for the spec into emit_dir. Returns 0 or 1 (errors reported). */
int build_emit(const char *spec_path, const char *emit_dir, int quiet);
/* build_emit into emit_dir (default OUT_BIN.src), then compiles and links OUT_BIN. */
int build_binary(const char *spec_path, const char *out_bin, const char *emit_dir);
#endif
