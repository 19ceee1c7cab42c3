/* Progress line: \r-rewritten on a terminal, periodic plain lines in logs (a \r-line in a
 * batch job's log file is one unreadable megabyte-long line). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "rt_metrics.h"

void rt_progress_format(char *buf, size_t cap, int64_t step, int64_t total_steps,
                        int64_t epoch, double loss, double lr, double images_per_s,
                        double eta_s) {
    char eta[32];
    rt_format_duration(eta_s, eta, sizeof eta);
    double pct = total_steps > 0 ? 100.0 * (double)step / (double)total_steps : 0.0;
    snprintf(buf, cap, "step %lld/%lld (%.1f%%) | epoch %lld | loss %.4f | lr %.4g | %.0f img/s | ETA %s",
             (long long)step, (long long)total_steps, pct, (long long)epoch, loss, lr,
             isfinite(images_per_s) ? images_per_s : 0.0, eta);
}

void rt_progress_init(rt_progress *p, FILE *out, int64_t start_step, int64_t total_steps) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->tty = rt_is_tty(out);
    p->start_step = start_step;
    p->total_steps = total_steps;
    p->t_start = rt_time_s();
    p->t_last = -1e9;
    p->interval_s = 10.0;
}

void rt_progress_update(rt_progress *p, int64_t step, int64_t epoch, double loss, double lr,
                        double images_per_s) {
    double now = rt_time_s();
    int last = step >= p->total_steps;
    double min_gap = p->tty ? 0.1 : p->interval_s;
    if (!last && now - p->t_last < min_gap) return;
    p->t_last = now;
    int64_t done = step - p->start_step;
    double eta = done > 0 ? (now - p->t_start) / (double)done * (double)(p->total_steps - step) : NAN;
    char line[256];
    rt_progress_format(line, sizeof line, step, p->total_steps, epoch, loss, lr, images_per_s, eta);
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

void rt_progress_finish(rt_progress *p) {
    if (p->tty && p->last_len) fputc('\n', p->out);
    p->last_len = 0;
    fflush(p->out);
}
