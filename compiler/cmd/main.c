/* trainc command line: check, show, print, diff, schema, build, pack. Exit status: 0 success,
 * 1 invalid spec (or, for diff, different runs), 2 usage errors and trouble. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build.h"
#include "cli_help.h"
#include "export.h"
#include "import_cli.h"
#include "lower.h"
#include "rt_env.h"
#include "rt_pack.h"
#include "schema.h"
#include "sema.h"
#include "plot.h"
#include "project.h"
#include "show.h"

#define TRAINC_VERSION "0.1.0"

static const char usage_text[] =
    "usage: trainc COMMAND [ARGS]\n"
    "\n"
    "  check SPEC              report every error in SPEC; exit 0 if it is valid, 1 if not\n"
    "  show [--json] SPEC      per-layer table (shape, params, MACs, activation bytes) and\n"
    "                          run summary (batch, steps, LR key points, spec hash)\n"
    "  show --json --backend cpu|cuda [--layout nchw|nhwc] SPEC\n"
    "                          ... with the arena, parameters and buckets `build` emits\n"
    "                          for that backend (\"trainer\"; default cpu)\n"
    "  show --buckets SPEC     the gradient all-reduce buckets of the compiled trainer\n"
    "  show --schedule [--backend cpu|cuda] [--layout nchw|nhwc] [--no-FUSION...] SPEC\n"
    "                          the training step as lowered, each op with every choice\n"
    "                          made for it (--no-FUSION: as `build` with those flags)\n"
    "  show --gpu-cost [--device h100|h200|a100] [--layout nchw|nhwc] [--old-kernels]\n"
    "        [--no-FUSION...] SPEC\n"
    "                          the CUDA step's kernels and library calls: bytes, FLOPs,\n"
    "                          launches and modeled time at the device's bandwidth and peak\n"
    "  show --device-memory GiB [--layout nchw|nhwc] SPEC\n"
    "                          the largest per-rank batch whose CUDA trainer fits in GiB of\n"
    "                          free device memory\n"
    "  show --lr-plot FILE.svg SPEC\n"
    "                          the spec's LR schedule as an SVG chart\n"
    "  plot METRICS.jsonl... -o FILE.svg [--epochs] [--reference SPEC | --top1 X]\n"
    "                          loss, top-1 and LR of runs overlaid, published top-1 as a line\n"
    "  project SPEC --benchmark OUT/benchmark.jsonl | --system NAME [--gpus N]\n"
    "                          time to train from a measured benchmark or a roofline and\n"
    "                          all-reduce model (--systems: the tables), next to the published time\n"
    "  print SPEC              the resolved spec in canonical text (what the hashes cover)\n"
    "  diff [--layers] A B     semantic diff of two resolved specs, derived values with their\n"
    "                          formulas, LR at landmarks, layers by stage (--layers: each);\n"
    "                          exit 0 same run, 1 different, 2 trouble (like diff(1))\n"
    "  build SPEC -o BIN [--emit-dir DIR] [--backend cpu|cuda] [--no-fuse] [--layout nchw|nhwc]\n"
    "        [--no-FUSION...]\n"
    "                          generate the specialized trainer and compile it; cuda\n"
    "                          needs 'make cuda' first; --no-fuse (cuda) runs one kernel\n"
    "                          per op instead of the fused ones; --layout nhwc (cuda, BF16\n"
    "                          or FP16) keeps activations channels-last for tensor cores;\n"
    "                          --no-FUSION (cuda) turns one of lower()'s fusions or\n"
    "                          choices off, for an A/B: `trainc build --help` lists them\n"
    "                          (--no-bn-retire, --no-bn-add, --no-relu-mask, ...)\n"
    "  build SPEC --emit-only --emit-dir DIR [...]\n"
    "                          the generated sources only, not compiled\n"
    "  schema --markdown       the field reference of the spec language\n"
    "  import caffe NET [SOLVER] -o SPEC [--approximate]\n"
    "                          translate a Caffe net (and solver) prototxt into a spec\n"
    "  pack SRC -o DST [--max-side N] [--quality Q]\n"
    "                          an image folder into checksummed shards + index the trainer\n"
    "                          reads like the folder; converts or names every bad file\n"
    "  export CKPT --spec SPEC -o FILE.safetensors [--format torch|safetensors|onnx]\n"
    "                          a checkpoint's weights for PyTorch (torchvision's names),\n"
    "                          or its inference graph as ONNX\n"
    "  --help-env [--markdown]\n"
    "                          the TRAINC_* environment variables of trainc and its trainers\n"
    "  --version, help\n"
    "\n"
    "'trainc COMMAND --help' describes one command.\n";

static int usage_error(const char *fmt, const char *arg) {
    fputs("trainc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n  hint: run 'trainc help' for usage\n", stderr);
    return 2;
}

/* A bad TRAINC_* value (rt_env.h), in the style of usage errors. */
static void env_error(const char *msg, const char *hint) {
    fprintf(stderr, "trainc: error: %s\n  hint: %s\n", msg, hint);
    exit(2);
}

