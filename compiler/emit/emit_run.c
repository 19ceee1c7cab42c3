/* Emits the C initializer of the trainer's rt_run_config from a spec's resolved run. */
#include "emit_run.h"
#include "emit_names.h"   /* c_float */

#include <stdlib.h>
#include <string.h>

static void emit_lr(FILE *f, const rt_lr_config *lr) {
    static const char *const kinds[] = { "RT_LR_CONSTANT", "RT_LR_STEP", "RT_LR_MULTISTEP",
                                         "RT_LR_EXPONENTIAL", "RT_LR_COSINE", "RT_LR_POLYNOMIAL",
                                         "RT_LR_LINEAR", "RT_LR_ONE_CYCLE", "RT_LR_INV", "RT_LR_SIGMOID" };
    _Static_assert(sizeof kinds / sizeof kinds[0] == RT_LR_KIND_COUNT, "one name per rt_lr_kind");
    static const char *const scalings[] = { "RT_LR_SCALE_NONE", "RT_LR_SCALE_LINEAR", "RT_LR_SCALE_SQRT" };
    /* the Caffe forks' warmup fields, written only when used */
    char forks[128] = "";
    if (lr->warmup.start == RT_WARMUP_FROM_LR)
        snprintf(forks, sizeof forks, ", .start_lr = %.17g", lr->warmup.start_lr);
    if (lr->warmup.replaces_schedule) strncat(forks, ", .replaces_schedule = true", sizeof forks - strlen(forks) - 1);
    fprintf(f, "    .lr = {\n        .base = %.17g, .per_batch = %.17g, .scaling = %s, .global_batch = %.17g,\n"
               "        .steps_per_epoch = %ld, .epochs = %d, .stepping = %s,\n"
               "        .warmup = { .length = %.17g, .unit = %s, .kind = %s, .start = %s, .start_factor = %.17g%s },\n"
               "        .kind = %s,\n",
            lr->base, lr->per_batch, scalings[lr->scaling], lr->global_batch, lr->steps_per_epoch, lr->epochs,
            lr->stepping == RT_LR_PER_EPOCH ? "RT_LR_PER_EPOCH" : "RT_LR_PER_ITERATION", lr->warmup.length,
            lr->warmup.unit == RT_LR_UNIT_ITERATIONS ? "RT_LR_UNIT_ITERATIONS" : "RT_LR_UNIT_EPOCHS",
            lr->warmup.kind == RT_WARMUP_CONSTANT ? "RT_WARMUP_CONSTANT"
            : lr->warmup.kind == RT_WARMUP_QUADRATIC ? "RT_WARMUP_QUADRATIC" : "RT_WARMUP_LINEAR",
            lr->warmup.start == RT_WARMUP_FROM_BASE ? "RT_WARMUP_FROM_BASE"
            : lr->warmup.start == RT_WARMUP_FROM_LR ? "RT_WARMUP_FROM_LR" : "RT_WARMUP_FROM_FACTOR",
            lr->warmup.start_factor, forks, kinds[lr->kind]);
    /* Written only when used, so trainers of epoch-based specs read as before. */
    if (lr->iterations) fprintf(f, "        .iterations = %ld,\n", lr->iterations);
    if (lr->milestone_unit == RT_LR_UNIT_ITERATIONS) fprintf(f, "        .milestone_unit = RT_LR_UNIT_ITERATIONS,\n");
    switch (lr->kind) {
    case RT_LR_STEP: fprintf(f, "        .step = { .every = %.17g, .gamma = %.17g },\n", lr->step.every, lr->step.gamma); break;
    case RT_LR_MULTISTEP:
        fprintf(f, "        .multistep = { .milestones = {");
        for (int i = 0; i < lr->multistep.count; i++) fprintf(f, "%s%.17g", i ? ", " : " ", lr->multistep.milestones[i]);
        fprintf(f, " }, .count = %d, .gamma = %.17g },\n", lr->multistep.count, lr->multistep.gamma);
        break;
    case RT_LR_EXPONENTIAL: fprintf(f, "        .exponential = { .gamma = %.17g },\n", lr->exponential.gamma); break;
    case RT_LR_COSINE: fprintf(f, "        .cosine = { .min_lr = %.17g },\n", lr->cosine.min_lr); break;
    case RT_LR_POLYNOMIAL:
        fprintf(f, "        .polynomial = { .power = %.17g, .end_lr = %.17g },\n", lr->polynomial.power, lr->polynomial.end_lr);
        break;
    case RT_LR_LINEAR: fprintf(f, "        .linear = { .end_lr = %.17g },\n", lr->linear.end_lr); break;
    case RT_LR_ONE_CYCLE:
        fprintf(f, "        .one_cycle = { .max_lr = %.17g, .pct_start = %.17g, .div_factor = %.17g,\n"
                   "                       .final_div_factor = %.17g, .anneal = %s },\n",
                lr->one_cycle.max_lr, lr->one_cycle.pct_start, lr->one_cycle.div_factor,
                lr->one_cycle.final_div_factor, lr->one_cycle.anneal == RT_ANNEAL_LINEAR ? "RT_ANNEAL_LINEAR" : "RT_ANNEAL_COS");
        break;
    case RT_LR_INV: fprintf(f, "        .inv = { .gamma = %.17g, .power = %.17g },\n", lr->inv.gamma, lr->inv.power); break;
    case RT_LR_SIGMOID:
        fprintf(f, "        .sigmoid = { .gamma = %.17g, .step_iterations = %.17g },\n", lr->sigmoid.gamma,
                lr->sigmoid.step_iterations);
        break;
    default: break;
    }
    fprintf(f, "    },\n");
}

