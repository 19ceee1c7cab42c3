/* Stop signals: SIGTERM/SIGINT only set a flag, so the trainer can finish the step,
 * write a checkpoint and exit cleanly (schedulers send SIGTERM before killing a job). */
#include <signal.h>
#include <string.h>
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
