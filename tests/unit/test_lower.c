/* Lowering (lower.h) decides fusion and gradient routes once, for both backends: a small
 * residual net whose decisions are worked out by hand below. The first consumer of a value
 * in backward order writes its gradient, later ones add (a conv in place, others through
 * scratch); the CPU hands an add's output gradient on to its inputs; a ReLU fuses into the
 * conv / batch norm / add that feeds it, on CUDA only where a bias kernel can carry it; on the
 * CPU the add also computes the batch norm right before it, and that bn's backward applies
 * the add's ReLU mask. */
#include "testlib.h"
#include "lower.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/test_lower_XXXXXX";

/*  x -> c1 (bias) -> r1 -> c2 (no bias) -> b2 -> add(b2, r1) -> r2 -> gap -> fc
 *                     \___________________________/
 * Backward order: fc, gap, add, b2, c2, c1. r1's value (c1 with r1 fused) is read by c2
 * and by the add: the add writes its gradient first, c2 (a conv) then adds in place. */
static const char spec_text[] =
    "net {\n"
    "  input_shape: [3, 8, 8]\n"
    "  classes: 4\n"
    "  conv { name: \"c1\" out: 4 kernel: 3 pad: 1 }\n"
    "  relu { name: \"r1\" }\n"
    "  conv { name: \"c2\" out: 4 kernel: 3 pad: 1 bias: false }\n"
    "  bn { name: \"b2\" }\n"
    "  add { name: \"sum\" inputs: [\"b2\", \"r1\"] }\n"
    "  relu { name: \"r2\" }\n"
    "  gap { name: \"g\" }\n"
    "  linear { name: \"fc\" out: 4 }\n"
    "}\n"
    "data { train { source: \"synthetic\" samples: 8 batch_per_rank: 2 } }\n"
    "solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }\n";

/* Writes text to dir/name and loads it; returns its sema_load status. */
static int load(const char *dir, const char *name, const char *text, spec_doc *doc, sema_result *res) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    diag_ctx diag;
    diag_init(&diag, stderr);
    return sema_load(doc, res, &diag, path);
}

static int op_named(const ir_net *net, const char *name) {
    for (int i = 0; i < net->n_ops; i++)
        if (!strcmp(net->ops[i].name, name)) return i;
    return -1;
}

static void check_schedule(const sema_result *res, build_backend backend) {
    build_options opt = { .backend = backend, .fuse = 1 };
    schedule s;
    CHECK(lower(&s, res, &opt, 0, "t.spec") == 0);
    const ir_net *net = &s.net;
    int cpu = backend == BACKEND_CPU;
    /* both relus fused: c1, c2, b2, sum, g, fc */
    CHECK(net->n_ops == 6);
    int c1 = op_named(net, "c1"), c2 = op_named(net, "c2"), b2 = op_named(net, "b2"), sum = op_named(net, "sum");
    CHECK(c1 >= 0 && c2 >= 0 && b2 >= 0 && sum >= 0 && op_named(net, "r1") < 0 && op_named(net, "r2") < 0);
    if (c1 < 0 || c2 < 0 || b2 < 0 || sum < 0) return;
    CHECK(net->ops[c1].act && !strcmp(net->ops[c1].act_name, "r1"));
    CHECK(net->ops[sum].act && !strcmp(net->ops[sum].act_name, "r2"));
    CHECK(!net->ops[c2].act && !net->ops[b2].act);
    /* routes */
    CHECK(ir_route(net, c1, 0) == GRAD_NONE);            /* the network input */
    CHECK(ir_route(net, c2, 0) == GRAD_ADD);             /* after the add wrote it: in place */
    CHECK(ir_route(net, b2, 0) == GRAD_WRITE);           /* c2's value: b2 is its only reader */
    if (cpu) {
        /* the add hands its gradient buffer to both inputs: no copies */
        CHECK(ir_route(net, sum, 0) == GRAD_SHARED);
        CHECK(ir_route(net, sum, 1) == GRAD_SHARED);
        /* b2 runs inside the add (no output tensor of its own); with no copies to make, the
         * add's backward is empty and b2's masks: the add's output lives until then */
        CHECK(net->ops[sum].bn_in == b2 + 1 && net->ops[b2].into_add && net->act_of[b2 + 1] < 0);
        CHECK(net->ops[sum].mask_in_bn);
        CHECK(net->tensors[net->act_of[sum + 1]].last >= 2 * net->n_ops - b2);
    } else {
        CHECK(ir_route(net, sum, 0) == GRAD_WRITE);
        CHECK(ir_route(net, sum, 1) == GRAD_WRITE);
        CHECK(!net->ops[sum].bn_in && !net->ops[b2].into_add && !net->ops[sum].mask_in_bn);
    }
    /* alignment and activation width as the backend needs them */
    CHECK(net->align_bytes == (cpu ? 64 : 256) && net->act_bytes == 4);
    for (int t = 0; t < net->n_tensors; t++) CHECK(net->tensors[t].offset % net->align_bytes == 0);
    CHECK(net->n_buckets == 1 && net->buckets[0].count == net->n_params);
    schedule_free(&s);
}

/* A conv without bias keeps its relu on CUDA (no bias kernel to carry it); the CPU conv
 * applies it itself. A relu on the logits stays its own op on CUDA. */
