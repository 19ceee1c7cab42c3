/* The device memory plan of a CUDA trainer (rt_devmem.h). Plain arithmetic, so the compiler
 * links it too. */
#include "rt_devmem.h"

rt_devmem rt_devmem_plan(long n_params, long n_buffers, long n_state, int act_bytes, long arena_bytes,
                         int batch, long image, int classes, size_t workspace) {
    int half = act_bytes != 4;
    rt_devmem m;
    m.fixed = sizeof(float) * (size_t)(2 * n_params + n_buffers + n_state) + workspace;
    if (half) m.fixed += (size_t)act_bytes * (size_t)n_params;   /* the compute copy of the weights */
    /* Batch buffers: the images' bytes as sent (two: the next batch arrives while one is used),
     * the images normalized into the activation type, the labels, and in 16-bit modes the FP32
     * logits for the host. */
    size_t io = (size_t)image * (2 + (size_t)act_bytes) + sizeof(int) + (half ? sizeof(float) * (size_t)classes : 0);
    size_t per_batch = (size_t)arena_bytes + io * (size_t)batch;
    m.per_sample = batch > 0 ? (per_batch + (size_t)batch - 1) / (size_t)batch : per_batch;
    return m;
}

void rt_devmem_float_input(rt_devmem *m, long image, int target_words) {
    m->per_sample += 2 * (sizeof(float) - 1) * (size_t)image + sizeof(int) * (size_t)(target_words - 1);
}

void rt_devmem_channels_last(rt_devmem *m, long n_params, int act_bytes) {
    m->fixed += (size_t)act_bytes * (size_t)n_params;
}

size_t rt_devmem_partials_bytes(long channels, int batch, int channels_last) {
    return 2 * sizeof(double) * (size_t)channels * (size_t)(channels_last ? RT_DEVMEM_MAX_SPLITS : batch);
}

void rt_devmem_op_scratch(rt_devmem *m, long channels, int channels_last) {
    m->fixed += 2 * sizeof(double) * (size_t)channels;   /* the channel totals */
    if (channels_last) m->fixed += rt_devmem_partials_bytes(channels, 0, 1);
    else m->per_sample += rt_devmem_partials_bytes(channels, 1, 0);   /* a split per sample at the most */
    m->per_sample += sizeof(double);   /* the per-sample loss */
}
