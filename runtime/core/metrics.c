/* metrics.jsonl writer: train, eval and summary records, one flushed line each. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "rt_metrics.h"

rt_status rt_metrics_open(rt_metrics *m, const char *out_dir, rt_err *err) {
    memset(m, 0, sizeof *m);
    /* mkdir -p, one component at a time. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", out_dir);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') { *p = '\0'; mkdir(dir, 0777); *p = '/'; }
    mkdir(dir, 0777);
    snprintf(m->path, sizeof m->path, "%s/metrics.jsonl", out_dir);
    m->f = fopen(m->path, "a");
    if (!m->f)
        return rt_fail(err, RT_E_IO, "choose a writable --out directory",
                       "cannot open %s for writing: %s", m->path, strerror(errno));
    rt_json_init(&m->line);
    return RT_OK;
}

void rt_metrics_close(rt_metrics *m) {
    if (m->f) fclose(m->f);
    rt_json_free(&m->line);
    m->f = NULL;
}

void rt_metrics_write(rt_metrics *m, rt_json *j) {
    if (!m->f) return;
    fputs(j->buf, m->f);
    fputc('\n', m->f);
    /* Flush per line: a crash or kill should lose at most the line being written. */
    if (fflush(m->f) != 0)
        rt_warn("writing %s failed: %s (metrics from here on may be lost)", m->path, strerror(errno));
}

void rt_metrics_train(rt_metrics *m, const rt_train_record *r) {
    rt_json *j = &m->line;
    rt_json_begin(j);
    rt_json_str(j, "event", "train");
    rt_json_int(j, "epoch", r->epoch);
    rt_json_int(j, "step", r->step);
    rt_json_num(j, "lr", r->lr);
    rt_json_num(j, "loss", r->loss);
    rt_json_num(j, "images_per_s", r->images_per_s);
    rt_json_num(j, "elapsed_s", r->elapsed_s);
    if (r->loss_scale != 0) rt_json_num(j, "loss_scale", r->loss_scale);
    rt_json_end(j);
    rt_metrics_write(m, j);
}

void rt_metrics_eval(rt_metrics *m, int64_t epoch, int64_t step, double loss, double top1,
                     double top5) {
    rt_json *j = &m->line;
    rt_json_begin(j);
    rt_json_str(j, "event", "eval");
    rt_json_int(j, "epoch", epoch);
    rt_json_int(j, "step", step);
    rt_json_num(j, "loss", loss);
    rt_json_num(j, "top1", top1);
    rt_json_num(j, "top5", top5);
    rt_json_end(j);
    rt_metrics_write(m, j);
}

void rt_metrics_summary(rt_metrics *m, const rt_summary_record *r) {
    rt_json *j = &m->line;
    rt_json_begin(j);
    rt_json_str(j, "event", "summary");
    rt_json_str(j, "spec_hash", r->spec_hash);
    rt_json_int(j, "steps", r->steps);
    rt_json_int(j, "epochs", r->epochs);
    rt_json_num(j, "final_loss", r->final_loss);
    rt_json_num(j, "top1", r->top1);
    rt_json_num(j, "top5", r->top5);
    rt_json_num(j, "elapsed_s", r->elapsed_s);
    rt_json_num(j, "images_per_s", r->images_per_s);
    rt_json_str(j, "params_hash", r->params_hash);
    rt_json_end(j);
    rt_metrics_write(m, j);
}
