/* `trainc build`: resolve and check a spec, lower it (lower.h), emit the schedule's sources
 * into a source directory, and compile them against libtrainrt. */
#include "build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build_eval.h"
#include "output_file.h"
#include "emit.h"
#include "emit_run.h"
#include "init_match.h"
#include "rt_env.h"
#include "sema.h"
#include "sema_value.h"

#ifndef TRAINC_HOME
#define TRAINC_HOME "."
#endif
#define TRAINC_VERSION_STRING "0.1"
#ifndef TRAINC_MPI_LIBS
#define TRAINC_MPI_LIBS "-lmpi"
#endif

#ifndef TRAINC_BUILD_DIR   /* set by mk/compiler.mk: the BUILD directory trainc was built in */
#define TRAINC_BUILD_DIR "build"
#endif

static const char *trainc_home(void) {
    const char *env = rt_env_path(RT_ENV_TRAINC_HOME);
    return env ? env : TRAINC_HOME;
}

/* The runtime library (and cuda.env) of this trainc: in the build directory it was built in
 * (make BUILD=...), under the home unless that directory was given as an absolute path. */
static void runtime_build_dir(const char *home, char *out, size_t cap) {
    if (TRAINC_BUILD_DIR[0] == '/') snprintf(out, cap, "%s", TRAINC_BUILD_DIR);
    else snprintf(out, cap, "%s/%s", home, TRAINC_BUILD_DIR);
}

static int write_file(const char *path, void (*fill)(FILE *, const void *), const void *arg) {
    output_file out;
    char err[512];
    if (output_open(&out, path, 0, err, sizeof err)) {
        fprintf(stderr, "trainc: error: %s\n", err);
        return -1;
    }
    fill(out.f, arg);
    if (output_commit(&out, err, sizeof err)) {
        fprintf(stderr, "trainc: error: %s\n", err);
        return -1;
    }
    return 0;
}

typedef struct { const schedule *s; const emit_info *info; const char *kernels; } model_args;
static void fill_model(FILE *f, const void *arg) {
    const model_args *a = arg;
    emit_model(f, a->s, a->info);
}
static void fill_model_eval(FILE *f, const void *arg) {
    const model_args *a = arg;
    emit_model_eval(f, a->s, a->info);
}
static void fill_cuda_kernels(FILE *f, const void *arg) {
    const model_args *a = arg;
    emit_cuda_kernels(f, a->s, a->info, a->kernels);
}
static void fill_cuda_header(FILE *f, const void *arg) {
    const model_args *a = arg;
    emit_cuda_kernels_header(f, a->s, a->info, a->kernels);
}
static void fill_plan(FILE *f, const void *arg) { ir_print_plan(f, &((const schedule *)arg)->net); }
static void fill_buckets(FILE *f, const void *arg) {
    const schedule *s = arg;
    ir_print_buckets(f, &s->net, s->bucket_mb);
}

/* The emitted sources: model.c (and, CUDA, kernels.cu and kernels.h with the fused kernels),
 * plan.txt and buckets.txt, all printed from the one schedule; with an evaluation resolution,
 * model_eval.c (and, CUDA, kernels_eval.cu and kernels_eval.h) from the second. */
static int write_sources(const char *emit_dir, const schedule *s, const schedule *eval, const emit_info *info) {
    model_args ma = { s, info, "kernels" }, mea = { eval, info, "kernels_eval" };
    char path[4096];
    int rc = 0;
    snprintf(path, sizeof path, "%s/model.c", emit_dir);
    rc = rc || write_file(path, fill_model, &ma);
    snprintf(path, sizeof path, "%s/model_eval.c", emit_dir);   /* the evaluation resolution's forward */
    if (eval) rc = rc || write_file(path, fill_model_eval, &mea);
    else unlink(path);
    if (s->opt.backend == BACKEND_CUDA) {
        snprintf(path, sizeof path, "%s/kernels.cu", emit_dir);
        rc = rc || write_file(path, fill_cuda_kernels, &ma);
        snprintf(path, sizeof path, "%s/kernels.h", emit_dir);
        rc = rc || write_file(path, fill_cuda_header, &ma);
        snprintf(path, sizeof path, "%s/kernels_eval.cu", emit_dir);
        if (eval) rc = rc || write_file(path, fill_cuda_kernels, &mea);
        else unlink(path);
        snprintf(path, sizeof path, "%s/kernels_eval.h", emit_dir);
        if (eval) rc = rc || write_file(path, fill_cuda_header, &mea);
        else unlink(path);
    }
    snprintf(path, sizeof path, "%s/plan.txt", emit_dir);
    rc = rc || write_file(path, fill_plan, s);
    snprintf(path, sizeof path, "%s/buckets.txt", emit_dir);
    rc = rc || write_file(path, fill_buckets, s);
    return rc ? 1 : 0;
}

