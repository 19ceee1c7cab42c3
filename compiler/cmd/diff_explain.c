/* `trainc diff` explained: derived values with their formulas, the LR of both runs at the
 * landmarks of either schedule, and layer changes summarized by stage and block instance. */
#include "diff_explain.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void diff_format_number(char *buf, size_t cap, double v) {
    if (v == (double)(long long)v && fabs(v) < 1e15) {   /* 30.0 reads better than 3e+01 */
        snprintf(buf, cap, "%.1f", v);
        return;
    }
    char want[40];
    snprintf(want, sizeof want, "%.15g", v);
    double rounded = strtod(want, NULL);
    for (int prec = 1; prec <= 15; prec++) {
        snprintf(buf, cap, "%.*g", prec, rounded);
        if (strtod(buf, NULL) == rounded) break;
    }
    if (!strpbrk(buf, ".eEni") && strlen(buf) + 3 < cap) strcat(buf, ".0");
}

/* ---- derived values ---------------------------------------------------------------- */
enum { DERIVED_VALUE = 48, DERIVED_FORMULA = 160 };
typedef struct {
    const char *name;
    char value[DERIVED_VALUE], formula[DERIVED_FORMULA];   /* formula "" = none */
} derived_row;

static const char *const scaling_rule[] = { "no scaling", "LINEAR", "SQRT" };

static void peak_formula(char *buf, size_t cap, const run_config *r) {
    char base[40], per[40];
    const rt_lr_config *lr = &r->lr;
    diff_format_number(base, sizeof base, lr->kind == RT_LR_ONE_CYCLE ? lr->one_cycle.max_lr : lr->base);
    snprintf(per, sizeof per, "%.0f", lr->per_batch);
    const char *what = lr->kind == RT_LR_ONE_CYCLE ? "max_lr " : "";
    if (lr->scaling == RT_LR_SCALE_LINEAR)
        snprintf(buf, cap, "%s%s x %lld / %s, LINEAR", what, base, (long long)r->global_batch, per);
    else if (lr->scaling == RT_LR_SCALE_SQRT)
        snprintf(buf, cap, "%s%s x sqrt(%lld / %s), SQRT", what, base, (long long)r->global_batch, per);
    else
        snprintf(buf, cap, "%s%s, %s", what[0] ? what : "base ", base, scaling_rule[0]);
}

/* The training and evaluation resolutions, and the EMA's weight per update (solver.ema). */
static int eval_and_ema_rows(derived_row *rows, const sema_result *res) {
    const run_config *r = &res->run;
    const net_shape in = res->net.input;
    int n = 0;
    rows[n] = (derived_row){ .name = "train_eval_resolution" };
    long long eh = r->eval_h ? r->eval_h : in.h, ew = r->eval_w ? r->eval_w : in.w;
    snprintf(rows[n].value, DERIVED_VALUE, "%lldx%lld / %lldx%lld", (long long)in.h, (long long)in.w, eh, ew);
    snprintf(rows[n++].formula, DERIVED_FORMULA, "%s", r->eval_h ? "net.input_shape / data.val.center_crop (a second forward)"
                                                                 : "net.input_shape, evaluated at the same size");
    rows[n] = (derived_row){ .name = "ema_weight_per_update" };
    if (r->ema.decay <= 0) {
        snprintf(rows[n].value, DERIVED_VALUE, "none");
        snprintf(rows[n++].formula, DERIVED_FORMULA, "no solver.ema");
        return n;
    }
    char d[40], one[40];
    snprintf(rows[n].value, DERIVED_VALUE, "%.6g", r->ema.alpha);
    diff_format_number(d, sizeof d, r->ema.decay);
    diff_format_number(one, sizeof one, 1.0 - r->ema.decay);
    if (r->ema.batch_adjust)
        snprintf(rows[n].formula, DERIVED_FORMULA, "(1 - %s) x %lld x %lld steps / %lld epochs%s, every %lld steps", d,
                 (long long)r->global_batch, (long long)r->ema.every_iterations, (long long)r->epochs,
                 r->ema.alpha >= 1.0 ? " (at most 1)" : "", (long long)r->ema.every_iterations);
    else
        snprintf(rows[n].formula, DERIVED_FORMULA, "1 - %s = %s, every %lld steps", d, one,
                 (long long)r->ema.every_iterations);
    return n + 1;
}

