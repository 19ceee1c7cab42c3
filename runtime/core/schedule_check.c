/* LR schedule validation: every condition rt_lr_at relies on, reported with the field name
 * so that the compiler's sema and the trainer's start-up give the same message. */
#include <math.h>
#include "rt_schedule.h"

static const char *const kind_names[RT_LR_KIND_COUNT] = {
    "constant", "step", "multistep", "exponential", "cosine", "polynomial", "linear", "one_cycle", "inv", "sigmoid",
};
_Static_assert(sizeof kind_names / sizeof kind_names[0] == RT_LR_KIND_COUNT,
               "a new rt_lr_kind needs a name here");

const char *rt_lr_kind_name(rt_lr_kind kind) {
    return (unsigned)kind < RT_LR_KIND_COUNT ? kind_names[kind] : "unknown";
}

static bool positive(double x) { return isfinite(x) && x > 0; }
static bool non_negative(double x) { return isfinite(x) && x >= 0; }

#define RANGE(ok, ...) do { if (!(ok)) return rt_fail(err, RT_E_RANGE, NULL, __VA_ARGS__); } while (0)

static rt_status check_batch_and_time(const rt_lr_config *cfg, rt_err *err) {
    RANGE(cfg->steps_per_epoch > 0, "lr: steps_per_epoch must be > 0, got %ld", cfg->steps_per_epoch);
    RANGE(cfg->epochs > 0, "lr: epochs must be > 0, got %d", cfg->epochs);
    RANGE(cfg->iterations >= 0, "lr: iterations must be >= 0, got %ld", cfg->iterations);
    RANGE(cfg->milestone_unit == RT_LR_UNIT_EPOCHS || cfg->milestone_unit == RT_LR_UNIT_ITERATIONS,
          "lr: unknown milestone unit %d", (int)cfg->milestone_unit);
    RANGE((unsigned)cfg->scaling <= RT_LR_SCALE_SQRT, "lr: unknown scaling rule %d", (int)cfg->scaling);
    if (cfg->scaling != RT_LR_SCALE_NONE) {
        RANGE(positive(cfg->per_batch), "lr: per_batch must be > 0 with a scaling rule, got %g",
              cfg->per_batch);
        RANGE(positive(cfg->global_batch), "lr: global batch must be > 0, got %g", cfg->global_batch);
    }
    if (cfg->kind != RT_LR_ONE_CYCLE)
        RANGE(positive(cfg->base), "lr: base must be > 0, got %g", cfg->base);
    return RT_OK;
}

static rt_status check_warmup(const rt_lr_config *cfg, rt_err *err) {
    const rt_warmup_config *w = &cfg->warmup;
    RANGE(non_negative(w->length), "lr.warmup: length must be >= 0, got %g", w->length);
    if (w->length == 0) return RT_OK;
    if (cfg->kind == RT_LR_ONE_CYCLE)
        return rt_fail(err, RT_E_ARG, "one_cycle rises from max_lr/div_factor on its own; set "
                       "pct_start for the rise and drop the warmup block",
                       "lr: warmup cannot be combined with a one_cycle schedule");
    RANGE((unsigned)w->kind <= RT_WARMUP_QUADRATIC, "lr.warmup: unknown kind %d", (int)w->kind);
    /* the forks' warmup replaces the schedule and may last the whole run (Intel Caffe's
     * benchmark solvers stop inside it) */
    RANGE(w->replaces_schedule || rt_lr_warmup_epochs(cfg) < rt_lr_total_epochs(cfg),
          "lr.warmup: %g epochs of warmup leaves nothing of the %g-epoch run",
          rt_lr_warmup_epochs(cfg), rt_lr_total_epochs(cfg));
    if (w->start == RT_WARMUP_FROM_FACTOR)
        RANGE(isfinite(w->start_factor) && w->start_factor >= 0 && w->start_factor <= 1,
              "lr.warmup: start_factor must be in [0, 1], got %g", w->start_factor);
    if (w->start == RT_WARMUP_FROM_LR)
        RANGE(non_negative(w->start_lr), "lr.warmup: start_lr must be >= 0, got %g", w->start_lr);
    return RT_OK;
}

/* A drop inside warmup would make the peak unreachable and break continuity at warmup end. */
static rt_status check_milestone(const rt_lr_config *cfg, double value, rt_err *err) {
    if (cfg->warmup.replaces_schedule) return RT_OK;   /* the drop then applies from the warmup's end */
    double epoch = rt_lr_milestone_epochs(cfg, value);
    RANGE(epoch > rt_lr_warmup_epochs(cfg),
          "lr.schedule: a drop at epoch %g falls inside the %g-epoch warmup",
          epoch, rt_lr_warmup_epochs(cfg));
    return RT_OK;
}

