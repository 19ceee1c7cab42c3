/* Caffe's frozen blobs (lr_mult 0) on the host: their gradients are zeroed before clipping. */
#include <string.h>
#include "rt_trainer.h"

void rt_param_zero_frozen_grads(const rt_param_tensor *tensors, int n_tensors, float *grads) {
    for (int i = 0; i < n_tensors; i++)
        if (rt_param_lr_mult(&tensors[i]) == 0.0f)
            memset(grads + tensors[i].offset, 0, sizeof(float) * (size_t)tensors[i].count);
}
