/* Caffe importer: what layers learn and how it starts: fillers, lr_mult / decay_mult, and
 * BatchNorm + Scale folded into trainc's bn. */
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"

/* One Caffe filler as trainc's filler message, appended to args; absent = Caffe's default,
 * constant 0. Types trainc lacks (positive_unitball, bilinear, sparse gaussian) are refused. */
static int map_filler(ic_ctx *ic, const layer_io *io, const char *field, char *args, size_t cap) {
    const ast_node *f = NULL;
    if (ic_msg(ic, io->param, field, &f) < 0) return -1;
    const char *type = "constant", *norm = "FAN_IN";
    double value = 0, min = 0, max = 1, mean = 0, std = 1;
    int64_t sparse = -1;
    if (f && (ic_only_fields(ic, f, field, KNOWN("type", "value", "min", "max", "mean", "std", "sparse", "variance_norm")) < 0 ||
              ic_word(ic, f, "type", &type) < 0 || ic_word(ic, f, "variance_norm", &norm) < 0 ||
              ic_float(ic, f, "value", &value) < 0 || ic_float(ic, f, "min", &min) < 0 ||
              ic_float(ic, f, "max", &max) < 0 || ic_float(ic, f, "mean", &mean) < 0 ||
              ic_float(ic, f, "std", &std) < 0 || ic_int(ic, f, "sparse", &sparse) < 0))
        return -1;
    const char *fan = strcmp(norm, "FAN_IN") == 0 ? "" : strcmp(norm, "FAN_OUT") == 0 ? " variance_norm: FAN_OUT"
                    : strcmp(norm, "AVERAGE") == 0 ? " variance_norm: AVERAGE" : NULL;
    if (!fan) return ic_error(ic, ic_get(f, "variance_norm"), "use FAN_IN, FAN_OUT or AVERAGE", "unknown variance_norm %s", norm);
    if (strcmp(type, "constant") == 0) ic_append(args, cap, " %s { type: CONSTANT value: %s }", field, ic_num(value));
    else if (strcmp(type, "uniform") == 0)
        ic_append(args, cap, " %s { type: UNIFORM min: %s max: %s }", field, ic_num(min), ic_num(max));
    else if (strcmp(type, "gaussian") == 0 && sparse < 0)
        ic_append(args, cap, " %s { type: GAUSSIAN mean: %s std: %s }", field, ic_num(mean), ic_num(std));
    else if (strcmp(type, "xavier") == 0) ic_append(args, cap, " %s { type: XAVIER%s }", field, fan);
    else if (strcmp(type, "msra") == 0) ic_append(args, cap, " %s { type: MSRA%s }", field, fan);
    else
        return ic_approximate(ic, ic_get(f, "type"), "layer \"%s\": %s %s%s has no trainc equivalent; trainc starts "
                              "from PyTorch's default", io->name, field, type, sparse >= 0 ? " with sparse" : "");
    return 0;
}

int ic_map_fillers(ic_ctx *ic, const layer_io *io, int has_bias, char *args, size_t cap) {
    if (map_filler(ic, io, "weight_filler", args, cap) < 0) return -1;
    if (has_bias) return map_filler(ic, io, "bias_filler", args, cap);
    if (ic_get(io->param, "bias_filler")) ic_note(ic, ic_get(io->param, "bias_filler"), "layer \"%s\": bias_filler of a layer without a bias; left out", io->name);
    return 0;
}

/* param { lr_mult decay_mult }: trainc has one LR and one weight decay for all parameters. */
int ic_check_param_mults(ic_ctx *ic, const layer_io *io) {
    const ast_node *L = io->layer;
    int which = 0;   /* Caffe's blob order: weights (or scale), then bias */
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        if (f->kind != AST_FIELD || strcmp(f->text, "param") != 0) continue;
        const char *blob = which++ == 0 ? "weights" : "bias";
        if (f->a->kind != AST_MESSAGE) return ic_error(ic, f->a, NULL, "'param' must be a message { ... }");
        if (ic_only_fields(ic, f->a, "param", KNOWN("lr_mult", "decay_mult", "name", "share_mode")) < 0) return -1;
        if (ic_get(f->a, "name"))
            return ic_error(ic, ic_get(f->a, "name"), "give each layer its own parameters",
                            "layer \"%s\": shared parameters (param { name }) have no trainc equivalent", io->name);
        double lr = 1, decay = 1;
        if (ic_float(ic, f->a, "lr_mult", &lr) < 0 || ic_float(ic, f->a, "decay_mult", &decay) < 0) return -1;
        if (lr == 0)
            return ic_error(ic, f->a, "trainc trains every parameter; remove the layer's param { lr_mult: 0 }",
                            "layer \"%s\": frozen parameters (lr_mult: 0) have no trainc equivalent yet", io->name);
        if (lr != 1 || decay != 1) {
            char what[64] = "";
            if (lr != 1) ic_append(what, sizeof what, "lr_mult %g", lr);
            if (decay != 1) ic_append(what, sizeof what, "%sdecay_mult %g", lr != 1 ? ", " : "", decay);
            if (ic_approximate(ic, f->a, "layer \"%s\" %s: %s; trainc uses the solver's LR and weight decay for "
                               "every parameter", io->name, blob, what) < 0)
                return -1;
        }
    }
    return 0;
}

