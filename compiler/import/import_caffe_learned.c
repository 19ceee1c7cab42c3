/* Caffe importer: what layers learn and how it starts: fillers, lr_mult / decay_mult, and
 * BatchNorm + Scale folded into trainc's bn. */
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"

/* One Caffe filler (io->param's `field`) as trainc's filler message `out_field`, appended to
 * args; absent = Caffe's default, constant absent_value (0, a Scale's gamma 1). Types trainc
 * lacks (positive_unitball, bilinear, sparse gaussian) are refused. */
static int map_filler(ic_ctx *ic, const layer_io *io, const char *field, const char *out_field, double absent_value,
                      char *args, size_t cap) {
    const ast_node *f = NULL;
    if (ic_msg(ic, io->param, field, &f) < 0) return -1;
    const char *type = "constant", *norm = "FAN_IN";
    double value = f ? 0 : absent_value, min = 0, max = 1, mean = 0, std = 1;
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
    if (strcmp(type, "constant") == 0) ic_append(args, cap, " %s { type: CONSTANT value: %s }", out_field, ic_num(value));
    else if (strcmp(type, "uniform") == 0)
        ic_append(args, cap, " %s { type: UNIFORM min: %s max: %s }", out_field, ic_num(min), ic_num(max));
    else if (strcmp(type, "gaussian") == 0 && sparse < 0)
        ic_append(args, cap, " %s { type: GAUSSIAN mean: %s std: %s }", out_field, ic_num(mean), ic_num(std));
    else if (strcmp(type, "xavier") == 0) ic_append(args, cap, " %s { type: XAVIER%s }", out_field, fan);
    else if (strcmp(type, "msra") == 0) ic_append(args, cap, " %s { type: MSRA%s }", out_field, fan);
    else
        return ic_approximate(ic, ic_get(f, "type"), "layer \"%s\": %s %s%s has no trainc equivalent; trainc starts "
                              "from PyTorch's default", io->name, field, type, sparse >= 0 ? " with sparse" : "");
    return 0;
}

int ic_map_fillers(ic_ctx *ic, const layer_io *io, int has_bias, char *args, size_t cap) {
    if (map_filler(ic, io, "weight_filler", "weight_filler", 0, args, cap) < 0) return -1;
    if (has_bias) return map_filler(ic, io, "bias_filler", "bias_filler", 0, args, cap);
    if (ic_get(io->param, "bias_filler")) ic_note(ic, ic_get(io->param, "bias_filler"), "layer \"%s\": bias_filler of a layer without a bias; left out", io->name);
    return 0;
}

/* param { lr_mult decay_mult }, one per blob in Caffe's order (weights or scale, then bias),
 * as trainc's lr_mult / decay_mult lists appended to args; all 1: nothing written. args NULL
 * (a Scale folded into bn, which has no multipliers): anything but 1 is approximate. */
int ic_map_param_mults(ic_ctx *ic, const layer_io *io, int has_bias, char *args, size_t cap) {
    const ast_node *L = io->layer;
    double lr[2] = {1, 1}, decay[2] = {1, 1};
    int which = 0;
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        if (f->kind != AST_FIELD || strcmp(f->text, "param") != 0) continue;
        if (f->a->kind != AST_MESSAGE) return ic_error(ic, f->a, NULL, "'param' must be a message { ... }");
        if (ic_only_fields(ic, f->a, "param", KNOWN("lr_mult", "decay_mult", "name", "share_mode")) < 0) return -1;
        if (ic_get(f->a, "name"))
            return ic_error(ic, ic_get(f->a, "name"), "give each layer its own parameters",
                            "layer \"%s\": shared parameters (param { name }) have no trainc equivalent", io->name);
        if (which >= 1 + has_bias)
            return ic_error(ic, f, "give one param block per blob: weights, then bias", "layer \"%s\" has %d blobs, "
                            "and this is param block %d", io->name, 1 + has_bias, which + 1);
        if (ic_float(ic, f->a, "lr_mult", &lr[which]) < 0 || ic_float(ic, f->a, "decay_mult", &decay[which]) < 0) return -1;
        if (lr[which] < 0 || decay[which] < 0)
            return ic_error(ic, f->a, NULL, "layer \"%s\": lr_mult and decay_mult must be >= 0", io->name);
        which++;
    }
    if (lr[0] == 1 && lr[1] == 1 && decay[0] == 1 && decay[1] == 1) return 0;
    if (!args)
        return ic_approximate(ic, ic_get(L, "param"), "layer \"%s\": lr_mult [%g, %g], decay_mult [%g, %g] on a Scale "
                              "folded into bn; trainc's bn has no multipliers", io->name, lr[0], lr[1], decay[0], decay[1]);
    if (has_bias) {
        if (lr[0] != 1 || lr[1] != 1) ic_append(args, cap, " lr_mult: [%s, %s]", ic_num(lr[0]), ic_num(lr[1]));
        if (decay[0] != 1 || decay[1] != 1) ic_append(args, cap, " decay_mult: [%s, %s]", ic_num(decay[0]), ic_num(decay[1]));
    } else {
        if (lr[0] != 1) ic_append(args, cap, " lr_mult: [%s]", ic_num(lr[0]));
        if (decay[0] != 1) ic_append(args, cap, " decay_mult: [%s]", ic_num(decay[0]));
    }
    return 0;
}