static void emit_optim(FILE *f, const run_config *run) {
    switch (run->optimizer) {
    case RUN_OPT_SGD:
        fprintf(f, "    .optim = { .kind = RT_OPTIM_SGD, .sgd = { .momentum = %s, .dampening = %s, .nesterov = %s%s",
                c_float(run->momentum), c_float(run->dampening), run->nesterov ? "true" : "false",
                run->lr_in_velocity ? ", .lr_in_velocity = true" : "");
        if (run->larc != RT_LARC_NONE)
            fprintf(f, ", .larc = %s, .larc_eta = %s", run->larc == RT_LARC_CLIP ? "RT_LARC_CLIP" : "RT_LARC_SCALE",
                    c_float(run->larc_eta));
        if (run->larc != RT_LARC_NONE && run->larc_intel)
            fprintf(f, ", .larc_intel = true, .larc_weight_decay = %s", c_float(run->weight_decay));
        if (run->warmup_momentum_correction) fprintf(f, ", .warmup_momentum_correction = true");
        fprintf(f, " } },\n");
        break;
    case RUN_OPT_LARS:
        fprintf(f, "    .optim = { .kind = RT_OPTIM_LARS, .lars = { .momentum = %s, .eta = %s, .eps = 0.0f, .nesterov = %s } },\n",
                c_float(run->momentum), c_float(run->eta), run->nesterov ? "true" : "false");
        break;
    case RUN_OPT_ADAMW:
        fprintf(f, "    .optim = { .kind = RT_OPTIM_ADAMW, .adamw = { .beta1 = %.17g, .beta2 = %.17g, .eps = %.17g%s } },\n",
                run->beta1, run->beta2, run->adam_eps, run->adam_caffe_form ? ", .caffe_form = true" : "");
        break;
    case RUN_OPT_ADAGRAD: case RUN_OPT_ADADELTA:
        fprintf(f, "    .optim = { .kind = %s, .adaptive = { .decay = %.17g, .eps = %.17g } },\n",
                run->optimizer == RUN_OPT_ADAGRAD ? "RT_OPTIM_ADAGRAD" : "RT_OPTIM_ADADELTA",
                run->adaptive_decay, run->adaptive_eps);
        break;
    case RUN_OPT_RMSPROP:
        fprintf(f, "    .optim = { .kind = RT_OPTIM_RMSPROP, .rmsprop = { .alpha = %.17g, .eps = %.17g, .momentum = %s, .tf = %s } },\n",
                run->rms_alpha, run->rms_eps, c_float(run->momentum), run->rms_tf ? "true" : "false");
        break;
    case RUN_OPT_LAMB:
        fprintf(f, "    .optim = { .kind = RT_OPTIM_LAMB, .lamb = { .beta1 = %.17g, .beta2 = %.17g, .eps = %.17g,\n"
                   "               .max_grad_norm = %.17g, .trust_clip = %s } },\n",
                run->beta1, run->beta2, run->adam_eps, run->lamb_max_grad_norm, run->lamb_trust_clip ? "true" : "false");
        break;
    }
    /* only when set: the generated code of older specs stays as it was */
    if (run->exempt_norm) fprintf(f, "    .exempt_norm = 1,\n");
    if (run->ema.decay > 0)
        fprintf(f, "    .ema = { .decay = %.17g, .every_iterations = %ld, .warmup_epochs = %ld, .batch_adjust = %d },\n",
                run->ema.decay, (long)run->ema.every_iterations, (long)run->ema.warmup_epochs, run->ema.batch_adjust);
}

