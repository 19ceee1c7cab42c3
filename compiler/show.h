/* Reports over an analysed spec: `trainc show` (table and JSON) and `trainc diff`. */
#ifndef TRAINC_SHOW_H
#define TRAINC_SHOW_H

#include <stdio.h>
#include "sema.h"

void show_table(FILE *out, const char *path, const sema_result *res);
void show_json(FILE *out, const char *path, const sema_result *res);
/* Prints the fields and derived quantities that differ, one `path: a -> b` per line;
 * returns how many differ (0 = the same run). */
int diff_results(FILE *out, const sema_result *a, const sema_result *b);

/* Shared formatting: shortest round-trip decimal of v (always a '.' or exponent). */
void show_format_float(char *buf, size_t cap, double v);

#endif
