/* Fillers (Caffe's initializers) of conv and linear layers: sema reads each type's fields and
 * refuses the others; the emitted init calls carry Caffe's bounds and standard deviations,
 * recomputed here from the formulas (xavier +-sqrt(3/n), msra std sqrt(2/n), n by
 * variance_norm over Caffe's fans); no filler keeps PyTorch's default call. */
#include "testlib.h"
#include "emit_init.h"
#include "ir_build.h"
#include "sema.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_filler_XXXXXX";

typedef struct {
    spec_doc doc;
    sema_result res;
    char *errors;
    int rc;
} loaded;

static loaded load(const char *net_body) {
    loaded l;
    size_t len = 0;
    char path[256];
    snprintf(path, sizeof path, "%s/t.spec", tmpdir);
    FILE *f = fopen(path, "w");
    fprintf(f, "net {\n  input_shape: [6, 8, 8]\n%s}\n", net_body);
    fclose(f);
    FILE *mem = open_memstream(&l.errors, &len);
    diag_ctx diag;
    diag_init(&diag, mem);
    l.rc = sema_load(&l.doc, &l.res, &diag, path);
    fclose(mem);
    return l;
}

static void unload(loaded *l) {
    sema_result_free(&l->res);
    spec_doc_free(&l->doc);
    free(l->errors);
}

/* The init lines of every op of a net, in one string. */
static char *init_text(const net_desc *nd) {
    ir_net net;
    memset(&net, 0, sizeof net);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (ir_build(&net, nd, 2, 0.0, 1) == 0)
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

static void test_emitted_values(void) {
    /* conv: in 6, groups 2, out 4, 3x3 -> fan_in 3*9 = 27, fan_out 4*9 = 36; linear: in 4*6*6 = 144, out 5 */
    loaded l = load("  conv { name: \"c\" out: 4 kernel: 3 groups: 2\n"
                    "         weight_filler { type: XAVIER variance_norm: AVERAGE }\n"
                    "         bias_filler { type: GAUSSIAN mean: 1 std: 0.5 } }\n"
                    "  linear { name: \"fc\" out: 5 weight_filler { type: MSRA variance_norm: FAN_OUT }\n"
                    "           bias_filler { type: CONSTANT value: 0.25 } }\n"
                    "  linear { name: \"plain\" out: 3 }\n");
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

static void expect_error(const char *body, const char *want) {
    loaded l = load(body);
    CHECK(l.rc != 0);
    if (!strstr(l.errors, want)) {
        fprintf(stderr, "expected diagnostic containing:\n  %s\ngot:\n%s\n", want, l.errors);
        test_failures++;
    }
    unload(&l);
}

static void test_refusals(void) {
    expect_error("  conv { out: 4 kernel: 3 weight_filler { type: XAVIER std: 0.1 } }\n",
                 "filler type XAVIER does not use 'std'");
    expect_error("  conv { out: 4 kernel: 3 weight_filler { type: CONSTANT min: 1 } }\n",
                 "filler type CONSTANT does not use 'min'");
    expect_error("  conv { out: 4 kernel: 3 bias: false bias_filler { type: CONSTANT } }\n",
                 "a bias_filler on a layer without a bias (bias: false)");
    expect_error("  linear { out: 4 weight_filler { type: UNIFORM min: 2 max: 1 } }\n",
                 "uniform filler with min 2 > max 1");
    expect_error("  linear { out: 4 weight_filler { std: 1 } }\n", "filler type CONSTANT does not use 'std'");
}

int main(void) {
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    test_emitted_values();
    test_refusals();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return test_finish("test_filler");
}
