/* rt_comm.h for a runtime built without MPI (make WITH_MPI=0, e.g. a GPU machine with no Open
 * MPI): the world always has one rank, so every exchange is a no-op, as runtime/mpi/'s are
 * for a NULL rt_comm. A process that a launcher started as one of several ranks stops with a
 * message instead of training alone on a slice of the data. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt_comm.h"
#include "rt_core.h"

rt_comm *rt_comm_init(void) {
    if (rt_comm_launched()) {
        char ranks[32] = "several";
        if (rt_launcher_ranks() > 1) snprintf(ranks, sizeof ranks, "%ld", rt_launcher_ranks());
        rt_die_hint("rebuild trainc and the runtime with Open MPI (apt-get install libopenmpi-dev, then "
                    "make), or start one process without mpirun/srun",
                    "this trainer was built without MPI (WITH_MPI=0), but the launcher started it as "
                    "one of %s ranks", ranks);
    }
    return NULL;
}

void rt_comm_finalize(rt_comm *c) { (void)c; }
int rt_comm_rank(const rt_comm *c) { (void)c; return 0; }
int rt_comm_size(const rt_comm *c) { (void)c; return 1; }
void rt_comm_handshake(rt_comm *c, const char *spec_hash, int spec_ranks) {
    (void)c, (void)spec_hash, (void)spec_ranks;
}

void rt_comm_die_all(rt_comm *c, const char *hint, const char *fmt, ...) {
    (void)c;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    rt_die_hint(hint, "%s", msg);
}

void rt_comm_attach_grads(rt_comm *c, float *grads, const rt_grad_bucket *buckets, int n_buckets,
                          int overlap) {
    (void)c, (void)grads, (void)buckets, (void)n_buckets, (void)overlap;
}
void rt_grad_bucket_ready(rt_comm *c, int k) { (void)c, (void)k; }
void rt_comm_grads_finish(rt_comm *c) { (void)c; }
double rt_comm_take_exposed_s(rt_comm *c) { (void)c; return 0; }

void rt_comm_sum(rt_comm *c, double *v, int n, const char *what) { (void)c, (void)v, (void)n, (void)what; }
void rt_comm_min(rt_comm *c, double *v, int n, const char *what) { (void)c, (void)v, (void)n, (void)what; }
void rt_comm_bcast(rt_comm *c, void *buf, size_t bytes, const char *what) {
    (void)c, (void)buf, (void)bytes, (void)what;
}
void rt_comm_barrier(rt_comm *c, const char *what) { (void)c, (void)what; }

void rt_comm_step_done(rt_comm *c, double seconds) { (void)c, (void)seconds; }
void rt_comm_set_hang_timeout(rt_comm *c, double seconds) { (void)c, (void)seconds; }
void rt_comm_watch(rt_comm *c, double waited_s, const char *what) { (void)c, (void)waited_s, (void)what; }
void rt_comm_on_abort(rt_comm *c, void (*fn)(void *arg), void *arg) { (void)c, (void)fn, (void)arg; }
