/* One entry point over the optimizers, and what state each keeps per parameter (for
 * checkpoints and the memory plan). */
#include "rt_core.h"
#include "rt_optim.h"

static const char *const kind_names[RT_OPTIM_KIND_COUNT] = { "sgd", "lars", "adamw", "lamb", "rmsprop", "adagrad",
                                                               "adadelta" };
_Static_assert(sizeof kind_names / sizeof kind_names[0] == RT_OPTIM_KIND_COUNT,
               "a new rt_optim_kind needs a name here");

const char *rt_optim_kind_name(rt_optim_kind kind) {
    return (unsigned)kind < RT_OPTIM_KIND_COUNT ? kind_names[kind] : "unknown";
}

int rt_optim_state_per_param(const rt_optim_config *cfg) {
    switch (cfg->kind) {
    case RT_OPTIM_SGD: return cfg->sgd.momentum != 0.0f;
    case RT_OPTIM_LARS: return cfg->lars.momentum != 0.0f;
    case RT_OPTIM_ADAMW: case RT_OPTIM_LAMB: case RT_OPTIM_ADADELTA: return 2;
    case RT_OPTIM_ADAGRAD: return 1;
    case RT_OPTIM_RMSPROP: return 1 + (cfg->rmsprop.momentum != 0.0f);
    default: return 0;
    }
}

const char *rt_optim_state_name(rt_optim_kind kind, int plane) {
    if (kind == RT_OPTIM_ADAGRAD) return plane == 0 ? "sum" : NULL;
    if (kind == RT_OPTIM_ADADELTA) return plane == 0 ? "square_avg" : plane == 1 ? "acc_delta" : NULL;
    if (kind == RT_OPTIM_ADAMW || kind == RT_OPTIM_LAMB) return plane == 0 ? "exp_avg" : plane == 1 ? "exp_avg_sq" : NULL;
    if (kind == RT_OPTIM_RMSPROP) return plane == 0 ? "square_avg" : plane == 1 ? "momentum_buffer" : NULL;
    return plane == 0 ? "momentum_buffer" : NULL;   /* torch's names, for familiar dumps */
}

void rt_optim_step(float *param, float *state, const float *grad, long n, bool exempt,
                   const rt_optim_config *cfg, const rt_optim_args *a) {
    rt_optim_args args = *a;
    if (exempt) args.weight_decay = 0.0f;
    switch (cfg->kind) {
    case RT_OPTIM_SGD: rt_sgd_step(param, state, grad, n, &cfg->sgd, &args); return;
    case RT_OPTIM_LARS: rt_lars_step(param, state, grad, n, exempt, &cfg->lars, &args); return;
    case RT_OPTIM_ADAMW: rt_adamw_step(param, state, state + n, grad, n, &cfg->adamw, &args); return;
    case RT_OPTIM_LAMB: rt_lamb_step(param, state, state + n, grad, n, &cfg->lamb, &args); return;
    case RT_OPTIM_RMSPROP:
        rt_rmsprop_step(param, state, cfg->rmsprop.momentum != 0.0f ? state + n : NULL, grad, n, &cfg->rmsprop, &args);
        return;
    case RT_OPTIM_ADAGRAD: case RT_OPTIM_ADADELTA:
        rt_adaptive_step(cfg->kind, param, state, cfg->kind == RT_OPTIM_ADADELTA ? state + n : NULL, grad, n,
                         &cfg->adaptive, &args);
        return;
    default: rt_die("rt_optim_step: unknown optimizer kind %d", (int)cfg->kind);
    }
}
