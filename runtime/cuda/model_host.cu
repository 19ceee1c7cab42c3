/* The host side every generated CUDA trainer shares (rt_cuda_model.h): device memory and
 * start-up, the batch's way to the device, the captured training step around the model's own
 * schedule, the optimizer step and the rt_device_hooks. What differs between nets comes from
 * the rt_cuda_model the generated model.c describes itself with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_profiler_api.h>

#include "cuda_common.cuh"   /* CUDA_CHECK */
#include "rt_cuda_model.h"
extern "C" {   /* the runtime's C headers: nvcc compiles this file as C++ */
#include "rt_core.h"
#include "rt_data.h"
#include "rt_devmem.h"
}

rt_cuda_dev rt_dev;

static const rt_cuda_model *cm;   /* the model of this process (rt_cuda_trainer_main) */
static rt_model model;            /* cm->model with the runtime's functions and hooks */

/* What stays here: the input batch double-buffered, the normalization table, the FP32 logits
 * for the host, the workspace and the two captured graphs. */
static struct {
    void *x_in[2];                /* the batch as the host sends it: bytes, cropped and flipped
                                   * (cm->input_u8), or normalized FP32 (mixed, erased);
                                   * x_in[cur] is this step's, the other receives the next */
    int cur;
    long eval_image;              /* values per evaluation sample (data.val's crop), or image() */
    int target_words;             /* int32 per sample of the targets (RT_TARGET_WORDS) */
    const void *staged;           /* the host batch copied into x_u8[!cur] ahead, or NULL */
    float *lut;                   /* [in_c][256]: what a byte becomes (rt_normalize_lut), or NULL */
    float *logits;                /* FP32 logits for the host (16-bit models), or NULL */
    void *work;                   /* cuDNN workspace, shared by every conv */
    rt_cuda_graph *step_graph, *optim_graph;
} host;

static int sixteen_bit(void) { return cm->math == RT_CUDA_BF16 || cm->math == RT_CUDA_FP16; }
static size_t act_bytes(void) { return sixteen_bit() ? 2 : sizeof(float); }
static long image(void) { return (long)model.in_c * model.in_h * model.in_w; }
/* The input buffers hold a training batch or an evaluation batch, whichever is larger. */
static long largest_image(void) { return host.eval_image > image() ? host.eval_image : image(); }
static size_t batch_values(long values) { return (size_t)model.batch * (size_t)values; }
static size_t input_bytes(long values) { return batch_values(values) * (cm->input_u8 ? 1 : sizeof(float)); }
static long logits_count(void) { return (long)model.batch * model.classes; }
static const void *logits_dev(void) { return rt_dev.arena + cm->logits_offset; }

/* The batch and the step's mask seed to the device, outside the captured graph. The batch
 * comes straight from the loader's buffer, which is page-locked on first use so copies run
 * at full speed: usually already copied by stage_next during the step before, otherwise now.
 * Bytes (a quarter of FP32's) are normalized here; the floats of a mixed or erased batch,
 * already normalized by the loader, become the activation type. */
static void put_batch(rt_model_ctx *ctx, const void *x_host, const int32_t *y_host, long values) {
    if (x_host == host.staged) {
        host.cur ^= 1;
        rt_cuda_wait_staged();
        host.staged = NULL;
    } else {
        rt_cuda_pin_host((void *)x_host, input_bytes(values));
        rt_cuda_copy_h2d(host.x_in[host.cur], x_host, input_bytes(values));
        if (y_host) host.staged = NULL;   /* a training batch other than the staged one */
    }
    /* channels-last bytes (the loader wrote the plan's layout): the channel is i % in_c */
    long hw = model.input_nhwc ? 1 : values / model.in_c;
    if (cm->input_u8)
        rt_cuda_normalize_input(rt_dev.x, (const uint8_t *)host.x_in[host.cur], host.lut, (long)batch_values(values),
                                model.in_c, hw);
    else   /* in the plan's layout too; a copy in FP32 */
        rt_cuda_to_act(rt_dev.x, (const float *)host.x_in[host.cur], (long)batch_values(values));
    rt_cuda_input_consumed();
    if (y_host) rt_cuda_copy_h2d(rt_dev.y, y_host, sizeof(int32_t) * host.target_words * model.batch);
    rt_cuda_copy_h2d(rt_dev.seed, &ctx->step_seed, sizeof ctx->step_seed);
}

