/* Caffe importer: the solver prototxt into trainc's solver block. Caffe counts everything in
 * iterations; trainc says them with the *_iterations fields when its schema has them. */
#include <string.h>

#include "import_caffe_internal.h"
#include "schema.h"

/* The forks' rules a solver uses (forks(), below), for the optimizer and the LR. */
typedef struct {
    int larc;                 /* NVCaffe's LARC in its SGD: 1 scale, 2 clip */
    int larc_intel;           /* Intel Caffe's local_lr_auto instead (scale) */
    double larc_eta;
    int64_t warmup;           /* Intel Caffe's warmup_iter or NVCaffe's rampup_interval */
    double warmup_start;      /* warmup_start_lr / rampup_lr */
    int quadratic;            /* NVCaffe's rampup (quadratic), not Intel's warmup (linear) */
    int correction;           /* Intel Caffe's momentum correction (its SGD with momentum) */
    char summary[256];        /* what the import summary says of them */
} fork_rules;

/* A trainc field this translation needs; an error naming it when the schema lacks it. */
static int need_field(ic_ctx *ic, const ast_node *at, schema_msg_id msg, const char *field, const char *caffe) {
    if (schema_find(msg, field)) return 0;
    return ic_error(ic, at, "write the spec's lengths in epochs by hand (iterations x batch / training-set size)",
                    "Caffe's %s counts iterations, and this trainc has no '%s.%s' to say it", caffe,
                    schema_msgs[msg].name, field);
}

static int print_schedule(ic_ctx *ic, FILE *out, const ast_node *s, const ast_node *at_policy) {
    const char *policy = "fixed";
    double gamma = 0, power = 0;
    int64_t stepsize = 0, max_iter = 0;
    if (ic_word(ic, s, "lr_policy", &policy) < 0 || ic_float(ic, s, "gamma", &gamma) < 0 ||
        ic_float(ic, s, "power", &power) < 0 || ic_int(ic, s, "stepsize", &stepsize) < 0 ||
        ic_int(ic, s, "max_iter", &max_iter) < 0)
        return -1;
    /* NVCaffe's min_lr: poly decays to it ((base_lr - min_lr) (1 - iter/max_iter)^power + min_lr,
     * trainc's end_lr), and every policy's LR is floored at it */
    double min_lr = 0, base_lr = 0;
    if (ic_float(ic, s, "min_lr", &min_lr) < 0 || ic_float(ic, s, "base_lr", &base_lr) < 0) return -1;
    if (min_lr < 0) return ic_error(ic, ic_get(s, "min_lr"), NULL, "min_lr must be >= 0 (NVCaffe checks it too)");
    if (min_lr > 0 && strcmp(policy, "poly") != 0 && !(strcmp(policy, "fixed") == 0 && base_lr >= min_lr))
        return ic_error(ic, ic_get(s, "min_lr"), "remove min_lr, or use lr_policy \"poly\" (which decays to it)",
                        "min_lr %g floors the \"%s\" policy's LR; trainc's %s schedule has no floor", min_lr, policy, policy);
    if (strcmp(policy, "fixed") == 0) return 0;
    if (strcmp(policy, "step") == 0) {
        if (stepsize < 1) return ic_error(ic, at_policy, "set stepsize", "lr_policy \"step\" needs stepsize >= 1");
        if (need_field(ic, ic_get(s, "stepsize"), SM_SCHED_STEP, "every_iterations", "stepsize") < 0) return -1;
        fprintf(out, " schedule { step { every_iterations: %lld gamma: %s } }", (long long)stepsize, ic_num(gamma));
        return 0;
    }
    if (strcmp(policy, "multistep") == 0) {
        int first = 1;
        if (!ic_get(s, "stepvalue")) return ic_error(ic, at_policy, "add stepvalue: ITER lines", "lr_policy \"multistep\" needs stepvalue");
        if (need_field(ic, ic_get(s, "stepvalue"), SM_SCHED_MULTISTEP, "milestone_iterations", "stepvalue") < 0) return -1;
        fputs(" schedule { multistep { milestone_iterations: [", out);
        for (int i = 0; i < s->n_kids; i++) {
            const ast_node *f = s->kids[i];
            if (strcmp(f->text, "stepvalue") != 0) continue;
            if (f->a->kind != AST_INT) return ic_error(ic, f->a, NULL, "'stepvalue' must be an integer");
            fprintf(out, "%s%lld", first ? "" : ", ", (long long)f->a->ival);
            first = 0;
        }
        fprintf(out, "] gamma: %s } }", ic_num(gamma));
        return 0;
    }
    if (strcmp(policy, "poly") == 0) {
        /* Caffe: base_lr (1 - iter/max_iter)^power, to 0 at max_iter = trainc's whole run */
        if (min_lr > base_lr)
            return ic_error(ic, ic_get(s, "min_lr"), NULL, "min_lr %g above base_lr %g (NVCaffe refuses it too)", min_lr, base_lr);
        fprintf(out, " schedule { polynomial { power: %s end_lr: %s } }", ic_num(power), ic_num(min_lr));
        return 0;
    }
    if (strcmp(policy, "exp") == 0)
        return ic_error(ic, at_policy, "write schedule { exponential { gamma: G } } by hand with G = gamma^(iterations per epoch)",
                        "lr_policy \"exp\" decays by gamma every iteration; trainc's exponential decays per epoch, "
                        "and the epoch length depends on the dataset");
    if (strcmp(policy, "inv") == 0) {   /* Caffe: base_lr (1 + gamma iter)^-power */
        if (need_field(ic, at_policy, SM_SCHEDULE, "inv", "lr_policy \"inv\"") < 0) return -1;
        fprintf(out, " schedule { inv { gamma: %s power: %s } }", ic_num(gamma), ic_num(power));
        return 0;
    }
    if (strcmp(policy, "sigmoid") == 0) {   /* Caffe: base_lr / (1 + exp(-gamma (iter - stepsize))) */
        if (need_field(ic, at_policy, SM_SCHEDULE, "sigmoid", "lr_policy \"sigmoid\"") < 0) return -1;
        if (stepsize < 0) return ic_error(ic, ic_get(s, "stepsize"), NULL, "lr_policy \"sigmoid\" needs stepsize >= 0");
        fprintf(out, " schedule { sigmoid { gamma: %s step_iterations: %lld } }", ic_num(gamma), (long long)stepsize);
        return 0;
    }
    return ic_error(ic, at_policy, "Caffe's policies are fixed, step, exp, inv, multistep, poly and sigmoid",
                    "unknown lr_policy \"%s\"", policy);
}