static void emit_floats(FILE *f, const char *name, const double *v, int n, double fill) {
    fprintf(f, ".%s = {", name);
    for (int i = 0; i < 4; i++) fprintf(f, "%s%s", i ? ", " : " ", c_float(i < n ? v[i] : (n == 1 ? v[0] : fill)));
    fprintf(f, " }");
}

/* The filter member of a split's transform, only when not bilinear: bilinear specs' generated
 * code stays as it was. */
static const char *filter_init(const run_data_split *d) {
    return d->bicubic ? ", .filter = RT_IMG_BICUBIC" : d->cv_linear ? ", .filter = RT_IMG_CV_LINEAR" : "";
}

/* A split's resize_to, bgr and gray, only when set (other specs' generated code stays as it was). */
static const char *caffe_image_init(const run_data_split *d, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s", "");
    if (d->resize_to[0]) n += snprintf(buf + n, cap - (size_t)n, ", .resize_h = %ld, .resize_w = %ld", (long)d->resize_to[0],
                                       (long)d->resize_to[1]);
    if (d->bgr) n += snprintf(buf + n, cap - (size_t)n, ", .bgr = 1");
    if (d->gray) snprintf(buf + n, cap - (size_t)n, ", .gray = 1");
    return buf;
}

/* The image transforms of an image source, as rt_image_transform initializers. */
static void emit_images(FILE *f, const run_config *run) {
    const run_data_split *t = &run->train, *v = &run->val;
    char te[128], ve[128];
    caffe_image_init(t, te, sizeof te), caffe_image_init(v, ve, sizeof ve);
    fprintf(f, "    .val_path = \"%s\", .decode_threads = %ld, .max_decode_failures = %ld,\n", v->path,
            (long)run->decode_threads, (long)run->max_decode_failures);
    if (t->list || v->list)   /* Caffe's ImageData lists: the prefix of their paths */
        fprintf(f, "    .train_root = %s%s%s, .val_root = %s%s%s,\n", t->list ? "\"" : "", t->list ? t->root_folder : "NULL",
                t->list ? "\"" : "", v->list ? "\"" : "", v->list ? v->root_folder : "NULL", v->list ? "\"" : "");
    if (t->rrc_size)
        fprintf(f, "    .train_image = { .mode = RT_IMG_RRC, .out_h = %ld, .out_w = %ld, .scale = { %s, %s },"
                   " .ratio = { %s, %s }, .flip = %d%s%s },\n", (long)t->rrc_size, (long)t->rrc_size,
                c_float(t->rrc_scale[0]), c_float(t->rrc_scale[1]), c_float(t->rrc_ratio[0]), c_float(t->rrc_ratio[1]),
                t->flip, filter_init(t), te);
    else if (t->crop_size)
        fprintf(f, "    .train_image = { .mode = RT_IMG_RANDOM_CROP, .out_h = %ld, .out_w = %ld, .resize = %ld, .pad = %ld,"
                   " .flip = %d%s%s },\n", (long)t->crop_size, (long)t->crop_size, (long)t->resize, (long)t->crop_padding,
                t->flip, filter_init(t), te);
    else   /* no crop given: the center, at the input size */
        fprintf(f, "    .train_image = { .mode = RT_IMG_CENTER, .resize = %ld, .flip = %d%s%s },\n", (long)t->resize, t->flip,
                filter_init(t), te);
    fprintf(f, "    .val_image = { .mode = RT_IMG_CENTER, .resize = %ld%s%s },\n", (long)v->resize, filter_init(v), ve);
}