/* precision.compute on the CPU backend: FP32 (and TF32, whose FP32 products are at least as
 * precise) run as asked, BF16 runs BF16 products (rt_run_config.cpu_compute; the trainer
 * refuses it at start-up on a CPU without avx512_bf16); FP16 has no CPU implementation, so it
 * is refused rather than trained in FP32 without a word, and so is a loss scale. */
static int cpu_precision_check(const char *spec_path, const run_config *run) {
    if (run->compute != RUN_FP16 && run->loss_scale != RUN_LOSS_SCALE_NONE) {
        fprintf(stderr, "%s: error: precision.loss_scale is not implemented by the CPU backend (FP32 and BF16 "
                        "keep FP32's range and need none)\n"
                        "  hint: remove precision.loss_scale (or set it to NONE) for the CPU\n", spec_path);
        return 1;
    }
    if (run->compute != RUN_FP16) return 0;
    fprintf(stderr, "%s: error: precision { compute: FP16 } is not implemented by the CPU backend\n"
                    "  hint: use compute: BF16 (CPUs with avx512_bf16) or FP32 on the CPU, or build with --backend cuda\n",
            spec_path);
    return 1;
}

/* Runs argv, returning its exit status (or -1). stdout/stderr pass through. */
static int run_command(char *const argv[]) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "trainc: error: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int build_emit(const char *spec_path, const char *emit_dir, int quiet) {
    build_options opt = { .backend = BACKEND_CPU, .fuse = 1 };
    return build_emit_opts(spec_path, emit_dir, quiet, &opt);
}

/* Appends the init block's copy table (init_match.c) to the run config's text. */
static int append_init_config(char **run_c, const char *spec_path, const sema_result *res, const ir_net *net,
                              int cuda) {
    char err[512];
    char *init_c = init_emit_config(res, net, cuda, err, sizeof err);
    if (!init_c) {
        fprintf(stderr, "%s: error: %s\n", spec_path, err);
        return 1;
    }
    size_t n = strlen(*run_c), m = strlen(init_c);
    char *both = realloc(*run_c, n + m + 1);
    if (both) memcpy(both + n, init_c, m + 1), *run_c = both;
    free(init_c);
    return both ? 0 : 1;
}

/* BIN.src/link_libs.txt: libraries only some trainers link (an LMDB reader's, libhdf5; protobuf-c for
 * the caffemodel reader of an init block without init.spec, init_match.c), added to the link
 * line by build_link_libs; absent when there are none. */
