/* Caffe importer: one translation per Caffe layer type into a trainc layer, with the
 * output shape Caffe gives it (checked against trainc's where their rules differ). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import_caffe_internal.h"

/* A kernel_size / stride / pad triple in Caffe's three spellings: repeated `kernel_size`,
 * or kernel_h + kernel_w. Sets *h and *w; keeps the defaults when absent. */
static int read_pair(ic_ctx *ic, const ast_node *p, const char *both, const char *hname, const char *wname,
                     int64_t *h, int64_t *w) {
    int n = ast_count_fields(p, both);
    if (n > 2) return ic_error(ic, ic_get(p, both), NULL, "'%s' is given %d times; at most 2 (height, width)", both, n);
    int seen = 0;
    for (int i = 0; i < p->n_kids; i++) {
        const ast_node *f = p->kids[i];
        if (f->kind != AST_FIELD || strcmp(f->text, both) != 0) continue;
        if (f->a->kind != AST_INT) return ic_error(ic, f->a, NULL, "'%s' must be an integer", both);
        if (seen++ == 0) *h = *w = f->a->ival;
        else *w = f->a->ival;
    }
    if (ic_int(ic, p, hname, h) < 0 || ic_int(ic, p, wname, w) < 0) return -1;
    return 0;
}

static void pair_arg(char *args, size_t cap, const char *field, int64_t h, int64_t w) {
    if (h == w) ic_append(args, cap, " %s: %lld", field, (long long)h);
    else ic_append(args, cap, " %s: [%lld, %lld]", field, (long long)h, (long long)w);
}

/* Convolution, Pooling and LRN work on images: a blob that a Reshape gave 3 axes ([N, C, L])
 * or more than 4 would be convolved over 1 or 3 spatial axes by Caffe (pooled and normalized
 * not at all), which trainc's [C, H, W] layers do not do. */
static int need_image(ic_ctx *ic, const layer_io *io) {
    const ic_blob *b = io->in[0];
    if (b->axes == 4 || b->axes == 2) return 0;
    return ic_error(ic, io->layer, "reshape the blob to [N, C, H, W] (4 axes) before it",
                    "%s layer \"%s\" reads blob \"%s\" of %d axes (a Reshape's): Caffe's layer would work on %d "
                    "spatial %s, trainc's on images [N, C, H, W]", io->type, io->name, b->name, b->axes,
                    b->axes - 2, b->axes == 3 ? "axis" : "axes");
}

static int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (in + 2 * p - (d * (k - 1) + 1)) / s + 1;
}

static int tr_convolution(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    const ast_node *p = io->param;
    if (!p) return ic_error(ic, io->layer, NULL, "Convolution layer \"%s\" needs convolution_param", io->name);
    if (need_image(ic, io) < 0) return -1;
    if (ic_only_fields(ic, p, "convolution_param",
                       KNOWN("num_output", "bias_term", "pad", "kernel_size", "stride", "dilation", "group",
                             "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h", "pad_w", "weight_filler",
                             "bias_filler", "engine", "axis")) < 0)
        return -1;
    int64_t out = 0, kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, group = 1, axis = 1;
    int bias = 1;
    if (ic_int(ic, p, "num_output", &out) < 0 || ic_int(ic, p, "group", &group) < 0 ||
        ic_bool(ic, p, "bias_term", &bias) < 0 || ic_int(ic, p, "axis", &axis) < 0 ||
        read_pair(ic, p, "kernel_size", "kernel_h", "kernel_w", &kh, &kw) < 0 ||
        read_pair(ic, p, "stride", "stride_h", "stride_w", &sh, &sw) < 0 ||
        read_pair(ic, p, "pad", "pad_h", "pad_w", &ph, &pw) < 0 ||
        read_pair(ic, p, "dilation", "dilation_h", "dilation_w", &dh, &dw) < 0)
        return -1;
    if (out < 1) return ic_error(ic, p, NULL, "Convolution layer \"%s\" needs num_output >= 1", io->name);
    if (kh < 1 || kw < 1) return ic_error(ic, p, NULL, "Convolution layer \"%s\" needs kernel_size", io->name);
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0 || group < 1)
        return ic_error(ic, p, NULL, "Convolution layer \"%s\": stride and dilation must be >= 1, pad >= 0 and group >= 1",
                        io->name);
    if (axis != 1) return ic_error(ic, ic_get(p, "axis"), NULL, "convolution over axis %lld: trainc convolves images (axis 1)", (long long)axis);
    t->type = "conv";
    ic_append(t->args, sizeof t->args, " out: %lld", (long long)out);
    pair_arg(t->args, sizeof t->args, "kernel", kh, kw);
    if (sh != 1 || sw != 1) pair_arg(t->args, sizeof t->args, "stride", sh, sw);
    if (ph != 0 || pw != 0) pair_arg(t->args, sizeof t->args, "pad", ph, pw);
    if (dh != 1 || dw != 1) pair_arg(t->args, sizeof t->args, "dilation", dh, dw);
    if (group != 1) ic_append(t->args, sizeof t->args, " groups: %lld", (long long)group);
    if (!bias) ic_append(t->args, sizeof t->args, " bias: false");
    if (ic_map_fillers(ic, io, bias, t->args, sizeof t->args) < 0 ||
        ic_map_param_mults(ic, io, bias, t->args, sizeof t->args) < 0)
        return -1;
    o->c = out;
    o->h = conv_out(io->in[0]->h, kh, sh, ph, dh);
    o->w = conv_out(io->in[0]->w, kw, sw, pw, dw);
    return 0;
}