/* Fills rows[0..9) for one side; a spec without a run has only params and MACs. */
static int derived_rows(derived_row *rows, const sema_result *res) {
    const run_config *r = &res->run;
    int n = 0;
    rows[n] = (derived_row){ .name = "params" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)res->net.params);
    snprintf(rows[n++].formula, DERIVED_FORMULA, "%.2f M over %d layers", res->net.params / 1e6, res->net.n_layers);
    rows[n] = (derived_row){ .name = "macs" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)res->net.macs);
    snprintf(rows[n++].formula, DERIVED_FORMULA, "%.2f G per image, forward", res->net.macs / 1e9);
    if (!r->has_run) return n;
    rows[n] = (derived_row){ .name = "global_batch" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)r->global_batch);
    snprintf(rows[n++].formula, DERIVED_FORMULA, "%lld per rank x %lld rank%s", (long long)r->train.batch_per_rank,
             (long long)r->ranks_for_show, r->ranks_for_show == 1 ? "" : "s");
    rows[n] = (derived_row){ .name = "steps_per_epoch" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)r->steps_per_epoch);
    snprintf(rows[n++].formula, DERIVED_FORMULA, "floor(%lld samples / %lld)", (long long)r->train_samples,
             (long long)r->global_batch);
    rows[n] = (derived_row){ .name = "total_steps" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)r->total_steps);
    if (r->iterations > 0) snprintf(rows[n++].formula, DERIVED_FORMULA, "solver.iterations");
    else snprintf(rows[n++].formula, DERIVED_FORMULA, "%lld x %lld epochs", (long long)r->steps_per_epoch, (long long)r->epochs);
    rows[n] = (derived_row){ .name = "warmup_steps" };
    snprintf(rows[n].value, DERIVED_VALUE, "%lld", (long long)r->warmup_steps);
    char w[40];
    diff_format_number(w, sizeof w, r->lr.warmup.length);
    if (r->lr.warmup.length == 0) snprintf(rows[n++].formula, DERIVED_FORMULA, "no warmup");
    else if (r->lr.warmup.unit == RT_LR_UNIT_ITERATIONS) snprintf(rows[n++].formula, DERIVED_FORMULA, "warmup.iterations");
    else snprintf(rows[n++].formula, DERIVED_FORMULA, "%s epochs x %lld steps", w, (long long)r->steps_per_epoch);
    rows[n] = (derived_row){ .name = "peak_lr" };
    diff_format_number(rows[n].value, DERIVED_VALUE, r->peak_lr);
    peak_formula(rows[n++].formula, DERIVED_FORMULA, r);
    return n + eval_and_ema_rows(rows + n, res);
}

int diff_explain_derived(FILE *out, const sema_result *a, const sema_result *b) {
    derived_row ra[12], rb[12];
    int na = derived_rows(ra, a), nb = derived_rows(rb, b), count = 0;
    for (int i = 0; i < (na > nb ? na : nb); i++) {
        const derived_row *x = i < na ? &ra[i] : NULL, *y = i < nb ? &rb[i] : NULL;
        if (x && y && !strcmp(x->value, y->value)) continue;
        const derived_row *any = x ? x : y;
        fprintf(out, "derived.%s: %s -> %s\n", any->name, x ? x->value : "(none)", y ? y->value : "(none)");
        if (x) fprintf(out, "    A: %s = %s\n", x->value, x->formula);
        if (y) fprintf(out, "    B: %s = %s\n", y->value, y->formula);
        count++;
    }
    return count;
}

/* ---- LR landmarks --------------------------------------------------------------------- */
typedef struct {
    double epoch;
    char label[40];
} landmark;

static int add_landmarks(landmark *marks, int n, int cap, const run_config *r, const char *side) {
    rt_lr_point pts[40];
    int k = rt_lr_key_points(pts, 40, &r->lr), drop = 0;
    if (k > 40) k = 40;
    for (int i = 0; i < k && n < cap; i++) {
        char label[40];
        if (!strcmp(pts[i].what, "end")) continue;   /* one "final" row for both */
        if (!strcmp(pts[i].what, "drop")) snprintf(label, sizeof label, "drop %d (%s)", ++drop, side);
        else snprintf(label, sizeof label, "%s (%s)", pts[i].what, side);
        int j = 0;
        while (j < n && fabs(marks[j].epoch - pts[i].epoch) > 1e-9) j++;
        if (j < n) {   /* both have a landmark there: one row, "(A, B)" */
            size_t len = strlen(marks[j].label);
            if (len > 4 && !strcmp(marks[j].label + len - 3, "(A)") && !strcmp(side, "B") &&
                !strncmp(marks[j].label, label, len - 3))
                snprintf(marks[j].label + len - 3, sizeof marks[j].label - (len - 3), "(A, B)");
            continue;
        }
        marks[n].epoch = pts[i].epoch;
        snprintf(marks[n++].label, sizeof marks[0].label, "%s", label);
    }
    return n;
}

