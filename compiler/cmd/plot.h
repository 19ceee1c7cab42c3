/* Training curves and LR schedules as SVG (plot.c). Both return 0, or 1 after one message
 * on stderr; an existing output file is only replaced by a complete new one. */
#ifndef TRAINC_PLOT_H
#define TRAINC_PLOT_H

#include <stdbool.h>
#include "sema.h"

/* Loss, top-1 and LR of each metrics.jsonl, overlaid, against steps or epochs; the
 * published top-1 (a fraction; <= 0: none) as a dashed line. 860 x 890 pixels. */
int plot_metrics(const char *out_path, const char *const *paths, int n_paths, bool by_epoch, double published_top1);
/* The spec's LR at every step, against epochs. 760 x 370 pixels. */
int plot_lr_schedule(const char *out_path, const sema_result *res);

/* The `trainc plot` command line; exit status 0, 1 (bad input) or 2 (usage). */
int plot_main(int argc, char **argv);

#endif
