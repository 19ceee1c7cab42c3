/* Data parallelism over MPI ranks: the world, the start-up handshake, gradient bucket
 * all-reduce overlapped with backward, small reductions, and batch norm with statistics over
 * all ranks. Every function takes an rt_comm that is NULL in a world of 1, and then makes no
 * MPI call at all, so a process started without a launcher pays nothing.
 *
 *   rt_comm *comm = rt_comm_init();              // NULL unless mpirun/srun started >1 ranks
 *   rt_comm_handshake(comm, spec_hash, spec_ranks);   // same binary, spec, world size
 *   rt_comm_attach_grads(comm, grads, buckets, n_buckets, overlap);
 *   for each step:
 *       train_step(...);                         // calls rt_grad_bucket_ready(comm, k)
 *       rt_comm_grads_finish(comm);              // grads now hold the sum over ranks
 *       double s[2] = { loss, correct }; rt_comm_sum(comm, s, 2, "the step's loss");
 *   rt_comm_finalize(comm);
 *
 * A runtime built without MPI (make WITH_MPI=0) has runtime/solo/ instead: a world of one.
 *
 * Failure: every wait polls; a rank whose peer process is gone, or that waits longer than
 * TRAINC_COMM_TIMEOUT seconds (default 120), ends with a message naming the lost rank. */
#ifndef RT_COMM_H
#define RT_COMM_H
#include "rt_ops.h"
#include <stddef.h>

typedef struct rt_comm rt_comm;
#define RT_COMM_NORETURN __attribute__((noreturn))

/* A gradient bucket: a contiguous range of the gradient buffer, in floats. */
typedef struct { long offset, count; } rt_grad_bucket;

/* ---- world.c ---- */
/* Joins the MPI world when a launcher (mpirun, srun) started this process; returns NULL
 * when it did not, or when the world has one rank. Sets "rank N: " as the error prefix. */
rt_comm *rt_comm_init(void);
void rt_comm_finalize(rt_comm *c);
int rt_comm_rank(const rt_comm *c);   /* 0 for NULL */
int rt_comm_size(const rt_comm *c);   /* 1 for NULL */
/* ---- watchdog.c ---- */
/* The measured time of one training step: waits longer than 10x the median step (within
 * [3, 6] s) look for a stopped peer on this machine and ping the peers anywhere (a thread
 * of each rank answers); a peer stopped, or silent for 3 s, is named and the job ends. */
void rt_comm_step_done(rt_comm *c, double seconds);
/* parallel.hang_timeout: a fixed bound in seconds instead (0: derived from the steps); the
 * environment's TRAINC_HANG_TIMEOUT wins over it. */
void rt_comm_set_hang_timeout(rt_comm *c, double seconds);
/* For a wait outside MPI (the NCCL stream): call now and then (about once a second) with
 * the seconds waited so far; dies naming a stopped or silent peer once the bound has passed, after calling the function
 * given to rt_comm_on_abort (e.g. ncclCommAbort) so no device collective is left hanging. */
void rt_comm_watch(rt_comm *c, double waited_s, const char *what);
void rt_comm_on_abort(rt_comm *c, void (*fn)(void *arg), void *arg);
/* ---- launcher.c (environment only: the same with or without MPI) ---- */
/* The world size an MPI launcher's environment names: 1 without a launcher, 0 when the
 * launcher names none (PMIx); as written otherwise. */
long rt_launcher_ranks(void);
/* 1 when the environment shows an MPI launcher with more than one rank (or an unnamed
 * number of them). */
int rt_comm_launched(void);

/* ---- handshake.c ---- */
/* All ranks compare the spec hash, the hash of their executable and the world size against
 * spec_ranks (0 = any). On a mismatch rank 0 prints one message naming what differs and
 * every rank exits 1. */
void rt_comm_handshake(rt_comm *c, const char *spec_hash, int spec_ranks);

/* ---- die_all.c ---- */
/* Called by every rank on the same failure: rank 0 alone prints "error: ..." (+ HINT), then
 * all exit 1. With c == NULL it is rt_die_hint. */
RT_COMM_NORETURN void rt_comm_die_all(rt_comm *c, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- grad_allreduce.c ---- */
/* The gradient buffer and its buckets. overlap: start each bucket's all-reduce when
 * backward completes it; 0: all-reduce them one after another in rt_comm_grads_finish. */
void rt_comm_attach_grads(rt_comm *c, float *grads, const rt_grad_bucket *buckets, int n_buckets,
                          int overlap);
/* Called by generated backward code right after the last gradient of bucket k is written. */
void rt_grad_bucket_ready(rt_comm *c, int k);
/* Waits until every bucket holds the sum over all ranks. */
void rt_comm_grads_finish(rt_comm *c);
/* Seconds spent in communication that compute did not hide (waits, blocking all-reduces,
 * small reductions) since the last call; 0 for NULL. */
double rt_comm_take_exposed_s(rt_comm *c);

/* ---- reduce.c ---- */
/* Sums v[0..n) over all ranks, in place. `what` names the wait in failure messages. */
void rt_comm_sum(rt_comm *c, double *v, int n, const char *what);
/* Minimum over all ranks, in place. */
void rt_comm_min(rt_comm *c, double *v, int n, const char *what);
/* Copies rank 0's bytes to every rank. */
void rt_comm_bcast(rt_comm *c, void *buf, size_t bytes, const char *what);
/* Every rank reaches this point before any leaves it. */
void rt_comm_barrier(rt_comm *c, const char *what);

/* ---- sync_batchnorm.c ----
 * batchnorm_forward_train / batchnorm_backward (rt_ops.h, incl. the fused ReLU) with the
 * per-channel statistics (forward: sum, then sum of squared deviations; backward: sum(dy),
 * sum(dy*xhat)) summed over all ranks, so they are the statistics of the global batch.
 * dgamma and dbeta stay this rank's share: the gradient all-reduce sums them. With c == NULL
 * they are the per-rank ops. */
void sync_batchnorm_forward_train(rt_comm *c, float *out /*N,C,HW*/, float *save_mean /*C*/,
                                  float *save_inv_std /*C*/, float *running_mean /*C*/,
                                  float *running_var /*C*/, const float *in /*N,C,HW*/,
                                  const float *gamma /*C*/, const float *beta /*C*/, int n, int ch,
                                  int hw, float momentum, float eps, rt_act act);
void sync_batchnorm_backward(rt_comm *c, float *din /*N,C,HW or NULL*/, float *dgamma /*C*/,
                             float *dbeta /*C*/, const float *dout, const float *in,
                             const float *gamma, const float *beta, const float *save_mean,
                             const float *save_inv_std, int n, int ch, int hw, rt_act act);

#endif
