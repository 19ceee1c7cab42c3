/* One message when ranks fail. A rank that dies on its own error (rt_die) first tells the
 * others with a small notice (the error's hash) on a communicator of its own. Then:
 *  - an error every rank hits (a bad --data, a bad option) is printed by rank 0 alone: the
 *    other ranks wait for rank 0's notice and stay quiet when it carries the same error;
 *  - an error of one rank is printed by that rank, and the others, which learn of it in
 *    their next wait (comm_wait_until), end quietly instead of reporting a "lost rank";
 *  - a rank that vanishes without a notice (kill -9, a crash) is still named as lost.
 * Nobody exits before the failing rank has printed: a launcher kills the whole job as soon
 * as one rank ends. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "comm_internal.h"
#include "rt_core.h"

enum { NOTICE_TAG = 77, NOTICE_FAILED = 1, NOTICE_CARRY_ON = 2 };
/* How long a failing rank other than 0 waits for rank 0's verdict (its own identical error,
 * or "carry on: print yours"), and how long the others wait for it to print. */
#define VERDICT_WAIT_S 10.0
#define PRINT_WAIT_S 15.0

typedef struct { uint64_t hash; int32_t kind; } notice;

static rt_comm *the_comm;
static notice outgoing;             /* Isend buffers must outlive the call */
static atomic_int dying;

static uint64_t hash_text(const char *s) {
    uint64_t h = 1469598103934665603ULL;   /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void nap_ms(long ms) {
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* Receives a notice from `source` (or any rank) if one has arrived; returns its sender or -1. */
static int take_notice(rt_comm *c, int source, notice *n) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(source, NOTICE_TAG, c->notice_comm, &flag, &st) != MPI_SUCCESS || !flag) return -1;
    if (MPI_Recv(n, (int)sizeof *n, MPI_BYTE, st.MPI_SOURCE, NOTICE_TAG, c->notice_comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS)
        return -1;
    return st.MPI_SOURCE;
}

/* Sends `kind` to every other rank (to == -1) or to one; waits at most a second for the
 * sends, which are small enough to leave at once on any transport worth the name. */
static void send_notice(rt_comm *c, int to, int kind, uint64_t hash) {
    outgoing = (notice){ hash, kind };
    MPI_Request reqs[c->size];
    int n = 0;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank && (to < 0 || r == to) &&
            MPI_Isend(&outgoing, (int)sizeof outgoing, MPI_BYTE, r, NOTICE_TAG, c->notice_comm, &reqs[n]) ==
                MPI_SUCCESS)
            n++;
    for (double t0 = rt_time_s(); rt_time_s() - t0 < 1.0; nap_ms(1)) {
        int done = 0;
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS || done) break;
    }
}

/* Waits until rank r has ended (seen only on this machine) or PRINT_WAIT_S passed. */
static void wait_for_exit_of(rt_comm *c, int r) {
    for (double t0 = rt_time_s(); rt_time_s() - t0 < PRINT_WAIT_S && !comm_rank_gone(c, r);) nap_ms(10);
}

static void die_hook(const char *msg, const char *hint, int status) {
    rt_comm *c = the_comm;
    if (atomic_exchange(&dying, 1)) {   /* an error while ending: say it plainly */
        rt_print_error(msg, hint);
        exit(status);
    }
    comm_progress_stop(&c->progress);
    comm_heartbeat_stop(c);
    uint64_t h = hash_text(msg);
    if (c->rank == 0) {   /* rank 0 speaks first; identical errors elsewhere stay quiet */
        rt_print_error(msg, hint);
        send_notice(c, -1, NOTICE_FAILED, h);
        exit(status);
    }
    send_notice(c, -1, NOTICE_FAILED, h);
    if (c->hung_rank == 0) {   /* rank 0 is stopped: no verdict can come */
        rt_print_error(msg, hint);
        exit(status);
    }
    int quiet = 0;
    double gone_at = 0;
    for (double t0 = rt_time_s(); rt_time_s() - t0 < VERDICT_WAIT_S; nap_ms(1)) {
        notice n;
        if (take_notice(c, 0, &n) == 0) {
            quiet = n.kind == NOTICE_FAILED && n.hash == h;
            break;
        }
        /* Rank 0 may have ended right after sending: its notice can take a few more polls. */
        if (!gone_at && comm_rank_gone(c, 0)) gone_at = rt_time_s();
        if (gone_at && rt_time_s() - gone_at > 0.2) break;
    }
    if (!quiet) rt_print_error(msg, hint);
    exit(status);
}

void comm_fail_install(rt_comm *c) {
    the_comm = c;
    rt_set_die_hook(die_hook);
}

void comm_fail_check_notices(rt_comm *c) {
    notice n;
    int from = take_notice(c, MPI_ANY_SOURCE, &n);
    if (from < 0 || n.kind != NOTICE_FAILED) return;
    atomic_store(&dying, 1);
    comm_progress_stop(&c->progress);
    comm_heartbeat_stop(c);
    /* Rank 0 printed before it told us. Another rank prints once rank 0 lets it (or after
     * its wait for rank 0's verdict); until then this rank must stay, or the launcher would
     * end the job before the message is out. */
    if (from != 0) {
        if (c->rank == 0) send_notice(c, from, NOTICE_CARRY_ON, 0);
        wait_for_exit_of(c, from);
    }
    fflush(stdout);
    exit(1);
}