static int write_link_libs(const char *emit_dir, const run_config *run, const ast_node *root) {
    char path[4200], libs[512] = "";
    snprintf(path, sizeof path, "%s/link_libs.txt", emit_dir);
    int protobuf = run->train.source == RUN_DATA_LMDB;
    if (run->train.source == RUN_DATA_LMDB) strcat(libs, " -llmdb");
    if (run->train.source == RUN_DATA_LEVELDB) strcat(libs, " -lleveldb"), protobuf = 1;
    /* the mean image's reader (rt_caffe_mean_image) lies beside the LMDB reader */
    if (run->train.source == RUN_DATA_LEVELDB && run->train.mean_file) strcat(libs, " -llmdb");
    if (run->train.source == RUN_DATA_IMAGE_FOLDER && run->train.mean_file) strcat(libs, " -llmdb"), protobuf = 1;
#ifdef TRAINC_HDF5_LIBS
    if (run->train.source == RUN_DATA_HDF5) strcat(libs, " " TRAINC_HDF5_LIBS);
#endif
#ifdef TRAINC_WITH_LMDB
    const ast_node *init = sv_msg(root, SM_SPEC, "init");
    if (init && !sv_get(init, SM_INIT, "spec")) protobuf = 1;
#else
    (void)root;
#endif
    if (protobuf) strcat(libs, " -lprotobuf-c");
    if (!libs[0]) return remove(path) == 0 || errno == ENOENT ? 0 : 1;
    FILE *f = fopen(path, "w");
    int ok = f && fprintf(f, "%s\n", libs + 1) >= 0;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) fprintf(stderr, "trainc: error: cannot write %s: %s\n", path, strerror(errno));
    return ok ? 0 : 1;
}

int build_link_libs(const char *emit_dir, char *out, size_t cap) {
    char path[4200];
    snprintf(path, sizeof path, "%s/link_libs.txt", emit_dir);
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(out, (int)cap, f)) out[0] = 0;
    fclose(f);
    out[strcspn(out, "\n")] = 0;
    return 0;
}

int build_emit_opts(const char *spec_path, const char *emit_dir, int quiet, const build_options *opt) {
    diag_ctx diag;
    diag_init(&diag, stderr);
    spec_doc doc;
    sema_result res;
    memset(&res, 0, sizeof res);
    int rc = sema_load(&doc, &res, &diag, spec_path);
    if (rc == 0 && !res.run.has_run) {
        fprintf(stderr, "%s: error: the spec has no 'solver' or 'data.train', so there is nothing to train\n"
                        "  hint: a model spec is built by a run spec that extends it\n", spec_path);
        rc = 1;
    }
    schedule sched, eval_sched;
    memset(&sched, 0, sizeof sched);
    memset(&eval_sched, 0, sizeof eval_sched);
    char *run_c = NULL;
    if (rc == 0 && opt->backend != BACKEND_CUDA) rc = cpu_precision_check(spec_path, &res.run);
    if (rc == 0 && opt->backend == BACKEND_CUDA && res.run.train.source == RUN_DATA_HDF5) {   /* float samples */
        fprintf(stderr, "%s: error: the CUDA backend takes image bytes, and HDF5 samples are floats\n"
                        "  hint: build with --backend cpu, or write the samples as images (an LMDB)\n", spec_path);
        rc = 1;
    }
    if (rc == 0 && opt->backend == BACKEND_CUDA && res.run.train.mean_file) {   /* a per-pixel mean */
        fprintf(stderr, "%s: error: normalize.mean_file: the CUDA backend normalizes each channel on the device and "
                        "cannot subtract Caffe's mean image (%s)\n"
                        "  hint: build with --backend cpu, or give the image's per-channel means (mean_value)\n",
                spec_path, res.run.train.mean_file);
        rc = 1;
    }
    if (rc == 0) {
        char err[512];
        run_c = emit_run_config(&res.run, err, sizeof err);
        if (!run_c) {
            fprintf(stderr, "%s: error: %s\n", spec_path, err);
            rc = 1;
        } else {
            rc = lower(&sched, &res, opt, 0, spec_path);
            if (rc == 0) rc = append_init_config(&run_c, spec_path, &res, &sched.net, opt->backend == BACKEND_CUDA);
            if (rc == 0 && res.has_eval_net)
                rc = build_eval_lower(&eval_sched, &res, opt, spec_path, &sched.net, &run_c);
        }
    }
    if (rc == 0) {
        mkdir(emit_dir, 0777);
        char *spec_text = spec_print_to_string(res.root);
        emit_info info = { spec_path, res.hash, spec_text ? spec_text : "",
                           res.run.name && *res.run.name ? res.run.name : "model", TRAINC_VERSION_STRING, run_c,
                           res.has_eval_net };
        rc = write_sources(emit_dir, &sched, res.has_eval_net ? &eval_sched : NULL, &info);
        if (rc == 0) rc = write_link_libs(emit_dir, &res.run, res.root);
        const ir_net *net = &sched.net;
        if (rc == 0 && !quiet)
            printf("trainc: wrote %s/%s (%d ops, %ld params, arena %.1f MiB planned vs %.1f MiB naive)\n", emit_dir,
                   opt->backend == BACKEND_CUDA ? "model.c, kernels.cu" : "model.c", net->n_ops, net->param_count,
                   net->arena_bytes / 1048576.0, net->arena_naive_bytes / 1048576.0);
        free(spec_text);
    }
    free(run_c);
    schedule_free(&sched);
    schedule_free(&eval_sched);
    sema_result_free(&res);
    spec_doc_free(&doc);
    return rc;
}

