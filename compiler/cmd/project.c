/* `trainc project SPEC`: a time-to-train projection, printed next to the published time.
 *  - `--benchmark FILE`: from the images/s a trainer of this spec measured on this machine
 *    (`BIN --benchmark 20` writes FILE = OUT/benchmark.jsonl): step time = global batch / rate.
 *  - `--system NAME [--gpus N]`: from hardware tables (project_tables.c). Per step and rank:
 *    each layer takes max(FLOPs / peak, bytes / memory bandwidth) (a roofline) with FLOPs =
 *    6 x MACs x batch (forward 2, backward 4) and bytes = 3 x (inputs + output) activations x
 *    batch plus 3 x its parameters; the optimizer streams 5 x 4 bytes per parameter. The
 *    gradients are all-reduced per compile-time bucket with a ring (alpha-beta):
 *    t = 2 (p - 1) alpha + 2 (p - 1) / p x bytes / beta over the slowest link of the ring
 *    (between nodes: a NIC shared by the node's ranks); with overlap a bucket starts when
 *    backward has produced it (its share of the parameters) and the previous one is done,
 *    and only what runs past the end of backward is exposed.
 * Epoch = steps per epoch x step time, plus the evaluations (forward only, a third of the
 * step's compute per image). */
#include "project.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower.h"
#include "sema.h"

typedef struct {
    double flop_s, mem_s, optim_s;   /* per step and rank */
    double allreduce_s, exposed_s;
    int n_buckets;
    double grad_bytes;
} step_model;

static double input_bytes(const net_desc *net, const net_layer *L) {
    double b = 0;
    for (int k = 0; k < L->n_inputs; k++)
        b += L->inputs[k] < 0 ? 4.0 * net->input.c * net->input.h * net->input.w : (double)net->layers[L->inputs[k]].act_bytes;
    return b;
}

static void roofline(step_model *m, const sema_result *res, const project_device *d) {
    const run_config *r = &res->run;
    bool half = r->compute == RUN_FP16 || r->compute == RUN_BF16;
    double peak = half ? d->half : r->compute == RUN_TF32 && d->tf32 > 0 ? d->tf32 : d->fp32;
    double elem = half ? 0.5 : 1.0;   /* activation bytes relative to fp32 */
    double batch = (double)r->train.batch_per_rank;
    for (int i = 0; i < res->net.n_layers; i++) {
        const net_layer *L = &res->net.layers[i];
        double flops = 6.0 * (double)L->macs * batch;
        double bytes = 3.0 * elem * batch * (input_bytes(&res->net, L) + (double)L->act_bytes) + 3.0 * 4.0 * L->params;
        double tf = flops / (L->macs > 0 ? peak : d->fp32), tm = bytes / d->mem_bw;
        if (tf >= tm) m->flop_s += tf;
        else m->mem_s += tm;
    }
    m->optim_s = 5.0 * 4.0 * (double)res->net.params / d->mem_bw;
}

/* One bucket's ring all-reduce over p ranks. */
static double ring_s(double bytes, int p, const project_system *s) {
    if (p <= 1) return 0;
    bool across = p > s->per_node;
    double beta = across ? s->inter->beta * s->nics / fmin(s->per_node, p) : s->intra->beta;
    double alpha = across ? s->inter->alpha : s->intra->alpha;
    return 2.0 * (p - 1) * alpha + 2.0 * (p - 1) / p * bytes / beta;
}

static int allreduce(step_model *m, const sema_result *res, const project_system *s, int ranks, const char *spec) {
    schedule lowered;   /* the CUDA trainer's buckets, as `build --backend cuda` plans them */
    build_options cuda = { .backend = BACKEND_CUDA, .fuse = 1 };
    if (lower(&lowered, res, &cuda, 0, spec) != 0) return 1;
    const ir_net net = lowered.net;
    double backward = (m->flop_s + m->mem_s) * 2.0 / 3.0, done = 0, end = 0, total_params = 0;
    for (int k = 0; k < net.n_buckets; k++) total_params += (double)net.buckets[k].count;
    m->n_buckets = net.n_buckets;
    for (int k = 0; k < net.n_buckets; k++) {
        double bytes = 4.0 * (double)net.buckets[k].count, t = ring_s(bytes, ranks, s);
        done += (double)net.buckets[k].count;
        double ready = res->run.overlap ? backward * done / total_params : backward;
        end = fmax(end, ready) + t;
        m->allreduce_s += t;
        m->grad_bytes += bytes;
    }
    m->exposed_s = fmax(0, end - backward);
    schedule_free(&lowered);
    return 0;
}

