/* Sema unit tests: shapes, params and MACs of small nets computed by hand, run-config
 * numbers, diagnostics text verbatim, and hostile inputs that must end in a diagnostic. */
#include "testlib.h"
#include "sema.h"
#include "schema.h"
#include "show.h"
#include "emit_init.h"
#include "ir_build.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes text to a fresh temp file named *.spec in dir; returns the malloc'd path. */
static char *write_spec(const char *dir, const char *name, const char *text) {
    char *path = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

typedef struct {
    spec_doc doc;
    sema_result res;
    char *errors;     /* everything diag printed */
    int rc;
} loaded;

static char tmpdir[] = "/tmp/test_sema_XXXXXX";

static loaded load_text(const char *text) {
    loaded l;
    size_t len = 0;
    FILE *mem = open_memstream(&l.errors, &len);
    diag_ctx diag;
    diag_init(&diag, mem);
    char *path = write_spec(tmpdir, "t.spec", text);
    l.rc = sema_load(&l.doc, &l.res, &diag, path);
    fclose(mem);
    free(path);
    return l;
}

static void unload(loaded *l) {
    sema_result_free(&l->res);
    spec_doc_free(&l->doc);
    free(l->errors);
}

/* Loads text and checks that the diagnostics contain `want`. */
static void expect_error(const char *text, const char *want) {
    loaded l = load_text(text);
    CHECK(l.rc != 0);
    if (!strstr(l.errors, want)) {
        fprintf(stderr, "expected diagnostic containing:\n  %s\ngot:\n%s\n", want, l.errors);
        test_failures++;
    }
    unload(&l);
}

static void test_small_net(void) {
    loaded l = load_text(
        "net {\n"
        "  input_shape: [3, 8, 8]\n"
        "  conv { name: \"c1\" out: 4 kernel: 3 pad: 1 }\n"
        "  bn { name: \"bn\" }\n"
        "  relu { name: \"r\" }\n"
        "  maxpool { name: \"pool\" kernel: 2 }\n"
        "  conv { name: \"dw\" out: 4 kernel: 3 stride: 2 pad: 1 groups: 4 bias: false }\n"
        "  add { name: \"sum\" inputs: [\"dw\", \"/dw\"] }\n"
        "  gap { name: \"gap\" }\n"
        "  linear { name: \"fc\" out: 10 in: 4 }\n"
        "}\n");
    CHECK(l.rc == 0);
    if (l.rc) { fputs(l.errors, stderr); unload(&l); return; }
    const net_desc *n = &l.res.net;
    CHECK(n->n_layers == 8);
    const net_layer *c1 = &n->layers[0], *dw = &n->layers[4], *fc = &n->layers[7];
    CHECK(c1->kind == NET_CONV && c1->inputs[0] == NET_INPUT_DATA);
    CHECK(c1->out.c == 4 && c1->out.h == 8 && c1->out.w == 8);
    CHECK(c1->params == 4 * 3 * 9 + 4);
    CHECK(c1->macs == 4 * 8 * 8 * 3 * 9);
    CHECK(c1->act_bytes == 4 * 8 * 8 * 4);
    CHECK(n->layers[1].params == 8);                      /* bn: gamma and beta */
    CHECK(n->layers[3].out.h == 4 && n->layers[3].pool.stride[0] == 2);
    CHECK(dw->out.c == 4 && dw->out.h == 2 && dw->out.w == 2);
    CHECK(dw->params == 4 * 1 * 9);
    CHECK(dw->macs == 4 * 2 * 2 * 1 * 9);
    CHECK(n->layers[5].n_inputs == 2 && n->layers[5].inputs[1] == 4);
    CHECK(fc->linear.in == 4 && fc->params == 4 * 10 + 10 && fc->macs == 40);
    CHECK(n->params == 112 + 8 + 36 + 50);
    CHECK(n->macs == 6912 + 144 + 40);
    CHECK(n->classes == 10);
    CHECK(!l.res.run.has_run);
    CHECK(strlen(l.res.hash) == 64);
    unload(&l);
}

static void test_run_config(void) {
    loaded l = load_text(
        "net { input_shape: [1, 4, 4] linear { out: 2 } }\n"
        "data { train { source: \"synthetic\" samples: 1000 batch_per_rank: 32 } }\n"
        "parallel { ranks: 4 }\n"
        "solver { epochs: 10 sgd { } lr { base: 0.1 per_batch: 64 scaling: LINEAR\n"
        "  warmup { epochs: 2 } schedule { step { every: 5 } } } }\n"
        "precision { compute: FP16 }\n");
    CHECK(l.rc == 0);
    if (l.rc) { fputs(l.errors, stderr); unload(&l); return; }
    const run_config *r = &l.res.run;
    CHECK(r->has_run);
    CHECK(r->global_batch == 128);
    CHECK(r->steps_per_epoch == 7);           /* floor(1000 / 128) */
    CHECK(r->total_steps == 70);
    CHECK_NEAR(r->peak_lr, 0.2, 1e-12);       /* 0.1 x 128 / 64 */
    CHECK(r->warmup_steps == 14);
    CHECK(r->lr.kind == RT_LR_STEP);
    CHECK_NEAR(rt_lr_at(&r->lr, 35), 0.02, 1e-12);   /* epoch 5: first drop */
    CHECK(r->momentum == 0.9 && r->optimizer == RUN_OPT_SGD);
    CHECK(r->loss_scale == RUN_LOSS_SCALE_DYNAMIC);  /* FP16 default */
    CHECK(r->bucket_mb == 25 && r->overlap);
    unload(&l);
}

static void test_field_errors(void) {
    const char *net = "net { input_shape: [1, 4, 4] linear { out: 2 } }\n";
    char buf[1024];
    snprintf(buf, sizeof buf, "%ssolver { epochs: 1 sgd { momentun: 0.9 } lr { base: 0.1 } }\n", net);
    expect_error(buf, "t.spec:2:26: error: unknown field 'momentun' in 'sgd'; did you mean 'momentum'?");
    snprintf(buf, sizeof buf, "%ssolver { epochs: 1 lr { base: 0.1 } }\n", net);
    expect_error(buf, "error: missing optimizer in 'solver'\n");
    expect_error(buf, "hint: give exactly one of 'sgd', 'lars', 'adamw'");
    snprintf(buf, sizeof buf, "%sprecision { compute: FP8 }\n", net);
    expect_error(buf, "invalid value 'FP8' for 'compute' in 'precision'; allowed: FP32, TF32, FP16, BF16");
    snprintf(buf, sizeof buf, "%sseed: 1 seed: 2\n", net);
    expect_error(buf, "duplicate field 'seed' in 'spec'");
    snprintf(buf, sizeof buf, "%ssolver { loss { label_smoothing: 1.0 } }\n", net);
    expect_error(buf, "'label_smoothing' in 'loss' is 1; it must be in [0, 1)");
    expect_error("net { linear { out: 2 } }\n", "missing required field 'input_shape' in 'net'");
    expect_error("net { input_shape: [1, 4] linear { out: 2 } }\n",
                 "field 'input_shape' in 'net' needs 3 items, not 2");
    expect_error("net { input_shape: [1, 4, 4] linear { out: \"2\" } }\n",
                 "field 'out' in 'linear' must be an integer, not a string");
    expect_error("net { input_shape: [1, 4, 4] convv { out: 2 kernel: 1 } }\n",
                 "unknown field 'convv' in 'net'; did you mean 'conv'?");
    expect_error("", "missing required field 'net' in 'spec'");
}

static void test_net_errors(void) {
    expect_error("net { input_shape: [3, 8, 8]\n conv { name: \"a\" input: \"b\" out: 4 kernel: 1 }\n"
                 " conv { name: \"b\" out: 4 kernel: 1 } }\n",
                 "t.spec:2:26: error: input 'b' of layer 'a' refers to a later layer");
    expect_error("net { input_shape: [3, 8, 8]\n conv { name: \"conv1\" out: 4 kernel: 1 }\n"
                 " relu { input: \"conv2\" } }\n",
                 "t.spec:3:16: error: input 'conv2' of layer 'relu@3' does not exist\n     relu { input: \"conv2\" } }\n"
                 "                   ^\n  hint: did you mean 'conv1'?");
    expect_error("net { input_shape: [3, 8, 8]\n conv { name: \"a\" out: 4 kernel: 1 }\n"
                 " add { name: \"s\" inputs: [\"a\", \"data\"] } }\n",
                 "t.spec:3:2: error: inputs of add layer 's' have different shapes (channel mismatch)\n");
    expect_error("net { input_shape: [3, 8, 8]\n conv { name: \"a\" out: 4 kernel: 11 pad: 1 } }\n",
                 "error: kernel 11x11 of layer 'a' is larger than its padded input");
    expect_error("net { input_shape: [3, 8, 8]\n conv { name: \"a\" out: 4 kernel: 1 groups: 2 } }\n",
                 "error: groups 2 of layer 'a' does not divide its channels");
    expect_error("net { input_shape: [3, 8, 8]\n linear { name: \"fc\" in: 100 out: 4 } }\n",
                 "error: linear layer 'fc' says in: 100 but is fed 192 features");
    expect_error("net { input_shape: [3, 8, 8]\n relu { name: \"x\" }\n relu { name: \"x\" } }\n",
                 "t.spec:3:2: error: duplicate layer name 'x'");
    expect_error("net { input_shape: [3, 8, 8] classes: 10\n linear { name: \"fc\" out: 4 } }\n",
                 "error: last layer 'fc' outputs 4 values but net.classes is 10");
    /* Products that overflow 64 bits must be diagnosed, never wrapped. */
    expect_error("net { input_shape: [3, 32, 32]\n conv { name: \"a\" out: 2000000000 kernel: 3 pad: 1 }\n"
                 " conv { name: \"b\" out: 2000000000 kernel: 3 } }\n",
                 "error: sizes of layer 'b' overflow 64 bits");
    expect_error("net { input_shape: [2000000000, 2000000000, 2000000000] relu { } }\n",
                 "error: the size of input_shape overflows 64 bits");
    expect_error("net { input_shape: [1, 4, 4] relu { } }\n"
                 "data { train { batch_per_rank: 1000000 } }\n"
                 "solver { epochs: 1 sgd { } lr { base: 0.1 } }\n",
                 "global batch 1000000 (1000000 per rank x 1 ranks) is larger than the 60000 training samples");
}

static loaded load_file(const char *path) {
    loaded l;
    size_t len = 0;
    FILE *mem = open_memstream(&l.errors, &len);
    diag_ctx diag;
    diag_init(&diag, mem);
    l.rc = sema_load(&l.doc, &l.res, &diag, path);
    fclose(mem);
    return l;
}

static char *diff_text(loaded *a, loaded *b, int *count) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    *count = diff_results(mem, &a->res, &b->res, 0);
    fclose(mem);
    return text;
}

