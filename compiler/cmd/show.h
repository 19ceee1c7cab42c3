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
/* Prints the training fields, layers (by stage; every layer's field with full_layers) and
 * derived quantities (with formulas) that differ, the LR at both schedules' landmarks, and
 * the descriptive fields apart; returns how many training differences (0 = the same run). */
int diff_results(FILE *out, const sema_result *a, const sema_result *b, int full_layers);

/* `show --schedule`: the lowered schedule op by op with every choice lower() made for the
 * backend and layout (show_schedule.c); 0, or 1 for a spec without a trainer. */
int show_schedule(FILE *out, const char *path, const sema_result *res, const build_options *opt);
/* `show --device-memory GiB`: the largest per-rank batch whose planned device memory fits
 * (show_devmem.c); 0 on success, 1 for a spec without a trainer. */
int show_device_memory(FILE *out, const char *path, const sema_result *res, double gib, int nhwc);

/* `show --gpu-cost`: the CUDA step's kernels and library calls with their bytes, FLOPs and
 * modeled time on device (h100, h200, a100), then totals and a summary line starting with
 * label (or path) (show_gpu_cost.c); 0, or 1 for an unknown device, a spec without a CUDA
 * trainer, or a schedule with ops the model lacks (named on stderr). */
int show_gpu_cost(FILE *out, const char *path, const sema_result *res, const char *device, const build_options *opt,
                  int old_kernels, const char *label);

/* The spec's reference block (published result), after the run; nothing without one
 * (show_reference.c). The JSON form is a "reference" member, null without one. */
void show_reference(FILE *out, const run_config *r);
/* The modern-recipe data path and loss on one line, only when one is on (show_recipe.c). */
void show_recipe(FILE *out, const run_config *r);
void show_reference_json(FILE *out, const run_config *r);

/* Shared formatting: shortest round-trip decimal of v (always a '.' or exponent). */
void show_format_float(char *buf, size_t cap, double v);

#endif
