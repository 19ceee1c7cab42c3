/* Gradient all-reduce by buckets. With overlap, the generated backward code hands each bucket
 * over the moment its last gradient is written and a communication thread (progress_thread.c)
 * sums it over the ranks while backward goes on. Where MPI offers no MPI_THREAD_MULTIPLE the
 * training thread starts the bucket itself and tests the buckets in flight at each hand-over,
 * since MPI moves non-blocking collectives forward only inside MPI calls. Without overlap the
 * buckets are summed one by one after backward (the blocking variant, for comparison). Either
 * way the optimizer waits in rt_comm_grads_finish and gets the sum over ranks; the trainer
 * divides by the world size. */
#include <stdlib.h>

#include "comm_internal.h"
#include "rt_core.h"

static int use_thread(const rt_comm *c) { return c->overlap && c->comm_thread; }

void rt_comm_attach_grads(rt_comm *c, float *grads, const rt_grad_bucket *buckets, int n_buckets,
                          int overlap) {
    if (!c) return;
    for (int k = 0; k < n_buckets; k++)
        if (buckets[k].count > 0x7fffffffL)
            rt_die_hint("lower parallel.bucket_mb", "gradient bucket %d holds %ld floats, more than an MPI "
                        "count can say", k, buckets[k].count);
    comm_progress_stop(&c->progress);
    c->grads = grads;
    c->buckets = buckets;
    c->n_buckets = n_buckets;
    c->overlap = overlap;
    free(c->reqs);
    c->reqs = rt_xcalloc((size_t)(n_buckets ? n_buckets : 1), sizeof *c->reqs);
    for (int k = 0; k < n_buckets; k++) c->reqs[k] = MPI_REQUEST_NULL;
    c->n_started = 0;
    if (use_thread(c)) comm_progress_start(&c->progress, c->grad_comm, grads, buckets, n_buckets);
}

static void start_bucket(rt_comm *c, int k) {
    const rt_grad_bucket *b = &c->buckets[k];
    comm_check(c, MPI_Iallreduce(MPI_IN_PLACE, c->grads + b->offset, (int)b->count, MPI_FLOAT, MPI_SUM,
                                 c->grad_comm, &c->reqs[k]),
               "the gradient all-reduce");
}

void rt_grad_bucket_ready(rt_comm *c, int k) {
    if (!c || !c->overlap) return;
    if (k != c->n_started)
        rt_die("internal: backward handed over gradient bucket %d, expected bucket %d", k, c->n_started);
    c->n_started++;
    if (use_thread(c)) {
        /* Not counted as exposed: the thread's work shares the cores with compute like any
         * other thread, and shows in the step time, not as a wait. */
        comm_progress_hand_over(&c->progress, k);
        return;
    }
    double t0 = rt_time_s();
    start_bucket(c, k);
    int done;   /* progress the buckets already in flight; completion is checked later */
    comm_check(c, MPI_Testall(c->n_started, c->reqs, &done, MPI_STATUSES_IGNORE), "the gradient all-reduce");
    c->exposed_s += rt_time_s() - t0;
}

void rt_comm_grads_finish(rt_comm *c) {
    if (!c) return;
    if (c->overlap) {
        if (c->n_started != c->n_buckets)
            rt_die("internal: backward handed over %d of %d gradient buckets", c->n_started, c->n_buckets);
        if (use_thread(c)) {
            if (c->n_buckets) {
                comm_wait_until(c, comm_progress_poll, &c->progress, "the gradient all-reduce");
                comm_check(c, comm_progress_take(&c->progress), "the gradient all-reduce");
            }
        } else {
            comm_wait(c, c->n_buckets, c->reqs, "the gradient all-reduce");
        }
    } else {
        for (int k = 0; k < c->n_buckets; k++) {
            double t0 = rt_time_s();
            start_bucket(c, k);
            c->exposed_s += rt_time_s() - t0;
            comm_wait(c, 1, &c->reqs[k], "the gradient all-reduce");
        }
    }
    c->n_started = 0;
}

double rt_comm_take_exposed_s(rt_comm *c) {
    if (!c) return 0;
    double s = c->exposed_s;
    c->exposed_s = 0;
    return s;
}