static void test_diff(void) {
    char *base = write_spec(tmpdir, "base.spec",
        "name: \"r\"\n"
        "block unit(w) { conv { name: \"c\" out: w kernel: 3 pad: 1 } relu { name: \"r\" } }\n"
        "net { input_shape: [1, 8, 8] use unit(4) as \"u0\" gap { name: \"g\" } linear { name: \"fc\" out: 2 } }\n"
        "data { train { batch_per_rank: 100 } }\n"
        "solver { epochs: 2 sgd { } lr { base: 0.1 } }\n");
    char *flat = write_spec(tmpdir, "flat.spec",
        "name: \"r\"\n"
        "net { input_shape: [1, 8, 8]\n"
        "  conv { name: \"u0.c\" out: 4 kernel: [3, 3] pad: 1 stride: 1 bias: true }\n"
        "  relu { name: \"u0.r\" input: \"u0.c\" } gap { name: \"g\" } linear { name: \"fc\" out: 2 } }\n"
        "data { train { batch_per_rank: 100 source: \"fashion-mnist\" } }\n"
        "solver { epochs: 2 sgd { momentum: 0.9 } lr { base: 0.1 scaling: NONE } }\n");
    char *derived = write_spec(tmpdir, "derived.spec",
        "extends: \"base.spec\"\n"
        "solver { lr { base: 0.2 } }\n"
        "data { train { batch_per_rank: 200 } }\n"
        "net { linear { name: \"fc\" out: 3 } }\n");
    loaded a = load_file(base), b = load_file(flat), c = load_file(derived);
    CHECK(a.rc == 0 && b.rc == 0 && c.rc == 0);
    if (a.rc || b.rc || c.rc) fprintf(stderr, "%s%s%s", a.errors, b.errors, c.errors);
    if (!a.rc && !b.rc && !c.rc) {
        int n;
        char *t = diff_text(&a, &b, &n);
        CHECK(n == 0);
        if (n) fprintf(stderr, "unexpected diff:\n%s", t);
        free(t);
        t = diff_text(&a, &c, &n);
        CHECK(strstr(t, "solver.lr.base: 0.1 -> 0.2\n") != NULL);
        CHECK(strstr(t, "data.train.batch_per_rank: 100 -> 200\n") != NULL);
        CHECK(strstr(t, "net[\"fc\"].out: 2 -> 3\n") != NULL);
        CHECK(strstr(t, "derived.steps_per_epoch: 600 -> 300\n") != NULL);
        CHECK(strstr(t, "derived.params: ") != NULL);
        CHECK(strstr(t, "derived.peak_lr: 0.1 -> 0.2\n") != NULL);
        CHECK(strstr(t, "u0.c") == NULL);              /* unchanged layers stay silent */
        CHECK(n == 9);
        if (n != 9) fprintf(stderr, "diff (%d):\n%s", n, t);
        free(t);
    }
    unload(&a), unload(&b), unload(&c);
    free(base), free(flat), free(derived);
}

