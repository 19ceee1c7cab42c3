/* The device memory a CUDA trainer plans for itself: one formula shared by the trainer's
 * start-up check (generated model.c, rt_cuda_check_memory) and `trainc show --device-memory`,
 * so that the batch show reports is the batch the trainer accepts.
 *
 *   rt_devmem m = rt_devmem_plan(N_PARAMS, N_BUFFERS, n_state, 2, ARENA_BYTES, BATCH, IMAGE,
 *                                CLASSES, workspace);
 *   fits iff m.fixed + m.per_sample * BATCH <= free - RT_DEVMEM_RESERVE
 */
#ifndef RT_DEVMEM_H
#define RT_DEVMEM_H
#include <stddef.h>

/* Kept back from the free memory for the CUDA context's own growth (kernels loaded lazily,
 * cuDNN and NCCL buffers, graphs). */
#define RT_DEVMEM_RESERVE ((size_t)256 << 20)

typedef struct {
    size_t fixed;        /* does not grow with the batch: parameters, gradients, BN buffers,
                          * optimizer state, the 16-bit weight copy, the cuDNN workspace */
    size_t per_sample;   /* grows with it: the arena (activations, gradients, saved state) and
                          * the batch buffers, per sample, rounded up */
} rt_devmem;

/* act_bytes: 4 (FP32, TF32) or 2 (BF16, FP16); arena_bytes: the static plan at `batch`;
 * image: values per input sample (sent as bytes); workspace: the cuDNN workspace at its cap
 * (rt_cuda_conv_workspace_bound), which the algorithm search after allocation may use. */
rt_devmem rt_devmem_plan(long n_params, long n_buffers, long n_state, int act_bytes, long arena_bytes,
                         int batch, long image, int classes, size_t workspace);

/* What a trainer that takes normalized FP32 batches (mixup, cutmix, random erasing) needs
 * beyond rt_devmem_plan's bytes: the two input buffers hold floats, and the targets
 * target_words (RT_TARGET_WORDS) int32 per sample. */
void rt_devmem_float_input(rt_devmem *m, long image, int target_words);

/* What a channels-last trainer (--layout nhwc) needs beyond rt_devmem_plan's bytes: a second
 * 16-bit copy of the weights in the layout its convolutions read. */
void rt_devmem_channels_last(rt_devmem *m, long n_params, int act_bytes);

/* Blocks one channel's rows are split over, at most, in the channels-last per-channel sums
 * (channel_tiles.cuh); the NCHW ones split a channel over at most the batch's samples. */
#define RT_DEVMEM_MAX_SPLITS 512

/* The scratch the CUDA ops size at the first step, after the check: the partial sums of
 * batch norm, layer norm, layer scale and bias gradients (2 doubles per channel and split,
 * batchnorm_sums.cuh bn_partials), their channel totals (2 doubles per channel) and the
 * per-sample losses (a double each). channels: the widest such op (ir_partial_sum_channels);
 * an upper bound, the splits at their most. */
void rt_devmem_op_scratch(rt_devmem *m, long channels, int channels_last);
/* Its partial sums alone at `batch`, which the trainer allocates at start-up: a scratch that
 * grew op by op would keep every outgrown buffer (rt_cuda_scratch). */
size_t rt_devmem_partials_bytes(long channels, int batch, int channels_last);

/* The scratch of an identity block's bn backward folded through its 1x1 conv3, cin -> cout
 * (bn_fold_conv1x1_backward.cu; compiler/lower/fuse_bn_fold.c): G, H, S, sum g, u, diag(a) W
 * (16-bit), diag(e) W, M (FP32), -M and W^T u (16-bit), each on 256 bytes (cuBLASLt's
 * algorithms assume it); sizes (or NULL) gets each piece's bytes. A trainer sizes it once at
 * its largest fold's before the step's graph is captured (rt_cuda_model.bn_fold_bytes), and
 * its memory check counts it. */
enum { RT_DEVMEM_BN_FOLD_PIECES = 10 };
static inline size_t rt_devmem_bn_fold_bytes(int cin, int cout, int act_bytes, size_t *sizes) {
    size_t ci = (size_t)cin, co = (size_t)cout, a = (size_t)act_bytes, total = 0;
    size_t s[RT_DEVMEM_BN_FOLD_PIECES] = { co * ci * 4, ci * ci * 4, ci * 4,      co * 4,      co * 4,
                                           co * ci * a, co * ci * 4, ci * ci * 4, ci * ci * a, ci * a };
    for (int i = 0; i < RT_DEVMEM_BN_FOLD_PIECES; i++) {
        if (sizes) sizes[i] = s[i];
        total += (s[i] + 255) & ~(size_t)255;
    }
    return total;
}

#endif
