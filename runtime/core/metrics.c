/* metrics.jsonl writer: start, train, eval, benchmark and summary records, one flushed line
 * each, and the rewind of a resumed run's log to its checkpoint. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "rt_metrics.h"

/* mkdir -p, one component at a time; only the last one's failure matters. */
static rt_status make_dirs(const char *path, rt_err *err) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') { *p = '\0'; mkdir(dir, 0777); *p = '/'; }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return rt_fail(err, RT_E_IO, "choose another --out directory", "cannot create output directory '%s': %s",
                       path, strerror(errno));
    return RT_OK;
}

/* Keeps the lines whose step is at most `step` (and no summary), rewriting the file
 * atomically (temp file + rename) so a crash cannot lose the earlier records. */
static rt_status keep_until(const char *path, int64_t step, rt_err *err) {
    FILE *in = fopen(path, "r");
    if (!in) return RT_OK;   /* nothing logged yet */
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (!out) {
        fclose(in);
        return rt_fail(err, RT_E_IO, "choose a writable --out directory", "cannot write '%s': %s", tmp,
                       strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        const char *s = strstr(line, "\"step\":");
        if (s && strtoll(s + 7, NULL, 10) > step) continue;
        if (strstr(line, "\"event\":\"summary\"")) continue;
        fputs(line, out);
    }
    free(line);
    fclose(in);
    if (fflush(out) != 0 || fclose(out) != 0 || rename(tmp, path) != 0)
        return rt_fail(err, RT_E_IO, "check the free space of the --out directory", "cannot rewrite '%s': %s",
                       path, strerror(errno));
    return RT_OK;
}

rt_status rt_metrics_open(rt_metrics *m, const char *out_dir, const char *file_name,
                          int64_t resume_step, rt_err *err) {
    memset(m, 0, sizeof *m);
    rt_status st = make_dirs(out_dir, err);
    if (st != RT_OK) return st;
    snprintf(m->path, sizeof m->path, "%s/%s", out_dir, file_name);
    if (resume_step >= 0) {
        st = keep_until(m->path, resume_step, err);
        if (st != RT_OK) return st;
    }
    m->f = fopen(m->path, resume_step >= 0 ? "a" : "w");
    if (!m->f)
        return rt_fail(err, RT_E_IO, "choose a writable --out directory",
                       "cannot open %s for writing: %s", m->path, strerror(errno));
    rt_json_init(&m->line);
    return RT_OK;
}

void rt_metrics_off(rt_metrics *m) { memset(m, 0, sizeof *m); }

void rt_metrics_close(rt_metrics *m) {
    if (!m->f) return;
    if (fclose(m->f) != 0) rt_die("cannot finish writing '%s': %s", m->path, strerror(errno));
    rt_json_free(&m->line);
    m->f = NULL;
}

void rt_metrics_write(rt_metrics *m, rt_json *j) {
    if (!m->f) return;
    /* Flush per line: a crash or kill should lose at most the line being written. A line
     * that cannot be written ends the run: the log (its summary and params_hash) is what the
     * user keeps of it, and a run whose record is lost must not look like a success. */
    if (fputs(j->buf, m->f) < 0 || fputc('\n', m->f) == EOF || fflush(m->f) != 0)
        rt_die_hint("free space on that filesystem (df -h) or pass another --out; resume from the last "
                    "checkpoint with --resume", "writing %s failed: %s", m->path, strerror(errno));
}

/* Every record: a line that opens with its event name, written only where the log is on. */
static rt_json *record(rt_metrics *m, const char *event) {
    rt_json_begin(&m->line);
    rt_json_str(&m->line, "event", event);
    return &m->line;
}

static void finish(rt_metrics *m) {
    rt_json_end(&m->line);
    rt_metrics_write(m, &m->line);
}

void rt_metrics_start(rt_metrics *m, const rt_start_record *r) {
    if (!m->f) return;
    rt_json *j = record(m, "start");
    rt_json_str(j, "name", r->name);
    rt_json_str(j, "spec_hash", r->spec_hash);
    if (r->spec_text_hash) rt_json_str(j, "spec_text_hash", r->spec_text_hash);
    rt_json_int(j, "batch", r->batch);
    rt_json_int(j, "ranks", r->ranks);
    rt_json_int(j, "global_batch", (int64_t)r->batch * r->ranks);
    rt_json_int(j, "params", r->params);
    rt_json_int(j, "resumed_at", r->resumed_at);
    finish(m);
}

void rt_metrics_train(rt_metrics *m, const rt_train_record *r) {
    if (!m->f) return;
    rt_json *j = record(m, "train");
    rt_json_int(j, "epoch", r->epoch);
    rt_json_int(j, "step", r->step);
    rt_json_num(j, "lr", r->lr);
    rt_json_num(j, "loss", r->loss);
    rt_json_num(j, "top1", r->top1);
    rt_json_num(j, "images_per_s", r->images_per_s);
    if (r->comm_wait_ms == r->comm_wait_ms) rt_json_num(j, "comm_wait_ms", r->comm_wait_ms);
    if (r->loss_scale != 0) rt_json_num(j, "loss_scale", r->loss_scale);
    if (r->loss_scaling) rt_json_int(j, "skipped_steps", r->skipped_steps);
    finish(m);
}

static void eval_record(rt_metrics *m, const char *kind, int64_t epoch, int64_t step, double loss, double top1,
                        double top5, double wall_s) {
    if (!m->f) return;
    rt_json *j = record(m, kind);
    rt_json_int(j, "epoch", epoch);
    rt_json_int(j, "step", step);
    rt_json_num(j, "loss", loss);
    rt_json_num(j, "top1", top1);
    rt_json_num(j, "top5", top5);
    rt_json_num(j, "wall_s", wall_s);
    finish(m);
}

void rt_metrics_eval(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                     double top5, double wall_s) {
    eval_record(m, "eval", epoch, step, loss, top1, top5, wall_s);
}

void rt_metrics_eval_ema(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                         double top5, double wall_s) {
    eval_record(m, "eval_ema", epoch, step, loss, top1, top5, wall_s);
}

void rt_metrics_benchmark(rt_metrics *m, const rt_benchmark_record *r) {
    if (!m->f) return;
    rt_json *j = record(m, "benchmark");
    rt_json_int(j, "steps", r->steps);
    rt_json_int(j, "batch", r->batch);
    rt_json_int(j, "ranks", r->ranks);
    rt_json_bool(j, "overlap", r->overlap);
    rt_json_num(j, "seconds", r->seconds);
    rt_json_num(j, "images_per_s", r->images_per_s);
    rt_json_num(j, "comm_wait_ms", r->comm_wait_ms);
    rt_json_num(j, "comm_exposed_ms", r->comm_exposed_ms);
    finish(m);
}

void rt_metrics_summary(rt_metrics *m, const rt_summary_record *r) {
    if (!m->f) return;
    rt_json *j = record(m, "summary");
    rt_json_int(j, "step", r->step);
    rt_json_num(j, "loss", r->loss);
    rt_json_num(j, "top1", r->top1);
    rt_json_num(j, "top5", r->top5);
    rt_json_num(j, "wall_s", r->wall_s);
    if (r->loss_scaling) rt_json_int(j, "skipped_steps", r->skipped_steps);
    rt_json_str(j, "params_hash", r->params_hash);
    finish(m);
}
