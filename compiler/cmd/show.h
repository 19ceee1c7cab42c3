/* Reports over an analysed spec: `trainc show` (table and JSON) and `trainc diff`. */
#ifndef TRAINC_SHOW_H
#define TRAINC_SHOW_H

#include <stdio.h>
#include "sema.h"
#include "lower.h"

void show_table(FILE *out, const char *path, const sema_result *res);
/* JSON of the analysed spec, ending with "trainer": what `build` emits for opt's backend
 * (show_trainer.c). */
void show_json(FILE *out, const char *path, const sema_result *res, const build_options *opt);
/* The "trainer" member: the lowered schedule's arena, parameters and buckets (null when the
 * spec has no run or cannot be lowered), preceded by ",\n". */
void show_json_trainer(FILE *out, const char *path, const sema_result *res, const build_options *opt);
/* Prints the fields and derived quantities that differ, one `path: a -> b` per line;
 * returns how many differ (0 = the same run). */
int diff_results(FILE *out, const sema_result *a, const sema_result *b);

/* `show --device-memory GiB`: the largest per-rank batch whose planned device memory fits
 * (show_devmem.c); 0 on success, 1 for a spec without a trainer. */
int show_device_memory(FILE *out, const char *path, const sema_result *res, double gib);

/* Shared formatting: shortest round-trip decimal of v (always a '.' or exponent). */
void show_format_float(char *buf, size_t cap, double v);

#endif