static void env_warning(const char *msg) { fprintf(stderr, "trainc: warning: %s\n", msg); }

/* Loads and analyses one spec; errors are already printed when it returns nonzero. */
static int load(spec_doc *doc, sema_result *res, diag_ctx *diag, const char *path) {
    diag_init(diag, stderr);
    return sema_load(doc, res, diag, path);
}

static int cmd_check(int argc, char **argv) {
    if (argc != 1) return usage_error("check takes one SPEC%s", "");
    diag_ctx diag;
    spec_doc doc;
    sema_result res;
    int bad = load(&doc, &res, &diag, argv[0]);
    if (bad && diag.n_errors)
        fprintf(stderr, "%s: %d error%s\n", argv[0], diag.n_errors, diag.n_errors == 1 ? "" : "s");
    sema_result_free(&res);
    spec_doc_free(&doc);
    return bad ? 1 : 0;
}

/* The bucket plan of the CPU trainer, from the same lowering `build` uses. */
static int show_buckets(FILE *out, const char *path, const sema_result *res) {
    build_options cpu = { .backend = BACKEND_CPU, .fuse = 1 };
    schedule s;
    int rc = lower(&s, res, &cpu, 0, path);   /* sema applied the schema's bucket_mb default */
    if (rc == 0) ir_print_buckets(out, &s.net, s.bucket_mb);
    schedule_free(&s);
    return rc;
}

/* --backend B and --layout L (argv[*i] is the option); 0, or 2 after a usage error. */
static int parse_backend_option(int argc, char **argv, int *i, build_options *opt) {
    if (*i + 1 >= argc) return usage_error("option '%s' needs a value", argv[*i]);
    const char *v = argv[++*i];
    if (strcmp(argv[*i - 1], "--backend") == 0) {
        if (strcmp(v, "cpu") == 0) opt->backend = BACKEND_CPU;
        else if (strcmp(v, "cuda") == 0) opt->backend = BACKEND_CUDA;
        else return usage_error("unknown backend '%s' (cpu or cuda)", v);
    } else if (strcmp(v, "nchw") == 0) opt->nhwc = 0;
    else if (strcmp(v, "nhwc") == 0) opt->nhwc = 1;
    else return usage_error("unknown layout '%s' (nchw or nhwc)", v);
    return 0;
}

/* The first of the CUDA-only flags that any layout takes which is set, as its refusal for
 * another backend (a usage_error format), or NULL. */
static const char *cuda_only_refusal(const build_options *o) {
    if (o->no_cudnn_attention) return "--no-cudnn-attention is for --backend cuda%s";
    if (o->no_residual_tail) return "--no-residual-tail is for --backend cuda (the only backend with residual tail kernels)%s";
    if (o->no_bias_act_grad) return "--no-bias-act-grad is for --backend cuda (the only backend with bias + activation kernels)%s";
    if (o->no_dw_bias) return "--no-dw-bias is for --backend cuda (the only backend with depthwise kernels that add the bias)%s";
    if (o->no_ln_bias) return "--no-ln-bias is for --backend cuda (the only backend whose layer norm adds its conv's bias)%s";
    return NULL;
}

