/* `trainc build --backend cuda`: compiles a net's kernels.cu with nvcc and its model.c with
 * cc, then links the GPU trainer against libtrainrt, libtrainrt_cuda, cuDNN and cuBLASLt, with
 * the toolchain `make cuda` recorded in build/cuda.env, or the file TRAINC_CUDA_ENV names
 * (NVCC, flags, include dirs, libraries). */
#include "build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_env.h"

#ifndef TRAINC_MPI_LIBS   /* set by mk/compiler.mk from `mpicc --showme:link` */
#define TRAINC_MPI_LIBS "-lmpi"
#endif

#define ENV_KEYS(X) X(NVCC) X(NVCC_FLAGS) X(CUDA_INCLUDES) X(CUDA_LIBS) X(CUDA_RPATH)

typedef struct {
#define ENV_FIELD(k) char *k;
    ENV_KEYS(ENV_FIELD)
#undef ENV_FIELD
} cuda_env;

static char *dup_trimmed(const char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) n--;
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int read_env(const char *path, cuda_env *env) {
    memset(env, 0, sizeof *env);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
#define ENV_READ(k)                                                              \
        if (strncmp(line, #k "=", sizeof #k) == 0 && !env->k) {                  \
            env->k = dup_trimmed(line + sizeof #k);                              \
            continue;                                                            \
        }
        ENV_KEYS(ENV_READ)
#undef ENV_READ
    }
    fclose(f);
#define ENV_CHECK(k) if (!env->k) return -2;
    ENV_KEYS(ENV_CHECK)
#undef ENV_CHECK
    return 0;
}

static void free_env(cuda_env *env) {
#define ENV_FREE(k) free(env->k);
    ENV_KEYS(ENV_FREE)
#undef ENV_FREE
}

/* argv builder: words split on spaces (the env values hold no quoted spaces). */
typedef struct {
    char *v[256];
    int n;
    char *owned[64];
    int n_owned;
} args;

static void add(args *a, const char *s) {
    if (a->n < 255) a->v[a->n++] = (char *)s;
    a->v[a->n] = NULL;
}

static void add_words(args *a, const char *prefix, const char *words) {
    char *copy = strdup(words);
    if (!copy || a->n_owned == 64) return;
    a->owned[a->n_owned++] = copy;
    for (char *w = strtok(copy, " "); w; w = strtok(NULL, " ")) {
        if (prefix) {
            size_t n = strlen(prefix) + strlen(w) + 1;
            char *p = malloc(n);
            if (!p || a->n_owned == 64) return;
            snprintf(p, n, "%s%s", prefix, w);
            a->owned[a->n_owned++] = p;
            add(a, p);
        } else {
            add(a, w);
        }
    }
}

static void free_args(args *a) {
    for (int i = 0; i < a->n_owned; i++) free(a->owned[i]);
}

/* nvcc -c a net's fused kernels (kernels.cu, kernels_eval.cu). Returns 0 or 1 after an error. */
static int compile_kernels(const char *nvcc, const cuda_env *env, const char *cu, const char *obj,
                           int (*run)(char *const argv[])) {
    args k = { 0 };
    add(&k, nvcc);
    add_words(&k, NULL, env->NVCC_FLAGS);
    add_words(&k, "-I", env->CUDA_INCLUDES);
    add(&k, "-c"), add(&k, cu), add(&k, "-o"), add(&k, obj);
    int rc = run(k.v) != 0;
    if (rc) fprintf(stderr, "trainc: error: compiling %s with nvcc failed\n", cu);
    free_args(&k);
    return rc;
}

/* cc -c a net's host schedule (model.c, model_eval.c). Returns 0 or 1 after an error. */
static int compile_model(const char *cc, const char *include, const char *c_file, const char *obj,
                         int (*run)(char *const argv[])) {
    args m = { 0 };
    add(&m, cc);
    add(&m, "-std=c11"), add(&m, "-O2"), add(&m, "-Wall"), add(&m, "-Wextra"), add(&m, "-Wno-unused-parameter");
    /* The parameter table lists Caffe's multipliers only on rows that have them (rt_trainer.h):
     * the trailing fields of the others are zero by design, not forgotten. */
    add(&m, "-Wno-missing-field-initializers");
    add(&m, include), add(&m, "-c"), add(&m, c_file), add(&m, "-o"), add(&m, obj);
    int rc = run(m.v) != 0;
    if (rc) fprintf(stderr, "trainc: error: compiling %s failed\n", c_file);
    free_args(&m);
    return rc;
}

int build_cuda_binary(const char *home, const char *build_dir, const char *emit_dir, const char *out_bin,
                      int (*run)(char *const argv[])) {
    char env_path[4200], rt_lib[4200], include[4200];
    const char *env_override = rt_env_path(RT_ENV_TRAINC_CUDA_ENV);
    if (env_override) snprintf(env_path, sizeof env_path, "%s", env_override);
    else snprintf(env_path, sizeof env_path, "%s/cuda.env", build_dir);
    snprintf(rt_lib, sizeof rt_lib, "%s/libtrainrt.a", build_dir);
    snprintf(include, sizeof include, "-I%s/runtime/include", home);
    cuda_env env;
    int er = read_env(env_path, &env);
    if (er != 0) {
        fprintf(stderr, "trainc: error: the CUDA runtime is not built: %s %s\n"
                        "  hint: run 'make cuda' in %s (needs nvcc and cuDNN; see mk/cuda.mk), or set TRAINC_HOME\n",
                env_path, er == -1 ? "is missing" : "is incomplete", home);
        free_env(&env);
        return 1;
    }
    struct stat st;
    if (stat(rt_lib, &st) != 0) {
        fprintf(stderr, "trainc: error: runtime library '%s' not found\n  hint: run 'make cuda' in %s\n", rt_lib, home);
        free_env(&env);
        return 1;
    }
    /* NVCC may be overridden for one build, like CC. */
    const char *nvcc = getenv("NVCC") && *getenv("NVCC") ? getenv("NVCC") : env.NVCC;
    const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
    const char *cxx = getenv("CXX") && *getenv("CXX") ? getenv("CXX") : "c++";
    /* the training model, and with an evaluation resolution its second schedule (build.c) */
    char model_eval_c[4200];
    snprintf(model_eval_c, sizeof model_eval_c, "%s/model_eval.c", emit_dir);
    const char *stems[2][2] = { { "kernels", "model" }, { "kernels_eval", "model_eval" } };
    int units = stat(model_eval_c, &st) == 0 ? 2 : 1;
    char objs[2][2][4200];
    int rc = 0;
    for (int u = 0; u < units && rc == 0; u++) {
        char kernels_cu[4200], model_c[4200];
        snprintf(kernels_cu, sizeof kernels_cu, "%s/%s.cu", emit_dir, stems[u][0]);
        snprintf(objs[u][0], sizeof objs[u][0], "%s/%s.o", emit_dir, stems[u][0]);
        snprintf(model_c, sizeof model_c, "%s/%s.c", emit_dir, stems[u][1]);
        snprintf(objs[u][1], sizeof objs[u][1], "%s/%s.o", emit_dir, stems[u][1]);
        rc = compile_kernels(nvcc, &env, kernels_cu, objs[u][0], run) || compile_model(cc, include, model_c, objs[u][1], run);
    }

    /* Linked by the C++ driver: libtrainrt_cuda is C++ (nvcc) code. */
    args l = { 0 };
    add(&l, cxx);
    add(&l, "-fopenmp");
    for (int u = 0; u < units; u++) add(&l, objs[u][1]), add(&l, objs[u][0]);
    add(&l, "-o"), add(&l, out_bin);
    add_words(&l, NULL, env.CUDA_LIBS);   /* libtrainrt_cuda first: it calls into libtrainrt */
    add(&l, rt_lib);
    add_words(&l, "-Wl,-rpath,", env.CUDA_RPATH);
    add(&l, "-lopenblas"), add(&l, "-lturbojpeg"), add(&l, "-ljpeg"), add(&l, "-lpng"), add(&l, "-lz"), add(&l, "-lm"), add(&l, "-lpthread"), add(&l, "-ldl"), add(&l, "-lrt");
    add_words(&l, NULL, TRAINC_MPI_LIBS);   /* libtrainrt's runtime/mpi (a world of one needs no launcher) */
    char extra_libs[256];
    build_link_libs(emit_dir, extra_libs, sizeof extra_libs);
    if (extra_libs[0]) add_words(&l, NULL, extra_libs);
    if (rc == 0 && run(l.v) != 0) {
        fprintf(stderr, "trainc: error: linking %s failed\n", out_bin);
        rc = 1;
    }
    free_args(&l);
    free_env(&env);
    if (rc == 0) printf("trainc: built %s (CUDA)\n", out_bin);
    return rc;
}