/* The next step's batch (the trainer has it already) to the other input buffer on the copy
 * stream, while this step computes. */
static void stage_next(const void *next_host) {
    if (!next_host) return;
    rt_cuda_pin_host((void *)next_host, input_bytes(image()));
    rt_cuda_stage_h2d(host.x_in[host.cur ^ 1], next_host, input_bytes(image()));
    host.staged = next_host;
}

/* The step the graph captures: the model's forward, loss and backward; then the optimizer
 * waits for every bucket's sum, and 16-bit logits are widened for the host. */
static void train_step_device(void *ctx) {
    cm->step(ctx);
    rt_cuda_grads_finish();
    if (host.logits) rt_cuda_from_act(host.logits, logits_dev(), logits_count());
}

/* TRAINC_CUDA_PROFILE_STEP=K: the profiler API brackets this process's K-th training step
 * (1-based), so `ncu --profile-from-start off` or `nsys --capture-range=cudaProfilerApi`
 * sees one step, not the start-up's cuDNN algorithm search. */
static int profile_step(void) {
    static int step = -1;
    if (step < 0) step = (int)rt_env_long(RT_ENV_TRAINC_CUDA_PROFILE_STEP);
    return step;
}

static double train_step(rt_model_ctx *ctx, const void *x_host, const int32_t *y_host) {
    static int steps_run;
    int profiled = profile_step() && ++steps_run == profile_step();
    put_batch(ctx, x_host, y_host, image());
    if (profiled) {
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaProfilerStart());
    }
    rt_cuda_graph_run(&host.step_graph, train_step_device, ctx);
    if (profiled) {
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaProfilerStop());
    }
    stage_next(ctx->next_x);
    /* loss and logits back to the host, for the trainer's log and accuracy */
    double loss;
    rt_cuda_copy_d2h(&loss, rt_dev.loss, sizeof loss);
    rt_cuda_copy_d2h(ctx->arena, host.logits ? (const void *)host.logits : logits_dev(), sizeof(float) * logits_count());
    return loss;
}

/* The evaluation forward: the training schedule's, or at data.val's resolution the one
 * lowered at that shape (model_eval.c), over the same buffers. */
static void eval_forward(rt_model_ctx *ctx, const void *x_host, float *logits_host) {
    put_batch(ctx, x_host, NULL, host.eval_image);
    const void *at = logits_dev();
    if (cm->eval_forward) at = cm->eval_forward(ctx);
    else cm->forward(ctx);
    if (host.logits) rt_cuda_from_act(host.logits, at, logits_count());
    rt_cuda_copy_d2h(logits_host, host.logits ? (const void *)host.logits : at, sizeof(float) * logits_count());
}

/* The host copy train_step made: the trainer's arena is batch x classes floats. */
static const float *logits(const rt_model_ctx *ctx) { return (const float *)ctx->arena; }

/* Start-up on the device: plans and algorithms, the memory check, allocation, upload. */
/* Caffe's lr_mult / decay_mult of the tensors that have them; nothing when none has. */
static void set_optim_mults(rt_cuda_optim *o) {
    int n = model.n_tensors, any = 0;
    for (int i = 0; i < n; i++) any |= model.tensors[i].has_mult;
    if (!any) return;
    float *lr = (float *)malloc(sizeof(float) * n), *decay = (float *)malloc(sizeof(float) * n);
    if (!lr || !decay) rt_die("out of host memory for the optimizer's multipliers");
    for (int i = 0; i < n; i++) lr[i] = rt_param_lr_mult(&model.tensors[i]), decay[i] = rt_param_decay_mult(&model.tensors[i]);
    rt_cuda_optim_set_mults(o, lr, decay);
    free(lr), free(decay);
}

/* The normalization table of the byte path to the device. */
static void upload_lut(const rt_run_config *run) {
    size_t lut_bytes = sizeof(float) * 256 * (size_t)model.in_c;
    float *lut = (float *)malloc(lut_bytes);
    if (!lut) rt_die("out of host memory for the input normalization table");
    rt_normalize_lut(run->mean, run->std, model.in_c, (float (*)[256])lut);
    host.lut = (float *)rt_cuda_malloc(lut_bytes, "the input normalization table");
    rt_cuda_copy_h2d(host.lut, lut, lut_bytes);   /* a pageable source: staged before it returns */
    free(lut);
}

