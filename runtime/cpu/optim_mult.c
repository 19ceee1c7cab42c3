/* Caffe's per-blob multipliers (lr_mult, decay_mult) folded into one tensor's optimizer
 * arguments: every optimizer then applies them through the LR and weight decay it reads. */
#include "rt_optim.h"

bool rt_optim_apply_mults(const rt_optim_config *cfg, rt_optim_args *a, float lr_mult, float decay_mult) {
    /* NVCaffe's GetLocalRate: "if (local_lr > 0.) local_lr = rate" under larc */
    if (!(cfg->kind == RT_OPTIM_SGD && cfg->sgd.larc != RT_LARC_NONE && lr_mult > 0.0f)) a->lr *= lr_mult;
    a->weight_decay *= decay_mult;
    return lr_mult != 0.0f;
}