static int tr_inner_product(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    const ast_node *p = io->param;
    if (!p) return ic_error(ic, io->layer, NULL, "InnerProduct layer \"%s\" needs inner_product_param", io->name);
    if (ic_only_fields(ic, p, "inner_product_param",
                       KNOWN("num_output", "bias_term", "weight_filler", "bias_filler", "axis", "transpose")) < 0)
        return -1;
    int64_t out = 0, axis = 1;
    int bias = 1, transpose = 0;
    if (ic_int(ic, p, "num_output", &out) < 0 || ic_bool(ic, p, "bias_term", &bias) < 0 ||
        ic_int(ic, p, "axis", &axis) < 0 || ic_bool(ic, p, "transpose", &transpose) < 0)
        return -1;
    if (out < 1) return ic_error(ic, p, NULL, "InnerProduct layer \"%s\" needs num_output >= 1", io->name);
    if (axis != 1)
        return ic_error(ic, ic_get(p, "axis"), NULL, "InnerProduct over axis %lld: trainc flattens [C, H, W] (axis 1)", (long long)axis);
    if (transpose)
        return ic_error(ic, ic_get(p, "transpose"), "remove 'transpose' (it only changes how Caffe stores the weights)",
                        "InnerProduct layer \"%s\": transposed weights have no trainc equivalent", io->name);
    t->type = "linear";
    ic_append(t->args, sizeof t->args, " out: %lld", (long long)out);
    if (!bias) ic_append(t->args, sizeof t->args, " bias: false");
    if (ic_map_fillers(ic, io, bias, t->args, sizeof t->args) < 0 ||
        ic_map_param_mults(ic, io, bias, t->args, sizeof t->args) < 0)
        return -1;
    o->c = out, o->h = 1, o->w = 1, o->axes = 2;
    return 0;
}

/* Caffe rounds pooled sizes up (and drops a last window that starts in the padding), as
 * trainc's ceil_mode; floor mode gives the same where the windows tile the input. */
static int64_t pool_out_caffe(int64_t in, int64_t k, int64_t s, int64_t p) {
    int64_t n = (int64_t)ceil((double)(in + 2 * p - k) / (double)s) + 1;
    if (p > 0 && (n - 1) * s >= in + p) n--;
    return n;
}

