/* What a trainer reports: OUT/metrics.jsonl (one JSON object per line, flushed per line so a
 * crashed run keeps its log) and a human progress line on stdout. In a multi-rank run only
 * rank 0 opens them; on the other ranks they stay off and every call is a no-op.
 *
 *   rt_metrics m;
 *   rt_metrics_open(&m, out_dir, "metrics.jsonl", -1, NULL);   // or resume_step to continue
 *   rt_metrics_start(&m, &(rt_start_record){.name = "lenet", ...});
 *   rt_metrics_train(&m, &(rt_train_record){.epoch = e, .step = s, .lr = lr, .loss = loss,
 *                                           .top1 = acc, .images_per_s = ips,
 *                                           .comm_wait_ms = NAN});
 *   rt_metrics_eval(&m, e, s, loss, top1, top5, wall_s);
 *   rt_metrics_summary(&m, &summary);
 *   rt_metrics_close(&m);
 * Lines look like
 *   {"event":"train","epoch":0,"step":100,"lr":0.1,"loss":0.4321,"top1":0.8,"images_per_s":12345.6}
 * Non-finite numbers are written as null (JSON has no NaN). */
#ifndef RT_METRICS_H
#define RT_METRICS_H
#include <stdint.h>
#include <stdio.h>
#include "rt_core.h"

/* A one-line JSON object under construction; keys and strings are escaped. */
typedef struct {
    char *buf;
    size_t len, cap;
    int fields;
} rt_json;

void rt_json_init(rt_json *j);
void rt_json_free(rt_json *j);
void rt_json_begin(rt_json *j);                                   /* resets, writes "{" */
void rt_json_str(rt_json *j, const char *key, const char *value); /* NULL value -> null */
void rt_json_num(rt_json *j, const char *key, double value);      /* %.9g; NaN/inf -> null */
void rt_json_int(rt_json *j, const char *key, int64_t value);
void rt_json_bool(rt_json *j, const char *key, int value);
const char *rt_json_end(rt_json *j);                              /* writes "}", returns text */

typedef struct {
    FILE *f;                 /* NULL: off (not rank 0, or not opened) */
    char path[4096];
    rt_json line;
} rt_metrics;

/* Opens OUT/file_name, creating OUT if needed. resume_step < 0: a new log (the file starts
 * empty); >= 0: the records up to that step are kept (a resumed run rewrites what the
 * interrupted one logged after its checkpoint, and its summary) and new ones appended. */
rt_status rt_metrics_open(rt_metrics *m, const char *out_dir, const char *file_name,
                          int64_t resume_step, rt_err *err);
void rt_metrics_off(rt_metrics *m);
/* Dies if the last lines cannot be written. */
void rt_metrics_close(rt_metrics *m);
/* Writes a finished rt_json object as one line and flushes. */
void rt_metrics_write(rt_metrics *m, rt_json *j);

typedef struct {
    const char *name, *spec_hash;
    const char *spec_text_hash;      /* of the whole embedded spec, descriptive fields too; NULL: none */
    int batch, ranks;                /* per-rank batch and world size */
    int64_t params, resumed_at;      /* resumed_at: -1 for a new run */
} rt_start_record;

typedef struct {
    int64_t epoch, step;
    double lr, loss, top1, images_per_s;
    double comm_wait_ms;   /* communication not hidden behind compute; NaN: not written (1 rank) */
    double loss_scale;     /* 0: not written (fp32 runs) */
    int loss_scaling;      /* FP16 loss scaling on: skipped_steps is written */
    int64_t skipped_steps; /* steps skipped on overflow so far */
} rt_train_record;

typedef struct {
    int64_t steps;
    int batch, ranks, overlap;       /* global batch */
    double seconds, images_per_s;
    double comm_wait_ms, comm_exposed_ms;   /* NaN (null) in a world of one */
} rt_benchmark_record;

typedef struct {
    int64_t step;
    double loss, top1, top5;         /* of the last evaluation; NaN when there was none */
    double wall_s;
    const char *params_hash;         /* rt_params_hash of the final weights */
    int loss_scaling;                /* FP16 loss scaling on: skipped_steps is written */
    int64_t skipped_steps;
} rt_summary_record;

void rt_metrics_start(rt_metrics *m, const rt_start_record *r);
void rt_metrics_train(rt_metrics *m, const rt_train_record *r);
/* wall_s: seconds since this process began training (as the summary's), evaluations
 * included; the time to an accuracy reads off it. */
void rt_metrics_eval(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                     double top5, double wall_s);
/* The same for the EMA of the weights (solver.ema): an "eval_ema" record after the "eval". */
void rt_metrics_eval_ema(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                         double top5, double wall_s);
void rt_metrics_benchmark(rt_metrics *m, const rt_benchmark_record *r);
void rt_metrics_summary(rt_metrics *m, const rt_summary_record *r);

/* Progress line: on a terminal it rewrites itself with \r at most 4 times a second (with
 * log_every: 1 a small net logs thousands of steps a second, and a launcher that stops
 * reading its ranks' terminal would leave rank 0 blocked in write()); to a file or pipe it
 * prints a plain line per update. Notes (evaluation, checkpoints) end a \r line first. */
typedef struct {
    FILE *out;               /* NULL: off */
    int tty;
    int64_t start_step, total_steps;
    double t_start, t_last;
    int last_len;
} rt_progress;

void rt_progress_init(rt_progress *p, FILE *out, int64_t start_step, int64_t total_steps);
/* comm_wait_ms: NaN in a world of one (left out of the line). */
void rt_progress_update(rt_progress *p, int64_t step, int64_t epoch, double loss, double lr,
                        double images_per_s, double comm_wait_ms);
/* One line of its own (a \r line in progress is ended first). */
void rt_progress_note(rt_progress *p, const char *fmt, ...) RT_PRINTF(2, 3);
void rt_progress_finish(rt_progress *p);   /* ends a \r line with a newline */
/* The text of one progress line (no \r or \n), for tests and other front ends. */
void rt_progress_format(char *buf, size_t cap, int64_t step, int64_t total_steps,
                        int64_t epoch, double loss, double lr, double images_per_s,
                        double comm_wait_ms, double eta_s);

#endif
