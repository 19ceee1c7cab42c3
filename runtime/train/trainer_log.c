/* metrics.jsonl writer and progress lines for the training loop. */
#include "trainer_log.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>

#include "rt_core.h"

static void make_dirs(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(buf, 0777);
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        rt_die_hint("choose another --out directory", "cannot create output directory '%s': %s",
                    path, strerror(errno));
}

static int dir_has_checkpoints(const char *out_dir) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/checkpoints", out_dir);
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, "ckpt-", 5)) found = 1;
    closedir(d);
    return found;
}

/* Keeps the lines of metrics.jsonl whose step is at most `step`, rewriting the file
 * atomically (temp file + rename) so a crash cannot lose the earlier records. */
static void truncate_metrics_after(const char *path, long step) {
    FILE *in = fopen(path, "r");
    if (!in) return;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (!out) rt_die("cannot write '%s': %s", tmp, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, in) > 0) {
        const char *s = strstr(line, "\"step\":");
        if (s && strtol(s + 7, NULL, 10) > step) continue;
        if (strstr(line, "\"event\":\"summary\"")) continue;
        fputs(line, out);
    }
    free(line);
    fclose(in);
    if (fflush(out) != 0 || fclose(out) != 0 || rename(tmp, path) != 0)
        rt_die("cannot rewrite '%s': %s", path, strerror(errno));
}

void trainer_log_off(trainer_log *log) { memset(log, 0, sizeof *log); }

void trainer_log_open(trainer_log *log, const char *out_dir, const rt_model *m, int ranks,
                      long resume_step, int benchmark) {
    memset(log, 0, sizeof *log);
    log->on = 1;
    log->tty = rt_is_tty(stdout);
    if (resume_step < 0 && !benchmark && dir_has_checkpoints(out_dir))
        rt_die_hint("resume it with --resume FILE, or pass another --out",
                    "output directory '%s' already holds a run's checkpoints", out_dir);
    make_dirs(out_dir);
    snprintf(log->path, sizeof log->path, "%s/%s", out_dir, benchmark ? "benchmark.jsonl" : "metrics.jsonl");
    if (resume_step >= 0) truncate_metrics_after(log->path, resume_step);
    log->metrics = fopen(log->path, resume_step >= 0 ? "a" : "w");
    if (!log->metrics)
        rt_die_hint("choose another --out directory", "cannot write '%s': %s", log->path, strerror(errno));
    fprintf(log->metrics,
            "{\"event\":\"start\",\"name\":\"%s\",\"spec_hash\":\"%s\",\"batch\":%d,\"ranks\":%d,"
            "\"global_batch\":%d,\"params\":%ld,\"resumed_at\":%ld}\n",
            m->name, m->spec_hash, m->batch, ranks, m->batch * ranks, m->n_params, resume_step);
    fflush(log->metrics);
    if (resume_step < 0 && ranks > 1)
        printf("%s: %ld parameters, batch %d = %d ranks x %d, spec %.12s\n", m->name, m->n_params,
               m->batch * ranks, ranks, m->batch, m->spec_hash);
    else if (resume_step < 0)
        printf("%s: %ld parameters, batch %d, spec %.12s\n", m->name, m->n_params, m->batch, m->spec_hash);
    else printf("%s: resumed at step %ld\n", m->name, resume_step);
}

/* JSON has no NaN or infinity: write null. */
static void json_number(FILE *f, const char *key, double v) {
    if (isfinite(v)) fprintf(f, ",\"%s\":%.9g", key, v);
    else fprintf(f, ",\"%s\":null", key);
}

static void end_progress(trainer_log *log) {
    if (log->progress_open) putchar('\n');
    log->progress_open = 0;
}