/* "1h07m51s", "60m", "200s", "35s/epoch" -> seconds; *per_epoch for "/epoch". < 0: none. */
static double parse_duration(const char *text, bool *per_epoch) {
    *per_epoch = strstr(text, "/epoch") != NULL;
    double total = 0;
    int parts = 0;
    const char *p = text;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p) break;
        if (*end == 'h') total += 3600 * v;
        else if (*end == 'm') total += 60 * v;
        else if (*end == 's') total += v;
        else return -1;
        parts++;
        p = end + 1;
    }
    return parts ? total : -1;
}

/* "throughput 7080 img/s" in reference.notes; < 0: none. */
static double published_rate(const char *notes) {
    const char *p = strstr(notes, "throughput ");
    return p ? strtod(p + 11, NULL) : -1;
}

static int read_benchmark(const char *path, double *ips, int *ranks) {
    FILE *f = fopen(path, "r");
    char line[2048];
    *ips = -1;
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "\"images_per_s\":"), *q = strstr(line, "\"ranks\":");
        if (strstr(line, "\"benchmark\"") && p) *ips = strtod(p + 15, NULL), *ranks = q ? atoi(q + 8) : 1;
    }
    if (f) fclose(f);
    if (*ips > 0) return 0;
    fprintf(stderr, "trainc: error: no benchmark record in '%s'\n  hint: run the trainer with --benchmark 20 "
                    "and pass its OUT/benchmark.jsonl\n", path);
    return 1;
}

static void format_duration(char *buf, size_t cap, double s) {
    if (s >= 3600) snprintf(buf, cap, "%dh%02dm%02ds", (int)(s / 3600), (int)fmod(s / 60, 60), (int)fmod(s, 60));
    else if (s >= 60) snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, cap, "%.2fs", s);
}

static double val_samples(const run_config *r) {
    if (r->val_samples) return (double)r->val_samples;
    return r->val.source == RUN_DATA_IMAGE_FOLDER ? 50000 : r->val.source == RUN_DATA_FASHION_MNIST ? 10000 : 0;
}

/* Epoch and total times from a step time; prints them and the published figures. */
static void report_times(const run_config *r, double step_s, double eval_image_s, int ranks) {
    double images = (double)r->global_batch / step_s;
    double eval_s = r->has_val ? val_samples(r) * eval_image_s / ranks : 0;
    double epoch_s = (double)r->steps_per_epoch * step_s;
    double evals = r->eval_every_iterations ? (double)r->total_steps / r->eval_every_iterations
                                            : ceil((double)r->total_steps / r->steps_per_epoch / r->eval_every);
    double total_s = (double)r->total_steps * step_s + evals * eval_s;
    char e[32], t[32], ev[32];
    format_duration(e, sizeof e, epoch_s);
    format_duration(t, sizeof t, total_s);
    format_duration(ev, sizeof ev, eval_s);
    printf("  step              %.2f ms: %.0f images/s\n", 1e3 * step_s, images);
    printf("  epoch             %s of training (%lld steps), evaluation %s\n", e, (long long)r->steps_per_epoch, ev);
    printf("  time to train     %s (%lld steps, %.0f evaluations)\n", t, (long long)r->total_steps, evals);
    bool per_epoch;
    double pub = parse_duration(r->reference.time, &per_epoch), rate = published_rate(r->reference.notes);
    if (pub > 0)
        printf("  published         %s: projected / published = %.2f\n", r->reference.time,
               (per_epoch ? epoch_s : total_s) / pub);
    if (rate > 0) printf("  published rate    %.0f images/s: projected / published = %.2f\n", rate, images / rate);
    printf("  machine-readable  epoch_s=%.6g eval_s=%.6g total_s=%.6g images_per_s=%.6g published_s=%.6g%s "
           "published_ips=%.6g\n", epoch_s, eval_s, total_s, images, pub, per_epoch ? "/epoch" : "", rate);
}

