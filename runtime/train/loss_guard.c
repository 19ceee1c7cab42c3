/* The trainer's divergence test on the step loss (see rt_loss_guard.h). */
#include <math.h>
#include "rt_loss_guard.h"

int rt_loss_guard_step(rt_loss_guard *g, double loss, int loss_scaling) {
    if (isfinite(loss)) {
        g->overflow_run = 0;
        return 0;
    }
    g->overflow_run++;
    return !loss_scaling || g->overflow_run > RT_LOSS_GUARD_MAX_RUN;
}