/* 1 - 0.999 is 0.0010000000000000009 in binary; the spec should say 0.001. */
static double round_15_digits(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    return strtod(buf, NULL);
}

/* A Scale layer's scale_param: its fields, bias_term, and channels only (axis 1, num_axes 1). */
static int read_scale_axes(ic_ctx *ic, const ast_node *layer, const char *sname, int *bias) {
    const ast_node *sp = NULL;
    if (ic_msg(ic, layer, "scale_param", &sp) < 0) return -1;
    int64_t axis = 1, num_axes = 1;
    *bias = 0;
    if (sp && (ic_only_fields(ic, sp, "scale_param", KNOWN("bias_term", "axis", "num_axes", "filler", "bias_filler")) < 0 ||
               ic_bool(ic, sp, "bias_term", bias) < 0 || ic_int(ic, sp, "axis", &axis) < 0 ||
               ic_int(ic, sp, "num_axes", &num_axes) < 0))
        return -1;
    if (axis != 1 || num_axes != 1)
        return ic_error(ic, sp, "scale channels: axis 1, num_axes 1", "Scale layer \"%s\" over other axes than the channels", sname);
    return 0;
}

/* The gamma and beta fillers of a Scale (scale_param's filler, bias_filler) or of NVCaffe's
 * BatchNorm with scale_bias (batch_norm_param's scale_filler, bias_filler), in param `p`:
 * want_scale_fill is the gamma trainc's layer (`into`) starts at, the bias 0; other constants
 * or filler types are approximate. With scale_fill, a constant gamma is read into it instead
 * (bn's gamma_init says it). n: 1 gamma only, 2 gamma and beta. */
static int read_affine_fillers(ic_ctx *ic, const ast_node *p, const char *const fills[2], int n, const char *kind,
                               const char *sname, double want_scale_fill, const char *into, double *scale_fill) {
    for (int i = 0; i < n; i++) {
        const ast_node *f = NULL;
        const char *type = "constant";
        double value = i == 0 ? 1 : 0, want = i == 0 ? want_scale_fill : 0;   /* Caffe: scale 1, bias 0 */
        if (p && ic_msg(ic, p, fills[i], &f) < 0) return -1;
        if (f && (ic_only_fields(ic, f, fills[i], KNOWN("type", "value")) < 0 || ic_word(ic, f, "type", &type) < 0 ||
                  ic_float(ic, f, "value", &value) < 0))
            return -1;
        if (f && !ic_get(f, "value")) value = 0;   /* Caffe's constant filler defaults to 0 */
        if (i == 0 && scale_fill && strcmp(type, "constant") == 0) {
            *scale_fill = value;
            continue;
        }
        const char *part = i == 0 ? "gamma" : "beta";
        char hint[320];
        if (strcmp(type, "constant") != 0) {   /* random per channel; trainc's start is one number */
            snprintf(hint, sizeof hint, "give the %s a constant %s (%s { type: \"constant\" value: V }%s), or "
                     "import with --approximate to start every %s at %g (noted in the spec)", kind, fills[i], fills[i],
                     i == 0 && scale_fill ? ", which becomes bn's gamma_init: V" : "", part, want);
            if (ic_approximate_hint(ic, ic_get(f, "type"), hint, "%s layer \"%s\": %s type %s draws each %s "
                                    "at random; trainc's %s starts every %s at one constant, %g", kind, sname, fills[i],
                                    type, part, into, part, want) < 0)
                return -1;
        } else if (value != want) {
            snprintf(hint, sizeof hint, "set the %s's value to %g (or leave it out), or import with --approximate "
                     "to start every %s at %g (noted in the spec)", fills[i], want, part, want);
            if (ic_approximate_hint(ic, ic_get(f, "value") ? ic_get(f, "value") : f, hint, "%s layer \"%s\": %s "
                                    "constant %g; trainc's %s starts every %s at %g", kind, sname, fills[i], value,
                                    into, part, want) < 0)
                return -1;
        }
    }
    return 0;
}