static int print_optimizer(ic_ctx *ic, FILE *out, const ast_node *s, const fork_rules *fr) {
    const char *type = "SGD", *reg = "L2";
    double momentum = 0, decay = 0, momentum2 = 0.999, delta = 1e-8;
    if (ic_word(ic, s, "type", &type) < 0 || ic_word(ic, s, "solver_type", &type) < 0 ||
        ic_word(ic, s, "regularization_type", &reg) < 0 || ic_float(ic, s, "momentum", &momentum) < 0 ||
        ic_float(ic, s, "weight_decay", &decay) < 0 || ic_float(ic, s, "momentum2", &momentum2) < 0 ||
        ic_float(ic, s, "delta", &delta) < 0)
        return -1;
    if (strcmp(reg, "L2") != 0)
        return ic_error(ic, ic_get(s, "regularization_type"), "use L2", "regularization_type %s has no trainc equivalent", reg);
    if (strcmp(type, "SGD") == 0 || strcmp(type, "Nesterov") == 0 || strcmp(type, "NESTEROV") == 0) {
        /* Caffe's form whenever there is a velocity: exact under any LR policy (and always
         * with LARC, which needs it) */
        int caffe_form = (momentum > 0 || fr->larc) && schema_find(SM_SGD, "lr_in_velocity");
        fprintf(out, "  sgd { momentum: %s%s weight_decay: %s%s", ic_num(momentum),
                strcmp(type, "SGD") == 0 ? "" : " nesterov: true", ic_num(decay), caffe_form ? " lr_in_velocity: true" : "");
        if (fr->larc)
            fprintf(out, " larc { policy: %s eta: %s%s }", fr->larc == 2 ? "CLIP" : "SCALE", ic_num(fr->larc_eta),
                    fr->larc_intel ? " form: INTEL" : "");
        if (fr->correction) fputs(" warmup_momentum_correction: true", out);
        fputs(" }\n", out);
        return 0;
    }
    if (strcmp(type, "Adam") == 0 || strcmp(type, "ADAM") == 0) {
        /* Caffe: L2 decay into the gradient, lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + delta):
         * adamw.caffe_form says it exactly */
        if (schema_find(SM_ADAMW, "caffe_form")) {
            fprintf(out, "  adamw { beta1: %s beta2: %s eps: %s weight_decay: %s caffe_form: true }\n", ic_num(momentum),
                    ic_num(momentum2), ic_num(delta), ic_num(decay));
            return 0;
        }
        if (decay != 0)
            return ic_error(ic, ic_get(s, "weight_decay"), "use weight_decay: 0, or write adamw by hand (decoupled decay)",
                            "Adam with weight_decay: Caffe adds L2 to the gradient; trainc's adamw decays decoupled");
        /* PyTorch's: lr m_hat / (sqrt(v_hat) + eps), i.e. delta sqrt(1 - b2^t) there */
        if (delta > 0 &&
            ic_approximate(ic, ic_get(s, "delta") ? ic_get(s, "delta") : s,
                           "Caffe's Adam adds delta (%g) to the square root of the uncorrected second moment, "
                           "trainc's (PyTorch's) adds eps to the bias-corrected one: the same up to eps = delta "
                           "sqrt(1 - beta2^t), which differs from delta in the early iterations", delta) < 0)
            return -1;
        fprintf(out, "  adamw { beta1: %s beta2: %s eps: %s weight_decay: 0 }\n", ic_num(momentum), ic_num(momentum2), ic_num(delta));
        return 0;
    }
    /* RMSProp, AdaGrad and AdaDelta: Caffe's forms are torch's, trainc's rmsprop / adagrad / adadelta */
    int rms = strcmp(type, "RMSProp") == 0 || strcmp(type, "RMSPROP") == 0;
    int ada = strcmp(type, "AdaGrad") == 0 || strcmp(type, "ADAGRAD") == 0;
    int delta_ = strcmp(type, "AdaDelta") == 0 || strcmp(type, "ADADELTA") == 0;
    if ((rms || ada || delta_) && schema_find(SM_SOLVER, "rmsprop")) {
        double rms_decay = 0.99;
        if (ic_float(ic, s, "rms_decay", &rms_decay) < 0) return -1;
        if ((rms || ada) && momentum != 0)   /* Caffe refuses it too */
            return ic_error(ic, ic_get(s, "momentum"), "remove momentum", "%s with momentum %g: Caffe's %s has no "
                            "momentum (it stops with 'Momentum cannot be used with %s')", type, momentum, type, type);
        if (rms)
            fprintf(out, "  rmsprop { alpha: %s eps: %s weight_decay: %s }\n", ic_num(rms_decay), ic_num(delta), ic_num(decay));
        else if (ada)
            fprintf(out, "  adagrad { eps: %s weight_decay: %s }\n", ic_num(delta), ic_num(decay));
        else
            fprintf(out, "  adadelta { rho: %s eps: %s weight_decay: %s }\n", ic_num(momentum), ic_num(delta), ic_num(decay));
        return 0;
    }
    return ic_error(ic, ic_get(s, ic_get(s, "type") ? "type" : "solver_type"),
                    "use SGD, Nesterov, Adam, RMSProp, AdaGrad or AdaDelta",
                    "solver type %s has no trainc equivalent", type);
}

