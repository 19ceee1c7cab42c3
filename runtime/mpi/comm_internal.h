/* Private to runtime/mpi/: the rt_comm behind the opaque handle, and the one waiting
 * primitive every MPI exchange goes through (so none can hang on a lost rank). */
#ifndef COMM_INTERNAL_H
#define COMM_INTERNAL_H
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "rt_comm.h"

#define COMM_HOST_LEN 64
#define COMM_STEP_HISTORY 64

/* The communication thread of overlapped all-reduce (progress_thread.c). */
typedef struct {
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    MPI_Comm comm;            /* the gradient communicator: only this thread uses it */
    float *grads;
    const rt_grad_bucket *buckets;
    int n_buckets;
    MPI_Request *reqs;        /* [n_buckets], touched only by the thread */
    int ready;                /* buckets backward has handed over this step (under mu) */
    int quit;                 /* under mu */
    int finishing;            /* the training thread waits for the sums (under mu) */
    pthread_cond_t done_cv;   /* signalled with done */
    int rc;                   /* the first MPI error of the step (under mu) */
    atomic_int done;          /* 1: every bucket of the step holds the sum over ranks */
    long nap_ns;
} comm_progress;

/* Starts the thread for these buckets; rt_comm_attach_grads calls it once. */
void comm_progress_start(comm_progress *p, MPI_Comm comm, float *grads, const rt_grad_bucket *buckets,
                         int n_buckets);
/* Backward completed bucket k (buckets are handed over in order 0..n-1 every step). */
void comm_progress_hand_over(comm_progress *p, int k);
/* 1 once every bucket of the step is summed; a poll function for comm_wait_until that
 * sleeps up to 2 ms waiting for it. */
int comm_progress_poll(void *p);
/* After the poll said 1: rearms the thread for the next step, returns its MPI status. */
int comm_progress_take(comm_progress *p);
void comm_progress_stop(comm_progress *p);

/* The watchdog's side channel (heartbeat.c). */
typedef struct {
    int64_t steps;            /* the answering rank's measured steps so far */
    int32_t waiting;          /* 1: it waits for other ranks itself */
    int32_t unused;
    double idle_s;            /* seconds since its last progress (a step, a wait's start or end) */
} comm_pong;

typedef struct {              /* this rank's ping to one peer */
    MPI_Request reply_req;    /* the answer awaited, or MPI_REQUEST_NULL */
    comm_pong reply, last;    /* the buffer, and the latest answer */
    double sent_at, answered_at;
    int answered;
} comm_probe;

typedef struct {
    MPI_Comm comm;            /* pings and answers only */
    pthread_t thread;         /* the answering thread */
    int running;
    atomic_int quit;
    atomic_int waiting;       /* this rank waits for others (told in answers) */
    atomic_long progress_ms;  /* when this rank last made progress */
    comm_probe *probes;       /* [size], used by the waiting thread */
    comm_pong *answers;       /* [size] answer buffers, used by the answering thread */
    MPI_Request *answer_reqs; /* [size] */
} comm_heartbeat;

struct rt_comm {
    MPI_Comm comm;            /* a duplicate of MPI_COMM_WORLD, errors returned, not fatal */
    MPI_Comm notice_comm;     /* notices of a rank's own fatal error (fail.c) */
    int rank, size;
    double timeout_s;         /* longest wait before a rank is declared lost */
    pid_t *peer_pid;          /* [size] */
    char (*peer_host)[COMM_HOST_LEN];
    char (*peer_boot)[COMM_HOST_LEN];   /* kernel boot id: the same machine, not just the same name */
    char host[COMM_HOST_LEN], boot[COMM_HOST_LEN];
    int answers_pings;        /* this rank runs the answering thread (needs MPI_THREAD_MULTIPLE) */
    int *peer_answers;        /* [size]: that rank does */
    int comm_thread;          /* overlap runs on a communication thread (MPI_THREAD_MULTIPLE) */
    /* gradient buckets */
    MPI_Comm grad_comm;       /* the buckets' own communicator (the thread's, with overlap) */
    float *grads;
    const rt_grad_bucket *buckets;
    int n_buckets, overlap;
    MPI_Request *reqs;        /* [n_buckets]: in-line overlap and the blocking variant */
    int n_started;
    comm_progress progress;
    double exposed_s;         /* communication time compute did not hide */
    /* the hung-peer watchdog (watchdog.c) */
    double step_s[COMM_STEP_HISTORY];   /* the last measured step times, a ring */
    long n_steps;
    double hang_timeout_s;    /* parallel.hang_timeout; 0: derived from the step times */
    int hung_rank;            /* the stopped rank this rank is dying for, or -1 */
    void (*abort_fn)(void *arg);   /* the device communicator's abort (NCCL), or NULL */
    void *abort_arg;
    comm_heartbeat hb;
};

/* Waits for reqs[0..n) while watching for lost ranks: polls, yields the CPU, and dies with
 * a message naming the lost rank when a peer process on this host is gone, or naming the
 * wait when nothing arrives for timeout_s. Adds the time waited to c->exposed_s. */
void comm_wait(rt_comm *c, int n, MPI_Request *reqs, const char *what);
/* The same wait for any condition: poll(arg) returns 1 when done (it must not block). */
void comm_wait_until(rt_comm *c, int (*poll)(void *arg), void *arg, const char *what);
/* 1 when rank r runs on this machine and its process is gone. */
int comm_rank_gone(const rt_comm *c, int r);
/* 1 when rank r runs on this machine and its process is stopped (SIGSTOP, a debugger). */
int comm_rank_stopped(const rt_comm *c, int r);
/* heartbeat.c: the answering thread (started once the peers are known; stopped on the way
 * out, from any thread; free also ends this rank's pings and the communicator), and this
 * rank's progress as its answers tell it (waiting: it waits for other ranks now; a call also
 * marks progress). */
void comm_heartbeat_start(rt_comm *c);
void comm_heartbeat_stop(rt_comm *c);
void comm_heartbeat_free(rt_comm *c);
void comm_heartbeat_progress(rt_comm *c, int waiting);
/* During a suspect wait, called about once a second: pings the peers that have no ping in
 * flight, takes their answers, and returns a peer silent for longer than the grace (with
 * how long in *silent_s), or -1. */
int comm_heartbeat_silent(rt_comm *c, double *silent_s);
/* "; rank R ..." for each peer whose latest answer (or silence) shows it has not arrived. */
void comm_heartbeat_describe(const rt_comm *c, char *out, size_t cap);
/* fail.c: routes rt_die through the notice protocol, so a failure prints once. */
void comm_fail_install(rt_comm *c);
/* Ends this rank quietly (after the failing rank has printed) if another rank sent notice
 * of its own fatal error; returns otherwise. */
void comm_fail_check_notices(rt_comm *c);
/* Dies with `what` and the MPI error text when rc is not MPI_SUCCESS. */
void comm_check(rt_comm *c, int rc, const char *what);

#endif