/* A Scale layer's scale_param: read_scale_axes, then its fillers (read_affine_fillers). */
static int read_scale_param(ic_ctx *ic, const ast_node *layer, const char *sname, int *bias, double want_scale_fill,
                            const char *into, double *scale_fill) {
    const ast_node *sp = NULL;
    if (read_scale_axes(ic, layer, sname, bias) < 0 || ic_msg(ic, layer, "scale_param", &sp) < 0) return -1;
    static const char *const fills[] = { "filler", "bias_filler" };
    return read_affine_fillers(ic, sp, fills, 1 + *bias, "Scale", sname, want_scale_fill, into, scale_fill);
}

/* The Scale layer folded into a bn: per-channel gamma and beta, gamma starting at the Scale's
 * constant filler (bn's gamma_init; Caffe's default 1), beta at 0. */
static int read_scale(ic_ctx *ic, const ast_node *next, double *gamma_init) {
    const char *sname = "?";
    int bias = 0;
    if (ic_only_fields(ic, next, "the Scale layer", KNOWN("name", "type", "bottom", "top", "param", "scale_param")) < 0 ||
        ic_word(ic, next, "name", &sname) < 0 || read_scale_param(ic, next, sname, &bias, 1.0, "bn", gamma_init) < 0)
        return -1;
    layer_io scale_io = { .layer = next, .name = sname };
    return ic_map_param_mults(ic, &scale_io, 1, NULL, 0);
}

/* A Scale layer on its own (after a BatchNorm it does not fold into): without a bias it is
 * trainc's layer_scale (per-channel gamma, starting at the filler's constant, Caffe's 1). With
 * a bias, y = gamma_c x + beta_c is exactly a depthwise 1x1 conv (out = groups = channels):
 * its weight [C,1,1,1] is gamma and its bias beta, in Caffe's blob order (lr_mult, decay_mult),
 * with the same fillers (fan in 1 and fan out C either way) and the same 2C parameters. */
int ic_translate_scale(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    int bias = 0;
    if (io->n_in != 1)
        return ic_error(ic, io->layer, "multiply by a learned gamma: one bottom", "Scale layer \"%s\" with a second bottom "
                        "(a product of two blobs) has no trainc equivalent", io->name);
    if (read_scale_axes(ic, io->layer, io->name, &bias) < 0) return -1;
    if (bias) {
        long long c = (long long)io->in[0]->c;
        t->type = "conv";
        ic_append(t->args, sizeof t->args, " out: %lld kernel: 1 groups: %lld", c, c);
        if (map_filler(ic, io, "filler", "weight_filler", 1, t->args, sizeof t->args) < 0 ||
            map_filler(ic, io, "bias_filler", "bias_filler", 0, t->args, sizeof t->args) < 0)
            return -1;
        return ic_map_param_mults(ic, io, 1, t->args, sizeof t->args);
    }
    /* Caffe's gamma: 1 without a filler; a constant filler's value, which defaults to 0 */
    double init = 1;
    const ast_node *f = io->param ? ic_get(io->param, "filler") : NULL;
    if (f && f->a->kind == AST_MESSAGE) {
        const char *type = "constant";
        if (ic_word(ic, f->a, "type", &type) < 0) return -1;
        if (strcmp(type, "constant") == 0) init = 0;
        if (ic_get(f->a, "value")) ic_float(ic, f->a, "value", &init);
    }
    if (read_scale_param(ic, io->layer, io->name, &bias, init, "layer_scale", NULL) < 0) return -1;
    if (ic_map_param_mults(ic, io, 0, NULL, 0) < 0) return -1;
    t->type = "layer_scale";
    ic_append(t->args, sizeof t->args, " init: %s", ic_num(init));
    return 0;
}

