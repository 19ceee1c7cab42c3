/* Ending every rank with one message: for failures all ranks detect together (a handshake
 * mismatch, a diverged loss they all computed), rank 0 prints and the rest stay quiet. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "comm_internal.h"
#include "rt_core.h"

void rt_comm_die_all(rt_comm *c, const char *hint, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!c) rt_die_hint(hint, "%s", msg);
    comm_progress_stop(&c->progress);   /* MPI_Finalize below wants no other thread in MPI */
    if (c->rank == 0) {
        fflush(stdout);
        fprintf(stderr, "error: %s\n", msg);
        if (hint && hint[0]) fprintf(stderr, "HINT: %s\n", hint);
        fflush(stderr);
    }
    /* Nobody leaves before rank 0 has printed: a launcher kills the rest at the first exit. */
    rt_comm_barrier(c, "the shutdown after an error");
    MPI_Finalize();
    exit(1);
}
