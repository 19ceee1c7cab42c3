/* Optimizers (SGD with momentum, LARS, AdamW, LAMB) and global-norm gradient clipping over flat
 * float arrays: one fused pass per tensor, callable per tensor or once over all parameters. */
#ifndef RT_OPTIM_H
#define RT_OPTIM_H
#include <stdbool.h>
#include <stddef.h>

/* ---- Overview ---------------------------------------------------------------------------
 * Generated code calls one step function per parameter tensor (or once over the whole
 * parameter buffer when no tensor is exempt and the optimizer is elementwise — SGD, AdamW;
 * LARS is per tensor by definition). Every call takes:
 *   - the optimizer's constant config (from the spec),
 *   - rt_optim_args: what changes with the step or the tensor (lr, weight decay, grad scale).
 * Semantics follow PyTorch (torch.optim.SGD, AdamW) and You et al. 2017 for LARS, with the
 * step 0-based and global as in rt_lr_at: step 0 is the first update.
 *
 * grad_scale multiplies every gradient element before anything else reads it, so unscaling
 * a mixed-precision loss scale (1/S) and a clipping coefficient (rt_grad_clip_coef) cost no
 * extra pass over the gradients. It has no default: set it to 1 when there is nothing to fold.
 *
 * Example (ResNet-50, SGD momentum 0.9, wd 1e-4, BN and biases exempt):
 *   static const rt_sgd_config sgd = { .momentum = 0.9f };
 *   rt_optim_args a = { .lr = (float)rt_lr_at(&lr_cfg, step), .weight_decay = 1e-4f,
 *                       .grad_scale = 1.0f, .step = step };
 *   rt_optim_args a_exempt = a; a_exempt.weight_decay = 0;
 *   rt_sgd_step(P + 0, M + 0, G + 0, 9408, &sgd, &a);          // conv1.weight
 *   rt_sgd_step(P + 9408, M + 9408, G + 9408, 64, &sgd, &a_exempt);   // bn1.weight
 *
 * Determinism: updates are elementwise; the norms (LARS, clipping) sum in a fixed order
 * that depends on n only, never on the thread count, so a run is bit-for-bit repeatable. */

typedef enum { RT_LARC_NONE = 0, RT_LARC_SCALE, RT_LARC_CLIP } rt_larc_policy;

typedef enum { RT_OPTIM_SGD = 0, RT_OPTIM_LARS, RT_OPTIM_ADAMW, RT_OPTIM_LAMB, RT_OPTIM_RMSPROP, RT_OPTIM_ADAGRAD,
               RT_OPTIM_ADADELTA, RT_OPTIM_KIND_COUNT } rt_optim_kind;

/* torch.optim.SGD: d = g·s + wd·p; buf = d on step 0, else momentum·buf + (1 − dampening)·d;
 * p −= lr·(nesterov ? d + momentum·buf : buf). Weight decay is coupled (L2, added to d). */
typedef struct {
    float momentum;           /* 0 = plain SGD, no state */
    float dampening;
    bool nesterov;            /* requires momentum > 0 and dampening = 0, as torch */
    /* Caffe's form (sgd_solver.cpp, nesterov_solver.cpp): d = g·s + wd·p;
     * v = momentum·v + lr·d (v starts at 0); p −= nesterov ? (1 + momentum)·v − momentum·v_before : v.
     * Equal to torch's while lr is constant; dampening must be 0. */
    bool lr_in_velocity;
    /* NVCaffe's LARC (sgd_solver.cpp, SGDSolver::GetLocalRate and ComputeUpdateValue; the GPU
     * path, where the weight decay is fused into the update after the rate is taken), with
     * lr_in_velocity: per tensor rate = (1 − momentum)·eta·‖p‖/‖g·s‖ in float, in that order
     * (1 when either norm is 0), the gradient's norm before weight decay; the tensor's LR is
     * lr·rate (SCALE) or min(lr, rate) (CLIP), in place of lr·lr_mult (rt_optim_apply_mults
     * leaves lr_mult out; lr_mult 0 stays frozen), exempt tensors included. */
    rt_larc_policy larc;
    float larc_eta;
    /* Intel Caffe's local_lr_auto (its LARS, the same file's GetLocalRate) in place of
     * NVCaffe's rate: rate = eta·‖p‖/(‖g·s‖ + larc_weight_decay·‖p‖), larc_weight_decay the
     * solver's weight decay whatever the tensor's decay_mult or exemption (1 when either norm
     * is 0); lr_mult replaced as above. */
    bool larc_intel;
    float larc_weight_decay;
    /* Intel Caffe's warmup (sgd_solver.cpp, SGDSolver::ComputeUpdateValue), with
     * lr_in_velocity: during the warmup the momentum is multiplied by lr_t/lr_t−1. The caller
     * passes that ratio as rt_optim_args.momentum_scale (rt_lr_warmup_ratio). */
    bool warmup_momentum_correction;
} rt_sgd_config;