static int landmark_cmp(const void *x, const void *y) {
    double d = ((const landmark *)x)->epoch - ((const landmark *)y)->epoch;
    return (d > 0) - (d < 0);
}

/* "5.2 (step 480)", or "(ended)" past the run's last step. */
static void lr_at_epoch(char buf[64], size_t cap, const run_config *r, double epoch) {
    long step = rt_lr_step_of_epoch(&r->lr, epoch);
    if (step >= r->total_steps) { snprintf(buf, cap, "(ended)"); return; }
    snprintf(buf, cap, "%.6g (step %ld)", rt_lr_at(&r->lr, step), step);   /* 6 digits: a table to read */
}

void diff_explain_lr(FILE *out, const run_config *a, const run_config *b) {
    if (!a->has_run || !b->has_run) return;
    landmark marks[80];
    int n = add_landmarks(marks, 0, 80, a, "A");
    n = add_landmarks(marks, n, 80, b, "B");
    qsort(marks, (size_t)n, sizeof *marks, landmark_cmp);
    fprintf(out, "LR at the landmarks of either schedule, by epoch:\n");
    fprintf(out, "  %-22s %9s  %-26s %s\n", "landmark", "epoch", "A", "B");
    for (int i = 0; i < n; i++) {
        char la[64], lb[64];
        lr_at_epoch(la, sizeof la, a, marks[i].epoch);
        lr_at_epoch(lb, sizeof lb, b, marks[i].epoch);
        fprintf(out, "  %-22s %9.3f  %-26s %s\n", marks[i].label, marks[i].epoch, la, lb);
    }
    char fa[64], fb[64];
    snprintf(fa, sizeof fa, "%.6g (step %lld)", rt_lr_at(&a->lr, (long)a->total_steps - 1), (long long)a->total_steps - 1);
    snprintf(fb, sizeof fb, "%.6g (step %lld)", rt_lr_at(&b->lr, (long)b->total_steps - 1), (long long)b->total_steps - 1);
    fprintf(out, "  %-22s %9s  %-26s %s\n", "final LR (A, B)", "last step", fa, fb);
}

/* ---- layers ----------------------------------------------------------------------------- */
/* A stage is the first component of a dotted layer name made by a block ("layer3" of
 * "layer3.5.conv1"); a block instance is its first two components when the second is an
 * index ("layer3.5"). Layers outside blocks are their own stage. */
static size_t stage_len(const net_layer *L) {
    const char *dot = strchr(L->name, '.');
    return dot && L->loc.via_block ? (size_t)(dot - L->name) : 0;
}

static size_t instance_len(const char *name, size_t stage) {
    const char *p = name + stage + 1, *q = p;
    while (isdigit((unsigned char)*q)) q++;
    return q > p && (*q == '.' || !*q) ? (size_t)(q - name) : stage;
}

typedef struct {
    char name[128], block[64];
    int blocks;
    int64_t params, macs;
} stage_sum;

static stage_sum *find_stage(stage_sum *s, int n, const char *name) {
    for (int i = 0; i < n; i++) if (!strcmp(s[i].name, name)) return &s[i];
    return NULL;
}

/* Sums per stage; the block type is that of the outermost block inside the stage's own. */
static int stage_sums(stage_sum *s, int cap, const net_desc *net) {
    int n = 0;
    char last_instance[160] = "";
    for (int i = 0; i < net->n_layers; i++) {
        const net_layer *L = &net->layers[i];
        size_t sl = stage_len(L);
        if (!sl || sl >= sizeof s[0].name) continue;
        char name[128];
        memcpy(name, L->name, sl), name[sl] = '\0';
        stage_sum *st = find_stage(s, n, name);
        if (!st && n < cap) {
            st = &s[n++];
            memset(st, 0, sizeof *st);
            snprintf(st->name, sizeof st->name, "%s", name);
            snprintf(st->block, sizeof st->block, "%s", L->loc.via_block);
        }
        if (!st) continue;
        size_t il = instance_len(L->name, sl);
        if (il > sl && (strlen(last_instance) != il || strncmp(last_instance, L->name, il))) {
            snprintf(last_instance, sizeof last_instance, "%.*s", (int)il, L->name);
            st->blocks++;
        }
        st->params += L->params;
        st->macs += L->macs;
    }
    return n;
}

static void format_count(char *buf, size_t cap, double v, double unit, const char *suffix, bool sign) {
    snprintf(buf, cap, sign ? "%+.1f %s" : "%.1f %s", v / unit, suffix);
}