/* The modern-recipe augmentations (rt_augment_config), only when one is on: other
 * specs' generated code stays as it was. */
static void emit_augment(FILE *f, const run_augment *a) {
    if (!(a->mixup_alpha > 0 || a->cutmix_alpha > 0 || a->erase_p > 0 || a->repeats > 1 || a->trivial_augment ||
          a->rand_augment || a->auto_augment))
        return;
    fprintf(f, "    .augment = { .mixup_alpha = %s, .cutmix_alpha = %s, .mix_prob = %s, .mix_switch_prob = %s,\n",
            c_float(a->mixup_alpha), c_float(a->cutmix_alpha), c_float(a->mix_prob), c_float(a->mix_switch_prob));
    fprintf(f, "                 .erase_p = %s, .erase_scale = { %s, %s }, ", c_float(a->erase_p),
            c_float(a->erase_scale[0]), c_float(a->erase_scale[1]));
    fprintf(f, ".erase_ratio = { %s, %s },\n", c_float(a->erase_ratio[0]), c_float(a->erase_ratio[1]));
    fprintf(f, "                 .erase_value = %s, .erase_random = %d, .repeats = %ld,\n", c_float(a->erase_value),
            a->erase_random, (long)a->repeats);
    const int timm = a->rand_augment && (a->ra_magnitude_std > 0 || a->ra_increasing);
    fprintf(f, "                 .policy = %s, .num_ops = %ld, .magnitude = %ld, .num_bins = %ld, .bilinear = %d",
            a->trivial_augment ? "RT_POLICY_TRIVIAL_AUGMENT" : timm ? "RT_POLICY_TIMM_RAND_AUGMENT"
            : a->rand_augment ? "RT_POLICY_RAND_AUGMENT" : a->auto_augment ? "RT_POLICY_AUTO_AUGMENT" : "RT_POLICY_NONE",
            (long)(a->rand_augment ? a->ra_num_ops : 1), (long)(a->rand_augment ? a->ra_magnitude : 0),
            (long)(a->rand_augment ? a->ra_num_bins : 31), a->policy_bilinear);
    if (a->auto_augment)   /* AutoAugment only: other specs' generated code stays as it was */
        fprintf(f, ",\n                 .auto_policy = %s",
                a->auto_augment == 2 ? "RT_AUTO_CIFAR10" : a->auto_augment == 3 ? "RT_AUTO_SVHN" : "RT_AUTO_IMAGENET");
    if (timm)   /* timm's variant only: other specs' generated code stays as it was */
        fprintf(f, ",\n                 .magnitude_std = %s, .increasing = %d", c_float(a->ra_magnitude_std),
                a->ra_increasing);
    fprintf(f, " },\n");
}

