/* The watchdog's side channel, for peers on other machines (whose processes this rank cannot
 * look at): every rank runs a small answering thread on a communicator of its own, and a rank
 * whose wait has passed the hang bound pings the peers it waits with. A peer that answers
 * says where it is (its step, whether it waits too, for how long it has made no progress); a
 * peer that does not answer within PING_GRACE_S is stopped as a whole process (SIGSTOP, a
 * debugger), or its machine or network is gone, and is named. A stopped process stops its
 * answering thread with it, which is what makes the silence meaningful; a rank that is alive
 * but slow (a long checkpoint write) keeps answering and is only named, with its answer, if
 * the wait reaches TRAINC_COMM_TIMEOUT (wait.c). The answering thread sleeps ANSWER_NAP_S
 * between tests, so it costs no measurable CPU, and the pings go out only during a wait that
 * is already suspect, so a healthy run sends none. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm_internal.h"
#include "rt_core.h"

enum { PING_TAG = 91, PONG_TAG = 92 };
#define ANSWER_NAP_S 0.05
/* Silence this long after a ping: the peer's answering thread was not scheduled for 3 s, so
 * its process is not running (generous against a loaded machine's scheduling delays). */
#define PING_GRACE_S 3.0
/* Between two pings to a peer that answered, during one long wait. */
#define PING_EVERY_S 2.0

