/* NVCaffe's LARC (its sgd_solver.cpp, SGDSolver::GetLocalRate): a per-tensor rate from the
 * norms of the weights and of the gradient, which takes the place of the tensor's lr_mult
 * ("scale": lr·rate) or caps the LR ("clip": min(lr, rate)); or Intel Caffe's local_lr_auto
 * (its LARS, in its sgd_solver.cpp's GetLocalRate), another rate in the same place. */
#include <math.h>
#include "rt_optim.h"

/* NVCaffe in float, in its order: rate = (1.F - momentum) * larc_eta * w_norm / wgrad_norm,
 * 1 when either norm is 0. Its GPU path takes wgrad_norm before the weight decay, which the
 * update kernel fuses in afterwards (its CPU path would regularize first); the GPU path is
 * the one its solvers run (solver_mode: GPU). The sums here are in double (Caffe's in float). */
float rt_larc_rate(const rt_sgd_config *cfg, double sum_sq_param, double sum_sq_grad, float grad_scale) {
    float w_norm = (float)sqrt(sum_sq_param), g_norm = (float)(sqrt(sum_sq_grad) * fabs((double)grad_scale));
    if (!(w_norm > 0.0f) || !(g_norm > 0.0f)) return 1.0f;
    /* Intel Caffe (local_lr_auto): rate = gw_ratio * w_norm / (wgrad_norm + weight_decay * w_norm),
     * the gradient taken before Regularize (its SGD moves Regularize after GetLocalRate) */
    if (cfg->larc_intel) return cfg->larc_eta * w_norm / (g_norm + cfg->larc_weight_decay * w_norm);
    return (1.0f - cfg->momentum) * cfg->larc_eta * w_norm / g_norm;
}

/* NVCaffe's ComputeUpdateValue: local_rate = rate * local_lr ("scale") or
 * std::min(rate, local_lr) ("clip"), local_lr being the LARC rate. */
float rt_larc_lr(const rt_sgd_config *cfg, float lr, float rate) {
    if (cfg->larc == RT_LARC_CLIP) return fminf(lr, rate);
    return lr * rate;
}
