/* Core utilities: rt_err/rt_fail, messages on stderr written whole, arena alignment, aligned
 * alloc, durations, stop signals, the ranks per node a launcher states (Slurm's task lists). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "rt_core.h"
#include "rt_slots.h"
#include "testlib.h"

/* srun -n 2 states no SLURM_NTASKS_PER_NODE: the step's task list must still give 2 ranks
 * here, as mpirun's OMPI_COMM_WORLD_LOCAL_SIZE does (the slots, so the sums, follow it). */
static void local_ranks(void) {
    CHECK(rt_slurm_node_tasks("2", 0) == 2);
    CHECK(rt_slurm_node_tasks("2(x3),1", 0) == 2 && rt_slurm_node_tasks("2(x3),1", 2) == 2);
    CHECK(rt_slurm_node_tasks("2(x3),1", 3) == 1 && rt_slurm_node_tasks("2(x3),1", 4) == 0);
    CHECK(rt_slurm_node_tasks("4,3(x2)", 1) == 3 && rt_slurm_node_tasks("4,3(x2)", 2) == 3);
    CHECK(rt_slurm_node_tasks("2(3)", 0) == 0 && rt_slurm_node_tasks("x", 0) == 0);
    CHECK(rt_slurm_node_tasks("2;1", 1) == 0 && rt_slurm_node_tasks("", 0) == 0);
    static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE",
                                        "SLURM_NODEID", "SLURM_NTASKS_PER_NODE" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    CHECK(rt_local_ranks() == 1);
    setenv("SLURM_NTASKS_PER_NODE", "3", 1);
    CHECK(rt_local_ranks() == 3);
    setenv("SLURM_STEP_TASKS_PER_NODE", "4,2", 1);
    setenv("SLURM_NODEID", "1", 1);
    CHECK(rt_local_ranks() == 2);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "5", 1);
    CHECK(rt_local_ranks() == 5);
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
}

/* A warning or an error (with its hint) reaches stderr in one write: mpirun and srun forward
 * each rank's stderr as it comes, so a message written in pieces interleaves with another
 * rank's mid-line. With stderr on a SOCK_SEQPACKET socket each write is one packet. */
static void whole_messages(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(sv[0], 2);
    rt_set_error_prefix("rank 3: ");
    rt_warn("x is %d", 7);
    rt_print_error("the file is short", "write it again");
    rt_set_error_prefix(NULL);
    dup2(saved, 2);
    close(saved);
    close(sv[0]);
    char got[2][256];
    for (int i = 0; i < 2; i++) {
        ssize_t n = recv(sv[1], got[i], sizeof got[i] - 1, 0);
        got[i][n > 0 ? n : 0] = '\0';
    }
    close(sv[1]);
    CHECK(strcmp(got[0], "warning: rank 3: x is 7\n") == 0);
    CHECK(strcmp(got[1], "error: rank 3: the file is short\nHINT: write it again\n") == 0);
}

/* Whether the calling thread blocks all three stop signals. */
static int blocks_stop_signals(void) {
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, SIGTERM) == 1 && sigismember(&cur, SIGINT) == 1 && sigismember(&cur, SIGHUP) == 1;
}

static void *thread_blocks(void *arg) {
    *(int *)arg = blocks_stop_signals();
    return NULL;
}

/* Waits up to 5 s for the listener thread to take a signal sent to the process. */
static int stop_seen(int sig) {
    for (int i = 0; i < 5000 && rt_stop_requested() != sig; i++) usleep(1000);
    return rt_stop_requested() == sig;
}

/* A stop signal sets the flag, and is taken by a thread that does nothing else: the thread
 * that installs the handlers, and the OpenMP workers and other threads it starts after, block
 * it (a signal's frame written on the stack of a thread inside oneDNN's sgemm, whose stack
 * pointer is then in a heap buffer, corrupted the heap; runtime/core/signals.c). */
static void stop_signals(void) {
    rt_install_stop_signals();
    CHECK(rt_stop_requested() == 0);
    CHECK(blocks_stop_signals());
    int unblocked = 0;
    #pragma omp parallel num_threads(3) reduction(+ : unblocked)
    unblocked += !blocks_stop_signals();
    CHECK(unblocked == 0);
    pthread_t thread;
    int blocked = 0;
    CHECK(pthread_create(&thread, NULL, thread_blocks, &blocked) == 0);
    pthread_join(thread, NULL);
    CHECK(blocked);
    kill(getpid(), SIGTERM);
    CHECK(stop_seen(SIGTERM));
    rt_stop_reset();
    rt_install_stop_signals();   /* SA_RESETHAND: the first SIGTERM restored the default */
    kill(getpid(), SIGINT);
    CHECK(stop_seen(SIGINT));
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    rt_stop_reset();
}

int main(void) {
    whole_messages();
    rt_err e;
    rt_status s = rt_fail(&e, RT_E_RANGE, "use a smaller value", "value %d too big", 7);
    CHECK(s == RT_E_RANGE && e.code == RT_E_RANGE);
    CHECK(strcmp(e.msg, "value 7 too big") == 0);
    CHECK(strcmp(e.hint, "use a smaller value") == 0);
    rt_fail(&e, RT_E_IO, NULL, "x");
    CHECK(e.hint[0] == '\0');
    CHECK(strcmp(rt_status_name(RT_E_CHECKSUM), "checksum mismatch") == 0);

    void *p = rt_alloc_aligned(100);
    CHECK(((uintptr_t)p % 64) == 0);
    CHECK(((unsigned char *)p)[99] == 0);
    rt_free_aligned(p);

    rt_arena a;
    rt_arena_init(&a, 1024, "test arena");
    char *x = rt_arena_alloc(&a, 3), *y = rt_arena_alloc(&a, 10);
    CHECK(((uintptr_t)x % 64) == 0 && ((uintptr_t)y % 64) == 0 && y - x == 64);
    rt_arena_reset(&a);
    CHECK(rt_arena_alloc(&a, 1024) == (void *)x);
    rt_arena_free(&a);

    char buf[32];
    CHECK(strcmp(rt_format_duration(4071, buf, sizeof buf), "1h07m51s") == 0);
    CHECK(strcmp(rt_format_duration(185, buf, sizeof buf), "3m05s") == 0);
    CHECK(strcmp(rt_format_duration(12.34, buf, sizeof buf), "12.3s") == 0);
    CHECK(strcmp(rt_format_duration(-1, buf, sizeof buf), "?") == 0);

    double t0 = rt_time_s();
    CHECK(rt_time_s() >= t0);

    stop_signals();
    local_ranks();
    return test_finish("test_core_misc");
}
