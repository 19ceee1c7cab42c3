/* `trainc show`: the per-layer table (shape, params, MACs, activation bytes) and the run
 * summary (batch, steps, LR at its key points, precision, parallel layout, the codegen's
 * memory plan, spec hash). */
#include "show.h"

#include "ir.h"
#include "lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void show_format_float(char *buf, size_t cap, double v) {
    /* Whole numbers read better as 30.0 than as the shorter 3e+01. */
    if (v == (double)(long long)v && fabs(v) < 1e15) {
        snprintf(buf, cap, "%.1f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".eEn") && strlen(buf) + 3 < cap) strcat(buf, ".0");
}

static void shape_text(char *buf, size_t cap, net_shape s) {
    snprintf(buf, cap, "[%lld, %lld, %lld]", (long long)s.c, (long long)s.h, (long long)s.w);
}

static const char *const optimizer_names[] = {"sgd", "lars", "adamw", "lamb", "rmsprop", "adagrad", "adadelta"};

/* solver.ema, only when given: the per-update weight as torchvision derives it. */
static void show_ema(FILE *out, const run_config *r) {
    if (r->ema.decay <= 0) return;
    char d[32], a[32];
    show_format_float(d, sizeof d, r->ema.decay);
    show_format_float(a, sizeof a, 1.0 - r->ema.alpha);
    fprintf(out, "  ema               decay %s, every %lld steps%s: the average keeps %s per update", d,
            (long long)r->ema.every_iterations, r->ema.batch_adjust ? " (batch-adjusted)" : "", a);
    if (r->ema.warmup_epochs) fprintf(out, ", copies the weights for %lld epochs", (long long)r->ema.warmup_epochs);
    fprintf(out, "; evaluated beside the model\n");
}

/* Caffe's multipliers of a conv or linear layer, on a line of their own when any is not 1. */
static void show_mults(FILE *out, int w, const net_layer *L) {
    const double *lr, *decay;
    bool bias;
    if (L->kind == NET_CONV) lr = L->conv.lr_mult, decay = L->conv.decay_mult, bias = L->conv.bias;
    else if (L->kind == NET_LINEAR) lr = L->linear.lr_mult, decay = L->linear.decay_mult, bias = L->linear.bias;
    else return;
    if (lr[0] == 1 && lr[1] == 1 && decay[0] == 1 && decay[1] == 1) return;
    if (bias)
        fprintf(out, "%-*s    lr_mult weight %g, bias %g; decay_mult weight %g, bias %g%s\n", w, "", lr[0], lr[1],
                decay[0], decay[1], lr[0] == 0 && lr[1] == 0 ? " (frozen)" : "");
    else
        fprintf(out, "%-*s    lr_mult weight %g; decay_mult weight %g%s\n", w, "", lr[0], decay[0],
                lr[0] == 0 ? " (frozen)" : "");
}

static void show_layers(FILE *out, const net_desc *net) {
    int w = 5;
    for (int i = 0; i < net->n_layers; i++) {
        int n = (int)strlen(net->layers[i].name);
        if (n > w) w = n > 60 ? 60 : n;
    }
    char shape[80];
    shape_text(shape, sizeof shape, net->input);
    fprintf(out, "%-*s  %-16s  %-18s  %12s  %14s  %12s\n", w, "layer", "type", "output", "params",
            "MACs", "act bytes");
    fprintf(out, "%-*s  %-16s  %-18s  %12s  %14s  %12s\n", w, "data", "input", shape, "-", "-", "-");
    for (int i = 0; i < net->n_layers; i++) {
        const net_layer *L = &net->layers[i];
        shape_text(shape, sizeof shape, L->out);
        fprintf(out, "%-*s  %-16s  %-18s  %12lld  %14lld  %12lld\n", w, L->name,
                net_kind_name(L->kind), shape, (long long)L->params, (long long)L->macs,
                (long long)L->act_bytes);
        show_mults(out, w, L);
    }
    fprintf(out, "%-*s  %-16s  %-18s  %12lld  %14lld  %12lld\n", w, "total", "", "",
            (long long)net->params, (long long)net->macs, (long long)net->act_bytes);
    fprintf(out, "\nparams %lld (%.2f M), MACs per image %lld (%.2f G), activations per image "
            "%.1f MB\n", (long long)net->params, net->params / 1e6, (long long)net->macs,
            net->macs / 1e9, net->act_bytes / 1048576.0);
}

static void show_lr_points(FILE *out, const rt_lr_config *lr) {
    rt_lr_point pts[64];
    int n = rt_lr_key_points(pts, 64, lr);
    if (n > 64) n = 64;
    fprintf(out, "  LR key points:\n    %10s  %9s  %-14s  %s\n", "step", "epoch", "lr", "what");
    for (int i = 0; i < n; i++) {
        char v[40];
        snprintf(v, sizeof v, "%.6g", pts[i].lr);
        fprintf(out, "    %10ld  %9.3f  %-14s  %s\n", pts[i].step, pts[i].epoch, v, pts[i].what);
    }
}

/* The arena of the compiled trainer, as `trainc build` plans it for the per-rank batch:
 * its peak (what the binary allocates) and the naive sum of every tensor it holds. */
typedef struct { int ok; long peak, naive; } show_plan;

static show_plan plan_memory(const sema_result *res) {
    show_plan p = {0, 0, 0};
    if (!res->run.has_run || res->run.train.batch_per_rank < 1) return p;
    build_options cpu = { .backend = BACKEND_CPU, .fuse = 1 };
    schedule s;
    if (lower(&s, res, &cpu, 0, "") == 0) p = (show_plan){1, s.net.arena_bytes, s.net.arena_naive_bytes};
    schedule_free(&s);
    return p;
}

static void show_memory(FILE *out, const run_config *r, show_plan p) {
    if (!p.ok) {
        fputs("  memory plan       (the net cannot be compiled; see trainc build)\n", out);
        return;
    }
    fprintf(out, "  memory plan       arena %.1f MiB planned (%ld bytes) vs %.1f MiB naive sum "
            "(%ld bytes), batch %lld per rank\n", p.peak / 1048576.0, p.peak,
            p.naive / 1048576.0, p.naive, (long long)r->train.batch_per_rank);
}

/* The optimizer and the settings that change its update, in the spec's terms: the forms that
 * differ from torch's (Caffe's, TF's, the forks' LARC) named, so two runs' lines tell them apart. */
static void optimizer_text(char *buf, size_t cap, const run_config *r) {
    char a[32], b[32], c[32], d[32];
    int n = snprintf(buf, cap, "%s", optimizer_names[r->optimizer]);
#define ADD(...) (n += snprintf(buf + n, n < (int)cap ? cap - (size_t)n : 0, __VA_ARGS__))
    show_format_float(d, sizeof d, r->weight_decay);
    switch (r->optimizer) {
    case RUN_OPT_SGD:
        show_format_float(a, sizeof a, r->momentum);
        ADD(", momentum %s%s", a, r->nesterov ? " (Nesterov)" : "");
        if (r->dampening != 0) show_format_float(b, sizeof b, r->dampening), ADD(", dampening %s", b);
        ADD(", weight decay %s", d);
        if (r->lr_in_velocity) ADD(", Caffe's form (the LR inside the velocity)");
        if (r->larc != RT_LARC_NONE) {
            show_format_float(b, sizeof b, r->larc_eta);
            if (r->larc_intel) ADD(", Intel Caffe's local LR (local_gw_ratio %s)", b);
            else ADD(", NVCaffe's LARC (%s, eta %s)", r->larc == RT_LARC_CLIP ? "clip" : "scale", b);
        }
        if (r->warmup_momentum_correction) ADD(", Intel Caffe's warmup momentum correction");
        break;
    case RUN_OPT_LARS:
        show_format_float(a, sizeof a, r->momentum), show_format_float(b, sizeof b, r->eta);
        ADD(", momentum %s, trust coefficient %s, weight decay %s", a, b, d);
        break;
    case RUN_OPT_ADAMW:
    case RUN_OPT_LAMB:
        show_format_float(a, sizeof a, r->beta1), show_format_float(b, sizeof b, r->beta2);
        show_format_float(c, sizeof c, r->adam_eps);
        ADD(", betas (%s, %s), eps %s, weight decay %s", a, b, c, d);
        if (r->optimizer == RUN_OPT_ADAMW && r->adam_caffe_form) ADD(", Caffe's form (L2 decay in the gradient)");
        if (r->optimizer == RUN_OPT_LAMB) {
            show_format_float(a, sizeof a, r->lamb_max_grad_norm);
            ADD(", gradient norm clipped at %s%s", a, r->lamb_trust_clip ? ", trust ratio clipped at 1" : "");
        }
        break;
    case RUN_OPT_RMSPROP:
        show_format_float(a, sizeof a, r->rms_alpha), show_format_float(b, sizeof b, r->rms_eps);
        show_format_float(c, sizeof c, r->momentum);
        ADD(", alpha %s, eps %s, momentum %s, weight decay %s%s", a, b, c, d, r->rms_tf ? ", TF's form" : "");
        break;
    case RUN_OPT_ADAGRAD:
    case RUN_OPT_ADADELTA:
        show_format_float(b, sizeof b, r->adaptive_eps);
        if (r->optimizer == RUN_OPT_ADADELTA) show_format_float(a, sizeof a, r->adaptive_decay), ADD(", rho %s", a);
        ADD(", eps %s, weight decay %s", b, d);
        break;
    }
#undef ADD
}

static void show_run(FILE *out, const run_config *r, show_plan plan) {
    if (!r->has_run) {
        fputs("\nrun: (no data.train or no solver: nothing to summarize)\n", out);
        return;
    }
    char v[40];
    fputs("\nrun:\n", out);
    fprintf(out, "  global batch      %lld (%lld per rank x %lld rank%s%s)\n",
            (long long)r->global_batch, (long long)r->train.batch_per_rank,
            (long long)r->ranks_for_show, r->ranks_for_show == 1 ? "" : "s",
            r->ranks == 0 ? ", ranks: any, shown for 1" : "");
    /* Without data.train_samples a real dataset's size is the source's usual one; the trainer
     * counts the data it is given at start-up and takes its steps per epoch from that. */
    bool assumed = !r->train_samples_given && r->train.source != RUN_DATA_SYNTHETIC;
    fprintf(out, "  steps per epoch   %lld (%lld samples%s, source %s%s)\n", (long long)r->steps_per_epoch,
            (long long)r->train_samples, assumed ? " assumed" : "", r->train.source_name,
            assumed ? ": the trainer counts its data" : "");
    if (r->iterations > 0)
        fprintf(out, "  total steps       %lld (solver.iterations: %.2f epochs)\n", (long long)r->total_steps,
                (double)r->total_steps / (double)r->steps_per_epoch);
    else
        fprintf(out, "  total steps       %lld (%lld epochs)\n", (long long)r->total_steps,
                (long long)r->epochs);
    snprintf(v, sizeof v, "%.6g", r->peak_lr);
    fprintf(out, "  peak LR           %s (scaling %s, reference batch %.0f)\n", v,
            run_lr_scaling_names[r->lr.scaling], r->lr.per_batch);
    fprintf(out, "  warmup            %lld steps\n", (long long)r->warmup_steps);
    /* A curve spans the steps after warmup: their count is what a paper states (7,594). */
    bool curve = r->lr.kind != RT_LR_CONSTANT && r->lr.kind != RT_LR_STEP && r->lr.kind != RT_LR_MULTISTEP &&
                 r->lr.kind != RT_LR_INV && r->lr.kind != RT_LR_SIGMOID;
    char span[96] = "";
    if (curve) snprintf(span, sizeof span, " over %lld steps", (long long)(r->total_steps - r->warmup_steps));
    /* Caffe's policies count iterations from the start: their constants say the whole curve. */
    if (r->lr.kind == RT_LR_INV)
        snprintf(span, sizeof span, " (gamma %g, power %g, per iteration)", r->lr.inv.gamma, r->lr.inv.power);
    if (r->lr.kind == RT_LR_SIGMOID)
        snprintf(span, sizeof span, " (gamma %g, half the peak at step %.0f)", r->lr.sigmoid.gamma,
                 r->lr.sigmoid.step_iterations);
    fprintf(out, "  schedule          %s%s, updated per %s\n", rt_lr_kind_name(r->lr.kind), span,
            r->lr.stepping == RT_LR_PER_ITERATION ? "step" : "epoch");
    show_lr_points(out, &r->lr);
    char opt[512];
    optimizer_text(opt, sizeof opt, r);
    show_format_float(v, sizeof v, r->label_smoothing);
    fprintf(out, "  optimizer         %s, label smoothing %s%s\n", opt, v,
            r->exempt_norm ? ", no weight decay on norms" : r->exempt_bn_bias ? ", no weight decay on norm parameters and biases" : "");
    show_ema(out, r);
    if (r->eval_h)
        fprintf(out, "  eval resolution   %lldx%lld (data.val's crop; the net trains at net.input_shape)\n",
                (long long)r->eval_h, (long long)r->eval_w);
    show_recipe(out, r);
    fprintf(out, "  precision         compute %s, master FP32, loss scale %s\n",
            run_compute_names[r->compute], run_loss_scale_names[r->loss_scale]);
    show_format_float(v, sizeof v, r->bucket_mb);
    fprintf(out, "  parallel          ranks %lld, bucket %s MB, overlap %s, sync BN %s\n",
            (long long)r->ranks, v, r->overlap ? "on" : "off", r->sync_bn ? "on" : "off");
    show_memory(out, r, plan);
}

void show_table(FILE *out, const char *path, const sema_result *res) {
    fprintf(out, "spec %s%s%s%s\n\n", path, res->run.name[0] ? " (" : "", res->run.name,
            res->run.name[0] ? ")" : "");
    show_layers(out, &res->net);
    show_run(out, &res->run, plan_memory(res));
    show_reference(out, &res->run);
    fprintf(out, "\nspec hash sha256:%s (training: what resume checks)\n", res->hash);
    fprintf(out, "text hash sha256:%s (the whole spec, descriptive fields too)\n", res->text_hash);
}

/* ---- JSON ---- */
static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p < 32 || *p >= 127) fprintf(out, "\\u%04x", *p);
        else fputc(*p, out);
    }
    fputc('"', out);
}