static int print_stage(FILE *out, const stage_sum *x, const stage_sum *y) {
    if (x && y && x->blocks == y->blocks && x->params == y->params && x->macs == y->macs) return 0;
    const stage_sum *any = x ? x : y;
    char blocks[160], dp[40], dm[40];
    if (x && y && x->blocks != y->blocks)
        snprintf(blocks, sizeof blocks, "%d -> %d %s blocks", x->blocks, y->blocks, any->block);
    else if (x && y)
        snprintf(blocks, sizeof blocks, "%d %s blocks", x->blocks, any->block);
    else
        snprintf(blocks, sizeof blocks, x ? "%d %s blocks -> (absent)" : "(absent) -> %d %s blocks",
                 any->blocks, any->block);
    int64_t pa = x ? x->params : 0, pb = y ? y->params : 0, ma = x ? x->macs : 0, mb = y ? y->macs : 0;
    format_count(dp, sizeof dp, (double)(pb - pa), 1e6, "M params", true);
    format_count(dm, sizeof dm, (double)(mb - ma), 1e9, "G MACs per image", true);
    fprintf(out, "%s: %s, %s, %s\n", any->name, blocks, dp, dm);
    return 1;
}

/* The layer name of a net["NAME"] path, and the field after it. */
static bool split_layer_path(const char *path, char *name, size_t cap, const char **field) {
    if (strncmp(path, "net[\"", 5)) return false;
    const char *end = strstr(path + 5, "\"]");
    if (!end || (size_t)(end - path - 5) >= cap) return false;
    memcpy(name, path + 5, (size_t)(end - path - 5));
    name[end - path - 5] = '\0';
    *field = end[2] == '.' ? end + 3 : "";
    return true;
}

static const net_layer *layer_named(const net_desc *net, const char *name) {
    for (int i = 0; i < net->n_layers; i++) if (!strcmp(net->layers[i].name, name)) return &net->layers[i];
    return NULL;
}

static const char *input_name(const net_desc *net, int i) { return i < 0 ? "data" : net->layers[i].name; }

/* Whether `other` has L's block instance ("layer1.1" of "layer1.1.drop_path"). */
static bool instance_in(const net_desc *other, const net_layer *L) {
    size_t sl = stage_len(L), il = sl ? instance_len(L->name, sl) : 0;
    if (il <= sl) return false;
    for (int i = 0; i < other->n_layers; i++)
        if (!strncmp(other->layers[i].name, L->name, il) && other->layers[i].name[il] == '.') return true;
    return false;
}

/* x: a layer of n that m lacks, inside a block instance m has, reading only y. */
static bool bypassed(const net_desc *n, const char *x, const net_desc *m, const char *y) {
    const net_layer *L = layer_named(n, x);
    return L && !layer_named(m, x) && instance_in(m, L) && L->n_inputs == 1 &&
           !strcmp(input_name(n, L->inputs[0]), y);
}

/* An inputs change that only reads through a layer one side adds to a shared block (the
 * add reads drop_path on one side, bn3 on the other). */
static bool rerouted(const sema_result *a, const sema_result *b, const char *name) {
    const net_layer *x = layer_named(&a->net, name), *y = layer_named(&b->net, name);
    if (!x || !y || x->n_inputs != y->n_inputs) return false;
    for (int k = 0; k < x->n_inputs; k++) {
        const char *p = input_name(&a->net, x->inputs[k]), *q = input_name(&b->net, y->inputs[k]);
        if (strcmp(p, q) && !bypassed(&a->net, p, &b->net, q) && !bypassed(&b->net, q, &a->net, p)) return false;
    }
    return true;
}

/* Layers one net has inside block instances both nets have (a drop-path layer in every
 * bottleneck): the stage summary counts blocks, parameters and MACs, which may not move, so
 * they get a line per (kind, side), the first and last named; the inputs changes that only
 * route around them are counted on that line instead of listed. Marks what it reports. */