char *emit_run_config(const run_config *run, char *err, size_t err_cap) {
    static const char *const sources[] = { [RUN_DATA_FASHION_MNIST] = "RT_DATA_FASHION_MNIST",
                                           [RUN_DATA_SYNTHETIC] = "RT_DATA_SYNTHETIC", [RUN_DATA_IDX] = "RT_DATA_IDX",
                                           [RUN_DATA_IMAGE_FOLDER] = "RT_DATA_IMAGES", [RUN_DATA_LMDB] = "RT_DATA_LMDB",
                                           [RUN_DATA_HDF5] = "RT_DATA_HDF5", [RUN_DATA_LEVELDB] = "RT_DATA_LMDB" };
    const char *source = sources[run->train.source];
    (void)err, (void)err_cap;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    fprintf(f, "    .epochs = %ld, .seed = %llu, .ranks = %ld, .overlap = %d, .global_batch = %ld,\n",
            (long)run->epochs, (unsigned long long)run->seed, (long)run->ranks, run->overlap,
            (long)run->global_batch);
    emit_lr(f, &run->lr);
    emit_optim(f, run);
    fprintf(f, "    .weight_decay = %s, .exempt_bn_bias = %d, .clip_grad_norm = %.17g,\n", c_float(run->weight_decay),
            run->exempt_bn_bias, run->clip_grad_norm);
    fprintf(f, "    .log_every = %ld, .eval_every = %ld, .ckpt_every = %ld, .ckpt_keep = %ld,\n", (long)run->log_every,
            (long)run->eval_every, (long)run->ckpt_every_epochs, (long)run->ckpt_keep);
    if (run->hang_timeout_s > 0)   /* only when set: the default leaves generated code as it was */
        fprintf(f, "    .hang_timeout_s = %.17g,\n", run->hang_timeout_s);
    if (run->eval_every_iterations || run->ckpt_every_iterations)
        fprintf(f, "    .eval_every_steps = %ld, .ckpt_every_steps = %ld,\n", (long)run->eval_every_iterations,
                (long)run->ckpt_every_iterations);
    fprintf(f, "    .source = %s, .data_path = \"%s\",\n", source, run->train.path);
    if (run->train.source == RUN_DATA_LMDB)   /* the reader, and so liblmdb, only where it is used */
        fprintf(f, "    .val_path = \"%s\", .load_lmdb = rt_dataset_load_lmdb,\n", run->val.path);
    if (run->train.source == RUN_DATA_LEVELDB)   /* a Caffe database as an LMDB is, through libleveldb */
        fprintf(f, "    .val_path = \"%s\", .load_lmdb = rt_dataset_load_leveldb,\n", run->val.path);
    if (run->train.source == RUN_DATA_HDF5)   /* the reader, and so libhdf5, only where it is used */
        fprintf(f, "    .val_path = \"%s\", .load_hdf5 = rt_dataset_load_hdf5,\n", run->val.path);
    if (run->loader_slots != 3) fprintf(f, "    .loader_slots = %ld,\n", (long)run->loader_slots);
    fprintf(f, "    .train_samples = %ld, .val_samples = %ld,\n", (long)run->train_samples,
            (long)(run->val_samples ? run->val_samples : 10000));
    if (run->train.source != RUN_DATA_SYNTHETIC && (run->train_samples_given || run->val_samples))
        fprintf(f, "    .spec_train_samples = %ld, .spec_val_samples = %ld,   /* checked against the data */\n",
                (long)(run->train_samples_given ? run->train_samples : 0), (long)run->val_samples);
    fprintf(f, "    .crop_pad = %ld, .flip = %d,\n    ", (long)(run->train.crop_size ? run->train.crop_padding : 0),
            run->train.flip);
    if (run->train.source == RUN_DATA_LMDB || run->train.source == RUN_DATA_LEVELDB) {   /* Caffe's transform */
        int64_t crop = run->train.crop_size && !run->train.crop_padding ? run->train.crop_size : run->val.center_crop;
        if (crop) fprintf(f, ".db_crop = %ld, ", (long)crop);
        if (run->train.mean_file) fprintf(f, ".mean_file = \"%s\", .load_mean = rt_caffe_mean_image, ", run->train.mean_file);
    } else if (run->train.mean_file) {   /* Caffe's ImageData: the mean image of the resized images */
        fprintf(f, ".mean_file = \"%s\", .load_mean = rt_caffe_mean_image, ", run->train.mean_file);
    }
    double zero = 0, one = 1;
    emit_floats(f, "mean", run->train.n_mean ? run->train.mean : &zero, run->train.n_mean ? run->train.n_mean : 1, 0);
    fprintf(f, ", ");
    emit_floats(f, "std", run->train.n_std ? run->train.std : &one, run->train.n_std ? run->train.n_std : 1, 1);
    fprintf(f, ",\n");
    if (run->compute == RUN_BF16) fprintf(f, "    .cpu_compute = RT_COMPUTE_BF16,\n");
    emit_augment(f, &run->augment);
    if (run->train.source == RUN_DATA_IMAGE_FOLDER) emit_images(f, run);
    fclose(f);
    return buf;
}