static void json_number(FILE *out, double v) {
    char buf[40];
    show_format_float(buf, sizeof buf, v);
    fputs(isfinite(v) ? buf : "null", out);
}

static void json_shape(FILE *out, net_shape s) {
    fprintf(out, "[%lld, %lld, %lld]", (long long)s.c, (long long)s.h, (long long)s.w);
}

static void json_layers(FILE *out, const net_desc *net) {
    fputs("  \"layers\": [", out);
    for (int i = 0; i < net->n_layers; i++) {
        const net_layer *L = &net->layers[i];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        json_string(out, L->name);
        fprintf(out, ", \"type\": \"%s\", \"line\": %d, \"inputs\": [", net_kind_name(L->kind),
                L->loc.line);
        for (int k = 0; k < L->n_inputs; k++) {
            if (k) fputs(", ", out);
            json_string(out, L->inputs[k] < 0 ? "data" : net->layers[L->inputs[k]].name);
        }
        fputs("], \"shape\": ", out);
        json_shape(out, L->out);
        fprintf(out, ", \"params\": %lld, \"macs\": %lld, \"activation_bytes\": %lld}",
                (long long)L->params, (long long)L->macs, (long long)L->act_bytes);
    }
    fputs("\n  ],\n", out);
}

static void json_run(FILE *out, const run_config *r, show_plan plan) {
    if (!r->has_run) { fputs("  \"run\": null", out); return; }
    fprintf(out, "  \"run\": {\"global_batch\": %lld, \"batch_per_rank\": %lld, \"ranks\": %lld, "
            "\"train_samples\": %lld, \"steps_per_epoch\": %lld, \"epochs\": %lld, "
            "\"total_steps\": %lld, \"warmup_steps\": %lld, \"peak_lr\": ",
            (long long)r->global_batch, (long long)r->train.batch_per_rank, (long long)r->ranks,
            (long long)r->train_samples, (long long)r->steps_per_epoch, (long long)r->epochs,
            (long long)r->total_steps, (long long)r->warmup_steps);
    json_number(out, r->peak_lr);
    fprintf(out, ", \"schedule\": \"%s\", \"optimizer\": \"%s\", \"compute\": \"%s\", "
            "\"loss_scale\": \"%s\", \"label_smoothing\": ", rt_lr_kind_name(r->lr.kind),
            optimizer_names[r->optimizer], run_compute_names[r->compute],
            run_loss_scale_names[r->loss_scale]);
    json_number(out, r->label_smoothing);
    if (plan.ok)
        fprintf(out, ",\n    \"arena_peak_bytes\": %ld, \"arena_naive_bytes\": %ld", plan.peak, plan.naive);
    else
        fputs(",\n    \"arena_peak_bytes\": null, \"arena_naive_bytes\": null", out);
    fputs(",\n    \"lr_points\": [", out);
    rt_lr_point pts[64];
    int n = rt_lr_key_points(pts, 64, &r->lr);
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s{\"step\": %ld, \"epoch\": ", i ? ", " : "", pts[i].step);
        json_number(out, pts[i].epoch);
        fputs(", \"lr\": ", out);
        json_number(out, pts[i].lr);
        fprintf(out, ", \"what\": \"%s\"}", pts[i].what);
    }
    fputs("]}", out);
}

void show_json(FILE *out, const char *path, const sema_result *res, const build_options *opt) {
    const net_desc *net = &res->net;
    fputs("{\n  \"spec\": ", out);
    json_string(out, path);
    fputs(", \"name\": ", out);
    json_string(out, res->run.name);
    fprintf(out, ", \"spec_hash\": \"%s\", \"spec_text_hash\": \"%s\",\n", res->hash, res->text_hash);
    show_reference_json(out, &res->run);
    fputs("  \"input_shape\": ", out);
    json_shape(out, net->input);
    fprintf(out, ", \"classes\": %lld,\n  \"params\": %lld, \"macs\": %lld, "
            "\"activation_bytes\": %lld,\n", (long long)net->classes, (long long)net->params,
            (long long)net->macs, (long long)net->act_bytes);
    json_layers(out, net);
    json_run(out, &res->run, plan_memory(res));
    show_json_trainer(out, path, res, opt);
    fputs("}\n", out);
}