static void upload(rt_model_ctx *ctx, const rt_run_config *run, const float *opt_state, long n_state) {
    rt_cuda_init(rt_cuda_device_from_env(), cm->math);
    if (ctx->no_graph) rt_cuda_graph_disable();
    /* descriptors only: cuDNN's algorithms are timed after allocation, on the model's own
     * memory and a workspace at its cap, so the check below counts every byte the search uses.
     * An evaluation resolution's plans share the workspace and the arena: each is the larger
     * of the two schedules' (the bound create_plans returns last covers every conv created). */
    size_t cap = rt_cuda_workspace_cap();
    size_t bound = cm->create_plans(cap);
    long arena_bytes = cm->arena_bytes;
    host.eval_image = image();
    if (run->eval_h) {
        if (!cm->eval_forward || !cm->eval_find_algorithms)
            rt_die("report this: the run evaluates at another resolution but the model has no forward for it");
        size_t eval_bound = cm->eval_create_plans(cap);
        if (eval_bound > bound) bound = eval_bound;
        if (run->eval_arena_bytes > arena_bytes) arena_bytes = run->eval_arena_bytes;
        host.eval_image = (long)model.in_c * run->eval_h * run->eval_w;
    }
    /* refuse before allocating when the plan does not fit (rt_devmem.h: the accounting
     * `trainc show --device-memory` uses too) */
    long n_params = model.n_params, n_buffers = model.n_buffers;
    rt_devmem mem = rt_devmem_plan(n_params, n_buffers, n_state, (int)act_bytes(), arena_bytes, model.batch,
                                   largest_image(), model.classes, bound);
    if (cm->nhwc) rt_devmem_channels_last(&mem, n_params, (int)act_bytes());   /* WN */
    rt_devmem_op_scratch(&mem, cm->partial_sum_channels, cm->nhwc);
    mem.fixed += cm->bn_fold_bytes;
    host.target_words = RT_TARGET_WORDS(run->augment);
    if (!cm->input_u8) rt_devmem_float_input(&mem, largest_image(), host.target_words);
    rt_cuda_check_memory(model.name, mem.fixed, mem.per_sample, model.batch);
    cuda_reserve_partial_sums(rt_devmem_partials_bytes(cm->partial_sum_channels, model.batch, cm->nhwc),
                              cm->partial_sum_channels);
    if (cm->bn_fold_bytes) cuda_bn_fold_reserve(cm->bn_fold_bytes);   /* before any graph's capture */
    rt_dev.P = (float *)rt_cuda_malloc(sizeof(float) * n_params, "parameters");
    rt_dev.G = (float *)rt_cuda_malloc(sizeof(float) * n_params, "gradients");
    rt_dev.WA = sixteen_bit() ? rt_cuda_malloc(act_bytes() * n_params, "the 16-bit weight copy") : (void *)rt_dev.P;
    if (cm->nhwc) rt_dev.WN = rt_cuda_malloc(act_bytes() * n_params, "the channels-last weight copy");
    rt_dev.S = (float *)rt_cuda_malloc(sizeof(float) * (n_buffers ? n_buffers : 1), "batch-norm buffers");
    rt_dev.state = (float *)rt_cuda_malloc(sizeof(float) * (n_state ? n_state : 1), "optimizer state");
    rt_dev.arena = (unsigned char *)rt_cuda_malloc(arena_bytes, "activations (the static plans)");
    host.x_in[0] = rt_cuda_malloc(input_bytes(largest_image()), "the input batch");
    host.x_in[1] = rt_cuda_malloc(input_bytes(largest_image()), "the next input batch");
    rt_dev.x = rt_cuda_malloc(act_bytes() * batch_values(largest_image()), "the normalized input batch");
    if (cm->input_u8) upload_lut(run);
    if (sixteen_bit()) host.logits = (float *)rt_cuda_malloc(sizeof(float) * logits_count(), "the logits for the host");
    rt_dev.y = (int32_t *)rt_cuda_malloc(sizeof(int32_t) * host.target_words * model.batch, "the labels");
    rt_dev.seed = (uint64_t *)rt_cuda_malloc(sizeof(uint64_t), "the mask seed");
    /* [0] the step's loss; [1] one head's mean on its way into it (cuda_loss_add) */
    rt_dev.loss = (double *)rt_cuda_malloc(2 * sizeof(double), "the loss");
    host.work = rt_cuda_malloc(bound, "the cuDNN workspace");
    rt_cuda_conv_set_workspace(host.work, bound);
    rt_cuda_copy_h2d(rt_dev.P, ctx->params, sizeof(float) * n_params);
    if (sixteen_bit()) rt_cuda_to_act(rt_dev.WA, rt_dev.P, n_params);
    if (cm->weights_nhwc) cm->weights_nhwc();
    /* The search overwrites only what is recomputed before it is read: activations and their
     * gradients in the arena, the input batch, the gradients (zeroed below), the workspace.
     * It reads the weights just uploaded; parameters, BN buffers and optimizer state (a
     * resumed checkpoint's among them) are never its outputs. */
    /* The cuDNN graphs' timing (cudnn_graph_tune.cu) runs on scratch in the arena, which the
     * first step writes before it reads, never on the run's state; rank 0 alone times, and
     * every rank runs rank 0's choice. */
    rt_cuda_graph_agree_begin(ctx->comm);
    rt_cuda_graph_tune_scratch(rt_dev.arena, arena_bytes);
    size_t work = cm->find_algorithms(cap);
    if (run->eval_h) {   /* the evaluation's convs: forward only, on the shared arena and input */
        size_t eval_work = cm->eval_find_algorithms(cap);
        if (eval_work > work) work = eval_work;
    }
    rt_cuda_graph_tune_scratch(NULL, 0);
    rt_cuda_graph_agree_end();
    /* every rank runs rank 0's algorithms (their timing may differ per GPU) */
    if (rt_comm_size(ctx->comm) > 1) work = rt_cuda_conv_agree(ctx->comm);
    if (work > bound)   /* only rank 0's choice on a different GPU or library could need more */
        rt_die("cuDNN: the chosen algorithms need %zu bytes of workspace on this GPU, more than the %zu the "
               "memory check counted", work, bound);
    if (work < bound) {   /* what the choice needs; the rest goes back to the device */
        rt_cuda_free(host.work);
        host.work = rt_cuda_malloc(work, "the cuDNN workspace");
        rt_cuda_conv_set_workspace(host.work, work);
    }
    rt_cuda_memset0(rt_dev.G, sizeof(float) * n_params);
    if (n_buffers) rt_cuda_copy_h2d(rt_dev.S, ctx->buffers, sizeof(float) * n_buffers);
    if (n_state) rt_cuda_copy_h2d(rt_dev.state, opt_state, sizeof(float) * (size_t)n_state);
    int n = model.n_tensors;
    long *offsets = (long *)malloc(sizeof(long) * (n ? n : 1)), *counts = (long *)malloc(sizeof(long) * (n ? n : 1));
    int *exempt = (int *)malloc(sizeof(int) * (n ? n : 1));
    if (!offsets || !counts || !exempt) rt_die("out of host memory for the optimizer's tensor table");
    for (int i = 0; i < n; i++) {
        offsets[i] = model.tensors[i].offset, counts[i] = model.tensors[i].count;
        exempt[i] = rt_param_exempt(run, &model.tensors[i]);
    }
    /* the all-reduce leaves the sum over ranks: the optimizer divides by the world size */
    rt_dev.optim = rt_cuda_optim_create(&run->optim, offsets, counts, exempt, n, run->weight_decay,
                                        run->clip_grad_norm, 1.0f / rt_comm_size(ctx->comm));
    free(offsets), free(counts), free(exempt);
    set_optim_mults(rt_dev.optim);
    /* precision.loss_scale: overflowing steps are skipped and counted */
    if (cm->loss_scale) rt_cuda_optim_set_loss_scale(rt_dev.optim, cm->loss_scale, cm->init_scale);
    rt_cuda_nccl_init(ctx->comm, rt_dev.G, model.buckets, model.n_buckets, run->overlap);
    rt_cuda_sync();
    static const char *const math_names[] = { "FP32", "TF32", "BF16", "FP16" };
    printf("%s: on %s, %.1f MiB of device memory, %s%s\n", model.name, rt_cuda_device_name(),
           (mem.fixed + mem.per_sample * model.batch) / 1048576.0, math_names[cm->math],
           rt_cuda_graph_enabled() ? ", CUDA graphs" : "");
    if (run->eval_h)
        printf("%s: evaluates at %dx%d with a forward of its own, in the arena it shares with training (%.1f "
               "MiB: the larger of training's %.1f and evaluation's %.1f)\n", model.name, run->eval_h, run->eval_w, arena_bytes / 1048576.0,
               cm->arena_bytes / 1048576.0, run->eval_arena_bytes / 1048576.0);
}

