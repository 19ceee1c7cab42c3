/* Stop signals: SIGTERM/SIGINT only set a flag, so the trainer can finish the step,
 * write a checkpoint and exit cleanly (schedulers send SIGTERM before killing a job). */
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "rt_core.h"

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

void rt_install_stop_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    /* SA_RESETHAND: the second signal gets the default action, so a hung run still dies. */
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
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
    pid_t launcher = getppid();
    /* mpirun answers a second SIGTERM by leaving at once, without ending its ranks: without
     * this they would train on as orphans, pruning checkpoints under a resume. */
    prctl(PR_SET_PDEATHSIG, SIGHUP);
    if (getppid() != launcher) raise(SIGHUP);   /* it left before prctl took effect */
}
