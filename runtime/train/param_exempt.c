/* Which parameter tensors the spec's optimizer leaves without weight decay: exempt_bn_bias
 * (norms, biases, layer scales) or exempt_norm (norm weights and biases only, torchvision's
 * --norm-weight-decay 0). Shared by the CPU trainer and the device optimizer's table. */
#include "rt_trainer.h"

int rt_param_exempt(const rt_run_config *run, const rt_param_tensor *p) {
    if (run->exempt_bn_bias && p->no_decay) return 1;
    return run->exempt_norm && p->no_decay == RT_PARAM_NORM;
}
