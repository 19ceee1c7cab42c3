/* Learning-rate schedule: a plain-data config that generated code fills with constants, and a
 * pure function from the global step to the LR (batch scaling, warmup, then the schedule). */
#ifndef RT_SCHEDULE_H
#define RT_SCHEDULE_H
#include <stdbool.h>
#include "rt_core.h"

/* ---- Overview ---------------------------------------------------------------------------
 * lr(step) = peak · warmup_factor(step) · shape(step)
 *
 *   peak   = base · scale, scale = 1 (NONE), G/per_batch (LINEAR), sqrt(G/per_batch) (SQRT),
 *            G = the GLOBAL batch (batch_per_rank × ranks). ONE_CYCLE uses max_lr in place of
 *            base. rt_lr_peak() returns it; it is the LR at the end of warmup.
 *
 * Time. `step` is the 0-based global optimizer step: rt_lr_at(cfg, 0) is the LR of the first
 * update. It becomes a tick count t: PER_ITERATION t = step (fractional epochs, as Goyal et
 * al.); PER_EPOCH t = floor(step / steps_per_epoch) — the same curve sampled at epoch starts,
 * which is exactly a torch scheduler stepped once per epoch. Every length below is in epochs
 * and is converted to ticks (× steps_per_epoch, or × 1 per epoch); warmup, the run's length
 * and the milestones may instead be given in iterations (steps), as Caffe solvers state them.
 * W = warmup ticks, T = total ticks (epochs × ticks per epoch), D = T − W.
 *
 * Warmup (t < W): LINEAR factor = s + (1 − s)·t/W (torch LinearLR), CONSTANT factor = s
 * (torch ConstantLR), QUADRATIC factor = s + (1 − s)·(t/W)² (NVCaffe's rampup_interval),
 * s = start_factor, or base/peak = 1/k when start is RT_WARMUP_FROM_BASE (Goyal et al.:
 * "start from η and reach kη after 5 epochs"), or start_lr/peak when start is
 * RT_WARMUP_FROM_LR. For t ≥ W the factor is 1.
 *
 * The Caffe forks' warmup (replaces_schedule; Intel Caffe's warmup_iter, NVCaffe's
 * rampup_interval, both in SGDSolver::GetLearningRate of their sgd_solver.cpp) is not a
 * factor: while t < W the warmup's LR replaces the schedule's, and from W on the schedule is
 * the one without warmup, on the clock from step 0 (Caffe's poly at iteration W is
 * base·(1 − W/max_iter)^power, so the LR steps down at the warmup's end; a drop inside the
 * warmup applies from its end; the warmup may outlast the run). With RT_WARMUP_FROM_LR the
 * warmup LR is the forks' own expression: LINEAR (t·peak + (W − t)·start_lr)/W (Intel's
 * GetWarmUpLR), QUADRATIC start_lr + (peak − start_lr)·(t/W)² (NVCaffe's rampup).
 *
 * How warmup composes with the schedule — the convention, chosen so that published recipes
 * are written with the numbers their papers print:
 *  - Milestone schedules (STEP, MULTISTEP) count epochs from the start of training, warmup
 *    included: Goyal et al. warm up for 5 epochs and still drop at epochs 30, 60, 80. The
 *    result is the product factor × γ^drops, i.e. torch ChainedScheduler(LinearLR, MultiStepLR).
 *  - Curves (EXPONENTIAL, COSINE, POLYNOMIAL, LINEAR, ONE_CYCLE) start at the end of warmup
 *    and span the rest of training, u = t − W over D: IntelCaffe's "warm up 5 epochs, then
 *    decay linearly over 85". This is torch SequentialLR([warmup, curve(D)], milestones=[W]).
 * Either way the LR is continuous at warmup end and equals the peak there (rt_lr_validate
 * rejects a milestone inside warmup, and warmup with ONE_CYCLE, whose rise is its warmup).
 *
 * Curves, with p = clamp(u / D, 0, 1), peak P:
 *   CONSTANT     P
 *   STEP         P·γ^floor(t / every)                         torch StepLR
 *   MULTISTEP    P·γ^(number of milestones ≤ t)                torch MultiStepLR
 *   EXPONENTIAL  P·γ^(u in epochs)  (γ per epoch)              torch ExponentialLR
 *   COSINE       min + (P − min)(1 + cos πp)/2                 torch CosineAnnealingLR(T_max=D)
 *                (torch keeps oscillating past T_max; here the LR stays at min)
 *   POLYNOMIAL   end + (P − end)(1 − p)^power                  torch PolynomialLR when end = 0
 *   LINEAR       end + (P − end)(1 − p)                        torch LinearLR(1, end/P, D)
 *   ONE_CYCLE    torch OneCycleLR(max_lr = P, total_steps = D, pct_start, div_factor,
 *                final_div_factor, anneal_strategy, three_phase = False): rises from P/div
 *                to P at tick pct_start·D − 1, then anneals to P/(div·final_div) at D − 1.
 *   INV          P·(1 + γ·i)^(−power)                          Caffe's "inv" policy
 *   SIGMOID      P / (1 + exp(−γ·(i − step_iterations)))       Caffe's "sigmoid" policy
 *                (i: iterations since the start of training, warmup included, as Caffe's
 *                iter_; per-epoch stepping samples i at epoch starts)
 *
 * Example (Goyal et al., 256 GPUs × 32):
 *   rt_lr_config c = { .base = 0.1, .per_batch = 256, .scaling = RT_LR_SCALE_LINEAR,
 *       .global_batch = 8192, .steps_per_epoch = 156, .epochs = 90,
 *       .stepping = RT_LR_PER_ITERATION,
 *       .warmup = { .length = 5, .unit = RT_LR_UNIT_EPOCHS, .kind = RT_WARMUP_LINEAR,
 *                   .start = RT_WARMUP_FROM_BASE },
 *       .kind = RT_LR_MULTISTEP,
 *       .multistep = { .milestones = {30, 60, 80}, .count = 3, .gamma = 0.1 } };
 *   rt_lr_at(&c, 0) == 0.1; rt_lr_at(&c, 5 * 156) == 3.2; rt_lr_at(&c, 30 * 156) == 0.32 */