/* Inputs a user could type by accident or malice: each must end in a diagnostic. */
static void test_hostile(void) {
    static const char *const cases[] = {
        "\xff\xfe\x00garbage\x01",
        "seed: 1e400\n",
        "seed: 99999999999999999999\n",
        "net { input_shape: [1, 4, 4] repeat i in 100000000 { relu { } } }\n",
        "net { input_shape: [1, 1, 1] conv { out: 9223372036854775807 kernel: 1 } }\n",
        "net { input_shape: [3, 8, 8] linear { out: 2000000000 } linear { name: \"b\" out: 2000000000 } "
        "linear { name: \"c\" out: 2000000000 } linear { name: \"d\" out: 2000000000 } }\n",
        "net { input_shape: [1, 4, 4] relu { } }\ndata { train { batch_per_rank: 2147483647 } "
        "train_samples: 9223372036854775807 }\nparallel { ranks: 1048576 }\n"
        "solver { epochs: 1000000 sgd { } lr { base: 1e308 per_batch: 1 scaling: LINEAR } }\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loaded l = load_text(cases[i]);
        if (l.rc == 0 || !strstr(l.errors, "error:")) {
            fprintf(stderr, "hostile case %zu: rc %d, diagnostics:\n%s\n", i, l.rc, l.errors);
            test_failures++;
        }
        unload(&l);
    }
}

