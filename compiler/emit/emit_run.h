/* C text of a trainer's rt_run_config, from sema's run_config. */
#ifndef TRAINC_EMIT_RUN_H
#define TRAINC_EMIT_RUN_H
#include <stdio.h>
#include "run_config.h"

/* Returns the malloc'd body of a designated initializer, or NULL with a reason in err. */
char *emit_run_config(const run_config *run, char *err, size_t err_cap);
#endif
