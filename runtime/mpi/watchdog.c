/* The hung-peer watchdog. Every rank records its measured step times; a wait that lasts
 * longer than a bound derived from them (10x the median step, at least 3 s and at most 6 s;
 * 6 s before any step was measured; or parallel.hang_timeout from the spec) looks at the
 * peers on this machine, and a peer that is stopped (SIGSTOP, a debugger) is named and the
 * job ends; peers anywhere are pinged over MPI (heartbeat.c) from half the bound on, and one
 * that stays silent for the ping's grace (3 s) is named the same way. A stopped process
 * makes no progress at all, so the bound only has to outlast a brief pause: the cap keeps a
 * net whose steps take seconds from holding a stopped job for minutes (the waiter starts to
 * wait only after its own step, up to a step after the stop). A peer that answers but does
 * not arrive (busy) is named when the wait reaches TRAINC_COMM_TIMEOUT (wait.c). The NCCL
 * path calls rt_comm_watch from its own wait loop and registers the communicator's abort
 * with rt_comm_on_abort. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "rt_core.h"
#include "rt_env.h"

#define HANG_STEPS_FACTOR 10.0
#define HANG_MIN_S 3.0
#define HANG_MAX_S 6.0
#define HANG_UNMEASURED_S HANG_MAX_S

void rt_comm_set_hang_timeout(rt_comm *c, double seconds) {
    if (!c) return;
    /* TRAINC_HANG_TIMEOUT (seconds) wins over the spec: debugging one rank under gdb stops
     * it, and that should not need a rebuild. */
    double forced = rt_env_num(RT_ENV_TRAINC_HANG_TIMEOUT);
    if (forced > 0) seconds = forced;
    c->hang_timeout_s = seconds > 0 ? seconds : 0;
}

void rt_comm_step_done(rt_comm *c, double seconds) {
    if (!c) return;
    c->step_s[c->n_steps % COMM_STEP_HISTORY] = seconds;
    c->n_steps++;
    comm_heartbeat_progress(c, 0);
}

void rt_comm_on_abort(rt_comm *c, void (*fn)(void *arg), void *arg) {
    if (!c) return;
    c->abort_fn = fn;
    c->abort_arg = arg;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_step_s(const rt_comm *c) {
    int n = c->n_steps < COMM_STEP_HISTORY ? c->n_steps : COMM_STEP_HISTORY;
    double v[COMM_STEP_HISTORY];
    memcpy(v, c->step_s, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The bound and, in why, how it was derived (for the message). */
static double hang_bound_s(const rt_comm *c, char *why, size_t cap) {
    if (c->hang_timeout_s > 0) {
        snprintf(why, cap, "parallel.hang_timeout or TRAINC_HANG_TIMEOUT");
        return c->hang_timeout_s;
    }
    if (c->n_steps < 3) {
        snprintf(why, cap, "before the step time is measured");
        return HANG_UNMEASURED_S;
    }
    double med = median_step_s(c), bound = HANG_STEPS_FACTOR * med;
    snprintf(why, cap, "%.0fx the median step of %.3f s, within [%.0f, %.0f] s", HANG_STEPS_FACTOR, med, HANG_MIN_S,
             HANG_MAX_S);
    return bound < HANG_MIN_S ? HANG_MIN_S : bound > HANG_MAX_S ? HANG_MAX_S : bound;
}

/* Ends the job for rank r, which holds the wait (`how` says what was seen). */
RT_NORETURN static void die_hung(rt_comm *c, int r, const char *how, double waited_s, const char *what, double bound,
                                 const char *why) {
    c->hung_rank = r;   /* fail.c: nobody waits for a verdict from this rank */
    if (c->abort_fn) c->abort_fn(c->abort_arg);
    rt_die_hint("send it SIGCONT if it was paused on purpose; to wait longer set parallel.hang_timeout or "
                "TRAINC_HANG_TIMEOUT (seconds, e.g. to debug a rank); resume from the last checkpoint with --resume",
                "rank %d (pid %d on %s) %s while this rank waited %.0f s for %s (hang bound %.1f s: %s)", r,
                (int)c->peer_pid[r], c->peer_host[r], how, waited_s, what, bound, why);
}

void rt_comm_watch(rt_comm *c, double waited_s, const char *what) {
    if (!c) return;
    char why[128];
    double bound = hang_bound_s(c, why, sizeof why);
    /* The pings start at half the bound, so that a silent peer is known by the bound, as a
     * stopped local one is. */
    if (waited_s < bound / 2) return;
    double silent_s;
    int r = comm_heartbeat_silent(c, &silent_s);
    if (waited_s < bound) return;
    for (int q = 0; q < c->size; q++)
        if (comm_rank_stopped(c, q)) die_hung(c, q, "is stopped and made no progress", waited_s, what, bound, why);
    if (r >= 0) {
        char how[160];
        snprintf(how, sizeof how,
                 "does not answer: no reply to the watchdog's ping for %.1f s (stopped, or its machine or network "
                 "is down)", silent_s);
        die_hung(c, r, how, waited_s, what, bound, why);
    }
}