/* Keywords are field names too (parse side: test_parse_keywords.c): `in` reaches sema. */
static void test_keyword_field(void) {
    loaded l = load_text("net { input_shape: [1, 28, 28]\n  linear { in : 784 out: 10 }\n}\n");
    CHECK(l.rc == 0 && l.res.net.n_layers == 1 && l.res.net.layers[0].linear.in == 784);
    if (l.rc) fputs(l.errors, stderr);
    unload(&l);
    expect_error("net { input_shape: [1, 28, 28]\n  linear { in : 785 out: 10 }\n}\n", "t.spec:2:12");
}

/* Every default lives in schema.def and is valid by the schema's own rules; sema applies
 * the list, keyed and enum defaults from there. Expected values are the published ones:
 * torchvision RandomResizedCrop (scale 0.08..1, ratio 3/4..4/3), the dataset sizes. */
static void test_schema_defaults(void) {
    for (int i = 0; i < schema_field_count; i++) {
        const schema_field *f = &schema_fields[i];
        double v[8];
        int n = 0;
        if (f->def[0] == '[') {
            n = schema_default_list(f, v, 8);
            CHECK(n > 0 && (f->list_len == 0 || n == f->list_len));
        } else if (schema_default_number(f, v) && f->type != SF_BOOL) {
            n = 1;
        }
        for (int k = 0; k < n; k++) {
            int ok = (f->flags & SF_LO_OPEN ? v[k] > f->lo : v[k] >= f->lo) &&
                     (f->flags & SF_HI_OPEN ? v[k] < f->hi : v[k] <= f->hi);
            if (!ok) fprintf(stderr, "default %s of %s.%s is out of its range\n", f->def,
                             schema_msgs[f->msg].name, f->name);
            CHECK(ok);
        }
        if (f->type == SF_ENUM) CHECK(schema_value_allowed(f, f->def));
    }
    const schema_field *ts = schema_find(SM_DATA, "train_samples");
    char buf[32];
    CHECK(schema_default_for(ts, "fashion-mnist", buf, sizeof buf) && strcmp(buf, "60000") == 0);
    CHECK(schema_default_for(ts, "imagenet-folder", buf, sizeof buf) && strcmp(buf, "1281167") == 0);
    CHECK(!schema_default_for(ts, "idx", buf, sizeof buf));

    loaded l = load_text(
        "net { input_shape: [3, 32, 32] linear { out: 2 } }\n"
        "data { train { source: \"imagenet-folder\" batch_per_rank: 1000\n"
        "  augment { random_resized_crop { size: 32 } } } }\n"
        "solver { epochs: 1 sgd { } lr { base: 0.1 per_batch: 250 scaling: SQRT\n"
        "  warmup { iterations: 10 kind: CONSTANT start_factor: 0.5 } } }\n"
        "precision { compute: BF16 loss_scale: STATIC }\n");
    CHECK(l.rc == 0);
    if (l.rc) { fputs(l.errors, stderr); unload(&l); return; }
    const run_config *r = &l.res.run;
    CHECK(r->train_samples == 1281167 && r->steps_per_epoch == 1281);
    CHECK(r->train.rrc_scale[0] == 0.08 && r->train.rrc_scale[1] == 1.0);
    CHECK(r->train.rrc_ratio[0] == 3.0 / 4.0 && r->train.rrc_ratio[1] == 4.0 / 3.0);
    CHECK(r->lr.scaling == RT_LR_SCALE_SQRT && r->lr.warmup.kind == RT_WARMUP_CONSTANT);
    CHECK_NEAR(r->peak_lr, 0.2, 1e-12);                   /* 0.1 x sqrt(1000 / 250) */
    CHECK(r->compute == RUN_BF16 && r->loss_scale == RUN_LOSS_SCALE_STATIC);
    unload(&l);
    expect_error("net { input_shape: [1, 4, 4] linear { out: 2 } }\n"
                 "data { train { source: \"idx\" batch_per_rank: 2 } }\n"
                 "solver { epochs: 1 sgd { } lr { base: 0.1 } }\n",
                 "the size of a \"idx\" training set is unknown");
}

