/* Parses a compiled trainer's command line; every mistake is one message and exit 2. */
#include "trainer_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_core.h"
#include "rt_env.h"

static void usage(FILE *out, const char *prog) {
    fprintf(out,
            "usage: %s [--data DIR] [--out DIR] [--resume FILE] [--init-from FILE] [--benchmark STEPS]\n"
            "          [--seed N] [--epochs N] [--decode-threads N] [--max-decode-failures N]\n"
            "          [--tensorboard DIR] [--no-graph] [--print-spec] [--help] [--help-env]\n"
            "       %s --eval CKPT [--data DIR] [--out DIR]\n"
            "       %s --predict CKPT [--top-k K] IMAGE_OR_FOLDER...\n"
            "\n"
            "Trains the network of the spec compiled into this binary (see --print-spec),\n"
            "writing OUT/metrics.jsonl and OUT/checkpoints/. Under mpirun, one rank per process.\n"
            "\n"
            "  --data DIR         dataset directory (default: the spec's data path)\n"
            "  --out DIR          where metrics.jsonl and checkpoints/ go (default: runs/NAME)\n"
            "  --resume FILE      continue the exact run saved in FILE (a checkpoint)\n"
            "  --init-from FILE   start from the weights in FILE, a checkpoint of the spec's\n"
            "                     init.spec or a state_dict (torchvision's keys) in a\n"
            "                     .safetensors or torch.save (.pth, .pt) file;\n"
            "                     overrides init.checkpoint\n"
            "  --benchmark STEPS  time STEPS training steps and report images/s\n"
            "  --seed N           override the spec's seed\n"
            "  --epochs N         override the spec's number of epochs\n"
            "  --decode-threads N image data: JPEG decode threads per rank (spec: data.decode_threads)\n"
            "  --max-decode-failures N  image data: undecodable samples to skip before stopping\n"
            "  --tensorboard DIR  also write the logged scalars as TensorBoard event files in DIR\n"
            "                     (metrics.jsonl stays the run's record)\n"
            "  --no-graph         CUDA trainers: launch every op of a step instead of replaying\n"
            "                     the step's captured CUDA graph (for comparison)\n"
            "  --print-spec       print the resolved spec embedded in this binary\n"
            "  --eval CKPT        evaluate the checkpoint on the validation data, no training:\n"
            "                     prints loss, top-1, top-5 and appends an eval record to\n"
            "                     OUT/eval.jsonl (OUT: --out, else the checkpoint's run folder)\n"
            "  --predict CKPT     print the top-k classes of each image (JPEG or PNG files, or\n"
            "                     folders of them), named by the run's classes.txt if it has one\n"
            "  --top-k K          --predict: classes per image (default 5)\n"
            "  -h, --help         this help\n"
            "  --help-env         the TRAINC_* environment variables, their values and defaults\n"
            "\n"
            "exit status: 0 done, 2 usage error, 1 any other error (data, checkpoint, ...),\n"
            "128+N stopped by signal N (after writing a checkpoint)\n",
            prog, prog, prog);
}

static const char *const with_value[] = { "--data", "--out", "--resume", "--init-from", "--benchmark",
                                          "--seed", "--epochs", "--decode-threads",
                                          "--max-decode-failures", "--eval", "--predict", "--top-k", "--tensorboard", NULL };

static int takes_value(const char *opt) {
    for (int k = 0; with_value[k]; k++)
        if (!strcmp(opt, with_value[k])) return 1;
    return 0;
}

/* --help (1) or --help-env (2), the first on the line, wins over any other mistake on it, as
 * long as it is not an option's value. */
int rt_trainer_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
        if (!strcmp(argv[i], "--help-env")) return 2;
        if (takes_value(argv[i])) i++;
    }
    return 0;
}

/* Through rt_die_status, so that under mpirun the ranks' identical mistakes print once. */
static void bad(const char *prog, const char *fmt, const char *arg) {
    char msg[512], hint[512];
    snprintf(msg, sizeof msg, fmt, arg);
    snprintf(hint, sizeof hint, "run '%s --help' for the options", prog);
    rt_die_status(2, hint, "%s", msg);
}

