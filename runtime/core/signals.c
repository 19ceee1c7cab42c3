/* Stop signals: SIGTERM/SIGINT only set a flag, so the trainer can finish the step,
 * write a checkpoint and exit cleanly (schedulers send SIGTERM before killing a job).
 *
 * They are taken by a thread of their own, never by a thread that computes. The kernel
 * writes a signal's frame (the registers, with AVX-512 state about 3 KB) on the stack of the
 * thread that takes it, and oneDNN's JIT sgemm runs with its stack pointer at the start of a
 * heap buffer of its own: a core of a trainer that died in free() showed the frame's saved
 * rsp equal to a posix_memalign'd block, and the frame written over the heap below it. A
 * SIGTERM that arrived inside such a GEMM crashed about one run in fifty (bench/RESULTS.md,
 * "a stop signal inside oneDNN's sgemm"). So the thread that installs the handlers blocks the
 * stop signals, the OpenMP workers and loader threads it starts later inherit that mask, and
 * a listener thread that only waits takes every stop signal. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "rt_core.h"

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

static void stop_signal_set(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

static void *listen_for_stop_signals(void *arg) {
    (void)arg;
    sigset_t set;
    stop_signal_set(&set);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    for (;;) pause();   /* the handlers run here, on this thread's ordinary stack */
    return NULL;
}

static int listener_started;

static void start_listener(void) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    listener_started = pthread_create(&thread, &attr, listen_for_stop_signals, NULL) == 0;
    pthread_attr_destroy(&attr);
}

/* The calling thread, and every thread it starts from now on, leaves the stop signals to the
 * listener. Without a listener (pthread_create failed) nothing is blocked: a signal then
 * lands where it may, as it did before, rather than being held forever. */
static void leave_stop_signals_to_listener(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, start_listener);
    if (!listener_started) return;
    sigset_t set;
    stop_signal_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void rt_install_stop_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    /* SA_RESETHAND: the second signal gets the default action, so a hung run still dies. */
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    leave_stop_signals_to_listener();
}

int rt_stop_requested(void) { return (int)stop_signal; }

void rt_stop_reset(void) { stop_signal = 0; }

/* The launcher is gone: stop like at SIGTERM (a stop checkpoint, then exit), and since the
 * launcher held the other end of stdout, let writes there fail instead of killing us. */
static void on_launcher_exit(int sig) {
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, NULL);
    if (!stop_signal) stop_signal = sig;
}

void rt_stop_on_launcher_exit(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_launcher_exit;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, NULL);
    leave_stop_signals_to_listener();
    pid_t launcher = getppid();
    /* mpirun answers a second SIGTERM by leaving at once, without ending its ranks: without
     * this they would train on as orphans, pruning checkpoints under a resume. */
    prctl(PR_SET_PDEATHSIG, SIGHUP);
    /* It left before prctl took effect. To the process, not raise(): this thread blocks
     * SIGHUP, and the listener takes it. */
    if (getppid() != launcher) kill(getpid(), SIGHUP);
}
