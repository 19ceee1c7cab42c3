/* LR schedule evaluation: rt_lr_at and the time conversions it shares with the key-point
 * listing. The conventions are documented in rt_schedule.h. */
#include <math.h>
#include "rt_schedule.h"

/* ---- Time: steps become ticks (steps, or whole epochs when stepping per epoch) ---------- */
static double ticks_per_epoch(const rt_lr_config *cfg) {
    return cfg->stepping == RT_LR_PER_EPOCH ? 1.0 : (double)cfg->steps_per_epoch;
}

static double step_to_tick(const rt_lr_config *cfg, long step) {
    if (cfg->stepping == RT_LR_PER_EPOCH) return (double)(step / cfg->steps_per_epoch);
    return (double)step;
}

/* A threshold computed as epochs × steps (0.7 × 10) may land a hair above the integer
 * it means; the slack keeps such a boundary on the step it names. */
static bool tick_reached(double t, double threshold) {
    return t + 1e-9 * fmax(1.0, t) >= threshold;
}

double rt_lr_warmup_epochs(const rt_lr_config *cfg) {
    if (cfg->warmup.unit == RT_LR_UNIT_ITERATIONS)
        return cfg->warmup.length / (double)cfg->steps_per_epoch;
    return cfg->warmup.length;
}

double rt_lr_total_epochs(const rt_lr_config *cfg) {
    if (cfg->iterations > 0) return (double)cfg->iterations / (double)cfg->steps_per_epoch;
    return cfg->epochs;
}

double rt_lr_milestone_epochs(const rt_lr_config *cfg, double value) {
    if (cfg->milestone_unit == RT_LR_UNIT_ITERATIONS) return value / (double)cfg->steps_per_epoch;
    return value;
}

/* A length in ticks; one in iterations is exact when stepping per iteration. */
static double length_ticks(const rt_lr_config *cfg, double value, rt_lr_unit unit) {
    if (unit == RT_LR_UNIT_ITERATIONS && cfg->stepping == RT_LR_PER_ITERATION) return value;
    if (unit == RT_LR_UNIT_ITERATIONS) return value / (double)cfg->steps_per_epoch;
    return value * ticks_per_epoch(cfg);
}

static double total_ticks(const rt_lr_config *cfg) {
    if (cfg->iterations > 0) return length_ticks(cfg, (double)cfg->iterations, RT_LR_UNIT_ITERATIONS);
    return cfg->epochs * ticks_per_epoch(cfg);
}

long rt_lr_step_of_epoch(const rt_lr_config *cfg, double epoch) {
    double tick = epoch * ticks_per_epoch(cfg);
    long t = (long)ceil(tick);
    if (t > 0 && tick_reached((double)(t - 1), tick)) t--;
    return cfg->stepping == RT_LR_PER_EPOCH ? t * cfg->steps_per_epoch : t;
}

double rt_lr_scale_factor(const rt_lr_config *cfg) {
    double ratio = cfg->per_batch > 0 ? cfg->global_batch / cfg->per_batch : 1.0;
    switch (cfg->scaling) {
    case RT_LR_SCALE_LINEAR: return ratio;
    case RT_LR_SCALE_SQRT: return sqrt(ratio);
    default: return 1.0;
    }
}

double rt_lr_peak(const rt_lr_config *cfg) {
    double unscaled = cfg->kind == RT_LR_ONE_CYCLE ? cfg->one_cycle.max_lr : cfg->base;
    return unscaled * rt_lr_scale_factor(cfg);
}

long rt_lr_total_steps(const rt_lr_config *cfg) {
    if (cfg->iterations > 0) return cfg->iterations;
    return (long)cfg->epochs * cfg->steps_per_epoch;
}

long rt_lr_warmup_steps(const rt_lr_config *cfg) {
    return rt_lr_step_of_epoch(cfg, rt_lr_warmup_epochs(cfg));
}

static double warmup_factor(const rt_lr_config *cfg, double t, double w) {
    if (w <= 0 || t >= w) return 1.0;
    double s = cfg->warmup.start == RT_WARMUP_FROM_BASE ? 1.0 / rt_lr_scale_factor(cfg)
             : cfg->warmup.start == RT_WARMUP_FROM_LR   ? cfg->warmup.start_lr / rt_lr_peak(cfg)
                                                        : cfg->warmup.start_factor;
    if (cfg->warmup.kind == RT_WARMUP_CONSTANT) return s;
    double a = t / w;
    return s + (1.0 - s) * (cfg->warmup.kind == RT_WARMUP_QUADRATIC ? a * a : a);
}