/* LARS (You, Gitman, Ginsburg 2017; the MLPerf ResNet form):
 *   trust = eta·‖p‖ / (‖g‖ + wd·‖p‖ + eps), or 1 when ‖p‖ or ‖g‖ is 0 or the tensor is exempt
 *   v = momentum·v + lr·trust·(g + wd·p);  p −= nesterov ? momentum·v + lr·trust·(g + wd·p) : v
 * The LR sits inside the momentum buffer, as in the paper (v starts at 0); with a constant
 * LR this equals torch-style SGD on the trust-scaled gradient. */
typedef struct {
    float momentum;
    float eta;                /* trust coefficient, 0.001 in the paper */
    float eps;                /* added to the denominator; 0 in the paper */
    bool nesterov;
} rt_lars_config;

/* torch.optim.AdamW (decoupled weight decay, bias correction, amsgrad off), t = step + 1:
 *   p ·= 1 − lr·wd;  m = β1·m + (1 − β1)·g;  v = β2·v + (1 − β2)·g²
 *   p −= lr/(1 − β1^t) · m / (sqrt(v)/sqrt(1 − β2^t) + eps) */
typedef struct {
    double beta1, beta2;      /* torch defaults 0.9, 0.999; double because 1 − 0.999f is off
                                 by 1.3e-5 relative, a bias torch (Python floats) does not have */
    double eps;               /* torch default 1e-8 */
    /* Caffe's Adam (adam_solver.cpp): weight decay added to the gradient (L2, before the
     * moments), eps on the uncorrected sqrt(v): g' = g·s + wd·p, the moments of g', then
     * p −= lr·sqrt(1 − β2^t)/(1 − β1^t) · m / (sqrt(v) + eps). */
    bool caffe_form;
} rt_adamw_config;

/* LAMB as timm's Lamb (timm/optim/lamb.py; You et al. 2019), t = step + 1, per tensor:
 *   m = β1·m + (1 − β1)·g;  v = β2·v + (1 − β2)·g²
 *   u = (m/(1 − β1^t)) / (sqrt(v)/sqrt(1 − β2^t) + eps) + wd·p
 *   trust = ‖p‖/‖u‖ (1 when either is 0; min(trust, 1) with trust_clip) when wd ≠ 0, else 1
 *   p −= lr·trust·u
 * Weight decay joins the update (decoupled from the moments), so a tensor without decay
 * (exempt, or wd 0) gets no trust ratio either, as timm without always_adapt. Before all of
 * that timm divides every gradient by max(1, ‖g‖/max_grad_norm) over all tensors: the
 * caller folds rt_lamb_clip_coef() into grad_scale. */
typedef struct {
    double beta1, beta2;      /* timm defaults 0.9, 0.999 */
    double eps;               /* timm default 1e-6 */
    double max_grad_norm;     /* timm default 1.0; 0 = no global clipping */
    bool trust_clip;          /* LAMBC: trust ratio at most 1 */
} rt_lamb_config;

