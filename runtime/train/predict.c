/* BIN --predict CKPT [--top-k K] IMAGE_OR_FOLDER...: the checkpoint's model classifies image
 * files (JPEG or PNG content; folders are walked in sorted order, their other files skipped),
 * each prepared as the validation split prepares its samples (resize the shorter side, center
 * crop, normalize; a one-channel net gets Pillow's convert("L") of the RGB), and prints the
 * top-k classes with their softmax probabilities, named by the run's classes.txt (beside the
 * checkpoints folder, or --out's) when it has one. With --out DIR it also writes
 * DIR/predictions.jsonl: per image its file, top-k and raw logits. One process; a file that cannot be read or
 * decoded is named on stderr, the others are still classified, and the exit status is 1. */
#include <dirent.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_core.h"
#include "rt_image.h"
#include "trainer_internal.h"

typedef struct {
    char **paths;
    int n, cap;
} path_list;

static void add_path(path_list *l, const char *p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->paths = realloc(l->paths, (size_t)l->cap * sizeof *l->paths);
        if (!l->paths) rt_die("out of memory listing the images");
    }
    l->paths[l->n++] = strdup(p);
}

static int no_dots(const struct dirent *e) { return e->d_name[0] != '.'; }

/* A folder's files at any depth, sorted by name within each folder. */
static void walk(path_list *l, const char *dir) {
    struct dirent **ents;
    int n = scandir(dir, &ents, no_dots, alphasort);
    if (n < 0) rt_die_hint("pass image files or folders that exist", "--predict: cannot read folder '%s'", dir);
    for (int i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, ents[i]->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) walk(l, p);
        else if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) add_path(l, p);
        free(ents[i]);
    }
    free(ents);
}

/* The run's class names ("index name" per line), or NULL. */
static char **read_classes(const trainer *t, char *from, size_t cap) {
    char dir[4096];
    trainer_run_dir(t, t->args.predict, dir, sizeof dir);
    snprintf(from, cap, "%s/classes.txt", dir);
    FILE *f = fopen(from, "r");
    if (!f) return NULL;
    char **names = rt_xcalloc((size_t)t->m->classes, sizeof *names);
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        int k, at = 0;
        if (sscanf(line, "%d %n", &k, &at) != 1 || k < 0 || k >= t->m->classes || !at) continue;
        line[strcspn(line, "\r\n")] = '\0';
        names[k] = strdup(line + at);
    }
    fclose(f);
    return names;
}

static uint8_t *read_file(const char *path, size_t *len, char *why, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return snprintf(why, cap, "cannot open it"), NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n > 0 ? malloc((size_t)n) : NULL;
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        snprintf(why, cap, n <= 0 ? "it is empty" : "cannot read it");
        free(buf), fclose(f);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* One sample in the model's input form at slot i of x: bytes (a device model normalizes
 * them) or normalized floats; channels-last where the plan is. chw: 3 x h x w bytes (gray: the
 * one plane the image source decoded, as its training data was). */
static void put_sample(const trainer *t, void *x, int i, const uint8_t *chw, int h, int w, float lut[][256],
                       int gray) {
    const rt_model *m = t->m;
    int c = m->in_c;
    long plane = (long)h * w, n = plane * c;
    for (int ch = 0; ch < c; ch++)
        for (long p = 0; p < plane; p++) {
            uint8_t v;
            if (c == 1 && gray)
                v = chw[p];
            else if (c == 1)   /* Pillow's convert("L"): ITU-R 601-2 luma, fixed point */
                v = (uint8_t)((chw[p] * 19595u + chw[plane + p] * 38470u + chw[2 * plane + p] * 7471u + 0x8000u) >> 16);
            else
                v = chw[ch * plane + p];
            long at = (long)i * n + (m->input_nhwc ? p * c + ch : ch * plane + p);
            if (m->input_u8) ((uint8_t *)x)[at] = v;
            else ((float *)x)[at] = lut[ch][v];
        }
}

static void print_top(const trainer *t, const char *path, const float *logits, char **names, rt_metrics *log) {
    int classes = t->m->classes, k = t->args.top_k < classes ? t->args.top_k : classes;
    double mx = logits[0], sum = 0;
    for (int j = 1; j < classes; j++) if (logits[j] > mx) mx = logits[j];
    for (int j = 0; j < classes; j++) sum += exp(logits[j] - mx);
    int *taken = rt_xcalloc((size_t)classes, sizeof *taken), *order = rt_xcalloc((size_t)k, sizeof *order);
    printf("%s:", path);
    for (int r = 0; r < k; r++) {
        int best = -1;
        for (int j = 0; j < classes; j++)
            if (!taken[j] && (best < 0 || logits[j] > logits[best])) best = j;
        taken[best] = 1, order[r] = best;
        double p = exp(logits[best] - mx) / sum;
        if (names && names[best]) printf("%s %d %s %.2f%%", r ? "," : "", best, names[best], 100 * p);
        else printf("%s %d %.2f%%", r ? "," : "", best, 100 * p);
    }
    printf("\n");
    if (log->f) {   /* one line per image; the lists as JSON arrays (rt_json has no array writer) */
        rt_json *j = &log->line;
        rt_json_begin(j);
        rt_json_str(j, "file", path);
        rt_json_int(j, "top1", order[0]);
        rt_json_end(j);
        j->buf[--j->len] = '\0';   /* reopen the object for the two arrays */
        fprintf(log->f, "%s,\"top\":[", j->buf);
        for (int r = 0; r < k; r++) fprintf(log->f, "%s%d", r ? "," : "", order[r]);
        fprintf(log->f, "],\"logits\":[");
        for (int c = 0; c < classes; c++) fprintf(log->f, "%s%.9g", c ? "," : "", logits[c]);
        fprintf(log->f, "]}\n");
    }
    free(taken), free(order);
}

