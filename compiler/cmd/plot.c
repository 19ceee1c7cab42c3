/* `trainc plot METRICS.jsonl... -o FILE.svg` (loss, top-1 and LR of one or more runs against
 * steps or epochs, the published top-1 as a line) and `trainc show --lr-plot FILE.svg SPEC`
 * (a spec's LR schedule before any run). Plain SVG through svg_chart.c. */
#include "plot.h"
#include "output_file.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "svg_chart.h"

typedef struct {
    double *x, *loss, *top1, *lr;
    int n, cap;
} series;

typedef struct {
    char name[160];
    series train, eval;
    double steps_per_epoch;   /* from an eval at an epoch's end; 0 = unknown */
} run_metrics;

static void series_add(series *s, double x, double loss, double top1, double lr) {
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->x = realloc(s->x, (size_t)s->cap * sizeof *s->x);
        s->loss = realloc(s->loss, (size_t)s->cap * sizeof *s->loss);
        s->top1 = realloc(s->top1, (size_t)s->cap * sizeof *s->top1);
        s->lr = realloc(s->lr, (size_t)s->cap * sizeof *s->lr);
        if (!s->x || !s->loss || !s->top1 || !s->lr) { fputs("trainc: out of memory\n", stderr); exit(2); }
    }
    s->x[s->n] = x, s->loss[s->n] = loss, s->top1[s->n] = top1, s->lr[s->n++] = lr;
}

static void series_free(series *s) { free(s->x), free(s->loss), free(s->top1), free(s->lr); }

/* The number after "key": in one flat JSON record; NaN when absent or null. */
static double json_field(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    if (!p) return NAN;
    char *end;
    double v = strtod(p + strlen(pat), &end);
    return end == p + strlen(pat) ? NAN : v;
}

static bool json_event(const char *line, const char *event) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"event\":\"%s\"", event);
    return strstr(line, pat) != NULL;
}

/* Reads one metrics.jsonl; a resumed run's file already holds one history. */
static int read_metrics(run_metrics *r, const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "trainc: error: cannot open metrics file '%s': %s\n  hint: pass the metrics.jsonl a "
                        "trainer wrote into its --out directory\n", path, strerror(errno));
        return 1;
    }
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%.150s", path);
    char line[4096];
    int records = 0;
    while (fgets(line, sizeof line, f)) {
        double step = json_field(line, "step");
        if (json_event(line, "start")) {
            const char *p = strstr(line, "\"name\":\"");
            const char *q = p ? strchr(p + 8, '"') : NULL;
            char dir[4096];   /* runs/NAME/metrics.jsonl: the run's directory tells runs apart */
            snprintf(dir, sizeof dir, "%s", path);
            if (q) snprintf(r->name, sizeof r->name, "%.*s, %.60s", (int)(q - p - 8), p + 8, basename(dirname(dir)));
        } else if (json_event(line, "train")) {
            series_add(&r->train, step, json_field(line, "loss"), json_field(line, "top1"), json_field(line, "lr"));
            records++;
        } else if (json_event(line, "eval")) {
            double epoch = json_field(line, "epoch");
            if (epoch >= 1 && !r->steps_per_epoch && fmod(step, epoch) == 0) r->steps_per_epoch = step / epoch;
            series_add(&r->eval, step, json_field(line, "loss"), json_field(line, "top1"), NAN);
            records++;
        }
    }
    fclose(f);
    if (records) return 0;
    fprintf(stderr, "trainc: error: '%s' holds no train or eval records\n  hint: pass a trainer's metrics.jsonl\n",
            path);
    return 1;
}

/* Through a temporary (output_file.h), so a failed plot leaves an existing FILE as it was. */
static FILE *open_output(const char *path, output_file *o) {
    char err[512];
    if (!output_open(o, path, 0, err, sizeof err)) return o->f;
    fprintf(stderr, "trainc: error: %s\n", err);
    return NULL;
}

static int close_output(output_file *o) {
    char err[512];
    if (!output_commit(o, err, sizeof err)) return 0;
    fprintf(stderr, "trainc: error: %s\n", err);
    return 1;
}

static void range_of(const double *v, int n, double *lo, double *hi) {
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) *lo = fmin(*lo, v[i]), *hi = fmax(*hi, v[i]);
}