static void check_bias_rule(const char *dir) {
    spec_doc doc;
    sema_result res;
    CHECK(load(dir, "nobias.spec",
               "net {\n  input_shape: [3, 8, 8]\n  classes: 4\n"
               "  conv { name: \"c\" out: 4 kernel: 3 pad: 1 bias: false }\n  relu { name: \"r\" }\n"
               "  flatten { name: \"f\" }\n  linear { name: \"fc\" out: 4 }\n  relu { name: \"last\" }\n}\n"
               "data { train { source: \"synthetic\" samples: 8 batch_per_rank: 2 } }\n"
               "solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }\n",
               &doc, &res) == 0);
    for (int b = 0; b < 2; b++) {
        build_options opt = { .backend = b ? BACKEND_CUDA : BACKEND_CPU, .fuse = 1 };
        schedule s;
        CHECK(lower(&s, &res, &opt, 0, "nobias.spec") == 0);
        int relu_ops = 0;
        for (int i = 0; i < s.net.n_ops; i++) relu_ops += s.net.ops[i].kind == IR_RELU;
        CHECK(relu_ops == (b ? 2 : 0));   /* CPU: both fused (conv and linear apply it) */
        schedule_free(&s);
    }
    sema_result_free(&res);
    spec_doc_free(&doc);
}

/* CUDA channels-last: a block's closing bn(s) run inside the add (ir_op.bn_in_add, add_bns):
 * both branches of a projection block (b2, b3), the main branch of an identity block (b4);
 * not with --no-bn-add, --no-fuse, NCHW or on the CPU. */
static void check_bn_add(const char *dir) {
    spec_doc doc;
    sema_result res;
    CHECK(load(dir, "proj.spec",
               "net {\n  input_shape: [3, 8, 8]\n  classes: 4\n"
               "  conv { name: \"c1\" out: 8 kernel: 3 pad: 1 }\n  relu { name: \"r1\" }\n"
               "  conv { name: \"c2\" out: 16 kernel: 3 pad: 1 stride: 2 bias: false }\n  bn { name: \"b2\" }\n"
               "  conv { name: \"c3\" inputs: [\"r1\"] out: 16 kernel: 1 stride: 2 bias: false }\n"
               "  bn { name: \"b3\" }\n"
               "  add { name: \"sum\" inputs: [\"b2\", \"b3\"] }\n  relu { name: \"r2\" }\n"
               "  conv { name: \"c4\" out: 16 kernel: 3 pad: 1 bias: false }\n  bn { name: \"b4\" }\n"
               "  add { name: \"sum2\" inputs: [\"b4\", \"r2\"] }\n  relu { name: \"r3\" }\n"
               "  gap { name: \"g\" }\n  linear { name: \"fc\" out: 4 }\n}\n"
               "precision { compute: BF16 }\n"
               "data { train { source: \"synthetic\" samples: 8 batch_per_rank: 2 } }\n"
               "solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }\n",
               &doc, &res) == 0);
    /* backend, fuse, nhwc, no_bn_retire, no_bn_add, no_relu_mask: the first and the last
     * fuse; only the first also takes the bns' backward into the add's two passes, with the
     * adds' ReLU bitmasks planned (ir_op.add_bwd_fused, relu_mask) */
    static const build_options opts[] = {
        { .backend = BACKEND_CUDA, .fuse = 1, .nhwc = 1 },
        { .backend = BACKEND_CUDA, .fuse = 1, .nhwc = 1, .no_bn_add = 1 },
        { .backend = BACKEND_CUDA, .fuse = 0, .nhwc = 1 },
        { .backend = BACKEND_CUDA, .fuse = 1 },
        { .backend = BACKEND_CUDA, .fuse = 1, .nhwc = 1, .no_relu_mask = 1 },
    };
    for (int v = 0; v < 5; v++) {
        schedule s;
        CHECK(lower(&s, &res, &opts[v], 0, "proj.spec") == 0);
        const ir_net *net = &s.net;
        int sum = op_named(net, "sum"), sum2 = op_named(net, "sum2"), b2 = op_named(net, "b2"), b3 = op_named(net, "b3"),
            b4 = op_named(net, "b4");
        CHECK(sum >= 0 && sum2 >= 0 && b2 >= 0 && b3 >= 0 && b4 >= 0);
        if (sum < 0 || sum2 < 0 || b2 < 0 || b3 < 0 || b4 < 0) { schedule_free(&s); continue; }
        int on = v == 0 || v == 4, bwd = v == 0;
        CHECK(net->ops[sum].add_bns == (on ? 2 : 0) && net->ops[sum2].add_bns == (on ? 1 : 0));
        CHECK(net->ops[b2].bn_in_add == on && net->ops[b3].bn_in_add == on && net->ops[b4].bn_in_add == on);
        CHECK(net->ops[sum].add_bwd_fused == bwd && net->ops[sum2].add_bwd_fused == bwd);
        CHECK(net->ops[b2].bn_bwd_in_add == bwd && net->ops[b3].bn_bwd_in_add == bwd && net->ops[b4].bn_bwd_in_add == bwd);
        CHECK(ir_has_mask(net, sum) == bwd && ir_has_mask(net, sum2) == bwd);
        if (bwd)   /* a bit an element, in the arena */
            CHECK(net->tensors[net->mask_of[sum]].bytes >= (ir_value_elems(net, sum + 1) + 7) / 8);
        if (opts[v].fuse) CHECK(net->ops[sum].act && net->ops[sum2].act);   /* the ReLU goes with the add */
        schedule_free(&s);
    }
    sema_result_free(&res);
    spec_doc_free(&doc);
}

int main(void) {
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    spec_doc doc;
    sema_result res;
    CHECK(load(tmpdir, "t.spec", spec_text, &doc, &res) == 0);
    check_schedule(&res, BACKEND_CPU);
    check_schedule(&res, BACKEND_CUDA);
    sema_result_free(&res);
    spec_doc_free(&doc);
    check_bias_rule(tmpdir);
    check_bn_add(tmpdir);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd)) {}
    return test_finish("test_lower");
}