/* The forks' solver fields (NVCaffe's LARC, rampup, momentum and decay policies; Intel Caffe's
 * warmup and LARS), each read from their sgd_solver.cpp: honoured where trainc's schedule and
 * optimizers say the same, refused naming the rule where they cannot. */

static int forks(ic_ctx *ic, const ast_node *s, fork_rules *fr) {
    int larc = 0, local_lr_auto = 0, turbo = 0;
    int64_t rampup = 0, warmup = 0;
    const char *mpolicy = "fixed", *dpolicy = "fixed", *larc_policy = "scale", *type = "SGD";
    double eta = 0.001, momentum = 0, warmup_start = 0, rampup_lr = 0, min_lr = 0;
    if (ic_bool(ic, s, "larc", &larc) < 0 || ic_bool(ic, s, "local_lr_auto", &local_lr_auto) < 0 ||
        ic_bool(ic, s, "larc_turbo", &turbo) < 0 ||
        ic_int(ic, s, "rampup_interval", &rampup) < 0 || ic_int(ic, s, "warmup_iter", &warmup) < 0 ||
        ic_word(ic, s, "momentum_policy", &mpolicy) < 0 || ic_word(ic, s, "weight_decay_policy", &dpolicy) < 0 ||
        ic_word(ic, s, "larc_policy", &larc_policy) < 0 || ic_float(ic, s, "larc_eta", &eta) < 0 ||
        ic_word(ic, s, "type", &type) < 0 || ic_word(ic, s, "solver_type", &type) < 0 ||
        ic_float(ic, s, "momentum", &momentum) < 0 || ic_float(ic, s, "warmup_start_lr", &warmup_start) < 0 ||
        ic_float(ic, s, "rampup_lr", &rampup_lr) < 0 || ic_float(ic, s, "min_lr", &min_lr) < 0)
        return -1;
    memset(fr, 0, sizeof *fr);
    /* only the SGD solvers' ComputeUpdateValue has these rules; the forks' Nesterov, Adam,
     * RMSProp, AdaGrad and AdaDelta solvers take lr_mult as it is and the momentum uncorrected */
    int plain_sgd = strcmp(type, "SGD") == 0;
    if (larc && strcmp(larc_policy, "scale") != 0 && strcmp(larc_policy, "clip") != 0)
        return ic_error(ic, ic_get(s, "larc_policy"), "use \"scale\" or \"clip\"",
                        "unknown larc_policy \"%s\" (NVCaffe stops with 'Unknown larc policy')", larc_policy);
    if (larc && turbo && plain_sgd)
        return ic_error(ic, ic_get(s, "larc_turbo"), "remove larc_turbo (NVCaffe's LARC without it is sgd.larc)",
                        "NVCaffe's larc_turbo lowers each blob's LARC rate by 0.9 x a running average of the "
                        "gradient's cosine with the velocity (its own 'TODO' beta of 0.95); trainc has no such rule");
    if (larc && eta <= 0) return ic_error(ic, ic_get(s, "larc_eta"), NULL, "larc_eta must be > 0");
    if (larc && plain_sgd) {
        fr->larc = strcmp(larc_policy, "clip") == 0 ? 2 : 1;
        fr->larc_eta = eta;
        snprintf(fr->summary, sizeof fr->summary, ", NVCaffe's LARC (larc_policy \"%s\", larc_eta %s) as sgd.larc",
                 larc_policy, ic_num(eta));
    } else if (larc) {
        ic_note(ic, ic_get(s, "larc"), "larc: NVCaffe's %s solver does not read it (only its SGD applies LARC)", type);
    }
    if (local_lr_auto && larc)
        return ic_error(ic, ic_get(s, "local_lr_auto"), "keep one of them", "local_lr_auto (Intel Caffe's LARS) and "
                        "larc (NVCaffe's LARC) come from two forks; neither reads the other's");
    if (local_lr_auto && plain_sgd) {
        /* Intel Caffe's GetLocalRate: local_gw_ratio * w_norm / (wgrad_norm + weight_decay * w_norm)
         * in place of a non-zero lr_mult, the gradient before Regularize (its SGD only) */
        double gw = 0.001;
        if (ic_float(ic, s, "local_gw_ratio", &gw) < 0) return -1;
        if (gw <= 0) return ic_error(ic, ic_get(s, "local_gw_ratio"), NULL, "local_gw_ratio must be > 0");
        fr->larc = 1, fr->larc_eta = gw, fr->larc_intel = 1;
        snprintf(fr->summary, sizeof fr->summary, ", Intel Caffe's local_lr_auto (local_gw_ratio %s) as sgd.larc "
                 "(form INTEL)", ic_num(gw));
    } else if (local_lr_auto) {
        ic_note(ic, ic_get(s, "local_lr_auto"), "local_lr_auto: Intel Caffe's %s solver does not read it (only its SGD "
                "applies its LARS)", type);
    }
    if (rampup > 0 && warmup > 0)
        return ic_error(ic, ic_get(s, "warmup_iter"), "keep one of them", "rampup_interval (NVCaffe's) and "
                        "warmup_iter (Intel Caffe's) come from two forks; neither reads the other's");
    if (rampup > 0) {
        /* NVCaffe's GetLearningRate: rampup_lr + (base_lr - rampup_lr) (iter / rampup_interval)^2,
         * then the policy from iteration rampup_interval on; every rate floored at min_lr */
        if (min_lr > rampup_lr)
            return ic_error(ic, ic_get(s, "min_lr"), "remove min_lr, or set rampup_lr >= min_lr",
                            "min_lr %g floors NVCaffe's rampup, which starts at rampup_lr %g; trainc's warmup has "
                            "no floor", min_lr, rampup_lr);
        fr->warmup = rampup, fr->warmup_start = rampup_lr, fr->quadratic = 1;
        snprintf(fr->summary + strlen(fr->summary), sizeof fr->summary - strlen(fr->summary),
                 ", NVCaffe's rampup_interval %lld from rampup_lr %s as lr.warmup (QUADRATIC, replaces_schedule)",
                 (long long)rampup, ic_num(rampup_lr));
    }
    if (warmup > 0) {
        /* Intel Caffe's GetLearningRate: (iter base_lr + (warmup_iter - iter) warmup_start_lr) /
         * warmup_iter below warmup_iter, then the policy on the same clock; its SGD's
         * ComputeUpdateValue multiplies the momentum by rate / prev_rate meanwhile */
        fr->correction = plain_sgd && momentum > 0;
        if (fr->correction && warmup_start <= 0)
            return ic_error(ic, ic_get(s, "warmup_start_lr") ? ic_get(s, "warmup_start_lr") : ic_get(s, "warmup_iter"),
                            "set warmup_start_lr > 0", "Intel Caffe's warmup multiplies the momentum by "
                            "lr_t / lr_t-1, which divides by warmup_start_lr 0 at the first iterations (NaN)");
        if (warmup_start < 0) return ic_error(ic, ic_get(s, "warmup_start_lr"), NULL, "warmup_start_lr must be >= 0");
        fr->warmup = warmup, fr->warmup_start = warmup_start;
        if (!plain_sgd && momentum > 0)
            ic_note(ic, ic_get(s, "warmup_iter"), "warmup_iter: Intel Caffe's %s solver warms the LR up but does not "
                    "correct its momentum (only its SGD solver does)", type);
        snprintf(fr->summary + strlen(fr->summary), sizeof fr->summary - strlen(fr->summary),
                 ", Intel Caffe's warmup_iter %lld from warmup_start_lr %s as lr.warmup (replaces_schedule)%s",
                 (long long)warmup, ic_num(warmup_start), fr->correction ? " and sgd.warmup_momentum_correction" : "");
    }
    const char *history = "FLOAT";   /* NVCaffe's type of the solver's history (the velocity) */
    if (ic_word(ic, s, "solver_data_type", &history) < 0) return -1;
    if (strcmp(history, "FLOAT") != 0 &&
        ic_approximate(ic, ic_get(s, "solver_data_type"), "solver_data_type %s keeps NVCaffe's velocity in that type; "
                       "trainc keeps optimizer state in FP32", history) < 0)
        return -1;
    if (strcmp(mpolicy, "fixed") != 0)
        return ic_error(ic, ic_get(s, "momentum_policy"), "use momentum_policy \"fixed\"", "NVCaffe's momentum_policy "
                        "\"%s\" changes the momentum during training; trainc's momentum is constant", mpolicy);
    if (strcmp(dpolicy, "fixed") != 0)
        return ic_error(ic, ic_get(s, "weight_decay_policy"), "use weight_decay_policy \"fixed\"", "NVCaffe's "
                        "weight_decay_policy \"%s\" changes the decay during training; trainc's is constant", dpolicy);
    return 0;
}