int build_binary(const char *spec_path, const char *out_bin, const char *emit_dir_opt) {
    build_options opt = { .backend = BACKEND_CPU, .fuse = 1 };
    return build_binary_opts(spec_path, out_bin, emit_dir_opt, &opt);
}

int build_binary_opts(const char *spec_path, const char *out_bin, const char *emit_dir_opt, const build_options *opt) {
    char emit_dir[4096];
    if (emit_dir_opt) snprintf(emit_dir, sizeof emit_dir, "%s", emit_dir_opt);
    else snprintf(emit_dir, sizeof emit_dir, "%s.src", out_bin);
    int rc = build_emit_opts(spec_path, emit_dir, 0, opt);
    if (rc != 0) return rc;
    const char *home = trainc_home();
    char build_dir[4096];
    runtime_build_dir(home, build_dir, sizeof build_dir);
    if (opt->backend == BACKEND_CUDA) return build_cuda_binary(home, build_dir, emit_dir, out_bin, run_command);
    char model_c[4200], include[4200], lib[4200];
    snprintf(model_c, sizeof model_c, "%s/model.c", emit_dir);
    snprintf(include, sizeof include, "-I%s/runtime/include", home);
    snprintf(lib, sizeof lib, "%s/libtrainrt.a", build_dir);
    struct stat st;
    if (stat(lib, &st) != 0) {
        fprintf(stderr, "trainc: error: runtime library '%s' not found\n  hint: run 'make' in %s, or set TRAINC_HOME\n",
                lib, home);
        return 1;
    }
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    /* The runtime's data parallelism links Open MPI: its flags as `mpicc --showme:link`
     * printed them when trainc was built. */
    char mpi_libs[1024];
    snprintf(mpi_libs, sizeof mpi_libs, "%s", TRAINC_MPI_LIBS);
    char *argv[32] = { (char *)cc, "-std=c11", "-O2", "-fopenmp", "-fno-math-errno", include, model_c, "-o",
                       (char *)out_bin, lib, "-lopenblas", "-lturbojpeg", "-ljpeg", "-lpng", "-lz", "-lm", "-lpthread" };
    int argc = 17;
    char model_eval_c[4200];   /* the evaluation resolution's forward, when the spec has one */
    snprintf(model_eval_c, sizeof model_eval_c, "%s/model_eval.c", emit_dir);
    if (stat(model_eval_c, &st) == 0) {   /* beside model.c, before the libraries */
        memmove(&argv[8], &argv[7], sizeof argv[0] * (size_t)(argc - 7));
        argv[7] = model_eval_c;
        argc++;
    }
    for (char *tok = strtok(mpi_libs, " "); tok && argc < 31; tok = strtok(NULL, " ")) argv[argc++] = tok;
    char extra_libs[256];
    build_link_libs(emit_dir, extra_libs, sizeof extra_libs);
    for (char *tok = strtok(extra_libs, " "); tok && argc < 31; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc] = NULL;
    int status = run_command(argv);
    if (status != 0) {
        fprintf(stderr, "trainc: error: compiling %s failed (status %d)\n", model_c, status);
        return 1;
    }
    printf("trainc: built %s\n", out_bin);
    return 0;
}
