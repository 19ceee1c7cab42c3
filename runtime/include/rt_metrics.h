/* Metrics and progress: OUT/metrics.jsonl (one JSON object per line, flushed per line so a
 * crashed run keeps its log) and a human progress line on stdout.
 *
 *   rt_metrics m;
 *   rt_metrics_open(&m, out_dir, NULL);
 *   rt_metrics_train(&m, &(rt_train_record){.epoch = e, .step = s, .lr = lr, .loss = loss,
 *                                           .images_per_s = ips, .elapsed_s = t});
 *   rt_metrics_eval(&m, e, s, loss, top1, top5);
 *   rt_metrics_summary(&m, &summary);
 *   rt_metrics_close(&m);
 * Lines look like
 *   {"event":"train","epoch":0,"step":100,"lr":0.1,"loss":0.4321,"images_per_s":12345.6,...}
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
    FILE *f;
    char path[4096];
    rt_json line;
} rt_metrics;

/* Opens OUT/metrics.jsonl for appending (a resumed run continues the same log), creating
 * OUT if needed. */
rt_status rt_metrics_open(rt_metrics *m, const char *out_dir, rt_err *err);
void rt_metrics_close(rt_metrics *m);
/* Writes a finished rt_json object as one line and flushes. */
void rt_metrics_write(rt_metrics *m, rt_json *j);

typedef struct {
    int64_t epoch, step;
    double lr, loss, images_per_s;
    double elapsed_s;
    double loss_scale;   /* 0: not written (fp32 runs) */
} rt_train_record;

typedef struct {
    const char *spec_hash;
    int64_t steps, epochs;
    double final_loss, top1, top5;   /* NaN when there was no eval */
    double elapsed_s, images_per_s;
    const char *params_hash;         /* rt_params_hash of the final weights */
} rt_summary_record;

void rt_metrics_train(rt_metrics *m, const rt_train_record *r);
void rt_metrics_eval(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                     double top5);
void rt_metrics_summary(rt_metrics *m, const rt_summary_record *r);

/* Progress line: on a terminal it rewrites itself with \r at most 10 times a second; to a
 * file or pipe it prints a plain line every interval_s seconds (and at the last step). */
typedef struct {
    FILE *out;
    int tty;
    int64_t start_step, total_steps;
    double t_start, t_last;
    double interval_s;
    int last_len;
} rt_progress;

void rt_progress_init(rt_progress *p, FILE *out, int64_t start_step, int64_t total_steps);
void rt_progress_update(rt_progress *p, int64_t step, int64_t epoch, double loss, double lr,
                        double images_per_s);
void rt_progress_finish(rt_progress *p);   /* ends a \r line with a newline */
/* The text of one progress line (no \r or \n), for tests and other front ends. */
void rt_progress_format(char *buf, size_t cap, int64_t step, int64_t total_steps,
                        int64_t epoch, double loss, double lr, double images_per_s,
                        double eta_s);

#endif