int trainer_run_predict(trainer *t) {
    const rt_model *m = t->m;
    if (t->world > 1)
        rt_die_status(2, "run --predict as one process, without mpirun", "--predict runs on one rank, not %d",
                      t->world);
    if (t->run.mean_file)   /* Caffe's mean image is of the data's stored or resized images, not of any file's */
        rt_die_status(2, "evaluate the data with --eval CKPT, or give the spec per-channel mean_value",
                      "--predict decodes image files, and this spec subtracts Caffe's mean image (%s) from its "
                      "data's images, stored or resized to one size", t->run.mean_file);
    int h = t->run.eval_h ? t->run.eval_h : m->in_h, w = t->run.eval_w ? t->run.eval_w : m->in_w;
    rt_image_transform tf = { .out_h = h, .out_w = w, .mode = RT_IMG_CENTER, .resize = h > w ? h : w };
    if (t->run.source == RT_DATA_IMAGES) {   /* the val split's own resize, filter and crop */
        rt_loader_config cfg;
        rt_loader_config_default(&cfg);
        rt_data_image_loader_config(&t->run, 0, 1, h, w, &cfg);
        tf = cfg.image;
    }
    path_list files = { 0 };
    for (int i = 0; i < t->args.n_images; i++) {
        struct stat st;
        if (stat(t->args.images[i], &st) != 0)
            rt_die_hint("pass image files or folders that exist", "--predict: no file or folder '%s'", t->args.images[i]);
        if (S_ISDIR(st.st_mode)) walk(&files, t->args.images[i]);
        else add_path(&files, t->args.images[i]);
    }
    trainer_allocate(t);
    m->init(t->ctx.params, t->ctx.buffers, t->run.seed);
    int has_ema;
    long epoch, step = trainer_load_weights(t, t->args.predict, &has_ema, &epoch);   /* the model's weights */
    (void)epoch;
    t->ctx.training = 0;
    t->ctx.no_graph = t->args.no_graph;
    if (m->device) m->device->upload(&t->ctx, &t->run, t->opt_state, t->n_state);
    char classes_from[4200];
    char **names = read_classes(t, classes_from, sizeof classes_from);
    printf("%s: checkpoint %s (step %ld), %d image file%s, classes %s\n", m->name, t->args.predict, step, files.n,
           files.n == 1 ? "" : "s", names ? classes_from : "by index (no classes.txt beside the run)");
    size_t per = (size_t)m->in_c * h * w, elem = m->input_u8 ? 1 : sizeof(float);
    void *x = rt_alloc_aligned((size_t)m->batch * per * elem);
    float(*lut)[256] = rt_xcalloc(4, sizeof *lut);
    rt_normalize_lut(t->run.mean, t->run.std, m->in_c, lut);
    uint8_t *chw = rt_xcalloc((size_t)3 * h * w, 1);
    rt_jpeg *dec = rt_jpeg_new();
    rt_metrics log;
    rt_metrics_off(&log);
    rt_err err;
    if (t->args.out_given && rt_metrics_open(&log, t->args.out_dir, "predictions.jsonl", -1, &err) != RT_OK)
        rt_die_err(&err);
    const char **batch_paths = rt_xcalloc((size_t)m->batch, sizeof *batch_paths);
    int failed = 0, filled = 0, skipped = 0;
    for (int i = 0; i <= files.n; i++) {
        if (i < files.n) {
            char why[256] = "";
            size_t len = 0;
            uint8_t *buf = read_file(files.paths[i], &len, why, sizeof why);
            const char *kind = buf ? rt_image_sniff(buf, len) : NULL;
            int image = kind && (!strcmp(kind, "JPEG") || !strcmp(kind, "PNG"));
            int named = 0;   /* named on the command line, not found in a folder */
            for (int a = 0; a < t->args.n_images; a++) named |= !strcmp(t->args.images[a], files.paths[i]);
            if (buf && !image && !named) {   /* labels.txt and the like inside a folder */
                free(buf), skipped++;
                continue;
            }
            if (buf && !image) snprintf(why, sizeof why, "not a JPEG or PNG image (%s)", kind ? kind : "unknown content");
            if (image && rt_jpeg_sample(dec, buf, len, &tf, 0, chw, why, sizeof why) == 0) {
                put_sample(t, x, filled, chw, h, w, lut, tf.gray);
                batch_paths[filled++] = files.paths[i];
            } else {
                fprintf(stderr, "error: --predict: %s: %s\n", files.paths[i], why);
                failed++;
            }
            free(buf);
        }
        if (filled == m->batch || (i == files.n && filled > 0)) {   /* the compiled batch is fixed: pad it */
            memset((char *)x + filled * per * elem, 0, (m->batch - filled) * per * elem);
            m->eval_forward(&t->ctx, x, t->logits);
            for (int b = 0; b < filled; b++) print_top(t, batch_paths[b], t->logits + (long)b * m->classes, names, &log);
            filled = 0;
        }
    }
    if (skipped) printf("(%d file%s in the folders skipped: not JPEG or PNG)\n", skipped, skipped == 1 ? "" : "s");
    rt_jpeg_free(dec);
    if (log.f) printf("predictions with their logits in %s\n", log.path);
    rt_metrics_close(&log);
    if (failed) fprintf(stderr, "HINT: %d file%s could not be classified; pass JPEG or PNG images\n", failed,
                        failed == 1 ? "" : "s");
    return failed ? 1 : 0;
}