/* The Caffe forks' warmup LR at t < w, in their order of operations where start_lr is given:
 * Intel Caffe's GetWarmUpLR (cur_iter·base_lr + (warmup_iter − cur_iter)·warmup_start_lr) /
 * warmup_iter, NVCaffe's rampup_lr + (base_lr − rampup_lr)·alpha·alpha, alpha = iter/interval. */
static double forks_warmup_lr(const rt_lr_config *cfg, double peak, double t, double w) {
    double s = cfg->warmup.start_lr;
    if (cfg->warmup.start != RT_WARMUP_FROM_LR || cfg->warmup.kind == RT_WARMUP_CONSTANT)
        return peak * warmup_factor(cfg, t, w);
    if (cfg->warmup.kind == RT_WARMUP_QUADRATIC) {
        double a = t / w;
        return s + (peak - s) * a * a;
    }
    return (t * peak + (w - t) * s) / w;
}

/* torch OneCycleLR._schedule_phases without three_phase; u is ticks since warmup end. */
static double one_cycle_lr(const rt_lr_config *cfg, double peak, double u, double d) {
    double lo = peak / cfg->one_cycle.div_factor;
    double floor_lr = lo / cfg->one_cycle.final_div_factor;
    double mid = cfg->one_cycle.pct_start * d - 1.0, end = d - 1.0;
    if (u > end) u = end;
    double from, to, pct;
    if (u <= mid) { from = lo;   to = peak;     pct = u / mid; }
    else          { from = peak; to = floor_lr; pct = (u - mid) / (end - mid); }
    if (cfg->one_cycle.anneal == RT_ANNEAL_LINEAR) return from + (to - from) * pct;
    return to + (from - to) * 0.5 * (1.0 + cos(M_PI * pct));
}

/* The schedule's shape at tick t; milestone kinds read t, curves read u = t - w over d. */
static double schedule_lr(const rt_lr_config *cfg, double peak, double t, double w) {
    double tpe = ticks_per_epoch(cfg);
    double d = total_ticks(cfg) - w;
    double u = t > w ? t - w : 0.0;
    double p = d > 0 ? fmin(u / d, 1.0) : 1.0;
    switch (cfg->kind) {
    case RT_LR_STEP:
        return peak * pow(cfg->step.gamma, floor((t + 1e-9 * fmax(1.0, t)) /
                                                 length_ticks(cfg, cfg->step.every, cfg->milestone_unit)));
    case RT_LR_MULTISTEP: {
        int drops = 0;
        for (int i = 0; i < cfg->multistep.count; i++)
            drops += tick_reached(t, length_ticks(cfg, cfg->multistep.milestones[i], cfg->milestone_unit));
        return peak * pow(cfg->multistep.gamma, drops);
    }
    case RT_LR_EXPONENTIAL: return peak * pow(cfg->exponential.gamma, u / tpe);
    case RT_LR_COSINE: {
        double lo = cfg->cosine.min_lr;
        return lo + (peak - lo) * 0.5 * (1.0 + cos(M_PI * p));
    }
    case RT_LR_POLYNOMIAL: {
        double lo = cfg->polynomial.end_lr;
        return lo + (peak - lo) * pow(1.0 - p, cfg->polynomial.power);
    }
    case RT_LR_LINEAR: return cfg->linear.end_lr + (peak - cfg->linear.end_lr) * (1.0 - p);
    case RT_LR_ONE_CYCLE: return one_cycle_lr(cfg, peak, u, d);
    case RT_LR_INV: return peak * pow(1.0 + cfg->inv.gamma * t * (cfg->steps_per_epoch / tpe), -cfg->inv.power);
    case RT_LR_SIGMOID:
        return peak / (1.0 + exp(-cfg->sigmoid.gamma * (t * (cfg->steps_per_epoch / tpe) - cfg->sigmoid.step_iterations)));
    default: return peak;
    }
}

double rt_lr_at(const rt_lr_config *cfg, long step) {
    double t = step_to_tick(cfg, step);
    double w = rt_lr_warmup_epochs(cfg) * ticks_per_epoch(cfg);
    double peak = rt_lr_peak(cfg);
    if (cfg->warmup.replaces_schedule)
        return w > 0 && t < w ? forks_warmup_lr(cfg, peak, t, w) : schedule_lr(cfg, peak, t, 0.0);
    return warmup_factor(cfg, t, w) * schedule_lr(cfg, peak, t, w);
}

double rt_lr_warmup_ratio(const rt_lr_config *cfg, long step) {
    if (step >= rt_lr_warmup_steps(cfg)) return 1.0;
    float now = (float)rt_lr_at(cfg, step), before = (float)rt_lr_at(cfg, step > 0 ? step - 1 : 0);
    return (double)(now / before);
}