static int usage(const char *msg, const char *arg) {
    fprintf(stderr, "trainc: error: ");
    fprintf(stderr, msg, arg);
    fputs("\n  hint: trainc project SPEC --benchmark OUT/benchmark.jsonl | --system NAME [--gpus N]; "
          "trainc project --systems lists the hardware tables\n", stderr);
    return 2;
}

int project_main(int argc, char **argv) {
    const char *spec = NULL, *bench = NULL, *system = NULL;
    int gpus = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--systems")) { project_list_systems(stdout); return 0; }
        if (!strcmp(argv[i], "--benchmark") && i + 1 < argc) bench = argv[++i];
        else if (!strcmp(argv[i], "--system") && i + 1 < argc) system = argv[++i];
        else if (!strcmp(argv[i], "--gpus") && i + 1 < argc) {
            gpus = atoi(argv[++i]);
            if (gpus < 1 || gpus > 1048576) return usage("--gpus needs a count from 1, got '%s'", argv[i]);
        } else if (argv[i][0] == '-') return usage("unknown or incomplete option '%s' for project", argv[i]);
        else if (spec) return usage("project takes one SPEC (extra '%s')", argv[i]);
        else spec = argv[i];
    }
    if (!spec || (!bench == !system)) return usage("project needs a SPEC and one of --benchmark FILE or --system NAME%s", "");
    project_system sys;
    if (system && !project_find_system(system, &sys)) return usage("unknown system '%s'", system);
    diag_ctx diag;
    spec_doc doc;
    sema_result res;
    diag_init(&diag, stderr);
    int bad = sema_load(&doc, &res, &diag, spec);
    const run_config *r = &res.run;
    if (!bad && !r->has_run) {
        fprintf(stderr, "%s: error: the spec has no run (data.train and solver) to project\n", spec);
        bad = 1;
    }
    int ranks = gpus ? gpus : (int)r->ranks_for_show;
    if (!bad && gpus && r->ranks && gpus != r->ranks)
        printf("note: the spec sets %lld ranks; projecting its global batch on %d\n", (long long)r->ranks, gpus);
    if (!bad) printf("projection for %s: %lld ranks, global batch %lld, %lld steps per epoch\n", spec,
                     (long long)ranks, (long long)r->global_batch, (long long)r->steps_per_epoch);
    if (!bad && bench) {
        double ips;
        int b_ranks = 1;
        bad = read_benchmark(bench, &ips, &b_ranks);
        if (!bad) {
            printf("  measured          %.1f images/s on this machine (%d rank%s), from %s\n", ips, b_ranks,
                   b_ranks == 1 ? "" : "s", bench);
            double step_s = (double)r->global_batch / ips;
            report_times(r, step_s, step_s / 3.0 / (double)r->train.batch_per_rank, b_ranks);
        }
    } else if (!bad) {
        step_model m = { 0 };
        roofline(&m, &res, sys.device);
        bad = allreduce(&m, &res, &sys, ranks, spec);
        if (!bad) {
            double compute = m.flop_s + m.mem_s + m.optim_s, step = compute + m.exposed_s;
            printf("  system            %s\n", sys.what);
            printf("  compute           %.2f ms per step and rank: %.2f FLOP-bound + %.2f memory-bound layers "
                   "+ %.2f optimizer\n", 1e3 * compute, 1e3 * m.flop_s, 1e3 * m.mem_s, 1e3 * m.optim_s);
            printf("  all-reduce        %d buckets, %.1f MB: ring %.2f ms, exposed %.2f ms (overlap %s)\n", m.n_buckets,
                   m.grad_bytes / 1e6, 1e3 * m.allreduce_s, 1e3 * m.exposed_s, r->overlap ? "on" : "off");
            report_times(r, step, (m.flop_s + m.mem_s) / 3.0 / (double)r->train.batch_per_rank, ranks);
        }
    }
    sema_result_free(&res);
    spec_doc_free(&doc);
    return bad ? 1 : 0;
}
