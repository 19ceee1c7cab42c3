/* Force-included (-include) before a generated model.c to compile it in double precision for
 * the whole-model gradient check: `float` becomes `double`, every op maps to its _f64 twin
 * (ops_f64.h, generated from rt_ops.h by model_gradcheck_test.sh), and the trainer types are
 * replaced by double-typed look-alikes. The generated code itself is used unchanged, except
 * that the test doubles its arena byte offsets (sed), since every element takes 8 bytes. */
#ifndef MODEL_F64_H
#define MODEL_F64_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "rt_ops.h"
#include "rt_rng.h"
#include "rt_core.h"
#include "rt_trainer.h"

#include "ops_f64.h"

typedef struct {
    double *params, *grads, *buffers;
    unsigned char *arena;
    uint64_t step_seed;
    long first_sample;      /* 0: the whole batch is the global batch */
    int training;
    rt_comm *comm;          /* NULL: a world of one, the bucket hooks do nothing */
} gc_model_ctx;

typedef struct {
    const char *name, *spec_path, *spec_hash, *spec_text, *compiler_version;
    int in_c, in_h, in_w, classes;
    int batch;
    long n_params, n_buffers, param_count;
    long arena_bytes, arena_naive_bytes;
    int n_tensors;
    const rt_param_tensor *tensors;
    int n_buckets;
    const rt_grad_bucket *buckets;
    void (*init)(double *params, double *buffers, uint64_t seed);
    double (*train_step)(gc_model_ctx *ctx, const void *x, const int32_t *y);
    void (*eval_forward)(gc_model_ctx *ctx, const void *x, double *logits);
    const double *(*logits)(const gc_model_ctx *ctx);
} gc_model;

#define rt_model_ctx gc_model_ctx
#define rt_model gc_model

/* The network input's gradient: the generated code passes NULL as the first layer's dinput
 * (nobody needs it); the check supplies this buffer instead so d(loss)/d(input) is tested. */
static double *gc_dx;
static const void *gc_x;   /* the network input: a NULL dinput of a layer reading anything else is a stop's */
static inline double *gc_din(double *din, const void *in) { return din ? din : in == gc_x ? gc_dx : NULL; }
#undef conv2d_backward
#undef linear_backward
#define conv2d_backward(din, dw, db, dout, out, in, ...) \
    conv2d_backward_f64(gc_din(din, in), dw, db, dout, out, in, __VA_ARGS__)
#define linear_backward(din, dw, db, dout, in, ...) linear_backward_f64(gc_din(din, in), dw, db, dout, in, __VA_ARGS__)

/* stop_gradient: no gradient flows back through it, which is the derivative of the loss with
 * the stop's output held at its value. The check's central differences do exactly that: the
 * unperturbed step records each stop's output (gc_stops_frozen 0), every perturbed one
 * replays it (1), so the layers before a stop move the loss only through their other paths. */
#define GC_MAX_STOPS 16
static int gc_stops_frozen, gc_n_stops;
static struct { double *out, *kept; long n; } gc_stops[GC_MAX_STOPS];
static inline void gc_stop_forward(double *out, const double *in, long n) {
    int k = 0;
    while (k < gc_n_stops && gc_stops[k].out != out) k++;
    if (k == gc_n_stops) {
        if (gc_stops_frozen || k == GC_MAX_STOPS) abort();   /* a stop the recording step did not run */
        gc_stops[k].out = out, gc_stops[k].n = n, gc_stops[k].kept = malloc(sizeof(double) * (size_t)n);
        gc_n_stops++;
    }
    if (!gc_stops_frozen) memcpy(gc_stops[k].kept, in, sizeof(double) * (size_t)n);
    memcpy(out, gc_stops[k].kept, sizeof(double) * (size_t)n);
}
#undef stop_gradient_forward
#define stop_gradient_forward gc_stop_forward

/* Initializers: the real float ones, widened, so the check starts from the trainer's init. */
static inline void gc_init_const(double *w, long n, double v) {
    for (long i = 0; i < n; i++) w[i] = v;
}
static inline void gc_init_torch_default(double *w, long nw, double *b, long nb, long fan_in,
                                         rt_rng *r) {
    float *fw = rt_alloc_aligned((size_t)nw * 4), *fb = nb ? rt_alloc_aligned((size_t)nb * 4) : NULL;
    rt_init_torch_default(fw, nw, fb, nb, fan_in, r);
    for (long i = 0; i < nw; i++) w[i] = fw[i];
    for (long i = 0; i < nb; i++) b[i] = fb[i];
    rt_free_aligned(fw);
    if (fb) rt_free_aligned(fb);
}
/* The fillers (the token layers' and the spec's weight_filler ones): the float draws, widened. */
#define GC_WIDEN(call, w, n)                                          \
    do {                                                              \
        float *f_ = rt_alloc_aligned((size_t)(n) * 4);                \
        call;                                                         \
        for (long i_ = 0; i_ < (n); i_++) (w)[i_] = f_[i_];           \
        rt_free_aligned(f_);                                          \
    } while (0)
static inline void gc_init_uniform(double *w, long n, float lo, float hi, rt_rng *r) {
    GC_WIDEN(rt_init_uniform(f_, n, lo, hi, r), w, n);
}
static inline void gc_init_normal(double *w, long n, float mean, float std, rt_rng *r) {
    GC_WIDEN(rt_init_normal(f_, n, mean, std, r), w, n);
}
static inline void gc_init_kaiming_uniform(double *w, long n, long fan, double a, rt_rng *r) {
    GC_WIDEN(rt_init_kaiming_uniform(f_, n, fan, a, r), w, n);
}
#define rt_init_const gc_init_const
#define rt_init_torch_default gc_init_torch_default
#define rt_init_uniform gc_init_uniform
#define rt_init_normal gc_init_normal
#define rt_init_kaiming_uniform gc_init_kaiming_uniform

/* The real headers are in, with float; from here on the model's `float` is double. */
#define float double

/* The model's main() is not this program's. */
#define main gc_model_main
#define rt_trainer_main(m, r, argc, argv) ((void)(m), (void)(r), (void)(argc), (void)(argv), 0)
#endif