static int tr_pooling(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    const ast_node *p = io->param;
    if (!p) return ic_error(ic, io->layer, NULL, "Pooling layer \"%s\" needs pooling_param", io->name);
    if (need_image(ic, io) < 0) return -1;
    if (ic_only_fields(ic, p, "pooling_param",
                       KNOWN("pool", "pad", "pad_h", "pad_w", "kernel_size", "kernel_h", "kernel_w", "stride",
                             "stride_h", "stride_w", "global_pooling", "engine", "round_mode")) < 0)
        return -1;
    const char *pool = "MAX", *round = "CEIL";
    int global = 0;
    int64_t kh = 0, kw = 0, sh = 1, sw = 1, ph = 0, pw = 0;
    if (ic_word(ic, p, "pool", &pool) < 0 || ic_bool(ic, p, "global_pooling", &global) < 0 ||
        ic_word(ic, p, "round_mode", &round) < 0 ||
        read_pair(ic, p, "kernel_size", "kernel_h", "kernel_w", &kh, &kw) < 0 ||
        read_pair(ic, p, "stride", "stride_h", "stride_w", &sh, &sw) < 0 ||
        read_pair(ic, p, "pad", "pad_h", "pad_w", &ph, &pw) < 0)
        return -1;
    int is_max = strcmp(pool, "MAX") == 0, is_ave = strcmp(pool, "AVE") == 0;
    if (!is_max && !is_ave)
        return ic_error(ic, ic_get(p, "pool"), "use pool: MAX or AVE",
                        "Pooling layer \"%s\": pool %s has no trainc equivalent", io->name, pool);
    if (strcmp(round, "CEIL") != 0 && strcmp(round, "FLOOR") != 0)
        return ic_error(ic, ic_get(p, "round_mode"), NULL, "round_mode must be CEIL or FLOOR");
    const ic_blob *in = io->in[0];
    o->c = in->c;
    if (global) {
        if (!is_ave)
            return ic_error(ic, ic_get(p, "pool"), "use pool: AVE with global_pooling",
                            "Pooling layer \"%s\": global max pooling has no trainc equivalent", io->name);
        t->type = "gap";
        o->h = o->w = 1;
        return 0;
    }
    if (kh < 1 || kw < 1) return ic_error(ic, p, NULL, "Pooling layer \"%s\" needs kernel_size", io->name);
    if (sh < 1 || sw < 1 || ph < 0 || pw < 0)
        return ic_error(ic, p, NULL, "Pooling layer \"%s\": stride must be >= 1 and pad >= 0", io->name);
    int64_t fh = (in->h + 2 * ph - kh) / sh + 1, fw = (in->w + 2 * pw - kw) / sw + 1;
    int ceil_mode = 0;   /* written only where it changes the size (then avg windows clip too) */
    if (strcmp(round, "CEIL") == 0) {
        int64_t ch = pool_out_caffe(in->h, kh, sh, ph), cw = pool_out_caffe(in->w, kw, sw, pw);
        ceil_mode = ch != fh || cw != fw;
        /* without padding Caffe keeps a last window that starts past the input (an empty
         * window, when the kernel is smaller than the stride); trainc's ceil mode drops it */
        if ((ch - 1) * sh >= in->h + ph || (cw - 1) * sw >= in->w + pw)
            return ic_error(ic, io->layer, "use a kernel at least as large as the stride",
                            "Pooling layer \"%s\": Caffe's last window would start past the %lldx%lld input "
                            "(an empty window); trainc has no equivalent", io->name, (long long)in->h, (long long)in->w);
        fh = ch, fw = cw;
    }
    if (ph * 2 > kh || pw * 2 > kw)
        return ic_error(ic, io->layer, NULL, "Pooling layer \"%s\": pad larger than half the kernel", io->name);
    t->type = is_max ? "maxpool" : "avgpool";
    pair_arg(t->args, sizeof t->args, "kernel", kh, kw);
    pair_arg(t->args, sizeof t->args, "stride", sh, sw);
    if (ph != 0 || pw != 0) pair_arg(t->args, sizeof t->args, "pad", ph, pw);
    if (ceil_mode) ic_append(t->args, sizeof t->args, " ceil_mode: true");
    o->h = fh, o->w = fw;
    return 0;
}

static int tr_relu(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    if (io->param) {
        if (ic_only_fields(ic, io->param, "relu_param", KNOWN("negative_slope", "engine")) < 0) return -1;
        double slope = 0;
        if (ic_float(ic, io->param, "negative_slope", &slope) < 0) return -1;
        if (slope != 0)
            return ic_error(ic, ic_get(io->param, "negative_slope"), "use a plain ReLU",
                            "ReLU layer \"%s\": leaky ReLU (negative_slope %g) has no trainc equivalent", io->name, slope);
    }
    t->type = "relu";
    return 0;
}

static int tr_dropout(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    double ratio = 0.5;
    int scale_train = 1;
    if (io->param) {
        if (ic_only_fields(ic, io->param, "dropout_param", KNOWN("dropout_ratio", "scale_train")) < 0 ||
            ic_float(ic, io->param, "dropout_ratio", &ratio) < 0 || ic_bool(ic, io->param, "scale_train", &scale_train) < 0)
            return -1;
    }
    if (!scale_train)
        return ic_error(ic, ic_get(io->param, "scale_train"), "remove scale_train: false",
                        "Dropout layer \"%s\": scaling at test time (scale_train: false) has no trainc equivalent", io->name);
    if (ratio < 0 || ratio >= 1)
        return ic_error(ic, ic_get(io->param, "dropout_ratio"), NULL, "dropout_ratio must be in [0, 1)");
    t->type = "dropout";
    ic_append(t->args, sizeof t->args, " p: %s", ic_num(ratio));
    return 0;
}