static void download(rt_model_ctx *ctx, float *opt_state, long n_state) {
    rt_cuda_copy_d2h(ctx->params, rt_dev.P, sizeof(float) * model.n_params);
    if (model.n_buffers) rt_cuda_copy_d2h(ctx->buffers, rt_dev.S, sizeof(float) * model.n_buffers);
    if (n_state) rt_cuda_copy_d2h(opt_state, rt_dev.state, sizeof(float) * (size_t)n_state);
}

static void optimizer_device(void *arg) {
    (void)arg;
    rt_cuda_optim_launch(rt_dev.optim, rt_dev.P, sixteen_bit() ? rt_dev.WA : NULL, rt_dev.state, rt_dev.G);
    if (cm->weights_nhwc) cm->weights_nhwc();
}

/* The step's scalars go to the device word the captured graph reads, ahead of it in stream order. */
static void optimizer_step(rt_model_ctx *ctx, double lr, double momentum_scale, long step) {
    (void)ctx;
    rt_cuda_optim_set_step(rt_dev.optim, lr, momentum_scale, step);
    rt_cuda_graph_run(&host.optim_graph, optimizer_device, NULL);
}

/* Rank 0's batch-norm statistics to every rank, before evaluation. */
static void broadcast_buffers(rt_model_ctx *ctx) {
    (void)ctx;
    rt_cuda_broadcast(rt_dev.S, model.n_buffers);
}

