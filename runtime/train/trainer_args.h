/* Command line of a compiled trainer. */
#ifndef RT_TRAINER_ARGS_H
#define RT_TRAINER_ARGS_H
#include <stdint.h>

typedef struct {
    const char *data_dir;     /* NULL: the spec's path */
    const char *out_dir;
    const char *resume;       /* checkpoint file, or NULL */
    const char *init_from;    /* checkpoint of the spec's init.spec, overriding init.checkpoint */
    long benchmark_steps;     /* > 0: time this many steps, no eval or checkpoints */
    int has_seed;
    uint64_t seed;
    int print_spec;
    int epochs;               /* 0: the spec's */
    int no_graph;             /* CUDA trainers: no CUDA graph capture (for comparison) */
    int decode_threads;       /* image data: 0 = the spec's */
    long max_decode_failures; /* image data: -1 = the spec's */
    int out_given;            /* --out was passed (--eval writes next to the checkpoint otherwise) */
    const char *eval;         /* --eval CKPT: evaluate the checkpoint, no training */
    const char *predict;      /* --predict CKPT: classify the images below, no training */
    int n_images;             /* --predict's image files and folders (argv's positional words) */
    char **images;
    const char *tensorboard;  /* --tensorboard DIR: TensorBoard event files there too */
    int top_k;                /* --predict: classes per image (--top-k, default 5) */
} rt_trainer_args;

/* 1 for --help or -h, 2 for --help-env, 0 for neither (rt_trainer_parse_args prints them). */
int rt_trainer_wants_help(int argc, char **argv);

/* Parses argv; on a bad argument prints one message with the usage and exits 2. */
void rt_trainer_parse_args(rt_trainer_args *a, const char *prog, const char *default_out,
                           int argc, char **argv);
#endif