static int tr_lrn(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    int64_t size = 5;
    double alpha = 1, beta = 0.75, k = 1;   /* Caffe's defaults (alpha 1, unlike torch) */
    const char *region = "ACROSS_CHANNELS";
    if (need_image(ic, io) < 0) return -1;
    if (io->param) {
        if (ic_only_fields(ic, io->param, "lrn_param", KNOWN("local_size", "alpha", "beta", "k", "norm_region", "engine")) < 0 ||
            ic_int(ic, io->param, "local_size", &size) < 0 || ic_float(ic, io->param, "alpha", &alpha) < 0 ||
            ic_float(ic, io->param, "beta", &beta) < 0 || ic_float(ic, io->param, "k", &k) < 0 ||
            ic_word(ic, io->param, "norm_region", &region) < 0)
            return -1;
    }
    int within = strcmp(region, "WITHIN_CHANNEL") == 0;
    if (!within && strcmp(region, "ACROSS_CHANNELS") != 0)
        return ic_error(ic, ic_get(io->param, "norm_region"), "use ACROSS_CHANNELS or WITHIN_CHANNEL",
                        "LRN layer \"%s\": unknown norm_region %s", io->name, region);
    if (size % 2 == 0)
        return ic_error(ic, ic_get(io->param, "local_size"), NULL, "LRN local_size must be odd (Caffe's rule)");
    t->type = "lrn";
    /* Caffe's WITHIN_CHANNEL adds 1, whatever k says (its power layer's shift) */
    if (within && k != 1) ic_note(ic, ic_get(io->param, "k"), "layer \"%s\": Caffe ignores k %g with WITHIN_CHANNEL (it adds 1)", io->name, k);
    ic_append(t->args, sizeof t->args, " size: %lld alpha: %s beta: %s k: %s%s", (long long)size, ic_num(alpha), ic_num(beta),
              ic_num(within ? 1.0 : k), within ? " region: WITHIN_CHANNEL" : "");
    return 0;
}

static int tr_eltwise(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    const char *op = "SUM";
    if (io->param) {
        if (ic_only_fields(ic, io->param, "eltwise_param", KNOWN("operation", "coeff", "stable_prod_grad")) < 0 ||
            ic_word(ic, io->param, "operation", &op) < 0)
            return -1;
        for (int i = 0; i < io->param->n_kids; i++) {
            const ast_node *f = io->param->kids[i];
            double c = 0;
            int is_int = 0;
            if (strcmp(f->text, "coeff") != 0) continue;
            if (f->a->kind == AST_INT) c = (double)f->a->ival, is_int = 1;
            else if (f->a->kind == AST_FLOAT) c = f->a->fval;
            if ((!is_int && f->a->kind != AST_FLOAT) || c != 1)
                return ic_error(ic, f->a, "remove coeff", "Eltwise layer \"%s\": weighted sums have no trainc equivalent", io->name);
        }
    }
    if (strcmp(op, "SUM") != 0)
        return ic_error(ic, ic_get(io->param, "operation"), "use operation: SUM",
                        "Eltwise layer \"%s\": operation %s has no trainc equivalent", io->name, op);
    if (io->n_in < 2) return ic_error(ic, io->layer, NULL, "Eltwise layer \"%s\" needs two or more bottoms", io->name);
    for (int i = 1; i < io->n_in; i++)
        if (io->in[i]->c != io->in[0]->c || io->in[i]->h != io->in[0]->h || io->in[i]->w != io->in[0]->w)
            return ic_error(ic, io->layer, NULL, "Eltwise layer \"%s\": bottoms of different shapes", io->name);
    t->type = "add";
    return 0;
}

static int tr_concat(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    int64_t axis = 1;
    if (io->param && (ic_only_fields(ic, io->param, "concat_param", KNOWN("axis", "concat_dim")) < 0 ||
                      ic_int(ic, io->param, "axis", &axis) < 0 || ic_int(ic, io->param, "concat_dim", &axis) < 0))
        return -1;
    if (axis != 1)
        return ic_error(ic, io->param, "concatenate channels (axis 1)", "Concat layer \"%s\" along axis %lld has no trainc equivalent",
                        io->name, (long long)axis);
    o->c = 0;
    for (int i = 0; i < io->n_in; i++) {
        if (io->in[i]->h != io->in[0]->h || io->in[i]->w != io->in[0]->w)
            return ic_error(ic, io->layer, NULL, "Concat layer \"%s\": bottoms of different sizes", io->name);
        o->c += io->in[i]->c;
    }
    t->type = "concat";
    return 0;
}