static int print_inside_blocks(FILE *out, const sema_result *a, const sema_result *b,
                               const diff_change *c, int n, char *done) {
    int rerouted_n = 0, lines = 0;
    for (int i = 0; i < n; i++) {
        char name[256];
        const char *field;
        if (!done[i] && split_layer_path(c[i].path, name, sizeof name, &field) && !strcmp(field, "inputs") &&
            c[i].a && c[i].b && rerouted(a, b, name))
            done[i] = 1, rerouted_n++;
    }
    for (int side = 0; side < 2; side++) {
        const net_desc *has = side ? &b->net : &a->net, *lacks = side ? &a->net : &b->net;
        for (int i = 0; i < n; i++) {
            char name[256];
            const char *field;
            if (done[i] || !split_layer_path(c[i].path, name, sizeof name, &field) || *field) continue;
            const net_layer *L = layer_named(has, name);
            if (!L || layer_named(lacks, name) || !instance_in(lacks, L)) continue;
            int count = 0;
            const net_layer *last = L;
            for (int j = i; j < n; j++) {
                char nj[256];
                const char *fj;
                if (done[j] || !split_layer_path(c[j].path, nj, sizeof nj, &fj) || *fj) continue;
                const net_layer *M = layer_named(has, nj);
                if (!M || M->kind != L->kind || layer_named(lacks, nj) || !instance_in(lacks, M)) continue;
                done[j] = 1, count++, last = M;
            }
            fprintf(out, "%s layers inside blocks both nets have: %d -> %d (%s%s%s", net_kind_name(L->kind),
                    side ? 0 : count, side ? count : 0, L->name, count > 1 ? " .. " : "",
                    count > 1 ? last->name : "");
            if (L->kind == NET_STOCHASTIC_DEPTH || L->kind == NET_DROPOUT) {   /* a ramp reads first .. last */
                fprintf(out, ", p %g", L->drop.p);
                if (count > 1) fprintf(out, " .. %g", last->drop.p);
            }
            if (rerouted_n)
                fprintf(out, side ? "; %d layer%s read them instead of their inputs" :
                                    "; %d layer%s that read them read their inputs instead",
                        rerouted_n, rerouted_n == 1 ? "" : "s");
            fputs(")\n", out);
            rerouted_n = 0, lines++;
        }
    }
    return lines;
}

/* Field changes on layers of a stage, one line per (stage, field, a, b) with a count. */
static int print_grouped_changes(FILE *out, const sema_result *a, const sema_result *b,
                                 const diff_change *c, int n) {
    char *done = calloc((size_t)n + 1, 1);
    if (!done) return 0;
    int lines = print_inside_blocks(out, a, b, c, n, done);
    for (int i = 0; i < n; i++) {
        char name[256], stage[256];
        const char *field;
        if (done[i] || !split_layer_path(c[i].path, name, sizeof name, &field)) continue;
        const net_layer *L = layer_named(&a->net, name);
        if (!L) L = layer_named(&b->net, name);
        size_t sl = L ? stage_len(L) : 0;
        /* A field on one side only (a filler given on one side) reads "(absent)" there. */
        const char *va = c[i].a ? c[i].a : "(absent)", *vb = c[i].b ? c[i].b : "(absent)";
        if (!*field) {                           /* a one-sided layer */
            done[i] = 1;
            if (sl) continue;                    /* counted in its stage's summary */
            fprintf(out, "%s: %s -> %s\n", c[i].path, va, vb);
            lines++;
            continue;
        }
        if (!sl) {
            done[i] = 1;
            fprintf(out, "%s: %s -> %s\n", c[i].path, va, vb);
            lines++;
            continue;
        }
        snprintf(stage, sizeof stage, "%.*s", (int)sl, name);
        int count = 0;
        for (int j = i; j < n; j++) {
            char nj[256];
            const char *fj;
            if (done[j] || !split_layer_path(c[j].path, nj, sizeof nj, &fj) || strcmp(fj, field)) continue;
            if (strncmp(nj, stage, sl) || nj[sl] != '.') continue;
            if (strcmp(c[j].a ? c[j].a : "(absent)", va) || strcmp(c[j].b ? c[j].b : "(absent)", vb)) continue;
            done[j] = 1;
            count++;
        }
        fprintf(out, "net[\"%s.*\"].%s: %s -> %s (%d layer%s)\n", stage, field, va, vb, count,
                count == 1 ? "" : "s");
        lines++;
    }
    free(done);
    return lines;
}

int diff_explain_layers(FILE *out, const sema_result *a, const sema_result *b,
                        const diff_change *changes, int n) {
    stage_sum sa[64], sb[64];
    int na = stage_sums(sa, 64, &a->net), nb = stage_sums(sb, 64, &b->net), lines = 0;
    for (int i = 0; i < na; i++) lines += print_stage(out, &sa[i], find_stage(sb, nb, sa[i].name));
    for (int i = 0; i < nb; i++)
        if (!find_stage(sa, na, sb[i].name)) lines += print_stage(out, NULL, &sb[i]);
    lines += print_grouped_changes(out, a, b, changes, n);
    return lines;
}
