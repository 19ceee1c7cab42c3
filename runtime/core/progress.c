/* Progress line: \r-rewritten on a terminal, plain lines in logs (a \r-line in a batch
 * job's log file is one unreadable megabyte-long line), and notes between them. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "rt_metrics.h"

void rt_progress_format(char *buf, size_t cap, int64_t step, int64_t total_steps,
                        int64_t epoch, double loss, double lr, double images_per_s,
                        double comm_wait_ms, double eta_s) {
    char eta[32], comm[48] = "";
    rt_format_duration(eta_s, eta, sizeof eta);
    if (!isnan(comm_wait_ms)) snprintf(comm, sizeof comm, "  comm wait %.2f ms/step", comm_wait_ms);
    snprintf(buf, cap, "epoch %lld step %lld/%lld  loss %.4f  lr %.5f  %.0f img/s%s  ETA %s",
             (long long)epoch, (long long)step, (long long)total_steps, loss, lr,
             isfinite(images_per_s) ? images_per_s : 0.0, comm, eta);
}

void rt_progress_init(rt_progress *p, FILE *out, int64_t start_step, int64_t total_steps) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = out && rt_is_tty(out);
    p->start_step = start_step;
    p->total_steps = total_steps;
    p->t_start = rt_time_s();
    p->t_last = -1e9;
}

void rt_progress_update(rt_progress *p, int64_t step, int64_t epoch, double loss, double lr,
                        double images_per_s, double comm_wait_ms) {
    if (!p->out) return;
    double now = rt_time_s();
    if (p->tty && step < p->total_steps && now - p->t_last < 0.25) return;
    p->t_last = now;
    int64_t done = step - p->start_step;
    double eta = done > 0 ? (now - p->t_start) / (double)done * (double)(p->total_steps - step) : NAN;
    char line[256];
    rt_progress_format(line, sizeof line, step, p->total_steps, epoch, loss, lr, images_per_s,
                       comm_wait_ms, eta);
    if (p->tty) {
        int len = (int)strlen(line);
        /* Pad with spaces so a shorter line fully covers the previous one. */
        fprintf(p->out, "\r%s%*s", line, p->last_len > len ? p->last_len - len : 0, "");
        p->last_len = len;
    } else {
        fprintf(p->out, "%s\n", line);
    }
    fflush(p->out);
}

void rt_progress_note(rt_progress *p, const char *fmt, ...) {
    if (!p->out) return;
    rt_progress_finish(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}

void rt_progress_finish(rt_progress *p) {
    if (!p->out) return;
    if (p->tty && p->last_len) fputc('\n', p->out);
    p->last_len = 0;
    fflush(p->out);
}