/* AdaGrad and AdaDelta as Caffe (adagrad_solver.cpp, adadelta_solver.cpp) and torch (Adagrad
 * without lr_decay, Adadelta) both define them, with d = g·s + wd·p (L2) (Caffe's RMSProp is
 * rmsprop's torch form without momentum, below):
 *   AdaGrad:  v += d²;                        p −= lr·d/(sqrt(v) + eps)
 *   AdaDelta: v = decay·v + (1 − decay)·d²;  u = d·sqrt((a + eps)/(v + eps));
 *             a = decay·a + (1 − decay)·u²;  p −= lr·u
 * State: v (AdaDelta: v, then a), from 0. */
typedef struct {
    double decay;             /* AdaDelta's rho (Caffe's momentum) */
    double eps;               /* Caffe's delta */
} rt_adaptive_config;

/* RMSprop in two forms, weight decay coupled (d = g·s + wd·p) in both:
 * - torch.optim.RMSprop (centered off): sq = α·sq + (1 − α)·d², sq starting at 0;
 *   u = d / (sqrt(sq) + eps); buf = momentum·buf + u (buf starting at 0), p −= lr·buf
 *   (p −= lr·u without momentum).
 * - TF (tf.compat.v1.train.RMSPropOptimizer, timm's RMSpropTF as the EfficientNet and
 *   MobileNetV3 recipes use it): eps inside the square root, the mean square starting at 1,
 *   the LR inside the momentum buffer: sq = α·sq + (1 − α)·d² (sq = α + (1 − α)·d² on the
 *   first step); u = d / sqrt(sq + eps); buf = momentum·buf + lr·u, p −= buf (p −= lr·u
 *   without momentum).
 * The state is sq, then buf where momentum is not 0, zero-initialized: the TF form's start
 * at 1 is taken on the first step (step 0). */
typedef struct {
    double alpha;             /* smoothing of the mean square: torch 0.99, TF (decay) 0.9 */
    double eps;               /* torch 1e-8; TF recipes 1e-3 (timm's default 1e-10) */
    float momentum;           /* 0 = no momentum buffer */
    bool tf;                  /* the TF form */
} rt_rmsprop_config;

/* What changes per step or per tensor. */
typedef struct {
    float lr;                 /* rt_lr_at(cfg, step) */
    float weight_decay;       /* this tensor's; 0 where the spec exempts it (BN, bias) */
    float grad_scale;         /* folded into g first: 1/loss_scale × clip coefficient; 1 = none */
    long step;                /* 0-based global step (SGD's first buffer, AdamW's t = step + 1) */
    float momentum_scale;     /* SGD: multiplies the momentum this step (Intel Caffe's warmup
                                 correction, rt_sgd_config.warmup_momentum_correction); 0 = 1 */
} rt_optim_args;

/* momentum_buf[n] may be NULL when cfg->momentum == 0. */
void rt_sgd_step(float *param, float *momentum_buf, const float *grad, long n,
                 const rt_sgd_config *cfg, const rt_optim_args *a);
/* exempt: no trust ratio and no weight decay (plain momentum SGD in the LARS form). */
void rt_lars_step(float *param, float *momentum_buf, const float *grad, long n, bool exempt,
                  const rt_lars_config *cfg, const rt_optim_args *a);
/* Returns the trust ratio rt_lars_step applies (1 for exempt tensors); for logging. */
float rt_lars_trust_ratio(const float *param, const float *grad, long n, bool exempt,
                          const rt_lars_config *cfg, const rt_optim_args *a);
void rt_adamw_step(float *param, float *exp_avg, float *exp_avg_sq, const float *grad, long n,
                   const rt_adamw_config *cfg, const rt_optim_args *a);
/* Returns the trust ratio applied (for logging and tests). */
float rt_lamb_step(float *param, float *exp_avg, float *exp_avg_sq, const float *grad, long n,
                   const rt_lamb_config *cfg, const rt_optim_args *a);
/* momentum_buf may be NULL when cfg->momentum == 0. */
void rt_rmsprop_step(float *param, float *square_avg, float *momentum_buf, const float *grad, long n,
                     const rt_rmsprop_config *cfg, const rt_optim_args *a);
