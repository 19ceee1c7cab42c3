/* Waiting for the other ranks without ever hanging on a lost one. Every MPI exchange of the
 * trainer ends in comm_wait, which polls instead of blocking so that it can notice (a) a
 * peer process on this machine that is gone, checked every second and as soon as the
 * launcher's SIGTERM arrives, and (b) a wait longer than the timeout, for peers elsewhere.
 * Before naming a lost rank it looks for that rank's notice of its own error (fail.c). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "comm_internal.h"
#include "rt_core.h"

/* The state letter of /proc/PID/stat ("pid (comm) S ..."; comm may hold spaces), or 0
 * when the process is gone. */
static char process_state(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

/* Gone: no /proc entry, or a zombie waiting to be reaped by its launcher daemon. */
static int process_gone(pid_t pid) {
    char s = process_state(pid);
    return s == 0 || s == 'Z' || s == 'X';
}

static int rank_is_local(const rt_comm *c, int r) {
    return c->peer_pid && c->boot[0] && r != c->rank && c->peer_pid[r] > 0 && !strcmp(c->peer_boot[r], c->boot);
}

int comm_rank_stopped(const rt_comm *c, int r) {
    if (!rank_is_local(c, r)) return 0;
    char s = process_state(c->peer_pid[r]);
    return s == 'T' || s == 't';
}

int comm_rank_gone(const rt_comm *c, int r) { return rank_is_local(c, r) && process_gone(c->peer_pid[r]); }

/* The first other rank on this machine whose process is gone, or -1. */
static int find_lost_rank(const rt_comm *c) {
    for (int r = 0; r < c->size; r++)
        if (comm_rank_gone(c, r)) return r;
    return -1;
}

#define WAIT_SPIN_S 0.002
#define LOST_NOTICE_GRACE_S 0.3

static void nap_s(double s) {
    struct timespec ts = { 0, (long)(s * 1e9) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

RT_NORETURN static void die_lost(const rt_comm *c, int lost, const char *what) {
    rt_die_hint("the launcher's message and that rank's own output say why it ended; resume from the "
                "last checkpoint with --resume",
                "lost rank %d (pid %d on %s): its process is gone while this rank waited for %s", lost,
                (int)c->peer_pid[lost], c->peer_host[lost], what);
}

void comm_wait_until(rt_comm *c, int (*poll)(void *arg), void *arg, const char *what) {
    double t0 = rt_time_s(), next_check = t0 + 1.0;
    int signal_seen = 0;
    comm_heartbeat_progress(c, 1);   /* answers to pings say this rank waits */
    for (long spins = 0;; spins++) {
        if (poll(arg)) break;
        double now = rt_time_s();
        int sig = rt_stop_requested();
        if ((sig && !signal_seen) || now >= next_check) {
            /* A launcher answers a dead rank with SIGTERM to the others: look at once. A
             * SIGTERM with every local peer alive is a scheduler's stop: keep waiting. */
            signal_seen |= sig != 0;
            comm_fail_check_notices(c);   /* a rank that failed on its own error said so */
            int lost = find_lost_rank(c);
            if (lost >= 0) {
                /* A rank that ended on its own error sent its notice first; a waiter that
                 * sleeps between polls may not have pulled it in yet: poll a little more. */
                for (double g = rt_time_s(); rt_time_s() - g < LOST_NOTICE_GRACE_S; nap_s(1e-3))
                    comm_fail_check_notices(c);
                die_lost(c, lost, what);
            }
            rt_comm_watch(c, now - t0, what);   /* a stopped peer holds the wait (watchdog.c) */
            next_check = now + 1.0;
        }
        if (now - t0 > c->timeout_s) {
            char late[1024];   /* the ranks whose answers show they have not arrived */
            comm_heartbeat_describe(c, late, sizeof late);
            rt_die_hint("a rank on another machine may be lost or stuck (the launcher's messages may "
                        "name it); set TRAINC_COMM_TIMEOUT (seconds) to wait longer",
                        "waited %.0f s for %s without an answer from all %d ranks (the ranks on "
                        "this machine are alive)%s", now - t0, what, c->size, late);
        }
        /* Short waits spin, then yield the core to ranks sharing it (oversubscribed); a wait
         * past a few milliseconds sleeps between polls, up to a millisecond, so that a rank
         * waiting for a slow or stopped peer does not burn a core. */
        if (now - t0 > WAIT_SPIN_S) nap_s(now - t0 > 10 * WAIT_SPIN_S ? 1e-3 : 1e-4);
        else if (spins > 64) sched_yield();
    }
    c->exposed_s += rt_time_s() - t0;
    comm_heartbeat_progress(c, 0);
}

typedef struct {
    rt_comm *c;
    int n;
    MPI_Request *reqs;
    const char *what;
} requests;

static int requests_done(void *arg) {
    requests *r = arg;
    int done = 0;
    comm_check(r->c, MPI_Testall(r->n, r->reqs, &done, MPI_STATUSES_IGNORE), r->what);
    return done;
}

void comm_wait(rt_comm *c, int n, MPI_Request *reqs, const char *what) {
    requests r = { c, n, reqs, what };
    comm_wait_until(c, requests_done, &r, what);
}