static int tr_flatten(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    int64_t axis = 1, end = -1;
    if (io->param && (ic_only_fields(ic, io->param, "flatten_param", KNOWN("axis", "end_axis")) < 0 ||
                      ic_int(ic, io->param, "axis", &axis) < 0 || ic_int(ic, io->param, "end_axis", &end) < 0))
        return -1;
    if (axis != 1 || (end != -1 && end != 3))
        return ic_error(ic, io->param, NULL, "Flatten layer \"%s\": only axis 1 to the end has a trainc equivalent", io->name);
    t->type = "flatten";
    o->c = o->c * o->h * o->w, o->h = o->w = 1, o->axes = 2;
    return 0;
}

static int tr_sigmoid(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    (void)o;
    if (io->param && ic_only_fields(ic, io->param, "sigmoid_param", KNOWN("engine")) < 0) return -1;
    t->type = "sigmoid";
    return 0;
}

/* "[8, 4, 6, 6]": a Caffe shape for messages (into one of 4 rotating buffers). */
static const char *shape_text(const int64_t *d, int n) {
    static char bufs[4][160];
    static int next;
    char *buf = bufs[next++ % 4];
    buf[0] = 0;
    for (int i = 0; i < n; i++) ic_append(buf, 160, "%s%lld", i ? ", " : "[", (long long)d[i]);
    ic_append(buf, 160, "%s", n ? "]" : "[]");
    return buf;
}

/* Caffe's Reshape (reshape_layer.cpp): the axes [axis, axis + num_axes) of the input (all from
 * axis by default, a negative axis counting from the end) replaced by `shape`'s dims, where 0
 * copies the input's dim at that place and one -1 takes what the others leave. trainc keeps
 * the batch first and up to 3 axes per image: a result [N, C, H, W] (fewer axes padded with
 * 1s) is a reshape of each image's values, a view; one that moves values across images or
 * keeps more than 3 axes per image is refused, saying which dims. */
static int tr_reshape(ic_ctx *ic, const layer_io *io, ic_layer *t, ic_blob *o) {
    const ast_node *shape = NULL;
    int64_t axis = 0, num_axes = -1, dims[8];
    int n = 0;
    if (!io->param || ic_only_fields(ic, io->param, "reshape_param", KNOWN("shape", "axis", "num_axes")) < 0 ||
        ic_msg(ic, io->param, "shape", &shape) < 0 || ic_int(ic, io->param, "axis", &axis) < 0 ||
        ic_int(ic, io->param, "num_axes", &num_axes) < 0)
        return io->param ? -1 : ic_error(ic, io->layer, NULL, "Reshape layer \"%s\" needs reshape_param { shape }", io->name);
    for (int i = 0; shape && i < shape->n_kids; i++)
        if (shape->kids[i]->kind == AST_FIELD && !strcmp(shape->kids[i]->text, "dim")) {
            const ast_node *v = shape->kids[i]->a;   /* -1 parses as unary minus on 1 */
            int neg = v->kind == AST_UNARY && v->op == '-' && v->a && v->a->kind == AST_INT;
            if (v->kind != AST_INT && !neg) return ic_error(ic, v, NULL, "'dim' must be an integer");
            if (n == 8) return ic_error(ic, v, NULL, "Reshape layer \"%s\": more than 8 dims", io->name);
            dims[n++] = neg ? -v->a->ival : v->ival;
            if (dims[n - 1] < -1) return ic_error(ic, v, NULL, "Reshape layer \"%s\": dim %lld (Caffe takes -1, 0 or a "
                                                  "size)", io->name, (long long)dims[n - 1]);
        }
    const ic_blob *in = io->in[0];
    int in_axes = in->axes;
    int64_t bottom[4] = { ic->batch, in->c, in->h, in->w }, total = ic->batch * in->c * in->h * in->w;
    const ast_node *at = shape ? shape : io->param;
    int64_t start = axis >= 0 ? axis : in_axes + axis + 1;
    if (start < 0 || start > in_axes)
        return ic_error(ic, ic_get(io->param, "axis"), NULL, "Reshape layer \"%s\": axis %lld is outside the %d axes of "
                        "its input %s", io->name, (long long)axis, in_axes, shape_text(bottom, in_axes));
    int64_t end = num_axes == -1 ? in_axes : start + num_axes;
    if (num_axes < -1 || end > in_axes)
        return ic_error(ic, ic_get(io->param, "num_axes"), NULL, "Reshape layer \"%s\": num_axes %lld from axis %lld "
                        "runs past the %d axes of its input %s", io->name, (long long)num_axes, (long long)start,
                        in_axes, shape_text(bottom, in_axes));
    int64_t top[16], known = 1;
    int m = 0, infer = -1;
    for (int i = 0; i < start; i++) top[m++] = bottom[i];
    for (int i = 0; i < n; i++, m++) {
        if (dims[i] == 0 && start + i >= in_axes)
            return ic_error(ic, at, NULL, "Reshape layer \"%s\": dim %d is 0 (copy), but its input %s has no axis %lld",
                            io->name, i, shape_text(bottom, in_axes), (long long)(start + i));
        if (dims[i] == -1 && infer >= 0)
            return ic_error(ic, at, NULL, "Reshape layer \"%s\": more than one dim is -1", io->name);
        if (dims[i] == -1) infer = m;
        top[m] = dims[i] == 0 ? bottom[start + i] : dims[i];
    }
    for (int i = (int)end; i < in_axes; i++) top[m++] = bottom[i];
    for (int i = 0; i < m; i++) known *= i == infer ? 1 : top[i];
    if (infer >= 0 && known > 0 && total % known == 0) top[infer] = total / known, known = total;
    if (known != total)
        return ic_error(ic, at, NULL, "Reshape layer \"%s\": the output %s does not hold the %lld values of its input %s",
                        io->name, shape_text(top, m), (long long)total, shape_text(bottom, in_axes));
    if (m < 1 || top[0] != ic->batch)
        return ic_error(ic, at, "keep the batch as the first axis (dim: 0 or dim: -1 there), or write the net's shapes "
                        "as trainc layers", "Reshape layer \"%s\": its output %s mixes the images of the batch (input %s, "
                        "batch %lld); trainc reshapes each image's values, keeping the batch first", io->name,
                        shape_text(top, m), shape_text(bottom, in_axes), (long long)ic->batch);
    for (int i = 4; i < m; i++)
        if (top[i] != 1)
            return ic_error(ic, at, "merge the image's axes into at most 3 (C, H, W)", "Reshape layer \"%s\": its output "
                            "%s has %d axes per image; trainc's tensors have at most 3 ([C, H, W])", io->name,
                            shape_text(top, m), m - 1);
    o->c = m > 1 ? top[1] : 1, o->h = m > 2 ? top[2] : 1, o->w = m > 3 ? top[3] : 1, o->axes = m;
    if (o->h == 1 && o->w == 1) {   /* [N, C*H*W]: trainc's flatten */
        t->type = "flatten";
        return 0;
    }
    t->type = "reshape";
    ic_append(t->args, sizeof t->args, " shape: [%lld, %lld, %lld]", (long long)o->c, (long long)o->h, (long long)o->w);
    return 0;
}