int ic_import_solver(ic_ctx *ic, FILE *out, const ast_node *s) {
    fork_rules fr;
    const ast_node *layer = ic_get(s, "layer") ? ic_get(s, "layer") : ic_get(s, "layers");
    if (layer)
        return ic_error(ic, layer, "give the net first and the solver second: trainc import caffe NET.prototxt "
                        "SOLVER.prototxt -o SPEC", "%s is a Caffe net (it has layers), given where the solver belongs",
                        ic->opt->solver_path);
    if (ic_only_fields(ic, s, "the solver",
                       (const char *const[]){ "net", "train_net", "test_net", "test_iter", "test_interval",
                                              "test_initialization", "test_compute_loss", "base_lr", "display",
                                              "average_loss", "max_iter", "iter_size", "lr_policy", "gamma", "power",
                                              "momentum", "weight_decay", "regularization_type", "stepsize",
                                              "stepvalue", "clip_gradients", "snapshot", "snapshot_prefix",
                                              "snapshot_diff", "snapshot_format", "snapshot_after_train",
                                              "solver_mode", "device_id", "random_seed", "type", "solver_type",
                                              "momentum2", "delta", "rms_decay", "debug_info", "test_state",
                                              "min_lr", "larc", "larc_policy", "larc_eta", "larc_turbo",
                                              "rampup_interval", "rampup_lr", "warmup_iter", "warmup_start_lr",
                                              "momentum_policy", "max_momentum", "momentum_power",
                                              "weight_decay_policy", "local_lr_auto", "local_gw_ratio",
                                              "solver_data_type", NULL }) < 0 ||
        forks(ic, s, &fr) < 0)
        return -1;
    double base_lr = 0, clip = -1;
    int64_t max_iter = 0, test_interval = 0, display = 0, snapshot = 0, iter_size = 1, seed = -1;
    if (ic_float(ic, s, "base_lr", &base_lr) < 0 || ic_int(ic, s, "max_iter", &max_iter) < 0 ||
        ic_int(ic, s, "test_interval", &test_interval) < 0 || ic_int(ic, s, "display", &display) < 0 ||
        ic_int(ic, s, "snapshot", &snapshot) < 0 || ic_int(ic, s, "iter_size", &iter_size) < 0 ||
        ic_int(ic, s, "random_seed", &seed) < 0 || ic_float(ic, s, "clip_gradients", &clip) < 0)
        return -1;
    if (base_lr <= 0) return ic_error(ic, ic_get(s, "base_lr") ? ic_get(s, "base_lr") : s, "set base_lr", "the solver needs base_lr > 0");
    if (max_iter < 1) return ic_error(ic, ic_get(s, "max_iter") ? ic_get(s, "max_iter") : s, "set max_iter", "the solver needs max_iter >= 1");
    if (iter_size != 1)
        return ic_error(ic, ic_get(s, "iter_size"), "use iter_size: 1 and a batch iter_size times larger",
                        "iter_size %lld (gradient accumulation) has no trainc equivalent yet", (long long)iter_size);
    const char *policy = "fixed", *type = "SGD";
    double momentum = 0;
    if (ic_word(ic, s, "lr_policy", &policy) < 0 || ic_float(ic, s, "momentum", &momentum) < 0 ||
        ic_word(ic, s, "type", &type) < 0 || ic_word(ic, s, "solver_type", &type) < 0)
        return -1;
    int sgd = strcmp(type, "SGD") == 0 || strcmp(type, "Nesterov") == 0 || strcmp(type, "NESTEROV") == 0;
    /* Caffe's SGD keeps the LR inside the velocity: sgd.lr_in_velocity says it exactly; a
     * trainc without the field can only approximate it (the same while the LR is constant) */
    if (sgd && momentum > 0 && strcmp(policy, "fixed") != 0 && !schema_find(SM_SGD, "lr_in_velocity") &&
        ic_approximate(ic, ic_get(s, "lr_policy"),
                       "Caffe's SGD keeps the LR inside the momentum buffer (v = m v + lr g); trainc's is "
                       "PyTorch's (v = m v + g, step lr v): the same while the LR is constant, but after "
                       "an LR change Caffe's old velocity still moves at the old LR") < 0)
        return -1;
    if (seed >= 0) fprintf(out, "seed: %lld\n", (long long)seed);
    fputs("\nsolver {\n", out);
    fprintf(out, "  iterations: %lld\n", (long long)max_iter);
    if (print_optimizer(ic, out, s, &fr) < 0) return -1;
    fprintf(out, "  lr { base: %s", ic_num(base_lr));
    if (fr.warmup > 0)   /* the forks' warmup: it replaces the policy's LR, which keeps Caffe's clock */
        fprintf(out, " warmup { iterations: %lld%s start_lr: %s replaces_schedule: true }", (long long)fr.warmup,
                fr.quadratic ? " kind: QUADRATIC" : "", ic_num(fr.warmup_start));
    if (print_schedule(ic, out, s, ic_get(s, "lr_policy") ? ic_get(s, "lr_policy") : s) < 0) return -1;
    fputs(" }\n", out);
    char line[512];
    int adam = strcmp(type, "Adam") == 0 || strcmp(type, "ADAM") == 0;
    snprintf(line, sizeof line, "%s%s, base_lr %s, lr_policy %s, %lld iterations%s%s", type,
             sgd && (momentum > 0 || fr.larc) && schema_find(SM_SGD, "lr_in_velocity") ? " in Caffe's form (sgd.lr_in_velocity)"
             : adam && schema_find(SM_ADAMW, "caffe_form") ? " in Caffe's form (adamw.caffe_form)" : "",
             ic_num(base_lr), policy, (long long)max_iter, fr.summary, test_interval > 0 ? ", tested every test_interval" : "");
    ic->solver_summary = ast_arena_strdup(ic->arena, line);
    if (clip > 0) fprintf(out, "  clip_grad_norm: %s\n", ic_num(clip));
    if (display > 0) fprintf(out, "  log_every: %lld\n", (long long)display);
    if (test_interval > 0) {
        if (need_field(ic, ic_get(s, "test_interval"), SM_SOLVER, "eval_every_iterations", "test_interval") < 0) return -1;
        fprintf(out, "  eval_every_iterations: %lld\n", (long long)test_interval);
    }
    if (snapshot > 0) {
        if (need_field(ic, ic_get(s, "snapshot"), SM_CHECKPOINT, "every_iterations", "snapshot") < 0) return -1;
        fprintf(out, "  checkpoint { every_iterations: %lld }\n", (long long)snapshot);
    } else {
        fputs("  checkpoint { every_epochs: 0 }\n", out);
    }
    fputs("}\n", out);
    /* last, so that what Caffe itself gets wrong is reported the same with or without it */
    if (need_field(ic, ic_get(s, "max_iter"), SM_SOLVER, "iterations", "max_iter") < 0) return -1;
    if (ic_get(s, "test_iter"))
        ic_note(ic, ic_get(s, "test_iter"), "test_iter: the trainer evaluates the whole validation set "
                "(or data.val_samples of it)");
    if (ic_get(s, "test_state"))   /* it picks TEST-phase layers, which the training net leaves out */
        ic_note(ic, ic_get(s, "test_state"), "test_state: the trainer evaluates data.val with the training net; the "
                "TEST-phase layers it selects are not part of the spec");
    if (ic_get(s, "solver_mode") || ic_get(s, "device_id"))
        ic_note(ic, ic_get(s, "solver_mode") ? ic_get(s, "solver_mode") : ic_get(s, "device_id"),
                "solver_mode/device_id: choose the device with 'trainc build --backend cpu|cuda'");
    static const char *const cosmetic[] = { "net", "train_net", "test_net", "average_loss", "test_initialization",
                                            "test_compute_loss", "snapshot_after_train", "snapshot_diff",
                                            "snapshot_format", "debug_info", NULL };
    for (const char *const *f = cosmetic; *f; f++)
        if (ic_get(s, *f)) ic_note(ic, ic_get(s, *f), "%s: how Caffe finds files, logs or saves; nothing to carry over", *f);
    if (ic_get(s, "snapshot_prefix"))
        ic_note(ic, ic_get(s, "snapshot_prefix"), "snapshot_prefix: the trainer writes checkpoints under its --out DIR");
    return 0;
}
