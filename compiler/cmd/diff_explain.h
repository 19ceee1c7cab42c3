/* The explaining half of `trainc diff` (diff_explain.c): derived values with the formula
 * that produced them, the LR at each schedule's landmarks side by side, and layer changes
 * summarized by stage and block instance with parameter and MAC deltas. */
#ifndef TRAINC_DIFF_EXPLAIN_H
#define TRAINC_DIFF_EXPLAIN_H

#include <stdio.h>
#include "sema.h"

/* One difference between the flattened specs; a or b is NULL where the path is absent. */
typedef struct {
    const char *path, *a, *b;
} diff_change;

/* Numbers as diff prints them: the shortest decimal that reads back as the value rounded to
 * 15 significant digits, so 0.1 x 14336 / 256 prints 5.6, not 5.6000000000000005. */
void diff_format_number(char *buf, size_t cap, double v);

/* derived.* lines: "derived.peak_lr: 0.1625 -> 5.2" then each side's formula; returns how
 * many derived values differ. */
int diff_explain_derived(FILE *out, const sema_result *a, const sema_result *b);
/* The LR of both runs at the landmarks of either (start, warmup end, drops, peak, end). */
void diff_explain_lr(FILE *out, const run_config *a, const run_config *b);
/* Layer changes: per stage (the name's first component), block count and type, params and
 * MACs when they differ; field changes grouped per stage ("net[\"layer1.*\"].momentum:
 * 0.1 -> 0.05 (10 layers)"); layers one net adds inside blocks both have (drop-path), one line
 * per kind, with the inputs that only route around them; layers outside stages one by one.
 * Returns lines printed. */
int diff_explain_layers(FILE *out, const sema_result *a, const sema_result *b,
                        const diff_change *changes, int n);

#endif