void trainer_log_train(trainer_log *log, long epoch, long step, long total_steps, double lr,
                       double loss, double top1, double images_per_s, double comm_ms,
                       double elapsed_s) {
    if (!log->on) return;
    fprintf(log->metrics, "{\"event\":\"train\",\"epoch\":%ld,\"step\":%ld", epoch, step);
    json_number(log->metrics, "lr", lr);
    json_number(log->metrics, "loss", loss);
    json_number(log->metrics, "top1", top1);
    json_number(log->metrics, "images_per_s", images_per_s);
    if (!isnan(comm_ms)) json_number(log->metrics, "comm_wait_ms", comm_ms);
    fputs("}\n", log->metrics);
    fflush(log->metrics);
    /* A terminal gets at most a few redraws a second: with log_every: 1 a small net logs
     * thousands of steps a second, and a launcher that stops reading its ranks' terminal
     * (mpirun at SIGTERM) would leave rank 0 blocked in write() instead of checkpointing. */
    double now = rt_time_s();
    if (log->tty && step < total_steps && now - log->progress_at < 0.25) return;
    log->progress_at = now;
    char comm[48] = "";
    if (!isnan(comm_ms)) snprintf(comm, sizeof comm, "  comm wait %.2f ms/step", comm_ms);
    double eta = step > 0 ? elapsed_s / step * (total_steps - step) : 0;
    char eta_s[32];
    rt_format_duration(eta, eta_s, sizeof eta_s);
    printf("%sepoch %ld step %ld/%ld  loss %.4f  lr %.5f  %.0f img/s%s  ETA %s%s",
           log->tty ? "\r" : "", epoch, step, total_steps, loss, lr, images_per_s, comm, eta_s,
           log->tty ? "   " : "\n");
    fflush(stdout);
    log->progress_open = log->tty;
}

void trainer_log_eval(trainer_log *log, long epoch, long step, double loss, double top1, double top5) {
    if (!log->on) return;
    fprintf(log->metrics, "{\"event\":\"eval\",\"epoch\":%ld,\"step\":%ld", epoch, step);
    json_number(log->metrics, "loss", loss);
    json_number(log->metrics, "top1", top1);
    json_number(log->metrics, "top5", top5);
    fputs("}\n", log->metrics);
    fflush(log->metrics);
    end_progress(log);
    printf("epoch %ld: test loss %.4f  top-1 %.2f%%  top-5 %.2f%%\n", epoch, loss, 100 * top1, 100 * top5);
    fflush(stdout);
}

void trainer_log_benchmark(trainer_log *log, long steps, int batch, int ranks, int overlap,
                           double seconds, double ips, double comm_ms, double exposed_ms) {
    if (!log->on) return;
    fprintf(log->metrics, "{\"event\":\"benchmark\",\"steps\":%ld,\"batch\":%d,\"ranks\":%d,\"overlap\":%s",
            steps, batch, ranks, overlap ? "true" : "false");
    json_number(log->metrics, "seconds", seconds);
    json_number(log->metrics, "images_per_s", ips);
    json_number(log->metrics, "comm_wait_ms", comm_ms);
    json_number(log->metrics, "comm_exposed_ms", exposed_ms);
    fputs("}\n", log->metrics);
    fflush(log->metrics);
}

void trainer_log_summary(trainer_log *log, long step, double loss, double top1, double top5,
                         double wall_s, const char *params_hash) {
    if (!log->on) return;
    fprintf(log->metrics, "{\"event\":\"summary\",\"step\":%ld", step);
    json_number(log->metrics, "loss", loss);
    json_number(log->metrics, "top1", top1);
    json_number(log->metrics, "top5", top5);
    json_number(log->metrics, "wall_s", wall_s);
    fprintf(log->metrics, ",\"params_hash\":\"%s\"}\n", params_hash);
    fflush(log->metrics);
    end_progress(log);
    char wall[32];
    printf("final: test top-1 %.2f%%  top-5 %.2f%%  loss %.4f  after %ld steps  wall time %s  params %s\n",
           100 * top1, 100 * top5, loss, step, rt_format_duration(wall_s, wall, sizeof wall), params_hash);
}

void trainer_log_note(trainer_log *log, const char *fmt, ...) {
    if (!log->on) return;
    end_progress(log);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

void trainer_log_close(trainer_log *log) {
    if (!log->on || !log->metrics) return;
    end_progress(log);
    if (fclose(log->metrics) != 0)
        rt_die("cannot finish writing '%s': %s", log->path, strerror(errno));
    log->metrics = NULL;
}
