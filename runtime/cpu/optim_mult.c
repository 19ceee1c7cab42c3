/* Caffe's per-blob multipliers (lr_mult, decay_mult) folded into one tensor's optimizer
 * arguments: every optimizer then applies them through the LR and weight decay it reads. */
#include "rt_optim.h"

bool rt_optim_apply_mults(rt_optim_args *a, float lr_mult, float decay_mult) {
    a->lr *= lr_mult;
    a->weight_decay *= decay_mult;
    return lr_mult != 0.0f;
}
