/* The emitter: one walk over a lowered schedule (lower.h) that prints a trainer's model.c
 * section by section (banner, layout, shapes, forward, backward, init, tables, descriptor),
 * asking the backend's table (emit_backend) only how each piece is spelled. It decides
 * nothing: fusion, gradient routes, offsets and buckets come from the schedule. */
#ifndef TRAINC_EMIT_H
#define TRAINC_EMIT_H
#include <stdio.h>
#include "lower.h"
#include "template.h"

typedef struct {
    const char *spec_path, *spec_hash, *spec_text, *name, *compiler_version;
    const char *run_config_c;  /* C initializer body of the rt_run_config (emit_run.c), or NULL */
    int eval_shape;            /* eval_forward calls model_eval.c's forward at data.val's resolution */
} emit_info;

typedef struct emit_backend emit_backend;
typedef struct {
    FILE *out;
    const schedule *s;
    const ir_net *net;
    const emit_info *info;
    const emit_backend *be;
} emitter;

/* How one backend spells a model.c. Every hook is required (the walker calls each once per
 * section or per op); per-op hooks switch over every op kind. */
struct emit_backend {
    const char *act_type;          /* element type of arena activations: "float" or "act_t" */
    const char *accumulate_fn;     /* adds a scratch gradient into a gradient */
    const char *bucket_ready;      /* the hand-over call up to its bucket argument */
    const char *copy_fn;           /* copies (dst, src, bytes) of arena memory */
    /* zeroes a parameter gradient: printf format of (ident, "_dweight" or "_dbias", floats) */
    const char *zero_fmt;
    const char *main_template;     /* templates/ file of the run configuration and main */
    void (*banner)(emitter *e);
    void (*layout_head)(emitter *e);               /* sizes and types before the macros */
    void (*param_extra)(emitter *e, const ir_op *op);   /* more per-parameter macros */
    void (*state)(emitter *e);                     /* shape constants and the model's state */
    void (*forward_begin)(emitter *e);
    void (*forward_op)(emitter *e, int i);
    void (*step_begin)(emitter *e);                /* the step's head and its forward call */
    /* the loss of head `head`'s logits (ir_net.heads: 0 the main, which starts the step's
     * loss; later ones add to it), fused with their gradient into dlogits: the softmax
     * cross-entropy of labels, or (dense_target) the loss of dense targets; args: what the
     * walk passes after the logits and targets, up to the gradient's scale; weight: the head's
     * loss_weight, scaling both its loss in the sum and its gradient (dscale: "W / BATCH") */
    void (*loss)(emitter *e, int head, int dense_target, const char *dlogits, const char *logits, const char *args,
                 double weight);
    void (*backward_op)(emitter *e, int j);
    void (*step_end)(emitter *e);                  /* after backward: the rest of the step */
    void (*init_end)(emitter *e);
    void (*descriptor)(emitter *e, int n_tensors); /* the model descriptor (templates/) */
    /* model_eval.c after its forward: what model.c calls to evaluate (logits: their name) */
    void (*eval_end)(emitter *e, const char *logits);
};

extern const emit_backend emit_cpu_backend, emit_cuda_backend;

/* Writes model.c of the schedule for its backend. */
void emit_model(FILE *out, const schedule *s, const emit_info *info);
/* model_eval.c, the forward of a schedule lowered at the evaluation resolution (its own
 * shapes and arena offsets). CPU: model_eval_shape_forward(), which model.c's eval_forward
 * calls; CUDA: model_eval_create_plans(), model_eval_find_algorithms() and
 * model_eval_forward(), which the rt_cuda_model names (its fused kernels are kernels_eval.cu's,
 * their idents prefixed apart). */
void emit_model_eval(FILE *out, const schedule *eval, const emit_info *info);
/* CUDA: the net's fused elementwise kernels (STEM.cu: kernels.cu, or kernels_eval.cu for the
 * evaluation resolution's schedule) and their prototypes (STEM.h). */
void emit_cuda_kernels(FILE *out, const schedule *s, const emit_info *info, const char *stem);
void emit_cuda_kernels_header(FILE *out, const schedule *s, const emit_info *info, const char *stem);

/* Helpers the backends share (emit_model.c). */
void emit_op_comment(emitter *e, const ir_op *op, const char *what);   /* "    / * layer ... * /" */
void emit_string_literal(FILE *out, const char *s);
void emit_pool_shape(emitter *e, const ir_op *op);
/* Concat op j: its inputs (or, backward, where their gradients go) and their channels as
 * local arrays of ptr_type, then fn(out, ins, ...) or fn(dins, dout, ...). */
void emit_concat(emitter *e, int j, int backward, const char *ptr_type, const char *fn);
/* mul, channel_shuffle, channel_slice (emit_channel.c): the forward or backward call of op j,
 * the runtime's function names prefixed by `prefix` ("" on the CPU, "cuda_"). */
void emit_channel_op(emitter *e, int j, int backward, const char *prefix);
/* The rt_conv_shape of conv op i, with the backend's extra fields before .din_add. */
void emit_conv_shape(emitter *e, int i, const char *extra);   /* the rt_pool_shape of a max/avg pool */
/* Fills templates/NAME with those of the descriptor's names and numbers (NAME, SPEC_PATH,
 * SPEC_HASH, VERSION, IN_C/H/W, N_PARAMS, N_BUFFERS, ARENA_BYTES, ARENA_NAIVE_BYTES,
 * N_TENSORS, N_BUCKETS, PARAM_COUNT) and extra vars that it uses. */
void emit_template(emitter *e, const char *name, int n_tensors, const template_var *extra, int n_extra);
#endif
