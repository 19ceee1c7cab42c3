/* Which backend honours which data.train.augment recipe feature (build_augment.c). */
#ifndef TRAINC_BUILD_AUGMENT_H
#define TRAINC_BUILD_AUGMENT_H
#include "run_config.h"

/* 0, or 1 after one clear message on stderr for a feature no backend implements. */
int augment_backend_check(const char *spec_path, const run_config *run);

#endif