static rt_status check_one_cycle(const rt_lr_config *cfg, rt_err *err) {
    double d = rt_lr_total_epochs(cfg) * (cfg->stepping == RT_LR_PER_EPOCH ? 1.0 : (double)cfg->steps_per_epoch);
    RANGE(positive(cfg->one_cycle.max_lr), "lr.one_cycle: max_lr must be > 0, got %g",
          cfg->one_cycle.max_lr);
    RANGE(cfg->one_cycle.pct_start > 0 && cfg->one_cycle.pct_start < 1,
          "lr.one_cycle: pct_start must be in (0, 1), got %g", cfg->one_cycle.pct_start);
    RANGE(positive(cfg->one_cycle.div_factor) && positive(cfg->one_cycle.final_div_factor),
          "lr.one_cycle: div_factor and final_div_factor must be > 0");
    /* torch divides by both phase lengths: pct_start·D − 1 and D − pct_start·D. */
    RANGE(cfg->one_cycle.pct_start * d > 1.0 && d - cfg->one_cycle.pct_start * d > 0,
          "lr.one_cycle: pct_start %g of %g schedule steps leaves an empty phase",
          cfg->one_cycle.pct_start, d);
    return RT_OK;
}

static rt_status check_kind(const rt_lr_config *cfg, rt_err *err) {
    rt_status st = RT_OK;
    switch (cfg->kind) {
    case RT_LR_CONSTANT: return RT_OK;
    case RT_LR_STEP:
        RANGE(positive(cfg->step.every), "lr.step: every must be > 0, got %g", cfg->step.every);
        RANGE(positive(cfg->step.gamma), "lr.step: gamma must be > 0, got %g", cfg->step.gamma);
        return check_milestone(cfg, cfg->step.every, err);
    case RT_LR_MULTISTEP:
        RANGE(cfg->multistep.count >= 1 && cfg->multistep.count <= RT_LR_MAX_MILESTONES,
              "lr.multistep: between 1 and %d milestones, got %d", RT_LR_MAX_MILESTONES,
              cfg->multistep.count);
        RANGE(positive(cfg->multistep.gamma), "lr.multistep: gamma must be > 0, got %g",
              cfg->multistep.gamma);
        for (int i = 0; i < cfg->multistep.count && st == RT_OK; i++) {
            double m = cfg->multistep.milestones[i];
            RANGE(isfinite(m) && (i == 0 || m > cfg->multistep.milestones[i - 1]),
                  "lr.multistep: milestones must increase, got %g after %g", m,
                  i ? cfg->multistep.milestones[i - 1] : 0.0);
            st = check_milestone(cfg, m, err);
        }
        return st;
    case RT_LR_EXPONENTIAL:
        RANGE(positive(cfg->exponential.gamma), "lr.exponential: gamma must be > 0, got %g",
              cfg->exponential.gamma);
        return RT_OK;
    case RT_LR_COSINE:
        RANGE(non_negative(cfg->cosine.min_lr), "lr.cosine: min_lr must be >= 0, got %g",
              cfg->cosine.min_lr);
        return RT_OK;
    case RT_LR_POLYNOMIAL:
        RANGE(positive(cfg->polynomial.power), "lr.polynomial: power must be > 0, got %g",
              cfg->polynomial.power);
        RANGE(non_negative(cfg->polynomial.end_lr), "lr.polynomial: end_lr must be >= 0, got %g",
              cfg->polynomial.end_lr);
        return RT_OK;
    case RT_LR_LINEAR:
        RANGE(non_negative(cfg->linear.end_lr), "lr.linear: end_lr must be >= 0, got %g",
              cfg->linear.end_lr);
        return RT_OK;
    case RT_LR_ONE_CYCLE: return check_one_cycle(cfg, err);
    case RT_LR_INV:
        RANGE(non_negative(cfg->inv.gamma) && non_negative(cfg->inv.power),
              "lr.inv: gamma and power must be >= 0, got %g and %g", cfg->inv.gamma, cfg->inv.power);
        return RT_OK;
    case RT_LR_SIGMOID:
        RANGE(isfinite(cfg->sigmoid.gamma) && isfinite(cfg->sigmoid.step_iterations),
              "lr.sigmoid: gamma and step_iterations must be finite");
        return RT_OK;
    default: return rt_fail(err, RT_E_ARG, NULL, "lr: unknown schedule kind %d", (int)cfg->kind);
    }
}

rt_status rt_lr_validate(const rt_lr_config *cfg, rt_err *err) {
    rt_status st = check_batch_and_time(cfg, err);
    if (st == RT_OK) st = check_warmup(cfg, err);
    if (st == RT_OK) st = check_kind(cfg, err);
    return st;
}