typedef int (*translate_fn)(ic_ctx *, const layer_io *, ic_layer *, ic_blob *);
static const struct {
    const char *caffe_type, *param;
    translate_fn fn;
} translations[] = {
    { "Convolution", "convolution_param", tr_convolution },
    { "InnerProduct", "inner_product_param", tr_inner_product },
    { "Pooling", "pooling_param", tr_pooling },
    { "ReLU", "relu_param", tr_relu },
    { "Dropout", "dropout_param", tr_dropout },
    { "LRN", "lrn_param", tr_lrn },
    { "BatchNorm", "batch_norm_param", NULL },
    { "Scale", "scale_param", ic_translate_scale },
    { "Eltwise", "eltwise_param", tr_eltwise },
    { "Concat", "concat_param", tr_concat },
    { "Flatten", "flatten_param", tr_flatten },
    { "Sigmoid", "sigmoid_param", tr_sigmoid },
    { "Reshape", "reshape_param", tr_reshape },
};

/* Layer types that read data themselves: trainc's data block replaces them. */
static const char *const data_layers[] = { "Data", "ImageData", "HDF5Data", "WindowData", "MemoryData",
                                           "DummyData", "AnnotatedData", "VideoData", NULL };

int ic_is_data_layer(const char *type) {
    for (const char *const *d = data_layers; *d; d++)
        if (strcmp(type, *d) == 0) return 1;
    return 0;
}

static const char *const supported_list =
    "supported: Input, Convolution, InnerProduct, Pooling, ReLU, Dropout, LRN, BatchNorm (+ Scale), Scale, Eltwise, "
    "Concat, Flatten, Sigmoid, Reshape (the batch kept), Slice (channels), SoftmaxWithLoss, Accuracy";