/* Fillers (Caffe's initializers) of conv and linear layers: sema reads each type's fields
 * and refuses the others; the emitted init calls carry Caffe's bounds and standard deviations,
 * recomputed here from the formulas (xavier +-sqrt(3/n), msra std sqrt(2/n), n by
 * variance_norm over Caffe's fans); no filler keeps PyTorch's default call. */
/* The init lines of every op of a net, in one string. */
static char *init_text(const net_desc *nd) {
    ir_net net;
    memset(&net, 0, sizeof net);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    const ir_lowering cpu = { .align_bytes = 64, .param_align = 1, .act_bytes = 4, .fuse_relu = 1,
                              .share_add_grads = 1 };   /* as lower() builds for the CPU */
    if (ir_build(&net, nd, 2, 0.0, &cpu) == 0)
        for (int i = 0; i < net.n_ops; i++)
            if (net.ops[i].kind == IR_CONV || net.ops[i].kind == IR_LINEAR) emit_init_params(mem, &net.ops[i]);
    fclose(mem);
    ir_net_free(&net);
    return text;
}

/* The two numbers after "NAME, COUNT, " in the line that initializes NAME. */
static int numbers_of(const char *text, const char *name, double *a, double *b) {
    const char *p = strstr(text, name);
    if (!p) return 0;
    long count;
    return sscanf(p + strlen(name), ", %ld, %lff, %lff", &count, a, b) == 3;
}