static int cmd_show(int argc, char **argv) {
    int json = 0, buckets = 0, gpu_cost = 0, old_kernels = 0, sched = 0;
    const char *lr_plot = NULL, *device = "h100", *label = NULL;
    build_options opt = { .backend = BACKEND_CPU, .fuse = 1 };
    double gib = 0;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--buckets") == 0) buckets = 1;
        else if (strcmp(argv[i], "--lr-plot") == 0) {
            if (i + 1 >= argc) return usage_error("--lr-plot needs the SVG file to write%s", "");
            lr_plot = argv[++i];
        }
        else if (strcmp(argv[i], "--backend") == 0 || strcmp(argv[i], "--layout") == 0) {
            if (parse_backend_option(argc, argv, &i, &opt)) return 2;
        }
        else if (strcmp(argv[i], "--gpu-cost") == 0) gpu_cost = 1;
        else if (strcmp(argv[i], "--schedule") == 0) sched = 1;
        else if (strcmp(argv[i], "--old-kernels") == 0) old_kernels = 1;
        else if (strcmp(argv[i], "--no-bn-retire") == 0) opt.no_bn_retire = 1;
        else if (strcmp(argv[i], "--no-bn-add") == 0) opt.no_bn_add = 1;
        else if (strcmp(argv[i], "--no-relu-mask") == 0) opt.no_relu_mask = 1;
        else if (strcmp(argv[i], "--no-conv-genstats") == 0) opt.no_conv_genstats = 1;
        else if (strcmp(argv[i], "--no-conv-sbr") == 0) opt.no_conv_sbr = 1;
        else if (strcmp(argv[i], "--no-conv-dgrad-fuse") == 0) opt.no_conv_dgrad_fuse = 1;
        else if (strcmp(argv[i], "--no-bn-finalize-graph") == 0) opt.no_bn_finalize_graph = 1;
        else if (strcmp(argv[i], "--no-bn-pool") == 0) opt.no_bn_pool = 1;
        else if (strcmp(argv[i], "--no-bn-fold") == 0) opt.no_bn_fold = 1;
        else if (strcmp(argv[i], "--no-residual-tail") == 0) opt.no_residual_tail = 1;
        else if (strcmp(argv[i], "--no-bias-act-grad") == 0) opt.no_bias_act_grad = 1;
        else if (strcmp(argv[i], "--no-dw-bias") == 0) opt.no_dw_bias = 1;
        else if (strcmp(argv[i], "--no-ln-bias") == 0) opt.no_ln_bias = 1;
        else if (strcmp(argv[i], "--no-cudnn-attention") == 0) opt.no_cudnn_attention = 1;
        else if (strcmp(argv[i], "--no-graph-autotune") == 0) opt.no_graph_autotune = 1;
        else if (strcmp(argv[i], "--device") == 0 || strcmp(argv[i], "--label") == 0) {
            if (i + 1 >= argc) return usage_error("option '%s' needs a value", argv[i]);
            if (strcmp(argv[i], "--device") == 0) device = argv[++i];
            else label = argv[++i];
        }
        else if (strcmp(argv[i], "--device-memory") == 0) {
            if (i + 1 >= argc) return usage_error("--device-memory needs the device's free memory in GiB (e.g. 79.1)%s", "");
            char *end;
            gib = strtod(argv[++i], &end);
            if (*end || !(gib > 0) || gib > 1e6)
                return usage_error("--device-memory needs a positive number of GiB, got '%s'", argv[i]);
        }
        else if (argv[i][0] == '-' && argv[i][1]) return usage_error("unknown option '%s' for show", argv[i]);
        else if (path) return usage_error("show takes one SPEC (extra '%s')", argv[i]);
        else path = argv[i];
    }
    if (!path) return usage_error("show needs a SPEC%s", "");
    diag_ctx diag;
    spec_doc doc;
    sema_result res;
    int bad = load(&doc, &res, &diag, path);
    const char *refusal = NULL;
    if (!bad && lr_plot) bad = plot_lr_schedule(lr_plot, &res);
    else if (!bad && gpu_cost && opt.no_bn_retire && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-retire is for --layout nhwc (the only batch norm that retires its sums)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_bn_add && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-add is for --layout nhwc (the only layout whose adds apply batch norm)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_relu_mask && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-relu-mask is for --layout nhwc (the only layout with ReLU bitmasks)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_conv_genstats && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-conv-genstats is for --layout nhwc (the only layout with cuDNN's fused conv engines)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_conv_sbr && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-conv-sbr is for --layout nhwc (the only layout with cuDNN's fused conv engines)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_conv_dgrad_fuse && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-conv-dgrad-fuse is for --layout nhwc (the only layout with cuDNN's fused conv engines)%s", "");
    }
    else if (!bad && (gpu_cost || sched) && opt.no_bn_finalize_graph && !(opt.nhwc && (gpu_cost || opt.backend == BACKEND_CUDA))) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-finalize-graph is for --backend cuda --layout nhwc (the only build with cuDNN's fused conv engines)%s", "");
    }
    else if (!bad && !gpu_cost && !sched && opt.no_bn_finalize_graph) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-finalize-graph goes with show --gpu-cost or --schedule (or build)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_bn_pool && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-pool is for --layout nhwc (the only layout whose max pooling applies batch norm)%s", "");
    }
    else if (!bad && gpu_cost && opt.no_bn_fold && !opt.nhwc) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-fold is for --layout nhwc (the only layout whose block output's bn backward folds "
                           "through conv3)%s", "");
    }
    else if (!bad && sched && opt.nhwc && opt.backend != BACKEND_CUDA) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--layout nhwc needs --backend cuda%s", "");
    }
    else if (!bad && sched && (opt.no_bn_retire || opt.no_bn_add || opt.no_relu_mask || opt.no_conv_genstats || opt.no_conv_sbr ||
                        opt.no_conv_dgrad_fuse || opt.no_bn_pool || opt.no_bn_fold) && !(opt.backend == BACKEND_CUDA && opt.nhwc)) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-retire, --no-bn-add, --no-relu-mask, --no-conv-genstats, --no-conv-sbr, --no-conv-dgrad-fuse, --no-bn-pool and --no-bn-fold are for "
                           "--backend cuda --layout nhwc%s", "");
    }
    else if (!bad && opt.no_graph_autotune && !(sched && opt.backend == BACKEND_CUDA)) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-graph-autotune is for show --schedule --backend cuda (or build --backend cuda: the only "
                           "backend with cuDNN graphs)%s", "");
    }
    else if (!bad && sched && opt.backend != BACKEND_CUDA && (refusal = cuda_only_refusal(&opt))) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error(refusal, "");
    }
    else if (!bad && sched) bad = show_schedule(stdout, path, &res, &opt);
    else if (!bad && !gpu_cost && (opt.no_residual_tail || opt.no_cudnn_attention || opt.no_bias_act_grad || opt.no_dw_bias ||
                                   opt.no_ln_bias)) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-residual-tail, --no-bias-act-grad, --no-dw-bias, --no-ln-bias and --no-cudnn-attention go with show --gpu-cost or --schedule (or build)%s", "");
    }
    else if (!bad && !gpu_cost &&
             (opt.no_bn_retire || opt.no_bn_add || opt.no_relu_mask || opt.no_conv_genstats || opt.no_conv_sbr ||
              opt.no_conv_dgrad_fuse || opt.no_bn_pool || opt.no_bn_fold)) {
        sema_result_free(&res);
        spec_doc_free(&doc);
        return usage_error("--no-bn-retire, --no-bn-add, --no-relu-mask, --no-conv-genstats, --no-conv-sbr, --no-conv-dgrad-fuse, --no-bn-pool and --no-bn-fold go with show "
                           "--gpu-cost or --schedule (or build)%s", "");
    }
    else if (!bad && gpu_cost) bad = show_gpu_cost(stdout, path, &res, device, &opt, old_kernels, label);
    else if (!bad && gib > 0) bad = show_device_memory(stdout, path, &res, gib, opt.nhwc);
    else if (!bad && buckets) bad = show_buckets(stdout, path, &res);
    else if (!bad) {
        if (json) show_json(stdout, path, &res, &opt);
        else show_table(stdout, path, &res);
    }
    sema_result_free(&res);
    spec_doc_free(&doc);
    return bad ? 1 : 0;
}