/* Resolves the bottoms of a layer to blobs. */
static int read_io(ic_ctx *ic, const ast_node *L, layer_io *io) {
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        if (f->kind != AST_FIELD) continue;
        int is_bottom = strcmp(f->text, "bottom") == 0, is_top = strcmp(f->text, "top") == 0;
        if (!is_bottom && !is_top) continue;
        if (f->a->kind != AST_STRING) return ic_error(ic, f->a, NULL, "'%s' must be a string", f->text);
        if (is_top) {
            if (io->top) return ic_error(ic, f, "split the layer", "layer \"%s\" has more than one top", io->name);
            io->top = f->a->text;
            continue;
        }
        if (io->n_in == IC_MAX_INPUTS) return ic_error(ic, f, NULL, "layer \"%s\" has too many bottoms", io->name);
        ic_blob *b = ic_blob_find(ic, f->a->text);
        if (!b) return ic_missing_blob(ic, f->a, io->name, f->a->text);
        io->in[io->n_in++] = b;
    }
    if (io->n_in == 0) return ic_error(ic, L, NULL, "layer \"%s\" has no bottom", io->name);
    if (!io->top) return ic_error(ic, L, NULL, "layer \"%s\" has no top", io->name);
    return 0;
}

/* Slice along the channels (axis 1): one channel_slice per top, named LAYER/TOP, at
 * slice_point or in equal parts. */
static int import_slice(ic_ctx *ic, const ast_node *L, const char *name) {
    const ast_node *p = NULL;
    int64_t axis = 1, slice_dim = 1, points[IC_MAX_INPUTS];
    int n_points = 0, n_tops = 0;
    const char *tops[IC_MAX_INPUTS];
    ic_blob *in = NULL;
    int stop[IC_MAX_INPUTS] = { 0 };
    if (ic_only_fields(ic, L, "the layer", KNOWN("name", "type", "bottom", "top", "include", "exclude", "phase",
                                                  "propagate_down", "slice_param")) < 0 ||
        ic_msg(ic, L, "slice_param", &p) < 0 || ic_propagate_down(ic, L, name, IC_MAX_INPUTS, stop) < 0)
        return -1;
    if (p && (ic_only_fields(ic, p, "slice_param", KNOWN("axis", "slice_dim", "slice_point")) < 0 ||
              ic_int(ic, p, "axis", &axis) < 0 || ic_int(ic, p, "slice_dim", &slice_dim) < 0))
        return -1;
    if (axis != 1 || slice_dim != 1)
        return ic_error(ic, p, "slice the channels (axis 1)", "Slice layer \"%s\": only the channel axis has a trainc "
                        "equivalent (channel_slice)", name);
    for (int i = 0; i < L->n_kids; i++) {
        const ast_node *f = L->kids[i];
        if (f->kind != AST_FIELD) continue;
        if (!strcmp(f->text, "bottom")) {
            if (f->a->kind != AST_STRING) return ic_error(ic, f->a, NULL, "'bottom' must be a string");
            if (in) return ic_error(ic, f, NULL, "Slice layer \"%s\" has more than one bottom", name);
            if (!(in = ic_blob_find(ic, f->a->text))) return ic_missing_blob(ic, f->a, name, f->a->text);
        } else if (!strcmp(f->text, "top")) {
            if (f->a->kind != AST_STRING) return ic_error(ic, f->a, NULL, "'top' must be a string");
            if (n_tops == IC_MAX_INPUTS) return ic_error(ic, f, NULL, "Slice layer \"%s\" has too many tops", name);
            tops[n_tops++] = f->a->text;
        }
    }
    for (int i = 0; p && i < p->n_kids; i++)
        if (p->kids[i]->kind == AST_FIELD && !strcmp(p->kids[i]->text, "slice_point")) {
            if (p->kids[i]->a->kind != AST_INT) return ic_error(ic, p->kids[i]->a, NULL, "'slice_point' must be an integer");
            if (n_points < IC_MAX_INPUTS) points[n_points++] = p->kids[i]->a->ival;
        }
    if (!in || n_tops < 1) return ic_error(ic, L, NULL, "Slice layer \"%s\" needs a bottom and tops", name);
    const char *source = ic_bottom_input(ic, L, name, in, stop[0]);
    if (!source) return -1;
    int64_t c = in->c, start = 0;
    if (n_points && n_points != n_tops - 1)
        return ic_error(ic, p, "give one slice_point fewer than tops", "Slice layer \"%s\": %d slice_point for %d tops",
                        name, n_points, n_tops);
    if (!n_points && c % n_tops)
        return ic_error(ic, L, "give slice_point values", "Slice layer \"%s\": %lld channels do not split into %d "
                        "equal parts", name, (long long)c, n_tops);
    for (int j = 0; j < n_tops; j++) {
        int64_t end = n_points ? (j < n_points ? points[j] : c) : c / n_tops * (j + 1);
        if (end <= start || end > c)
            return ic_error(ic, p, "give increasing slice points inside the channels", "Slice layer \"%s\": part %d is "
                            "channels [%lld, %lld) of %lld", name, j, (long long)start, (long long)end, (long long)c);
        size_t len = strlen(name) + strlen(tops[j]) + 2;
        char *tname = ast_arena_alloc(ic->arena, len);
        snprintf(tname, len, "%s/%s", name, tops[j]);
        ic_layer *t = ic_layer_add(ic, "channel_slice", tname, L);
        if (!t) return -1;
        t->inputs[t->n_inputs++] = source;
        ic_append(t->args, sizeof t->args, " start: %lld end: %lld", (long long)start, (long long)end);
        t->unread_ok = 1;
        ic_blob *part = ic_blob_set(ic, tops[j], t->name, end - start, in->h, in->w);
        if (!part) return -1;
        part->axes = in->axes;
        start = end;
    }
    return 0;
}