static void nap_s(double s) {
    struct timespec ts = { 0, (long)(s * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

static long now_ms(void) { return (long)(rt_time_s() * 1000.0); }

void comm_heartbeat_progress(rt_comm *c, int waiting) {
    if (!c) return;
    atomic_store(&c->hb.waiting, waiting);
    atomic_store(&c->hb.progress_ms, now_ms());
}

static comm_pong my_state(rt_comm *c) {
    return (comm_pong){ .steps = c->n_steps,
                        .waiting = atomic_load(&c->hb.waiting),
                        .idle_s = (now_ms() - atomic_load(&c->hb.progress_ms)) / 1000.0 };
}

/* The answering thread: one receive for a ping from anyone, an answer to whoever pinged. */
static void *answer_main(void *arg) {
    rt_comm *c = arg;
    comm_heartbeat *hb = &c->hb;
    MPI_Request ping_req;
    char ping;
    MPI_Status st;
    MPI_Irecv(&ping, 1, MPI_BYTE, MPI_ANY_SOURCE, PING_TAG, hb->comm, &ping_req);
    while (!atomic_load(&hb->quit)) {
        int flag = 0;
        if (MPI_Test(&ping_req, &flag, &st) != MPI_SUCCESS) break;
        if (!flag) {
            nap_s(ANSWER_NAP_S);
            continue;
        }
        int from = st.MPI_SOURCE;
        /* The previous answer to this peer left long ago (a few bytes go out at once). */
        if (hb->answer_reqs[from] != MPI_REQUEST_NULL) MPI_Wait(&hb->answer_reqs[from], MPI_STATUS_IGNORE);
        hb->answers[from] = my_state(c);
        MPI_Isend(&hb->answers[from], (int)sizeof(comm_pong), MPI_BYTE, from, PONG_TAG, hb->comm,
                  &hb->answer_reqs[from]);
        MPI_Irecv(&ping, 1, MPI_BYTE, MPI_ANY_SOURCE, PING_TAG, hb->comm, &ping_req);
    }
    MPI_Cancel(&ping_req);
    MPI_Wait(&ping_req, MPI_STATUS_IGNORE);
    return NULL;
}

void comm_heartbeat_start(rt_comm *c) {
    comm_heartbeat *hb = &c->hb;
    MPI_Comm_dup(c->comm, &hb->comm);
    hb->probes = rt_xcalloc((size_t)c->size, sizeof *hb->probes);
    hb->answers = rt_xcalloc((size_t)c->size, sizeof *hb->answers);
    hb->answer_reqs = rt_xcalloc((size_t)c->size, sizeof *hb->answer_reqs);
    for (int r = 0; r < c->size; r++) hb->answer_reqs[r] = hb->probes[r].reply_req = MPI_REQUEST_NULL;
    comm_heartbeat_progress(c, 0);
    atomic_store(&hb->quit, 0);
    if (c->answers_pings) hb->running = pthread_create(&hb->thread, NULL, answer_main, c) == 0;
}

void comm_heartbeat_stop(rt_comm *c) {
    comm_heartbeat *hb = &c->hb;
    /* The first caller joins (two threads may die at once); the thread leaves within a nap. */
    if (!hb->probes || !hb->running || atomic_exchange(&hb->quit, 1)) return;
    pthread_join(hb->thread, NULL);
    hb->running = 0;
}

void comm_heartbeat_free(rt_comm *c) {
    comm_heartbeat *hb = &c->hb;
    if (!hb->probes) return;
    comm_heartbeat_stop(c);
    for (int r = 0; r < c->size; r++) {
        if (hb->probes[r].reply_req != MPI_REQUEST_NULL) {   /* a ping nobody answered */
            MPI_Cancel(&hb->probes[r].reply_req);
            MPI_Wait(&hb->probes[r].reply_req, MPI_STATUS_IGNORE);
        }
        if (hb->answer_reqs[r] != MPI_REQUEST_NULL) MPI_Wait(&hb->answer_reqs[r], MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&hb->comm);
    free(hb->probes);
    free(hb->answers);
    free(hb->answer_reqs);
    hb->probes = NULL;
}

int comm_heartbeat_silent(rt_comm *c, double *silent_s) {
    comm_heartbeat *hb = &c->hb;
    if (!hb->probes) return -1;
    static const char ping = 1;   /* never written: the sends need no buffer of their own */
    double now = rt_time_s();
    for (int r = 0; r < c->size; r++) {
        comm_probe *p = &hb->probes[r];
        if (r == c->rank || !c->peer_answers[r]) continue;
        if (p->reply_req != MPI_REQUEST_NULL) {
            int flag = 0;
            MPI_Test(&p->reply_req, &flag, MPI_STATUS_IGNORE);
            if (flag) {
                p->last = p->reply;
                p->answered_at = now;
                p->answered = 1;
            } else if (now - p->sent_at >= PING_GRACE_S) {
                *silent_s = now - p->sent_at;
                return r;
            }
        }
        if (p->reply_req == MPI_REQUEST_NULL && now - p->answered_at >= PING_EVERY_S) {
            MPI_Request send;
            MPI_Irecv(&p->reply, (int)sizeof p->reply, MPI_BYTE, r, PONG_TAG, hb->comm, &p->reply_req);
            MPI_Isend(&ping, 1, MPI_BYTE, r, PING_TAG, hb->comm, &send);
            MPI_Request_free(&send);
            p->sent_at = now;
        }
    }
    return -1;
}

void comm_heartbeat_describe(const rt_comm *c, char *out, size_t cap) {
    const comm_heartbeat *hb = &c->hb;
    size_t n = 0;
    out[0] = '\0';
    double now = rt_time_s();
    for (int r = 0; hb->probes && r < c->size && n + 1 < cap; r++) {
        const comm_probe *p = &hb->probes[r];
        if (r == c->rank) continue;
        int w = 0;
        if (p->reply_req != MPI_REQUEST_NULL && !p->answered)
            w = snprintf(out + n, cap - n, "; rank %d (on %s) has not answered a ping for %.0f s", r, c->peer_host[r],
                         now - p->sent_at);
        else if (p->answered && !p->last.waiting)
            w = snprintf(out + n, cap - n,
                         "; rank %d (on %s) has not arrived: %.0f s ago it answered that it had done %ld steps "
                         "and made no progress for %.0f s (busy, not waiting)",
                         r, c->peer_host[r], now - p->answered_at, (long)p->last.steps, p->last.idle_s);
        if (w > 0) n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
}