/* 1 - 0.999 is 0.0010000000000000009 in binary; the spec should say 0.001. */
static double round_15_digits(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    return strtod(buf, NULL);
}

/* The Scale layer after a BatchNorm: per-channel gamma and beta, starting at 1 and 0 (trainc's
 * bn), read in place or written to a new top. Anything else is refused, not dropped. */
static int read_scale(ic_ctx *ic, const layer_io *bn, const ast_node *next) {
    const ast_node *sp = NULL;
    const char *sname = "?";
    if (ic_only_fields(ic, next, "the Scale layer", KNOWN("name", "type", "bottom", "top", "param", "scale_param")) < 0 ||
        ic_word(ic, next, "name", &sname) < 0 || ic_msg(ic, next, "scale_param", &sp) < 0)
        return -1;
    int bias = 0;
    int64_t axis = 1, num_axes = 1;
    if (sp && (ic_only_fields(ic, sp, "scale_param", KNOWN("bias_term", "axis", "num_axes", "filler", "bias_filler")) < 0 ||
               ic_bool(ic, sp, "bias_term", &bias) < 0 || ic_int(ic, sp, "axis", &axis) < 0 ||
               ic_int(ic, sp, "num_axes", &num_axes) < 0))
        return -1;
    if (!bias)
        return ic_error(ic, sp ? (const ast_node *)sp : next, "set scale_param { bias_term: true }",
                        "Scale layer after BatchNorm \"%s\" without a bias: trainc's bn always learns a shift", bn->name);
    if (axis != 1 || num_axes != 1)
        return ic_error(ic, sp, "scale channels: axis 1, num_axes 1", "Scale layer \"%s\" over other axes than the channels", sname);
    static const char *const fills[] = { "filler", "bias_filler" };
    for (int i = 0; i < 2; i++) {
        const ast_node *f = NULL;
        const char *type = "constant";
        double value = i == 0 ? 1 : 0, want = value;
        if (ic_msg(ic, sp, fills[i], &f) < 0) return -1;
        if (f && (ic_only_fields(ic, f, fills[i], KNOWN("type", "value")) < 0 || ic_word(ic, f, "type", &type) < 0 ||
                  ic_float(ic, f, "value", &value) < 0))
            return -1;
        if (f && !ic_get(f, "value")) value = 0;   /* Caffe's constant filler defaults to 0 */
        if (strcmp(type, "constant") != 0 || value != want)
            if (ic_approximate(ic, f, "layer \"%s\": %s %s %g; trainc's bn starts at gamma 1, beta 0", sname, fills[i],
                               type, value) < 0)
                return -1;
    }
    layer_io scale_io = { .layer = next, .name = sname };
    return ic_check_param_mults(ic, &scale_io);
}

/* BatchNorm normalizes; the Scale layer after it holds gamma and beta. Together they are
 * trainc's bn (affine batch norm). */
int ic_translate_batch_norm(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o, const ast_node *next,
                         int *consumed) {
    double eps = 1e-5, fraction = 0.999;
    int global = 0;
    const ast_node *p = io->param;
    if (p) {
        if (ic_only_fields(ic, p, "batch_norm_param", KNOWN("use_global_stats", "moving_average_fraction", "eps")) < 0 ||
            ic_bool(ic, p, "use_global_stats", &global) < 0 || ic_float(ic, p, "eps", &eps) < 0 ||
            ic_float(ic, p, "moving_average_fraction", &fraction) < 0)
            return -1;
    }
    if (global)
        return ic_error(ic, ic_get(p, "use_global_stats"),
                        "remove use_global_stats from the training net (Caffe then uses batch statistics in "
                        "training and the running averages in testing, as trainc does)",
                        "BatchNorm layer \"%s\": frozen statistics (use_global_stats: true) have no trainc "
                        "equivalent yet", io->name);
    const char *next_type = NULL;
    const ast_node *bottom = NULL;
    if (next) {
        ic_word(ic, next, "type", &next_type);
        bottom = ic_get(next, "bottom") ? ic_get(next, "bottom")->a : NULL;
    }
    if (!next_type || strcmp(next_type, "Scale") != 0 || !bottom || bottom->kind != AST_STRING ||
        strcmp(bottom->text, io->top) != 0)
        return ic_error(ic, io->layer, "follow it with a Scale layer (scale_param { bias_term: true }) that reads its output",
                        "BatchNorm layer \"%s\" without a Scale layer after it: trainc's bn always learns a "
                        "scale and a shift", io->name);
    if (read_scale(ic, io, next) < 0) return -1;
    if (ic_approximate(ic, p ? p : io->layer,
                       "layer \"%s\": Caffe's running statistics are a normalized moving average "
                       "(moving_average_fraction %g); trainc keeps PyTorch's exponential average with "
                       "momentum %g", io->name, fraction, 1 - fraction) < 0)
        return -1;
    t->type = "bn";
    ic_append(t->args, sizeof t->args, " eps: %s momentum: %s", ic_num(eps), ic_num(round_15_digits(1 - fraction)));
    *consumed = 1;
    return 0;
}

