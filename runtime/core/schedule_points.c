/* The LR at the steps where the schedule changes character — start, warmup end, each drop,
 * the one-cycle peak, the last step — for `trainc show` and `trainc diff`. */
#include <math.h>
#include "rt_schedule.h"

typedef struct {
    rt_lr_point *out;
    int cap, count;
    const rt_lr_config *cfg;
} point_list;

/* Keeps the list in step order with one row per step: a change that lands on a step already
 * listed (a drop on the last step) adds nothing. */
static void point_add(point_list *pl, long step, const char *what) {
    long last = rt_lr_total_steps(pl->cfg) - 1;
    if (step > last) return;
    if (pl->count > 0 && pl->count <= pl->cap && pl->out[pl->count - 1].step >= step) return;
    if (pl->count < pl->cap)
        pl->out[pl->count] = (rt_lr_point){
            .step = step,
            .epoch = (double)step / (double)pl->cfg->steps_per_epoch,
            .lr = rt_lr_at(pl->cfg, step),
            .what = what,
        };
    pl->count++;
}

static void add_drops(point_list *pl) {
    const rt_lr_config *cfg = pl->cfg;
    double every = rt_lr_milestone_epochs(cfg, cfg->step.every);
    if (cfg->kind == RT_LR_STEP)
        for (int k = 1; k * every < rt_lr_total_epochs(cfg); k++)
            point_add(pl, rt_lr_step_of_epoch(cfg, k * every), "drop");
    if (cfg->kind == RT_LR_MULTISTEP)
        for (int i = 0; i < cfg->multistep.count; i++)
            point_add(pl, rt_lr_step_of_epoch(cfg, rt_lr_milestone_epochs(cfg, cfg->multistep.milestones[i])), "drop");
}

/* torch's first phase ends at tick pct_start·D − 1; the peak is the first step there. */
static void add_one_cycle_peak(point_list *pl) {
    const rt_lr_config *cfg = pl->cfg;
    if (cfg->kind != RT_LR_ONE_CYCLE) return;
    double ticks_per_epoch = cfg->stepping == RT_LR_PER_EPOCH ? 1.0 : (double)cfg->steps_per_epoch;
    double peak_tick = cfg->one_cycle.pct_start * rt_lr_total_epochs(cfg) * ticks_per_epoch - 1.0;
    point_add(pl, rt_lr_step_of_epoch(cfg, peak_tick / ticks_per_epoch), "peak");
}

int rt_lr_key_points(rt_lr_point *out, int cap, const rt_lr_config *cfg) {
    point_list pl = { .out = out, .cap = cap, .count = 0, .cfg = cfg };
    point_add(&pl, 0, "start");
    if (rt_lr_warmup_steps(cfg) > 0) point_add(&pl, rt_lr_warmup_steps(cfg), "warmup end");
    add_drops(&pl);
    add_one_cycle_peak(&pl);
    if (cfg->kind == RT_LR_SIGMOID && cfg->sigmoid.step_iterations > 0)
        point_add(&pl, (long)cfg->sigmoid.step_iterations, "midpoint");
    point_add(&pl, rt_lr_total_steps(cfg) - 1, "end");
    return pl.count;
}
