/* The communication thread behind overlapped gradient all-reduce. Open MPI 4.1 moves a
 * non-blocking collective forward only while some thread is inside an MPI call, and the
 * training thread makes none during backward's compute. So this thread owns a communicator
 * of its own: it starts bucket k's MPI_Iallreduce as soon as backward hands it over, and
 * keeps calling MPI_Testall (with short naps, so it takes little CPU from compute) until
 * every bucket of the step is summed. Buckets start in order 0..n-1 on every rank and the
 * reduction algorithm depends only on sizes, so the sums do not depend on timing.
 * Needs MPI_THREAD_MULTIPLE: the training thread meanwhile makes its own MPI calls (sync BN
 * statistics) on the main communicator. */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

#include "comm_internal.h"
#include "rt_core.h"
#include "rt_env.h"

/* One pass of the thread's loop: hand-overs it has not started yet are started, in order. */
static int start_ready(comm_progress *p, int *started, int ready) {
    for (; *started < ready; (*started)++) {
        const rt_grad_bucket *b = &p->buckets[*started];
        int rc = MPI_Iallreduce(MPI_IN_PLACE, p->grads + b->offset, (int)b->count, MPI_FLOAT,
                                MPI_SUM, p->comm, &p->reqs[*started]);
        if (rc != MPI_SUCCESS) return rc;
    }
    return MPI_SUCCESS;
}

static void nap(long ns) {
    struct timespec ts = { 0, ns };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static void *progress_main(void *arg) {
    comm_progress *p = arg;
    int started = 0, in_flight = 0;
    double waiting_since = 0;   /* when the training thread began to wait with buckets in flight */
    for (;;) {
        pthread_mutex_lock(&p->mu);
        /* Nothing to move: sleep until backward hands over the next bucket. */
        while (!p->quit && !in_flight && p->ready == started) pthread_cond_wait(&p->cv, &p->mu);
        int ready = p->ready, quit = p->quit, finishing = p->finishing;
        pthread_mutex_unlock(&p->mu);
        if (quit) break;
        int rc = start_ready(p, &started, ready), flag = 0;
        if (rc == MPI_SUCCESS) rc = MPI_Testall(started, p->reqs, &flag, MPI_STATUSES_IGNORE);
        in_flight = !flag;
        if (rc != MPI_SUCCESS || (flag && started == p->n_buckets)) {
            /* The step's buckets are summed (or MPI failed): reset for the next step before
             * telling the training thread, which may hand over bucket 0 right after. */
            started = 0, in_flight = 0;
            pthread_mutex_lock(&p->mu);
            p->ready = 0;
            p->rc = rc;
            atomic_store_explicit(&p->done, 1, memory_order_release);
            pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->mu);
            continue;
        }
        /* While backward computes, nap between tests to leave it the core; once the training
         * thread waits for the sums, the core is this thread's: test without pause, for a
         * few milliseconds; a longer wait (a slow or stopped peer) naps again, so a waiting
         * rank does not spin a core. */
        if (!in_flight || !finishing) waiting_since = 0;
        if (in_flight && !finishing) nap(p->nap_ns);
        else if (in_flight && !waiting_since) waiting_since = rt_time_s();
        else if (in_flight && rt_time_s() - waiting_since > 0.002) nap(500000);
    }
    return NULL;
}

void comm_progress_start(comm_progress *p, MPI_Comm comm, float *grads, const rt_grad_bucket *buckets,
                         int n_buckets) {
    p->comm = comm;
    p->grads = grads;
    p->buckets = buckets;
    p->n_buckets = n_buckets;
    p->reqs = rt_xcalloc((size_t)(n_buckets ? n_buckets : 1), sizeof *p->reqs);
    for (int k = 0; k < n_buckets; k++) p->reqs[k] = MPI_REQUEST_NULL;
    p->ready = p->quit = p->finishing = 0;
    p->rc = MPI_SUCCESS;
    atomic_store(&p->done, 0);
    /* How long the thread naps between tests of a bucket in flight: short enough to keep
     * shared-memory transfers moving, long enough to leave the cores to compute. */
    p->nap_ns = rt_env_long(RT_ENV_TRAINC_COMM_POLL_US) * 1000L;   /* 0 to 100000 (rt_env.def) */
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (pthread_create(&p->thread, NULL, progress_main, p) != 0)
        rt_die("cannot start the communication thread: %s", strerror(errno));
    p->running = 1;
}

void comm_progress_hand_over(comm_progress *p, int k) {
    pthread_mutex_lock(&p->mu);
    p->ready = k + 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int comm_progress_poll(void *arg) {
    comm_progress *p = arg;
    if (atomic_load_explicit(&p->done, memory_order_acquire)) return 1;
    /* Sleep instead of spinning: the communication thread needs this rank's core now. */
    pthread_mutex_lock(&p->mu);
    if (!p->finishing) {
        p->finishing = 1;
        pthread_cond_signal(&p->cv);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 2000000;   /* wake up now and then: comm_wait_until checks for lost ranks */
    if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
    while (!atomic_load(&p->done) && pthread_cond_timedwait(&p->done_cv, &p->mu, &until) == 0) {}
    pthread_mutex_unlock(&p->mu);
    return atomic_load_explicit(&p->done, memory_order_acquire);
}

int comm_progress_take(comm_progress *p) {
    atomic_store(&p->done, 0);
    pthread_mutex_lock(&p->mu);
    p->finishing = 0;
    int rc = p->rc;
    p->rc = MPI_SUCCESS;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void comm_progress_stop(comm_progress *p) {
    if (!p->running) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->reqs);
    p->reqs = NULL;
    p->running = 0;
}
