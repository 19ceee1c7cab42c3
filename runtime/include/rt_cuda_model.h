/* The host side every generated CUDA trainer shares (runtime/cuda/model_host.cu): device
 * memory, the batch's way to the device (staging the next batch during the step), upload and
 * download, the optimizer step and the rt_device_hooks. A generated model.c describes itself
 * with an rt_cuda_model (its sizes, its precision, its plans and its schedule functions) and
 * hands it to rt_cuda_trainer_main; its forward and backward read the device buffers from
 * rt_dev.
 *
 *   static const rt_cuda_model cuda = {
 *       .model = &model, .arena_bytes = ARENA_BYTES, .math = RT_CUDA_BF16, .nhwc = 0,
 *       .loss_scale = 0, .init_scale = 0.0f, .create_plans = create_plans,
 *       .find_algorithms = find_algorithms, .weights_nhwc = NULL,
 *       .forward = forward, .step = train_step_device, .logits_offset = 35323904, .input_u8 = 1,
 *   };
 *   int main(int argc, char **argv) { return rt_cuda_trainer_main(&cuda, &run, argc, argv); }
 */
#ifndef RT_CUDA_MODEL_H
#define RT_CUDA_MODEL_H

#include "rt_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif
#include "rt_trainer.h"

typedef struct rt_cuda_model {
    const rt_model *model;     /* sizes, tensors, buckets, init; its hooks are the runtime's */
    long arena_bytes;          /* the static plan's device arena */
    rt_cuda_math math;         /* BF16 and FP16: 16-bit activations (act_t) and a weight copy WA */
    int nhwc;                  /* channels-last activations (a WN weight copy for the convs) */
    long partial_sum_channels; /* the widest op with per-channel partial sums (rt_devmem_op_scratch) */
    size_t bn_fold_bytes;      /* the largest bn fold's scratch (rt_devmem_bn_fold_bytes), 0 without one */
    int loss_scale;            /* 0 none, 1 static, 2 dynamic (precision.loss_scale) */
    float init_scale;
    /* Creates the net's cuDNN and cuBLASLt plans (descriptors, layouts); returns the cuDNN
     * workspace to allocate for the search, cap bytes and the 16-bit weight gradient's room
     * (rt_cuda_conv_workspace_bound): the memory check counts it. */
    size_t (*create_plans)(size_t cap);
    /* After allocation, before the gradients are zeroed: times cuDNN's algorithms on each
     * conv's own buffers (rt_cuda_conv_select) within cap bytes of the workspace set at the
     * bound; returns the workspace the choice needs. */
    size_t (*find_algorithms)(size_t cap);
    void (*weights_nhwc)(void);            /* WN from WA after every change of WA, or NULL */
    void (*forward)(rt_model_ctx *ctx);    /* device work only */
    void (*step)(void *ctx);               /* forward, loss and backward: device work only */
    long logits_offset;                    /* the logits (act_t) in the arena, in bytes */
    /* 1: the loader sends the batch as bytes, normalized on the device; 0: as normalized FP32
     * (mixup, cutmix, random erasing: the loader's float work), converted on the device */
    int input_u8;
    /* Evaluation at data.val's resolution (rt_run_config.eval_h, model_eval.c), or NULL: the
     * plans of that schedule (descriptors; returns the workspace bound over every conv made so
     * far, called after create_plans), its forward algorithms' search on its own buffers in
     * the shared arena and input (after allocation, like find_algorithms), and its forward
     * over the same parameters, BN statistics, input buffer and arena (made as large as the
     * larger plan), returning its logits (act_t). */
    size_t (*eval_create_plans)(size_t cap);
    size_t (*eval_find_algorithms)(size_t cap);
    const void *(*eval_forward)(rt_model_ctx *ctx);
} rt_cuda_model;

/* The model's device memory, set up by the upload hook. */
typedef struct {
    float *P, *G, *S, *state;  /* params, grads, BN buffers, optimizer state */
    void *WA;                  /* compute copy of the params (act_t; P itself in FP32) */
    void *WN;                  /* the conv weights channels-last, from WA (nhwc), or NULL */
    unsigned char *arena;      /* the static plan */
    void *x;                   /* the batch normalized, as the first layer reads it (act_t) */
    int32_t *y;                /* the labels (with mixup/cutmix: labels, partners, weights) */
    uint64_t *seed;            /* the step's mask seed (dropout, drop-path) */
    double *loss;              /* [0] the step's loss, [1] a loss head's mean (cuda_loss_add) */
    rt_cuda_optim *optim;
} rt_cuda_dev;
extern rt_cuda_dev rt_dev;

/* The device buffers under the names a generated model.c's layout macros use (its P + off,
 * G + off, WA + off, arena + off, x), as locals at the top of its forward and step; act_t
 * is the model's activation type. */
#define RT_CUDA_DEVICE_LOCALS                                                  \
    float *P = rt_dev.P, *G = rt_dev.G, *S = rt_dev.S;                         \
    const act_t *WA = (const act_t *)rt_dev.WA, *WN = (const act_t *)rt_dev.WN; \
    unsigned char *arena = rt_dev.arena;                                       \
    const act_t *x = (const act_t *)rt_dev.x;                                  \
    (void)P, (void)G, (void)S, (void)WA, (void)WN, (void)arena, (void)x

/* rt_trainer_main for a CUDA model: installs the runtime's train_step, eval_forward, logits
 * and device hooks around m->model's sizes, tables and init. */
int rt_cuda_trainer_main(const rt_cuda_model *m, const rt_run_config *run, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