/* BatchNorm normalizes; a Scale layer with a bias right after it holds gamma and beta, and
 * together they are trainc's bn. A BatchNorm without such a Scale is bn { affine: false } (a
 * Scale without a bias then follows as a layer_scale). Running statistics: Caffe's are a
 * normalized moving average, sum_k f^k x_(t-k) / sum_k f^k with f = moving_average_fraction;
 * trainc's (PyTorch's) an exponential one with momentum 1 - f started at 0 and 1. Both use
 * the unbiased variance. They agree once f^t is small (f = 0.999: within 1% after 4,600
 * iterations); training itself reads batch statistics, so only early evaluations differ. */
int ic_translate_batch_norm(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o, const ast_node *next,
                            int *consumed) {
    double eps = 1e-5, fraction = 0.999, gamma_init = 1;
    int global = 0, scale_bias = 0;
    const ast_node *p = io->param;
    if (p) {
        if (ic_only_fields(ic, p, "batch_norm_param", KNOWN("use_global_stats", "moving_average_fraction", "eps",
                                                            "scale_bias", "scale_filler", "bias_filler")) < 0 ||
            ic_bool(ic, p, "use_global_stats", &global) < 0 || ic_float(ic, p, "eps", &eps) < 0 ||
            ic_float(ic, p, "moving_average_fraction", &fraction) < 0 || ic_bool(ic, p, "scale_bias", &scale_bias) < 0)
            return -1;
    }
    /* NVCaffe's scale_bias: the BatchNorm learns gamma and beta itself (its 4th and 5th blobs,
     * scale_filler default 1, bias_filler default 0), as trainc's affine bn */
    static const char *const bn_fills[] = { "scale_filler", "bias_filler" };
    if (scale_bias && read_affine_fillers(ic, p, bn_fills, 2, "BatchNorm", io->name, 1.0, "bn", &gamma_init) < 0) return -1;
    if (!scale_bias && p && (ic_get(p, "scale_filler") || ic_get(p, "bias_filler")))
        ic_note(ic, ic_get(p, "scale_filler") ? ic_get(p, "scale_filler") : ic_get(p, "bias_filler"),
                "layer \"%s\": scale_filler / bias_filler without scale_bias: NVCaffe learns no gamma and beta; left out",
                io->name);
    if (fraction <= 0 || fraction > 1)
        return ic_error(ic, ic_get(p, "moving_average_fraction"), NULL, "moving_average_fraction must be in (0, 1]");
    const char *next_type = NULL;
    const ast_node *bottom = NULL, *sp = NULL;
    int next_bias = 0;
    if (next && !scale_bias) {   /* with scale_bias a following Scale is a layer of its own */
        ic_word(ic, next, "type", &next_type);
        bottom = ic_get(next, "bottom") ? ic_get(next, "bottom")->a : NULL;
        if (ic_msg(ic, next, "scale_param", &sp) < 0 || (sp && ic_bool(ic, sp, "bias_term", &next_bias) < 0)) return -1;
    }
    int fold = next_type && strcmp(next_type, "Scale") == 0 && bottom && bottom->kind == AST_STRING &&
               strcmp(bottom->text, io->top) == 0 && next_bias;
    if (fold && read_scale(ic, next, &gamma_init) < 0) return -1;
    if (!ic->bn_stats_noted++)
        ic_note(ic, p ? p : io->layer, "BatchNorm running statistics: Caffe's normalized moving average with "
                "moving_average_fraction f is trainc's momentum 1 - f (%g here; both keep the unbiased variance); "
                "Caffe's weights sum to 1 from the first iteration, trainc's after about 5/(1 - f), and training "
                "reads batch statistics either way", round_15_digits(1 - fraction));
    t->type = "bn";
    ic_append(t->args, sizeof t->args, " eps: %s momentum: %s", ic_num(eps), ic_num(round_15_digits(1 - fraction)));
    if (global) ic_append(t->args, sizeof t->args, " use_global_stats: true");
    if (!fold && !scale_bias) ic_append(t->args, sizeof t->args, " affine: false");
    if (gamma_init != 1) ic_append(t->args, sizeof t->args, " gamma_init: %s", ic_num(gamma_init));
    const char *sname = NULL;   /* the Scale's name: where a caffemodel keeps gamma and beta */
    if (fold && ic_word(ic, next, "name", &sname) == 1 && sname)
        ic_append(t->args, sizeof t->args, " caffe_scale: \"%s\"", sname);
    *consumed = fold;
    return 0;
}