static int cmd_print(int argc, char **argv) {
    if (argc != 1) return usage_error("print takes one SPEC%s", "");
    diag_ctx diag;
    spec_doc doc;
    sema_result res;
    int bad = load(&doc, &res, &diag, argv[0]);
    if (!bad) spec_print(stdout, doc.root);
    sema_result_free(&res);
    spec_doc_free(&doc);
    return bad ? 1 : 0;
}

static int cmd_diff(int argc, char **argv) {
    int full_layers = argc > 0 && !strcmp(argv[0], "--layers");
    argc -= full_layers, argv += full_layers;
    if (argc != 2) return usage_error("diff takes two specs, A and B%s", "");
    diag_ctx da, db;
    spec_doc a, b;
    sema_result ra, rb;
    int bad_a = load(&a, &ra, &da, argv[0]);
    int bad_b = load(&b, &rb, &db, argv[1]);
    int rc = 2;   /* an invalid side is trouble, not a difference */
    if (!bad_a && !bad_b) rc = diff_results(stdout, &ra, &rb, full_layers) ? 1 : 0;
    sema_result_free(&ra);
    sema_result_free(&rb);
    spec_doc_free(&a);
    spec_doc_free(&b);
    return rc;
}

static int cmd_build(int argc, char **argv) {
    const char *spec = NULL, *out = NULL, *emit_dir = NULL;
    int emit_only = 0;
    build_options opt = { .backend = BACKEND_CPU, .fuse = 1 };
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) out = argv[++i];
        else if (strcmp(argv[i], "--emit-dir") == 0 && i + 1 < argc) emit_dir = argv[++i];
        else if ((strcmp(argv[i], "--backend") == 0 || strcmp(argv[i], "--layout") == 0) && i + 1 < argc) {
            if (parse_backend_option(argc, argv, &i, &opt)) return 2;
        } else if (strcmp(argv[i], "--no-fuse") == 0) opt.fuse = 0;
        else if (strcmp(argv[i], "--no-bn-retire") == 0) opt.no_bn_retire = 1;
        else if (strcmp(argv[i], "--no-bn-add") == 0) opt.no_bn_add = 1;
        else if (strcmp(argv[i], "--no-relu-mask") == 0) opt.no_relu_mask = 1;
        else if (strcmp(argv[i], "--no-conv-genstats") == 0) opt.no_conv_genstats = 1;
        else if (strcmp(argv[i], "--no-conv-sbr") == 0) opt.no_conv_sbr = 1;
        else if (strcmp(argv[i], "--no-conv-dgrad-fuse") == 0) opt.no_conv_dgrad_fuse = 1;
        else if (strcmp(argv[i], "--no-bn-finalize-graph") == 0) opt.no_bn_finalize_graph = 1;
        else if (strcmp(argv[i], "--no-bn-pool") == 0) opt.no_bn_pool = 1;
        else if (strcmp(argv[i], "--no-bn-fold") == 0) opt.no_bn_fold = 1;
        else if (strcmp(argv[i], "--no-residual-tail") == 0) opt.no_residual_tail = 1;
        else if (strcmp(argv[i], "--no-bias-act-grad") == 0) opt.no_bias_act_grad = 1;
        else if (strcmp(argv[i], "--no-dw-bias") == 0) opt.no_dw_bias = 1;
        else if (strcmp(argv[i], "--no-ln-bias") == 0) opt.no_ln_bias = 1;
        else if (strcmp(argv[i], "--no-cudnn-attention") == 0) opt.no_cudnn_attention = 1;
        else if (strcmp(argv[i], "--no-graph-autotune") == 0) opt.no_graph_autotune = 1;
        else if (strcmp(argv[i], "--emit-only") == 0) emit_only = 1;
        else if (argv[i][0] == '-') return usage_error("unknown or incomplete option '%s' for build", argv[i]);
        else if (spec) return usage_error("build takes one SPEC (extra '%s')", argv[i]);
        else spec = argv[i];
    }
    if (opt.no_bn_retire && !(opt.backend == BACKEND_CUDA && opt.nhwc))
        return usage_error("--no-bn-retire is for --backend cuda --layout nhwc (the only batch norm that retires its sums)%s", "");
    if (opt.no_bn_add && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-bn-add is for --backend cuda --layout nhwc with fused kernels (the only build that "
                           "applies batch norm inside the add)%s", "");
    if (opt.no_relu_mask && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-relu-mask is for --backend cuda --layout nhwc with fused kernels (the only build that "
                           "writes ReLU bitmasks)%s", "");
    if (opt.no_conv_genstats && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-conv-genstats is for --backend cuda --layout nhwc with fused kernels (the only build "
                           "that runs cuDNN's fused conv engines)%s", "");
    if (opt.no_conv_sbr && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-conv-sbr is for --backend cuda --layout nhwc with fused kernels (the only build "
                           "that runs cuDNN's fused conv engines)%s", "");
    if (opt.no_conv_dgrad_fuse && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-conv-dgrad-fuse is for --backend cuda --layout nhwc with fused kernels (the only build "
                           "that runs cuDNN's fused conv engines)%s", "");
    if (opt.no_bn_finalize_graph && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-bn-finalize-graph is for --backend cuda --layout nhwc with fused kernels (the only build "
                           "that runs cuDNN's fused conv engines)%s", "");
    if (opt.no_bn_fold && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-bn-fold is for --backend cuda --layout nhwc with fused kernels (the only build that "
                           "folds a block output's bn backward through conv3)%s", "");
    if (opt.no_bn_pool && !(opt.backend == BACKEND_CUDA && opt.nhwc && opt.fuse))
        return usage_error("--no-bn-pool is for --backend cuda --layout nhwc with fused kernels (the only build that "
                           "applies batch norm inside the max pooling)%s", "");
    if (opt.no_residual_tail && !(opt.backend == BACKEND_CUDA && opt.fuse))
        return usage_error("--no-residual-tail is for --backend cuda with fused kernels (the only build with residual "
                           "tail kernels)%s", "");
    if (opt.no_bias_act_grad && !(opt.backend == BACKEND_CUDA && opt.fuse))
        return usage_error("--no-bias-act-grad is for --backend cuda with fused kernels (the only build with bias + "
                           "activation kernels)%s", "");
    if (opt.no_dw_bias && !(opt.backend == BACKEND_CUDA && opt.fuse))
        return usage_error("--no-dw-bias is for --backend cuda with fused kernels (the only build whose depthwise "
                           "kernels add the bias)%s", "");
    if (opt.no_ln_bias && !(opt.backend == BACKEND_CUDA && opt.fuse))
        return usage_error("--no-ln-bias is for --backend cuda with fused kernels (the only build whose layer norm "
                           "adds its conv's bias)%s", "");
    if (opt.no_cudnn_attention && opt.backend != BACKEND_CUDA)
        return usage_error("--no-cudnn-attention is for --backend cuda (the only backend with cuDNN's fused "
                           "attention)%s", "");
    if (opt.no_graph_autotune && opt.backend != BACKEND_CUDA)
        return usage_error("--no-graph-autotune is for --backend cuda (the only backend with cuDNN graphs)%s", "");
    if (spec && emit_only && (emit_dir || out)) {   /* the sources only: no compiler, no CUDA toolchain */
        if (opt.nhwc && opt.backend != BACKEND_CUDA) return usage_error("--layout nhwc needs --backend cuda%s", "");
        char default_dir[4200];
        if (!emit_dir) snprintf(default_dir, sizeof default_dir, "%s.src", out), emit_dir = default_dir;
        return build_emit_opts(spec, emit_dir, 0, &opt) ? 1 : 0;
    }
    if (!spec || !out) return usage_error("build needs SPEC and -o BIN (or --emit-only --emit-dir DIR)%s", "");
    if (opt.nhwc && opt.backend != BACKEND_CUDA) return usage_error("--layout nhwc needs --backend cuda%s", "");
    return build_binary_opts(spec, out, emit_dir, &opt) ? 1 : 0;
}

static int cmd_schema(int argc, char **argv) {
    if (argc != 1 || strcmp(argv[0], "--markdown") != 0)
        return usage_error("schema takes --markdown%s", "");
    schema_print_markdown(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    int n = argc - 2;
    char **rest = argv + 2;
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("trainc %s\n", TRAINC_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "--help-env")) {   /* before the check below: it shows what a bad value should be */
        int markdown = n == 1 && !strcmp(rest[0], "--markdown");
        if (n > 1 || (n == 1 && !markdown)) return usage_error("--help-env takes only --markdown%s", "");
        rt_env_print(stdout, markdown);
        return 0;
    }
    if (cli_wants_help(n, rest)) {
        const char *text = cli_command_help(cmd);
        if (!text) return usage_error("unknown command '%s'", cmd);
        fputs(text, stdout);
        return 0;
    }
    rt_env_on_error(env_error);
    rt_env_on_warning(env_warning);
    rt_env_check(RT_ENV_COMPILER);
    if (!strcmp(cmd, "check")) return cmd_check(n, rest);
    if (!strcmp(cmd, "show")) return cmd_show(n, rest);
    if (!strcmp(cmd, "print")) return cmd_print(n, rest);
    if (!strcmp(cmd, "diff")) return cmd_diff(n, rest);
    if (!strcmp(cmd, "plot")) return plot_main(n, rest);
    if (!strcmp(cmd, "project")) return project_main(n, rest);
    if (!strcmp(cmd, "build")) return cmd_build(n, rest);
    if (!strcmp(cmd, "schema")) return cmd_schema(n, rest);
    if (!strcmp(cmd, "import")) return import_main(n, rest);
    if (!strcmp(cmd, "export")) return export_main(n, rest);
    if (!strcmp(cmd, "pack")) return rt_pack_main(argv[0], n, rest);
    return usage_error("unknown command '%s'", cmd);
}