/* timm's global clipping: 1/max(1, norm/max_grad_norm) for the norm of the scaled gradients
 * over every tensor; 1 when max_grad_norm is 0 or the norm is not finite. */
float rt_lamb_clip_coef(double norm, double max_grad_norm);
/* kind: RT_OPTIM_RMSPROP, RT_OPTIM_ADAGRAD or RT_OPTIM_ADADELTA; acc (AdaDelta's second plane)
 * may be NULL for the others. */
void rt_adaptive_step(rt_optim_kind kind, float *param, float *v, float *acc, const float *grad, long n,
                      const rt_adaptive_config *cfg, const rt_optim_args *a);

/* ---- One entry point for all three, and the state each keeps ----------------------------
 * State of a tensor of n parameters is rt_optim_state_per_param() planes of n floats, plane
 * after plane (AdamW, LAMB: exp_avg then exp_avg_sq), zero-initialized; with one state buffer for
 * the whole model, a tensor at parameter offset o has its state at k·o. Checkpoints store the
 * planes under rt_optim_state_name() (RMSprop: square_avg, then momentum_buffer). */
typedef struct {
    rt_optim_kind kind;
    union {
        rt_sgd_config sgd;
        rt_lars_config lars;
        rt_adamw_config adamw;
        rt_lamb_config lamb;
        rt_adaptive_config adaptive;
        rt_rmsprop_config rmsprop;
    };
} rt_optim_config;

int rt_optim_state_per_param(const rt_optim_config *cfg);
const char *rt_optim_state_name(rt_optim_kind kind, int plane);
const char *rt_optim_kind_name(rt_optim_kind kind);
/* exempt: the spec exempts this tensor: weight decay 0 whatever a says, and no LARS or LAMB
 * trust ratio. */
void rt_optim_step(float *param, float *state, const float *grad, long n, bool exempt,
                   const rt_optim_config *cfg, const rt_optim_args *a);

/* Caffe's lr_mult / decay_mult of one tensor (optim_mult.c): multiplies a->lr by lr_mult and
 * a->weight_decay by decay_mult, so SGD, LARS (trust ratio included) and AdamW all see the
 * tensor's own LR and decay, as Caffe's local_rate and local_decay. NVCaffe's LARC replaces
 * a non-zero lr_mult by its rate: with sgd.larc the LR is left as it is. Returns false when
 * lr_mult is 0 (Caffe's frozen blob): the caller skips the update, which would change
 * nothing but the optimizer state. */
bool rt_optim_apply_mults(const rt_optim_config *cfg, rt_optim_args *a, float lr_mult, float decay_mult);
/* NVCaffe's LARC rate of a tensor (rt_sgd_config.larc) from its sums of squares; and the
 * tensor's LR from the step's: lr·rate (SCALE) or min(lr, rate) (CLIP). */
float rt_larc_rate(const rt_sgd_config *cfg, double sum_sq_param, double sum_sq_grad, float grad_scale);
float rt_larc_lr(const rt_sgd_config *cfg, float lr, float rate);

/* ---- Norms and clipping -----------------------------------------------------------------
 * Sums of squares accumulate in double, in an order fixed by n alone. */
double rt_sum_squares(const float *x, long n);
void rt_sum_squares_pair(double *sum_x, double *sum_y, const float *x, const float *y, long n);
/* sqrt of the sum over tensors of their sums of squares (torch clip_grad_norm_, norm 2). */
double rt_grad_global_norm(const float *const *grads, const long *counts, int ntensors);
/* torch's coefficient min(1, max_norm / (norm + 1e-6)); 1 when the norm is not finite, so
 * that the caller's overflow check (loss scaling) sees the bad gradients and skips the step. */
float rt_grad_clip_coef(double norm, double max_norm);
void rt_grad_scale(float *const *grads, const long *counts, int ntensors, float scale);
/* Clips in place; returns the norm before clipping. To save the scaling pass, compute the
 * norm and pass rt_grad_clip_coef() as rt_optim_args.grad_scale instead. */
double rt_grad_clip_global_norm(float *const *grads, const long *counts, int ntensors,
                                double max_norm);

#endif