typedef enum { RT_LR_SCALE_NONE = 0, RT_LR_SCALE_LINEAR, RT_LR_SCALE_SQRT } rt_lr_scaling;

typedef enum {
    RT_LR_CONSTANT = 0,
    RT_LR_STEP,
    RT_LR_MULTISTEP,
    RT_LR_EXPONENTIAL,
    RT_LR_COSINE,
    RT_LR_POLYNOMIAL,
    RT_LR_LINEAR,
    RT_LR_ONE_CYCLE,
    RT_LR_INV,
    RT_LR_SIGMOID,
    RT_LR_KIND_COUNT
} rt_lr_kind;

typedef enum { RT_LR_PER_ITERATION = 0, RT_LR_PER_EPOCH } rt_lr_stepping;
typedef enum { RT_LR_UNIT_EPOCHS = 0, RT_LR_UNIT_ITERATIONS } rt_lr_unit;
typedef enum { RT_WARMUP_LINEAR = 0, RT_WARMUP_CONSTANT, RT_WARMUP_QUADRATIC } rt_warmup_kind;
/* Where warmup starts: start_factor × peak, the unscaled base LR (Goyal et al.), or start_lr. */
typedef enum { RT_WARMUP_FROM_FACTOR = 0, RT_WARMUP_FROM_BASE, RT_WARMUP_FROM_LR } rt_warmup_start;
typedef enum { RT_ANNEAL_COS = 0, RT_ANNEAL_LINEAR } rt_anneal;

#define RT_LR_MAX_MILESTONES 16

typedef struct {
    double length;            /* 0 = no warmup */
    rt_lr_unit unit;
    rt_warmup_kind kind;
    rt_warmup_start start;
    double start_factor;      /* with RT_WARMUP_FROM_FACTOR, in [0, 1] */
    double start_lr;          /* with RT_WARMUP_FROM_LR: the LR of step 0 (not batch-scaled), >= 0 */
    bool replaces_schedule;   /* the Caffe forks' form (above) */
} rt_warmup_config;

/* Parameters of each schedule kind; lengths in epochs, or in iterations where
 * rt_lr_config.milestone_unit says so. */
