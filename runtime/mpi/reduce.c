/* Small collective exchanges outside the gradient path: sums of a few numbers (loss,
 * accuracy counts, the stop flag), minima (the benchmark's exposed communication),
 * broadcasts of rank 0's state (resume, BN buffers) and barriers. Each waits through
 * comm_wait, so none can hang on a lost rank. */
#include "comm_internal.h"
#include "rt_core.h"

static void reduce(rt_comm *c, double *v, int n, MPI_Op op, const char *what) {
    double t0 = rt_time_s();
    MPI_Request req;
    comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, op, c->comm, &req), what);
    c->exposed_s += rt_time_s() - t0;
    comm_wait(c, 1, &req, what);
}

void rt_comm_sum(rt_comm *c, double *v, int n, const char *what) {
    if (c) reduce(c, v, n, MPI_SUM, what);
}

void rt_comm_min(rt_comm *c, double *v, int n, const char *what) {
    if (c) reduce(c, v, n, MPI_MIN, what);
}

void rt_comm_bcast(rt_comm *c, void *buf, size_t bytes, const char *what) {
    if (!c) return;
    const size_t chunk = (size_t)1 << 30;   /* MPI counts are int */
    for (size_t done = 0; done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        MPI_Request req;
        comm_check(c, MPI_Ibcast((char *)buf + done, (int)n, MPI_BYTE, 0, c->comm, &req), what);
        comm_wait(c, 1, &req, what);
    }
}

void rt_comm_barrier(rt_comm *c, const char *what) {
    if (!c) return;
    MPI_Request req;
    comm_check(c, MPI_Ibarrier(c->comm, &req), what);
    comm_wait(c, 1, &req, what);
}