/* x in epochs where every run's steps per epoch is known, else in steps. */
static void to_epochs(run_metrics *runs, int n) {
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < runs[i].train.n; k++) runs[i].train.x[k] /= runs[i].steps_per_epoch;
        for (int k = 0; k < runs[i].eval.n; k++) runs[i].eval.x[k] /= runs[i].steps_per_epoch;
    }
}

int plot_metrics(const char *out_path, const char *const *paths, int n_paths, bool by_epoch, double published_top1) {
    run_metrics *runs = calloc((size_t)n_paths, sizeof *runs);
    int bad = !runs;
    for (int i = 0; i < n_paths && !bad; i++) bad = read_metrics(&runs[i], paths[i]);
    for (int i = 0; i < n_paths && !bad && by_epoch; i++)
        if (!runs[i].steps_per_epoch) {
            fprintf(stderr, "trainc: error: '%s' has no evaluation at an epoch's end to tell its steps per epoch\n"
                            "  hint: plot against steps (leave out --epochs)\n", paths[i]);
            bad = 1;
        }
    output_file out;
    FILE *f = bad ? NULL : open_output(out_path, &out);
    if (f) {
        if (by_epoch) to_epochs(runs, n_paths);
        double x0 = 0, x1 = -INFINITY, l0 = INFINITY, l1 = -INFINITY, t0 = 0, t1 = -INFINITY, r0 = 0, r1 = -INFINITY;
        for (int i = 0; i < n_paths; i++) {
            range_of(runs[i].train.x, runs[i].train.n, &x0, &x1);
            range_of(runs[i].eval.x, runs[i].eval.n, &x0, &x1);
            range_of(runs[i].train.loss, runs[i].train.n, &l0, &l1);
            range_of(runs[i].eval.loss, runs[i].eval.n, &l0, &l1);
            range_of(runs[i].train.top1, runs[i].train.n, &t0, &t1);
            range_of(runs[i].eval.top1, runs[i].eval.n, &t0, &t1);
            range_of(runs[i].train.lr, runs[i].train.n, &r0, &r1);
        }
        if (published_top1 > 0) t1 = fmax(t1, published_top1);
        l0 = fmin(l0, 0);
        svg_nice_range(&x0, &x1), svg_nice_range(&l0, &l1), svg_nice_range(&t0, &t1), svg_nice_range(&r0, &r1);
        const char *xl = by_epoch ? "epoch" : "step";
        svg_panel loss = { x0, x1, l0, l1, 70, 40, 560, 220, "loss (solid: train, dashed: test)", xl };
        svg_panel top1 = { x0, x1, t0, fmin(t1, 1.0), 70, 330, 560, 220, "top-1 (solid: test, dashed: train)", xl };
        svg_panel lr = { x0, x1, r0, r1, 70, 620, 560, 220, "learning rate", xl };
        svg_open(f, 860, 890);
        svg_axes(f, &loss), svg_axes(f, &top1), svg_axes(f, &lr);
        const char *names[16], *colors[16];
        for (int i = 0; i < n_paths; i++) {
            const char *c = svg_color(i);
            svg_polyline(f, &loss, runs[i].train.x, runs[i].train.loss, runs[i].train.n, c, 1.5, false);
            svg_polyline(f, &loss, runs[i].eval.x, runs[i].eval.loss, runs[i].eval.n, c, 1.5, true);
            svg_polyline(f, &top1, runs[i].eval.x, runs[i].eval.top1, runs[i].eval.n, c, 2, false);
            svg_markers(f, &top1, runs[i].eval.x, runs[i].eval.top1, runs[i].eval.n, c);
            svg_markers(f, &loss, runs[i].eval.x, runs[i].eval.loss, runs[i].eval.n, c);
            svg_polyline(f, &top1, runs[i].train.x, runs[i].train.top1, runs[i].train.n, c, 1, true);
            svg_polyline(f, &lr, runs[i].train.x, runs[i].train.lr, runs[i].train.n, c, 1.5, false);
            if (i < 16) names[i] = runs[i].name, colors[i] = c;
        }
        if (published_top1 > 0) {
            char label[64];
            snprintf(label, sizeof label, "published top-1 %.2f%%", 100 * published_top1);
            svg_hline(f, &top1, published_top1, "#000", label);
        }
        svg_legend(f, 650, 60, names, colors, n_paths < 16 ? n_paths : 16);
        svg_close(f);
        bad = close_output(&out);
    } else {
        bad = 1;
    }
    for (int i = 0; runs && i < n_paths; i++) series_free(&runs[i].train), series_free(&runs[i].eval);
    free(runs);
    return bad;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int plot_lr_schedule(const char *out_path, const sema_result *res) {
    const run_config *r = &res->run;
    if (!r->has_run) {
        fprintf(stderr, "trainc: error: the spec has no run (data.train and solver) to plot an LR schedule of\n");
        return 1;
    }
    enum { SAMPLES = 1200 };
    long total = (long)r->total_steps, steps[SAMPLES + 2 * 40];
    int n = 0;
    for (int i = 0; i < SAMPLES; i++) steps[n++] = (long)((double)i * (double)(total - 1) / (SAMPLES - 1));
    rt_lr_point pts[40];   /* both sides of every drop, so a step shows as a step */
    int k = rt_lr_key_points(pts, 40, &r->lr);
    for (int i = 0; i < (k < 40 ? k : 40); i++) {
        steps[n++] = pts[i].step;
        if (pts[i].step > 0) steps[n++] = pts[i].step - 1;
    }
    qsort(steps, (size_t)n, sizeof *steps, cmp_long);
    double x[SAMPLES + 80], y[SAMPLES + 80], y0 = 0, y1 = -INFINITY;
    for (int i = 0; i < n; i++) {
        x[i] = (double)steps[i] / (double)r->steps_per_epoch;
        y[i] = rt_lr_at(&r->lr, steps[i]);
        y1 = fmax(y1, y[i]);
    }
    double x0 = 0, x1 = (double)total / (double)r->steps_per_epoch;
    svg_nice_range(&x0, &x1), svg_nice_range(&y0, &y1);
    char title[256];
    snprintf(title, sizeof title, "LR schedule of %s: %s, %lld steps of %lld per epoch, peak %g",
             r->name[0] ? r->name : "the spec", rt_lr_kind_name(r->lr.kind), (long long)r->total_steps,
             (long long)r->steps_per_epoch, r->peak_lr);
    svg_panel p = { x0, x1, y0, y1, 70, 40, 640, 280, title, "epoch" };
    output_file out;
    FILE *f = open_output(out_path, &out);
    if (!f) return 1;
    svg_open(f, 760, 370);
    svg_axes(f, &p);
    svg_polyline(f, &p, x, y, n, svg_color(0), 2, false);
    svg_close(f);
    return close_output(&out);
}

/* trainc plot METRICS.jsonl [MORE.jsonl...] -o FILE.svg [--epochs] [--reference SPEC | --top1 X] */
int plot_main(int argc, char **argv) {
    const char *out = NULL, *ref_spec = NULL;
    const char *paths[64];
    int n = 0;
    bool by_epoch = false;
    double top1 = -1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--epochs")) by_epoch = true;
        else if (!strcmp(argv[i], "--reference") && i + 1 < argc) ref_spec = argv[++i];
        else if (!strcmp(argv[i], "--top1") && i + 1 < argc) {
            char *end;
            top1 = strtod(argv[++i], &end);
            if (*end || !(top1 > 0) || top1 > 100) {
                fprintf(stderr, "trainc: error: --top1 needs an accuracy (0.76 or 76), got '%s'\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "trainc: error: unknown or incomplete option '%s' for plot\n"
                            "  hint: trainc plot METRICS.jsonl [MORE.jsonl...] -o FILE.svg [--epochs] "
                            "[--reference SPEC | --top1 X]\n", argv[i]);
            return 2;
        } else if (n < 64) paths[n++] = argv[i];
    }
    if (!out || n == 0) {
        fputs("trainc: error: plot needs at least one METRICS.jsonl and -o FILE.svg\n"
              "  hint: trainc plot runs/a/metrics.jsonl runs/b/metrics.jsonl -o curves.svg\n", stderr);
        return 2;
    }
    if (ref_spec) {   /* the published top-1 of the spec being reproduced */
        diag_ctx diag;
        spec_doc doc;
        sema_result res;
        diag_init(&diag, stderr);
        int bad = sema_load(&doc, &res, &diag, ref_spec);
        if (!bad) top1 = res.run.reference.top1;
        sema_result_free(&res);
        spec_doc_free(&doc);
        if (bad) return 2;
        if (top1 < 0) fprintf(stderr, "trainc: note: %s has no reference.top1 to draw\n", ref_spec);
    }
    if (top1 > 1) top1 /= 100;
    return plot_metrics(out, paths, n, by_epoch, top1) ? 1 : 0;
}
