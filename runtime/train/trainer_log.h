/* What a trainer reports: OUT/metrics.jsonl (one JSON object per line) and human progress
 * lines on stdout (rewritten in place on a terminal, plain lines otherwise). In a multi-rank
 * run only rank 0 opens the log; on the other ranks it stays off and every call is a no-op. */
#ifndef RT_TRAINER_LOG_H
#define RT_TRAINER_LOG_H
#include <stdio.h>
#include "rt_trainer.h"

typedef struct {
    int on;                   /* 0: this rank does not log */
    FILE *metrics;
    int tty;
    int progress_open;        /* a \r progress line is on screen */
    double progress_at;       /* when the progress line was last redrawn (rt_time_s) */
    char path[4096];
} trainer_log;

/* resume_step >= 0: keep the records up to that step (a resumed run rewrites what the
 * interrupted one logged after its checkpoint); -1: a new run, which refuses an out dir
 * that already holds checkpoints so nothing is overwritten by accident. */
void trainer_log_open(trainer_log *log, const char *out_dir, const rt_model *m, int ranks,
                      long resume_step, int benchmark);
void trainer_log_off(trainer_log *log);
/* comm_ms: communication time per step that compute did not hide, over the interval
 * (NaN in a world of 1: not written). */
void trainer_log_train(trainer_log *log, long epoch, long step, long total_steps, double lr,
                       double loss, double top1, double images_per_s, double comm_ms,
                       double elapsed_s);
void trainer_log_eval(trainer_log *log, long epoch, long step, double loss, double top1, double top5);
void trainer_log_benchmark(trainer_log *log, long steps, int batch, int ranks, int overlap,
                           double seconds, double ips, double comm_ms, double exposed_ms);
void trainer_log_summary(trainer_log *log, long step, double loss, double top1, double top5,
                         double wall_s, const char *params_hash);
void trainer_log_note(trainer_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void trainer_log_close(trainer_log *log);
#endif