static long parse_long(const char *prog, const char *opt, const char *s, long lo, long hi) {
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || !*s || *end || v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s needs an integer from %ld to %ld, got '%%s'", opt, lo, hi);
        bad(prog, msg, s);
    }
    return v;
}

/* --eval and --predict run no training: the options that only training reads are mistakes
 * beside them, and words on the line are images only for --predict. */
static void check_modes(const rt_trainer_args *a, const char *prog) {
    if (a->eval && a->predict) bad(prog, "%s: pass one of --eval and --predict", "--eval");
    const char *mode = a->eval ? "--eval" : a->predict ? "--predict" : NULL;
    if (!mode) {
        if (a->n_images) bad(prog, "unknown argument '%s' (image files go after --predict CKPT)", a->images[0]);
        return;
    }
    char msg[160];
    const char *training = a->resume ? "--resume" : a->init_from ? "--init-from" : a->benchmark_steps ? "--benchmark"
                           : a->epochs ? "--epochs" : a->tensorboard ? "--tensorboard" : NULL;
    if (training) {
        snprintf(msg, sizeof msg, "%s trains nothing: %%s is a training option", mode);
        bad(prog, msg, training);
    }
    if (a->eval && a->n_images) bad(prog, "--eval takes no image files (got '%s'); use --predict for them", a->images[0]);
    if (a->predict && !a->n_images)
        bad(prog, "--predict %s needs image files or folders after it", a->predict);
}

void rt_trainer_parse_args(rt_trainer_args *a, const char *prog, const char *default_out,
                           int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out_dir = default_out;
    int help = rt_trainer_wants_help(argc, argv);
    if (help == 1) usage(stdout, prog);
    if (help == 2) rt_env_print(stdout, 0);
    if (help) exit(0);
    a->max_decode_failures = -1;
    a->top_k = 5;
    a->images = rt_xcalloc((size_t)argc, sizeof *a->images);
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (opt[0] != '-' || !opt[1]) {   /* a word, not an option: one of --predict's images */
            a->images[a->n_images++] = argv[i];
            continue;
        }
        if (!strcmp(opt, "--print-spec")) {
            a->print_spec = 1;
            continue;
        }
        if (!strcmp(opt, "--no-graph")) {
            a->no_graph = 1;
            continue;
        }
        if (!takes_value(opt)) bad(prog, "unknown option '%s'", opt);
        if (i + 1 >= argc) bad(prog, "option '%s' needs a value", opt);
        const char *v = argv[++i];
        if (!*v) bad(prog, "option '%s' needs a value, got an empty string", opt);
        if (!strcmp(opt, "--data")) a->data_dir = v;
        else if (!strcmp(opt, "--out")) a->out_dir = v, a->out_given = 1;
        else if (!strcmp(opt, "--eval")) a->eval = v;
        else if (!strcmp(opt, "--tensorboard")) a->tensorboard = v;
        else if (!strcmp(opt, "--predict")) a->predict = v;
        else if (!strcmp(opt, "--top-k")) a->top_k = (int)parse_long(prog, opt, v, 1, 1000000);
        else if (!strcmp(opt, "--resume")) a->resume = v;
        else if (!strcmp(opt, "--init-from")) a->init_from = v;
        else if (!strcmp(opt, "--benchmark")) a->benchmark_steps = parse_long(prog, opt, v, 1, 100000000);
        else if (!strcmp(opt, "--epochs")) a->epochs = (int)parse_long(prog, opt, v, 1, 100000);
        else if (!strcmp(opt, "--decode-threads")) a->decode_threads = (int)parse_long(prog, opt, v, 1, 256);
        else if (!strcmp(opt, "--max-decode-failures"))
            a->max_decode_failures = parse_long(prog, opt, v, 0, 0x7fffffffffffffffL);
        else {
            a->has_seed = 1;
            a->seed = (uint64_t)parse_long(prog, opt, v, 0, 0x7fffffffffffffffL);
        }
    }
    check_modes(a, prog);
    /* Caught here, before minutes of data loading, rather than when metrics.jsonl is opened. */
    struct stat st;
    if (stat(a->out_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        rt_die_status(2, "pass a new or existing directory; the file is left alone",
                      "--out %s is a file, not a directory", a->out_dir);
}