static void test_filler_values(void) {
    /* conv: in 6, groups 2, out 4, 3x3 -> fan_in 3*9 = 27, fan_out 4*9 = 36; linear: in 4*6*6 = 144, out 5 */
    loaded l = load_text("net {\n  input_shape: [6, 8, 8]\n"
                    "  conv { name: \"c\" out: 4 kernel: 3 groups: 2\n"
                    "         weight_filler { type: XAVIER variance_norm: AVERAGE }\n"
                    "         bias_filler { type: GAUSSIAN mean: 1 std: 0.5 } }\n"
                    "  linear { name: \"fc\" out: 5 weight_filler { type: MSRA variance_norm: FAN_OUT }\n"
                    "           bias_filler { type: CONSTANT value: 0.25 } }\n"
                    "  linear { name: \"plain\" out: 3 }\n}\n");
    CHECK(l.rc == 0);
    if (l.rc) { fprintf(stderr, "%s", l.errors); unload(&l); return; }
    char *text = init_text(&l.res.net);
    double a = 0, b = 0;
    double bound = sqrt(3.0 / ((27 + 36) / 2.0));
    CHECK(numbers_of(text, "rt_init_uniform(c_weight", &a, &b));
    CHECK_NEAR(a, -bound, 1e-7);
    CHECK_NEAR(b, bound, 1e-7);
    CHECK(numbers_of(text, "rt_init_normal(c_bias", &a, &b));
    CHECK_NEAR(a, 1.0, 1e-7);
    CHECK_NEAR(b, 0.5, 1e-7);
    CHECK(numbers_of(text, "rt_init_normal(fc_weight", &a, &b));
    CHECK_NEAR(a, 0.0, 1e-7);
    CHECK_NEAR(b, sqrt(2.0 / 5), 1e-7);
    CHECK(strstr(text, "rt_init_const(fc_bias, 5, 0.25f)") != NULL);
    CHECK(strstr(text, "rt_init_torch_default(plain_weight, 15, plain_bias, 3, 5, &r)") != NULL);
    if (test_failures) fprintf(stderr, "emitted:\n%s", text);
    free(text);
    unload(&l);
}

static void test_filler_refusals(void) {
    expect_error("net { input_shape: [6, 8, 8]\n"
                 "  conv { out: 4 kernel: 3 weight_filler { type: XAVIER std: 0.1 } }\n}\n",
                 "filler type XAVIER does not use 'std'");
    expect_error("net { input_shape: [6, 8, 8]\n"
                 "  conv { out: 4 kernel: 3 weight_filler { type: CONSTANT min: 1 } }\n}\n",
                 "filler type CONSTANT does not use 'min'");
    expect_error("net { input_shape: [6, 8, 8]\n"
                 "  conv { out: 4 kernel: 3 bias: false bias_filler { type: CONSTANT } }\n}\n",
                 "a bias_filler on a layer without a bias (bias: false)");
    expect_error("net { input_shape: [6, 8, 8]\n"
                 "  linear { out: 4 weight_filler { type: UNIFORM min: 2 max: 1 } }\n}\n",
                 "uniform filler with min 2 > max 1");
    expect_error("net { input_shape: [6, 8, 8]\n"
                 "  linear { out: 4 weight_filler { std: 1 } }\n}\n", "filler type CONSTANT does not use 'std'");
}

int main(void) {
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    test_small_net();
    test_run_config();
    test_field_errors();
    test_net_errors();
    test_diff();
    test_hostile();
    test_keyword_field();
    test_schema_defaults();
    test_filler_values();
    test_filler_refusals();
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return test_finish("test_sema");
}