int ic_import_layer(ic_ctx *ic, const ast_node *L, const ast_node *next, int *consumed) {
    layer_io io = { .layer = L };
    *consumed = 0;
    if (ic_word(ic, L, "name", &io.name) < 0 || ic_word(ic, L, "type", &io.type) < 0) return -1;
    if (!io.type) return ic_error(ic, L, NULL, "layer without a type");
    if (!io.name) return ic_error(ic, L, NULL, "%s layer without a name", io.type);
    if (strcmp(io.type, "Python") == 0 && !ic_get(L, "bottom"))   /* no bottom: it feeds the net its data */
        return ic_error(ic, ic_get(L, "type"), "write the samples into an LMDB of Datum records (Caffe's convert_imageset, "
                        "or its Python io.array_to_datum) and read it with a Data layer (backend: LMDB)",
                        "Python data layer \"%s\" produces its data by running Python code; trainc reads datasets "
                        "itself", io.name);
    if (strcmp(io.type, "Python") == 0)
        return ic_error(ic, ic_get(L, "type"), "write the layer's computation as trainc layers, or leave it out",
                        "Python layer \"%s\" runs arbitrary Python code; trainc compiles only its own layers", io.name);
    if (strcmp(io.type, "Slice") == 0) return import_slice(ic, L, io.name);
    int k = -1;
    for (int i = 0; i < (int)(sizeof translations / sizeof translations[0]); i++)
        if (strcmp(io.type, translations[i].caffe_type) == 0) k = i;
    if (k < 0) return ic_error(ic, ic_get(L, "type"), supported_list, "layer \"%s\": Caffe layer type '%s' has no trainc equivalent", io.name, io.type);
    if (ic_only_fields(ic, L, "the layer",
                       KNOWN("name", "type", "bottom", "top", "param", "include", "exclude", "phase", "propagate_down",
                             translations[k].param)) < 0)
        return -1;
    int stop[IC_MAX_INPUTS] = { 0 };
    const char *inputs[IC_MAX_INPUTS];
    if (ic_msg(ic, L, translations[k].param, &io.param) < 0 || read_io(ic, L, &io) < 0 ||
        ic_propagate_down(ic, L, io.name, IC_MAX_INPUTS, stop) < 0)
        return -1;
    for (int i = 0; i < io.n_in; i++)   /* the stops go before the layer */
        if (!(inputs[i] = ic_bottom_input(ic, L, io.name, io.in[i], stop[i]))) return -1;
    ic_layer *t = ic_layer_add(ic, NULL, io.name, L);
    if (!t) return -1;
    for (int i = 0; i < io.n_in; i++) t->inputs[t->n_inputs++] = inputs[i];
    ic_blob o = *io.in[0];
    int rc = translations[k].fn ? translations[k].fn(ic, &io, t, &o) : ic_translate_batch_norm(ic, &io, t, &o, next, consumed);
    if (rc < 0) return -1;
    if (o.h < 1 || o.w < 1)
        return ic_error(ic, L, NULL, "layer \"%s\": the output would be %lldx%lld; check kernel, stride and pad",
                        io.name, (long long)o.h, (long long)o.w);
    ic_blob *top = ic_blob_set(ic, io.top, t->name, o.c, o.h, o.w);
    if (!top) return -1;
    top->axes = o.axes;
    /* BatchNorm + Scale: the Scale may write a blob of its own */
    const ast_node *scale_top = *consumed ? ic_get(next, "top") : NULL;
    if (scale_top && scale_top->a->kind == AST_STRING) {
        if (!(top = ic_blob_set(ic, scale_top->a->text, t->name, o.c, o.h, o.w))) return -1;
        top->axes = o.axes;
    }
    if (*consumed) {
        ic->n_caffe_layers++;
        ic_word(ic, next, "name", &t->folded);
    }
    return 0;
}
