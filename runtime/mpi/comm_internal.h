/* Private to runtime/mpi/: the rt_comm behind the opaque handle, and the one waiting
 * primitive every MPI exchange goes through (so none can hang on a lost rank). */
#ifndef COMM_INTERNAL_H
#define COMM_INTERNAL_H
#include <mpi.h>
#include <sys/types.h>
#include "rt_comm.h"

#define COMM_HOST_LEN 64

struct rt_comm {
    MPI_Comm comm;            /* a duplicate of MPI_COMM_WORLD, errors returned, not fatal */
    int rank, size;
    double timeout_s;         /* longest wait before a rank is declared lost */
    pid_t *peer_pid;          /* [size] */
    char (*peer_host)[COMM_HOST_LEN];
    char (*peer_boot)[COMM_HOST_LEN];   /* kernel boot id: the same machine, not just the same name */
    char host[COMM_HOST_LEN], boot[COMM_HOST_LEN];
    /* gradient buckets */
    float *grads;
    const rt_grad_bucket *buckets;
    int n_buckets, overlap;
    MPI_Request *reqs;        /* [n_buckets] */
    int n_started;
    double exposed_s;         /* communication time compute did not hide */
};

/* Waits for reqs[0..n) while watching for lost ranks: polls, yields the CPU, and dies with
 * a message naming the lost rank when a peer process on this host is gone, or naming the
 * wait when nothing arrives for timeout_s. Adds the time waited to c->exposed_s. */
void comm_wait(rt_comm *c, int n, MPI_Request *reqs, const char *what);
/* Dies with `what` and the MPI error text when rc is not MPI_SUCCESS. */
void comm_check(rt_comm *c, int rc, const char *what);

#endif