static void loss_scaler(rt_model_ctx *ctx, double state[3], int set) {
    (void)ctx;
    if (set) rt_cuda_optim_scaler_set(rt_dev.optim, state);
    else rt_cuda_optim_scaler_get(rt_dev.optim, state);
}

/* Before the trainer repositions its loader: the staged copy finishes, and is forgotten. */
static void drop_staged(rt_model_ctx *ctx) {
    (void)ctx;
    rt_cuda_staged_done();
    host.staged = NULL;
}

/* Host weights and statistics onto the device, with the copies the step reads (the 16-bit
 * weights, the channels-last ones), as upload puts the first ones. */
static void load_weights(rt_model_ctx *ctx, const float *params, const float *buffers) {
    (void)ctx;
    rt_cuda_copy_h2d(rt_dev.P, params, sizeof(float) * model.n_params);
    if (sixteen_bit()) rt_cuda_to_act(rt_dev.WA, rt_dev.P, model.n_params);
    if (cm->weights_nhwc) cm->weights_nhwc();
    if (model.n_buffers) rt_cuda_copy_h2d(rt_dev.S, buffers, sizeof(float) * model.n_buffers);
    rt_cuda_sync();   /* the host arrays may change as soon as this returns */
}

static const rt_device_hooks hooks = { upload, download, optimizer_step, broadcast_buffers, NULL, drop_staged,
                                       load_weights };
static const rt_device_hooks hooks_scaled = { upload, download, optimizer_step, broadcast_buffers, loss_scaler,
                                              drop_staged, load_weights };

int rt_cuda_trainer_main(const rt_cuda_model *m, const rt_run_config *run, int argc, char **argv) {
    cm = m;
    model = *m->model;
    /* the host arena holds the logits copy; the plan's arena is on the device */
    model.arena_bytes = (long)sizeof(float) * logits_count();
    model.input_u8 = m->input_u8;   /* bytes: put_batch normalizes them on the device */
    model.input_nhwc = m->nhwc;   /* in the plan's layout: the normalization needs no transpose */
    model.train_step = train_step;
    model.eval_forward = eval_forward;
    model.logits = logits;
    model.device = m->loss_scale ? &hooks_scaled : &hooks;
    return rt_trainer_main(&model, run, argc, argv);
}