typedef struct { double every, gamma; } rt_lr_step_params;
typedef struct {
    double milestones[RT_LR_MAX_MILESTONES];   /* increasing, each after warmup */
    int count;
    double gamma;
} rt_lr_multistep_params;
typedef struct { double gamma; } rt_lr_exponential_params;   /* per epoch */
typedef struct { double min_lr; } rt_lr_cosine_params;
typedef struct { double power, end_lr; } rt_lr_polynomial_params;
typedef struct { double end_lr; } rt_lr_linear_params;
typedef struct {
    double max_lr;            /* scaled like base; the peak */
    double pct_start;         /* share of the run spent rising, torch default 0.3 */
    double div_factor;        /* start = max_lr / div_factor, torch default 25 */
    double final_div_factor;  /* end = start / final_div_factor, torch default 1e4 */
    rt_anneal anneal;
} rt_lr_one_cycle_params;
typedef struct { double gamma, power; } rt_lr_inv_params;              /* per iteration */
typedef struct { double gamma, step_iterations; } rt_lr_sigmoid_params;  /* per iteration */

typedef struct {
    double base;              /* LR for a batch of per_batch; unused by ONE_CYCLE */
    double per_batch;         /* reference batch of the scaling rule (256 in Goyal et al.) */
    rt_lr_scaling scaling;
    double global_batch;      /* batch_per_rank × ranks, the batch the rule scales to */
    long steps_per_epoch;     /* optimizer steps per epoch, > 0 */
    int epochs;               /* length of training, > 0 (with iterations: the epochs it touches) */
    long iterations;          /* > 0: the run's length in optimizer steps, which then ends
                               * inside an epoch (IntelCaffe's 8,040); 0: epochs x steps_per_epoch */
    rt_lr_unit milestone_unit;   /* of step.every and multistep.milestones */
    rt_lr_stepping stepping;
    rt_warmup_config warmup;
    rt_lr_kind kind;
    union {                   /* the member named by kind */
        rt_lr_step_params step;
        rt_lr_multistep_params multistep;
        rt_lr_exponential_params exponential;
        rt_lr_cosine_params cosine;
        rt_lr_polynomial_params polynomial;
        rt_lr_linear_params linear;
        rt_lr_one_cycle_params one_cycle;
        rt_lr_inv_params inv;
        rt_lr_sigmoid_params sigmoid;
    };
} rt_lr_config;

/* One row of `trainc show`'s LR table. */
typedef struct {
    long step;                /* 0-based global step */
    double epoch;             /* step / steps_per_epoch */
    double lr;                /* rt_lr_at(cfg, step) */
    const char *what;         /* "start", "warmup end", "drop", "peak", "end" (static) */
} rt_lr_point;

/* Checks every field that rt_lr_at relies on; RT_E_RANGE/RT_E_ARG with the field's name. */
rt_status rt_lr_validate(const rt_lr_config *cfg, rt_err *err);
/* The LR of the update at 0-based global step `step`; pure. Requires a valid cfg. */
double rt_lr_at(const rt_lr_config *cfg, long step);
/* Base (or max_lr) after batch scaling: the LR at the end of warmup. */
double rt_lr_peak(const rt_lr_config *cfg);
double rt_lr_scale_factor(const rt_lr_config *cfg);
long rt_lr_total_steps(const rt_lr_config *cfg);
/* Length of the run in epochs (fractional when given in iterations). */
double rt_lr_total_epochs(const rt_lr_config *cfg);
/* A step.every or multistep milestone value in epochs, whatever its unit. */
double rt_lr_milestone_epochs(const rt_lr_config *cfg, double value);
/* First step with the full (post-warmup) LR; 0 without warmup. */
long rt_lr_warmup_steps(const rt_lr_config *cfg);
/* Intel Caffe's momentum correction (sgd_solver.cpp, SGDSolver::ComputeUpdateValue): while
 * `step` is inside the warmup, lr(step)/lr(step − 1) with lr(−1) = lr(0), each LR rounded to
 * float first as Caffe's Dtype rates are; 1 from the warmup's end on. */
double rt_lr_warmup_ratio(const rt_lr_config *cfg, long step);
double rt_lr_warmup_epochs(const rt_lr_config *cfg);
/* First step at which the schedule's clock has reached `epoch` (per epoch: an epoch start). */
long rt_lr_step_of_epoch(const rt_lr_config *cfg, double epoch);
/* Fills out[0..cap) with the start, warmup end, each drop (STEP/MULTISTEP), the one-cycle
 * peak and the last step, in step order; returns how many there are (may exceed cap). */
int rt_lr_key_points(rt_lr_point *out, int cap, const rt_lr_config *cfg);
const char *rt_lr_kind_name(rt_lr_kind kind);

#endif
