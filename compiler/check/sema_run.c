/* Sema stage 3: the run. Data, solver, precision, parallel, seed and reference settings with
 * defaults applied, then the derived numbers: global batch, steps per epoch, total steps and
 * the LR schedule as an rt_lr_config validated by the runtime's own checker. */
#include "sema.h"
#include "sema_value.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Caffe's mean_value / scale are the same map in pixel units: (x - mv) * s =
 * (x/255 - mv/255) / (1 / (255 s)). */
static void read_normalize(run_data_split *d, const ast_node *norm) {
    const ast_node *mv = sv_get(norm, SM_NORMALIZE, "mean_value");
    d->mean_file = sv_has(norm, SM_NORMALIZE, "mean_file") ? sv_str(norm, SM_NORMALIZE, "mean_file") : NULL;
    if (d->mean_file && sv_has(norm, SM_NORMALIZE, "scale")) {   /* the mean image itself is the trainer's */
        d->std[d->n_std++] = 1.0 / (255.0 * sv_float(norm, SM_NORMALIZE, "scale"));
        return;
    }
    if (mv && sv_has(norm, SM_NORMALIZE, "scale")) {
        double scale = sv_float(norm, SM_NORMALIZE, "scale");
        for (int i = 0; i < mv->n_kids && i < 16; i++) {
            d->mean[d->n_mean++] = sv_number(mv->kids[i]) / 255.0;
            d->std[d->n_std++] = 1.0 / (255.0 * scale);
        }
        return;
    }
    const ast_node *mean = sv_get(norm, SM_NORMALIZE, "mean"), *std = sv_get(norm, SM_NORMALIZE, "std");
    if (!mean || !std) return;
    for (int i = 0; i < mean->n_kids && i < 16; i++) d->mean[d->n_mean++] = sv_number(mean->kids[i]);
    for (int i = 0; i < std->n_kids && i < 16; i++) d->std[d->n_std++] = sv_number(std->kids[i]);
}

/* normalize needs one mean and std per input channel. */
static int check_normalize(diag_ctx *diag, const ast_node *norm, const net_desc *net) {
    const ast_node *mean = sv_get(norm, SM_NORMALIZE, "mean"), *std = sv_get(norm, SM_NORMALIZE, "std");
    if (!mean) mean = sv_get(norm, SM_NORMALIZE, "mean_value");
    if (!mean) return 0;
    const ast_node *bad = mean->n_kids != net->input.c ? mean : std && std->n_kids != net->input.c ? std : NULL;
    if (!bad) return 0;
    diag_error(diag, bad->loc, "give one value per channel of net.input_shape",
               "normalize has %d values but the input has %lld channels", bad->n_kids,
               (long long)net->input.c);
    return 1;
}

/* normalize.mean_file: Caffe's mean image, for its databases (of the stored size) and its
 * ImageData lists (of the size resize_to gives every image, the crop then taken of both; other
 * image sources resize each image to its own size, which one mean image cannot follow); one
 * image for both splits, as the trainer subtracts the training split's from both. */
static int check_mean_file(diag_ctx *diag, const run_data_split *d, const ast_node *norm, const run_data_split *train) {
    if (!d->mean_file && !(train && train->mean_file && norm)) return 0;
    if (d->mean_file && d->source != RUN_DATA_LMDB && d->source != RUN_DATA_LEVELDB &&
        !(d->source == RUN_DATA_IMAGE_FOLDER && d->list)) {
        diag_error(diag, sv_loc(norm, SM_NORMALIZE, "mean_file"), "give per-channel mean_value instead",
                   "mean_file is for sources lmdb, leveldb and image-list (a mean image of one size); source \"%s\"",
                   d->source_name);
        return 1;
    }
    if (d->mean_file && d->list && (!d->resize_to[0] || d->rrc_size || d->resize)) {
        diag_error(diag, sv_loc(norm, SM_NORMALIZE, "mean_file"), "give resize_to: the mean image's size (Caffe's "
                   "new_height/new_width), and random_crop or center_crop",
                   "mean_file on an image list needs every image resized to one size (resize_to)%s",
                   d->rrc_size ? ", not a random-resized crop" : d->resize ? ", not resize (the shorter side)" : "");
        return 1;
    }
    if (train && (!d->mean_file || !train->mean_file || strcmp(d->mean_file, train->mean_file) != 0)) {
        diag_error(diag, norm ? norm->loc : (src_loc){ 0 }, "give data.val the training split's mean_file (or no normalize)",
                   "data.val's normalize differs from data.train's mean_file; the trainer subtracts one mean image "
                   "from both");
        return 1;
    }
    return 0;
}

/* A crop must produce exactly the net's input size (data.val's: for sources other than images,
 * which cannot be evaluated at another resolution). */
static int check_crop(diag_ctx *diag, const ast_node *msg, schema_msg_id id, const char *field,
                      const net_desc *net) {
    if (!sv_has(msg, id, field)) return 0;
    int64_t size = sv_int(msg, id, field);
    if (size == net->input.h && size == net->input.w) return 0;
    diag_error(diag, sv_get(msg, id, field)->loc, "the crop size must match net.input_shape",
               "%s %lld does not match the net's %lldx%lld input", field, (long long)size,
               (long long)net->input.h, (long long)net->input.w);
    return 1;
}

static int read_source(run_data_split *d, diag_ctx *diag, const ast_node *msg, schema_msg_id id) {
    static const char *const names[] = { "fashion-mnist", "synthetic", "idx", "imagenet-folder", "lmdb", "hdf5",
                                         "leveldb" };
    d->source_name = sv_str(msg, id, "source");
    d->list = !strcmp(d->source_name, "image-list");   /* Caffe's ImageData: an image source read from a list */
    if (d->list) {
        d->source = RUN_DATA_IMAGE_FOLDER;
        return 0;
    }
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
        if (!strcmp(d->source_name, names[k])) {
            d->source = (run_data_source)k;
            return 0;
        }
    diag_error(diag, sv_loc(msg, id, "source"), "use fashion-mnist, synthetic, idx, imagenet-folder, image-list, lmdb, leveldb or hdf5",
               "unknown data source \"%s\"", d->source_name);
    return 1;
}

/* train.interpolation or val.interpolation: only image sources are resampled. */
static int read_interpolation(run_data_split *d, diag_ctx *diag, const ast_node *msg, schema_msg_id id) {
    static const char *const filters[] = { "BILINEAR", "BICUBIC", "OPENCV_LINEAR" };
    int filter = SV_ENUM(msg, id, "interpolation", filters);
    d->bicubic = filter == 1, d->cv_linear = filter == 2;
    if (filter && d->source != RUN_DATA_IMAGE_FOLDER) {
        diag_error(diag, sv_loc(msg, id, "interpolation"), "interpolation is for image sources (imagenet-folder); remove it",
                   "source \"%s\" is not resampled, so it has no interpolation", d->source_name);
        return 1;
    }
    return 0;
}

/* Image sources decode RGB (3 channels) or, with gray, one channel: the net's input. */
static int check_image_channels(diag_ctx *diag, const run_data_split *d, const ast_node *msg, schema_msg_id id,
                                const net_desc *net) {
    if (d->source != RUN_DATA_IMAGE_FOLDER || net->input.c == (d->gray ? 1 : 3)) return 0;
    if (d->gray)
        diag_error(diag, sv_loc(msg, id, "gray"), "set net.input_shape to [1, H, W], or remove gray",
                   "gray images have one channel, but net.input_shape has %lld", (long long)net->input.c);
    else
        diag_error(diag, sv_loc(msg, id, "source"), net->input.c == 1 ? "set gray: true (one gray channel, as "
                   "Caffe's is_color: false), or net.input_shape to [3, H, W]" : "set net.input_shape to [3, H, W]",
                   "image sources decode RGB (3 channels), but net.input_shape has %lld", (long long)net->input.c);
    return 1;
}

/* root_folder (image-list only), resize_to, bgr and gray (image sources only) of train or val. */
static int read_image_fields(run_data_split *d, diag_ctx *diag, const ast_node *msg, schema_msg_id id) {
    int errors = 0;
    d->root_folder = sv_str(msg, id, "root_folder");
    d->bgr = sv_bool(msg, id, "bgr");
    d->gray = sv_bool(msg, id, "gray");
    d->resize_to[0] = d->resize_to[1] = 0;
    if (sv_has(msg, id, "resize_to")) sv_pair(msg, id, "resize_to", d->resize_to);
    if (sv_has(msg, id, "root_folder") && !d->list) {
        diag_error(diag, sv_loc(msg, id, "root_folder"), "root_folder is for source \"image-list\"; remove it",
                   "source \"%s\" has no list of paths to prefix", d->source_name);
        errors++;
    }
    static const char *const image_only[] = { "resize_to", "bgr", "gray" };
    static const char *const what[] = { "resize before the crop", "decoded colour channels to reorder",
                                        "images to decode to gray" };
    for (int k = 0; k < 3; k++)
        if (sv_has(msg, id, image_only[k]) && d->source != RUN_DATA_IMAGE_FOLDER) {
            diag_error(diag, sv_loc(msg, id, image_only[k]), "it is for image sources (imagenet-folder, image-list); "
                       "remove it", "source \"%s\" has no %s", d->source_name, what[k]);
            errors++;
        }
    if (d->gray && d->bgr) {
        diag_error(diag, sv_loc(msg, id, "bgr"), "remove bgr: a gray image has one channel",
                   "both gray and bgr");
        errors++;
    }
    if (d->resize_to[0] && sv_has(msg, id, "resize")) {
        diag_error(diag, sv_loc(msg, id, "resize_to"), "give one of resize (the shorter side) and resize_to (both sides)",
                   "both resize and resize_to");
        errors++;
    }
    return errors;
}

/* The modern-recipe augmentations (runtime/data/augment_*.c); defaults from schema.def even
 * when the messages are absent, so show prints what the trainer does. */
static int read_augment(run_augment *a, diag_ctx *diag, const ast_node *train, const ast_node *aug) {
    a->mixup_alpha = sv_float(aug, SM_AUGMENT, "mixup_alpha");
    a->cutmix_alpha = sv_float(aug, SM_AUGMENT, "cutmix_alpha");
    a->mix_prob = sv_float(aug, SM_AUGMENT, "mix_prob");
    a->mix_switch_prob = sv_float(aug, SM_AUGMENT, "mix_switch_prob");
    const ast_node *re = sv_msg(aug, SM_AUGMENT, "random_erasing");
    a->erase_p = re ? sv_float(re, SM_RANDOM_ERASING, "p") : 0;
    sv_floats(re, SM_RANDOM_ERASING, "scale", a->erase_scale, 2);
    sv_floats(re, SM_RANDOM_ERASING, "ratio", a->erase_ratio, 2);
    a->erase_value = sv_float(re, SM_RANDOM_ERASING, "value");
    a->erase_random = sv_bool(re, SM_RANDOM_ERASING, "random");
    a->trivial_augment = sv_bool(aug, SM_AUGMENT, "trivial_augment");
    const ast_node *ra = sv_msg(aug, SM_AUGMENT, "rand_augment");
    a->rand_augment = ra != NULL;
    a->ra_num_ops = sv_int(ra, SM_RAND_AUGMENT, "num_ops");
    a->ra_magnitude = sv_int(ra, SM_RAND_AUGMENT, "magnitude");
    a->ra_num_bins = sv_int(ra, SM_RAND_AUGMENT, "num_magnitude_bins");
    a->ra_magnitude_std = sv_float(ra, SM_RAND_AUGMENT, "magnitude_std");
    a->ra_increasing = sv_bool(ra, SM_RAND_AUGMENT, "increasing");
    static const char *const auto_sets[] = { "NONE", "IMAGENET", "CIFAR10", "SVHN" };
    a->auto_augment = SV_ENUM(aug, SM_AUGMENT, "auto_augment", auto_sets);
    static const char *const interpolations[] = { "NEAREST", "BILINEAR" };
    a->policy_bilinear = SV_ENUM(aug, SM_AUGMENT, "policy_interpolation", interpolations) == 1;
    a->repeats = sv_int(train, SM_TRAIN, "repeated_augment");
    int errors = 0;
    if (re && (a->erase_scale[0] > a->erase_scale[1] || a->erase_ratio[0] > a->erase_ratio[1])) {
        diag_error(diag, sv_loc(re, SM_RANDOM_ERASING, a->erase_scale[0] > a->erase_scale[1] ? "scale" : "ratio"),
                   "give the range as [low, high]", "random_erasing: a range whose low end is above its high end");
        errors++;
    }
    if (ra && (a->ra_magnitude_std > 0 || a->ra_increasing)) {   /* timm's variant: its 0..10 level scale */
        if (a->ra_num_bins != 11) {
            diag_error(diag, sv_loc(ra, SM_RAND_AUGMENT, "num_magnitude_bins"),
                       "set num_magnitude_bins: 11 (magnitude is then timm's level, as in rand-m9)",
                       "rand_augment: timm's variant (magnitude_std or increasing) measures magnitude on its 0..10 "
                       "scale, not in %ld bins", (long)a->ra_num_bins);
            errors++;
        }
        if (sv_has(aug, SM_AUGMENT, "policy_interpolation") && !a->policy_bilinear) {
            diag_error(diag, sv_loc(aug, SM_AUGMENT, "policy_interpolation"),
                       "leave policy_interpolation out (timm's random bilinear or bicubic) or set BILINEAR",
                       "rand_augment: timm's variant does not implement NEAREST resampling");
            errors++;
        }
    }
    if (ra && a->ra_magnitude >= a->ra_num_bins) {
        diag_error(diag, sv_loc(ra, SM_RAND_AUGMENT, "magnitude"), "use a magnitude below num_magnitude_bins",
                   "rand_augment: magnitude %ld is not below num_magnitude_bins %ld", (long)a->ra_magnitude,
                   (long)a->ra_num_bins);
        errors++;
    }
    return errors;
}

static int read_train(run_config *run, diag_ctx *diag, const ast_node *train, const net_desc *net) {
    run_data_split *d = &run->train;
    int errors = 0;
    errors += read_source(d, diag, train, SM_TRAIN);
    d->path = sv_str(train, SM_TRAIN, "path");
    d->resize = sv_int(train, SM_TRAIN, "resize");
    if (d->resize && d->source != RUN_DATA_IMAGE_FOLDER) {
        diag_error(diag, sv_loc(train, SM_TRAIN, "resize"), "train.resize is for image sources (imagenet-folder)",
                   "source \"%s\" has no resize before the crop", d->source_name);
        errors++;
    }
    errors += read_interpolation(d, diag, train, SM_TRAIN);
    errors += read_image_fields(d, diag, train, SM_TRAIN);
    d->batch_per_rank = sv_int(train, SM_TRAIN, "batch_per_rank");
    d->samples = sv_int(train, SM_TRAIN, "samples");
    const ast_node *aug = sv_msg(train, SM_TRAIN, "augment");
    d->flip = sv_bool(aug, SM_AUGMENT, "flip");
    const ast_node *rc = sv_msg(aug, SM_AUGMENT, "random_crop");
    if (rc) {
        d->crop_size = sv_int(rc, SM_RANDOM_CROP, "size");
        d->crop_padding = sv_int(rc, SM_RANDOM_CROP, "padding");
        errors += check_crop(diag, rc, SM_RANDOM_CROP, "size", net);
    }
    const ast_node *rrc = sv_msg(aug, SM_AUGMENT, "random_resized_crop");
    /* Read even when absent: the defaults are what show and the trainer report. */
    sv_floats(rrc, SM_RANDOM_RESIZED_CROP, "scale", d->rrc_scale, 2);
    sv_floats(rrc, SM_RANDOM_RESIZED_CROP, "ratio", d->rrc_ratio, 2);
    if (rrc) {
        d->rrc_size = sv_int(rrc, SM_RANDOM_RESIZED_CROP, "size");
        errors += check_crop(diag, rrc, SM_RANDOM_RESIZED_CROP, "size", net);
    }
    if (d->cv_linear && d->rrc_size) {
        diag_error(diag, sv_loc(train, SM_TRAIN, "interpolation"), "use resize_to (or resize) and random_crop with "
                   "OPENCV_LINEAR, or BILINEAR / BICUBIC with random_resized_crop",
                   "interpolation OPENCV_LINEAR resizes whole images (Caffe's new_height/new_width), not a "
                   "random-resized crop");
        errors++;
    }
    errors += check_image_channels(diag, d, train, SM_TRAIN, net);
    errors += read_augment(&run->augment, diag, train, aug);
    const ast_node *norm = sv_msg(train, SM_TRAIN, "normalize");
    read_normalize(d, norm);
    errors += check_normalize(diag, norm, net);
    errors += check_mean_file(diag, d, norm, NULL);
    return errors;
}

static int read_val(run_config *run, diag_ctx *diag, const ast_node *val, const net_desc *net) {
    run_data_split *d = &run->val;
    run->has_val = val != NULL;
    int errors = read_source(d, diag, val, SM_VAL);
    d->path = sv_str(val, SM_VAL, "path");
    if (val && !errors && (d->source == RUN_DATA_IMAGE_FOLDER) != (run->train.source == RUN_DATA_IMAGE_FOLDER)) {
        diag_error(diag, sv_loc(val, SM_VAL, "source"), "give train and val the same kind of source",
                   "val source \"%s\" with train source \"%s\": the trainer reads both the same way",
                   d->source_name, run->train.source_name);
        errors++;
    }
    d->batch_per_rank = sv_has(val, SM_VAL, "batch_per_rank") ? sv_int(val, SM_VAL, "batch_per_rank")
                                                              : run->train.batch_per_rank;
    d->resize = sv_int(val, SM_VAL, "resize");
    d->center_crop = sv_int(val, SM_VAL, "center_crop");
    errors += read_interpolation(d, diag, val, SM_VAL);
    if (val) errors += read_image_fields(d, diag, val, SM_VAL);
    if (val) errors += check_image_channels(diag, d, val, SM_VAL, net);
    const ast_node *norm = sv_msg(val, SM_VAL, "normalize");
    read_normalize(d, norm);
    errors += check_normalize(diag, norm, net);
    errors += check_mean_file(diag, d, norm, &run->train);
    /* A crop other than the input size sets the evaluation resolution (sema_eval.c checks the
     * net there); only image sources can be read at another size. */
    if (d->center_crop && (d->center_crop != net->input.h || d->center_crop != net->input.w)) {
        if (d->source != RUN_DATA_IMAGE_FOLDER)
            return errors + check_crop(diag, val, SM_VAL, "center_crop", net);
        run->eval_h = run->eval_w = d->center_crop;
    }
    return errors;
}

/* Caffe's LMDBs and HDF5 lists: the training and the test set are two of them, at two paths. */
static int check_caffe_pair(const run_config *run, diag_ctx *diag, const ast_node *train, const ast_node *val,
                            run_data_source kind, const char *name, const char *what) {
    int train_k = train && run->train.source == kind, val_k = val && run->val.source == kind;
    if (!train || train_k == val_k) return 0;
    char hint[256];
    snprintf(hint, sizeof hint, "give both data.train and data.val { source: \"%s\" path: \"...\" } (Caffe's TRAIN and "
             "TEST %s)", name, what);
    const char *title = kind == RUN_DATA_LMDB ? "LMDB" : kind == RUN_DATA_LEVELDB ? "LevelDB" : "HDF5";
    diag_error(diag, train_k ? sv_loc(train, SM_TRAIN, "source") : sv_loc(val, SM_VAL, "source"), hint,
               "a%s %s %s set needs a%s %s %s set", kind == RUN_DATA_LMDB ? "n" : "", title,
               train_k ? "training" : "validation", kind == RUN_DATA_LMDB ? "n" : "", title,
               train_k ? "validation" : "training");
    return 1;
}

static int check_lmdb_pair(const run_config *run, diag_ctx *diag, const ast_node *train, const ast_node *val) {
    return check_caffe_pair(run, diag, train, val, RUN_DATA_LMDB, "lmdb", "databases") +
           check_caffe_pair(run, diag, train, val, RUN_DATA_LEVELDB, "leveldb", "databases") +
           check_caffe_pair(run, diag, train, val, RUN_DATA_HDF5, "hdf5", "lists");
}

/* HDF5 samples are floats handed to the net as they are (Caffe's HDF5Data has no transform). */
static int check_hdf5_plain(diag_ctx *diag, const run_data_split *d, const ast_node *msg, schema_msg_id id) {
    if (!msg || d->source != RUN_DATA_HDF5) return 0;
    static const char *const fields[] = { "augment", "normalize", "resize", "center_crop" };
    for (int k = 0; k < 4; k++) {
        if (!schema_find(id, fields[k]) || !sv_has(msg, id, fields[k])) continue;
        diag_error(diag, sv_loc(msg, id, fields[k]), "remove it: write the samples as the net should read them",
                   "%s: HDF5 samples are floats handed to the net as they are (Caffe's HDF5Data has no transform)",
                   fields[k]);
        return 1;
    }
    return 0;
}

/* data.train_samples, or its schema default for the source: a size, or train.samples. */
static int read_train_samples(run_config *run, diag_ctx *diag, const ast_node *data,
                              const ast_node *train) {
    if (sv_has(data, SM_DATA, "train_samples")) {
        run->train_samples = sv_int(data, SM_DATA, "train_samples");
        run->train_samples_given = true;
        return 0;
    }
    const char *src = run->train.source_name;
    char def[64];
    if (schema_default_for(schema_find(SM_DATA, "train_samples"), src, def, sizeof def)) {
        char *end;
        long long n = strtoll(def, &end, 10);
        if (end != def && !*end) run->train_samples = n;
        else if (strcmp(def, "train.samples") == 0) run->train_samples = run->train.samples;
    }
    if (run->train_samples > 0) return 0;
    diag_error(diag, sv_loc(train, SM_TRAIN, "source"),
               "steps per epoch need the dataset size: set data.train_samples (or train.samples "
               "for synthetic data)", "the size of a \"%s\" training set is unknown", src);
    return 1;
}

/* Weight decay and its exemptions, in every optimizer's message. */
static void read_decay(run_config *run, const ast_node *m, schema_msg_id id) {
    run->weight_decay = sv_float(m, id, "weight_decay");
    run->exempt_bn_bias = sv_bool(m, id, "exempt_bn_bias");
    run->exempt_norm = sv_bool(m, id, "exempt_norm");
}

/* The Adam moments' settings, shared by AdamW and LAMB. */
static void read_adam(run_config *run, const ast_node *m, schema_msg_id id) {
    run->beta1 = sv_float(m, id, "beta1");
    run->beta2 = sv_float(m, id, "beta2");
    run->adam_eps = sv_float(m, id, "eps");
    read_decay(run, m, id);
}

static void read_optimizer(run_config *run, const ast_node *solver) {
    const ast_node *m;
    if ((m = sv_msg(solver, SM_SOLVER, "sgd"))) {
        run->optimizer = RUN_OPT_SGD;
        run->momentum = sv_float(m, SM_SGD, "momentum");
        run->nesterov = sv_bool(m, SM_SGD, "nesterov");
        run->dampening = sv_float(m, SM_SGD, "dampening");
        run->lr_in_velocity = sv_bool(m, SM_SGD, "lr_in_velocity");
        const ast_node *larc = sv_msg(m, SM_SGD, "larc");
        if (larc) {
            static const char *const policies[] = { "SCALE", "CLIP" };
            run->larc = SV_ENUM(larc, SM_LARC, "policy", policies) == 1 ? RT_LARC_CLIP : RT_LARC_SCALE;
            run->larc_eta = sv_float(larc, SM_LARC, "eta");
            static const char *const forms[] = { "NVCAFFE", "INTEL" };
            run->larc_intel = SV_ENUM(larc, SM_LARC, "form", forms) == 1;
        }
        run->warmup_momentum_correction = sv_bool(m, SM_SGD, "warmup_momentum_correction");
        read_decay(run, m, SM_SGD);
    } else if ((m = sv_msg(solver, SM_SOLVER, "lars"))) {
        run->optimizer = RUN_OPT_LARS;
        run->momentum = sv_float(m, SM_LARS, "momentum");
        run->eta = sv_float(m, SM_LARS, "eta");
        read_decay(run, m, SM_LARS);
    } else if ((m = sv_msg(solver, SM_SOLVER, "adamw"))) {
        run->optimizer = RUN_OPT_ADAMW;
        read_adam(run, m, SM_ADAMW);
        run->adam_caffe_form = sv_bool(m, SM_ADAMW, "caffe_form");
    } else if ((m = sv_msg(solver, SM_SOLVER, "lamb"))) {
        run->optimizer = RUN_OPT_LAMB;
        read_adam(run, m, SM_LAMB);
        run->lamb_max_grad_norm = sv_float(m, SM_LAMB, "max_grad_norm");
        run->lamb_trust_clip = sv_bool(m, SM_LAMB, "trust_clip");
    } else if ((m = sv_msg(solver, SM_SOLVER, "rmsprop"))) {
        static const char *const forms[] = { "TORCH", "TF" };
        run->optimizer = RUN_OPT_RMSPROP;
        run->momentum = sv_float(m, SM_RMSPROP, "momentum");
        run->rms_alpha = sv_float(m, SM_RMSPROP, "alpha");
        run->rms_eps = sv_float(m, SM_RMSPROP, "eps");
        run->rms_tf = SV_ENUM(m, SM_RMSPROP, "form", forms) == 1;
        read_decay(run, m, SM_RMSPROP);
    } else if ((m = sv_msg(solver, SM_SOLVER, "adagrad"))) {
        run->optimizer = RUN_OPT_ADAGRAD;
        run->adaptive_eps = sv_float(m, SM_ADAGRAD, "eps");
        read_decay(run, m, SM_ADAGRAD);
    } else if ((m = sv_msg(solver, SM_SOLVER, "adadelta"))) {
        run->optimizer = RUN_OPT_ADADELTA;
        run->adaptive_decay = sv_float(m, SM_ADADELTA, "rho");
        run->adaptive_eps = sv_float(m, SM_ADADELTA, "eps");
        read_decay(run, m, SM_ADADELTA);
    }
}

/* torchvision's train.py: alpha = min(1, (1 - decay) x world x batch x steps / epochs). */
static void read_ema(run_config *run, const ast_node *solver) {
    const ast_node *m = sv_msg(solver, SM_SOLVER, "ema");
    if (!m) return;
    run->ema.decay = sv_float(m, SM_EMA, "decay");
    run->ema.every_iterations = sv_int(m, SM_EMA, "every_iterations");
    run->ema.warmup_epochs = sv_int(m, SM_EMA, "warmup_epochs");
    run->ema.batch_adjust = sv_bool(m, SM_EMA, "batch_adjust");
    double alpha = 1.0 - run->ema.decay;
    if (run->ema.batch_adjust)
        alpha *= (double)run->global_batch * (double)run->ema.every_iterations / (double)run->epochs;
    run->ema.alpha = alpha < 1.0 ? alpha : 1.0;
}

static int read_warmup(rt_lr_config *lr, diag_ctx *diag, const ast_node *w) {
    if (!w) return 0;
    if (sv_has(w, SM_WARMUP, "iterations")) {
        lr->warmup.length = (double)sv_int(w, SM_WARMUP, "iterations");
        lr->warmup.unit = RT_LR_UNIT_ITERATIONS;
    } else {
        lr->warmup.length = sv_float(w, SM_WARMUP, "epochs");
        lr->warmup.unit = RT_LR_UNIT_EPOCHS;
    }
    lr->warmup.kind = (rt_warmup_kind)SV_ENUM(w, SM_WARMUP, "kind", run_warmup_kind_names);
    lr->warmup.start = RT_WARMUP_FROM_FACTOR;
    lr->warmup.start_factor = sv_float(w, SM_WARMUP, "start_factor");
    if (sv_has(w, SM_WARMUP, "start_lr")) {
        lr->warmup.start = RT_WARMUP_FROM_LR;
        lr->warmup.start_lr = sv_float(w, SM_WARMUP, "start_lr");
    }
    lr->warmup.replaces_schedule = sv_bool(w, SM_WARMUP, "replaces_schedule");
    if (lr->warmup.kind == RT_WARMUP_CONSTANT && !sv_has(w, SM_WARMUP, "start_factor") &&
        !sv_has(w, SM_WARMUP, "start_lr")) {
        diag_error(diag, sv_loc(w, SM_WARMUP, "kind"), "e.g. start_factor: 0.25",
                   "warmup kind CONSTANT needs an explicit start_factor");
        return 1;
    }
    return 0;
}

static int read_schedule(rt_lr_config *lr, diag_ctx *diag, const ast_node *s) {
    const ast_node *m;
    lr->kind = RT_LR_CONSTANT;
    if (!s) return 0;
    if ((m = sv_msg(s, SM_SCHEDULE, "step"))) {
        lr->kind = RT_LR_STEP;
        lr->step.every = sv_float(m, SM_SCHED_STEP, "every");
        if (sv_has(m, SM_SCHED_STEP, "every_iterations")) {
            lr->step.every = (double)sv_int(m, SM_SCHED_STEP, "every_iterations");
            lr->milestone_unit = RT_LR_UNIT_ITERATIONS;
        }
        lr->step.gamma = sv_float(m, SM_SCHED_STEP, "gamma");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "multistep"))) {
        lr->kind = RT_LR_MULTISTEP;
        const ast_node *ms = sv_get(m, SM_SCHED_MULTISTEP, "milestones");
        if (!ms) {
            ms = sv_get(m, SM_SCHED_MULTISTEP, "milestone_iterations");
            lr->milestone_unit = RT_LR_UNIT_ITERATIONS;
        }
        if (ms->n_kids > RT_LR_MAX_MILESTONES || ms->n_kids == 0) {
            diag_error(diag, ms->loc, NULL, "multistep needs 1 to %d milestones, not %d",
                       RT_LR_MAX_MILESTONES, ms->n_kids);
            return 1;
        }
        for (int i = 0; i < ms->n_kids; i++) lr->multistep.milestones[i] = sv_number(ms->kids[i]);
        lr->multistep.count = ms->n_kids;
        lr->multistep.gamma = sv_float(m, SM_SCHED_MULTISTEP, "gamma");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "exponential"))) {
        lr->kind = RT_LR_EXPONENTIAL;
        lr->exponential.gamma = sv_float(m, SM_SCHED_EXPONENTIAL, "gamma");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "cosine"))) {
        lr->kind = RT_LR_COSINE;
        lr->cosine.min_lr = sv_float(m, SM_SCHED_COSINE, "min_lr");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "polynomial"))) {
        lr->kind = RT_LR_POLYNOMIAL;
        lr->polynomial.power = sv_float(m, SM_SCHED_POLYNOMIAL, "power");
        lr->polynomial.end_lr = sv_float(m, SM_SCHED_POLYNOMIAL, "end_lr");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "linear"))) {
        lr->kind = RT_LR_LINEAR;
        lr->linear.end_lr = sv_float(m, SM_SCHED_LINEAR, "end_lr");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "one_cycle"))) {
        lr->kind = RT_LR_ONE_CYCLE;
        lr->one_cycle.max_lr = sv_float(m, SM_SCHED_ONE_CYCLE, "max_lr");
        lr->one_cycle.pct_start = sv_float(m, SM_SCHED_ONE_CYCLE, "pct_start");
        lr->one_cycle.div_factor = sv_float(m, SM_SCHED_ONE_CYCLE, "div_factor");
        lr->one_cycle.final_div_factor = sv_float(m, SM_SCHED_ONE_CYCLE, "final_div_factor");
        lr->one_cycle.anneal = RT_ANNEAL_COS;
    } else if ((m = sv_msg(s, SM_SCHEDULE, "inv"))) {
        lr->kind = RT_LR_INV;
        lr->inv.gamma = sv_float(m, SM_SCHED_INV, "gamma");
        lr->inv.power = sv_float(m, SM_SCHED_INV, "power");
    } else if ((m = sv_msg(s, SM_SCHEDULE, "sigmoid"))) {
        lr->kind = RT_LR_SIGMOID;
        lr->sigmoid.gamma = sv_float(m, SM_SCHED_SIGMOID, "gamma");
        lr->sigmoid.step_iterations = (double)sv_int(m, SM_SCHED_SIGMOID, "step_iterations");
    }
    return 0;
}

static int read_lr(run_config *run, diag_ctx *diag, const ast_node *solver) {
    const ast_node *m = sv_msg(solver, SM_SOLVER, "lr");
    rt_lr_config *lr = &run->lr;
    memset(lr, 0, sizeof *lr);
    lr->base = sv_float(m, SM_LR, "base");
    lr->per_batch = sv_has(m, SM_LR, "per_batch") ? (double)sv_int(m, SM_LR, "per_batch")
                                                  : (double)run->global_batch;
    lr->scaling = (rt_lr_scaling)SV_ENUM(m, SM_LR, "scaling", run_lr_scaling_names);
    lr->global_batch = (double)run->global_batch;
    lr->steps_per_epoch = (long)run->steps_per_epoch;
    lr->epochs = (int)run->epochs;
    lr->iterations = (long)run->iterations;
    lr->stepping = sv_bool(m, SM_LR, "per_iteration") ? RT_LR_PER_ITERATION : RT_LR_PER_EPOCH;
    int errors = read_warmup(lr, diag, sv_msg(m, SM_LR, "warmup"));
    errors += read_schedule(lr, diag, sv_msg(m, SM_LR, "schedule"));
    if (errors) return errors;
    rt_err err;
    if (rt_lr_validate(lr, &err) != RT_OK) {
        diag_error(diag, sv_loc(solver, SM_SOLVER, "lr"), err.hint[0] ? err.hint : NULL,
                   "invalid learning-rate schedule: %s", err.msg);
        return 1;
    }
    run->peak_lr = rt_lr_peak(lr);
    if (!isfinite(run->peak_lr)) {
        diag_error(diag, sv_loc(m, SM_LR, "base"), "check base, per_batch and the scaling rule",
                   "the peak learning rate after batch scaling is not a finite number");
        return 1;
    }
    run->warmup_steps = rt_lr_warmup_steps(lr);
    return 0;
}

static void read_precision_parallel(run_config *run, const ast_node *root) {
    const ast_node *p = sv_msg(root, SM_SPEC, "precision");
    run->compute = (run_compute)SV_ENUM(p, SM_PRECISION, "compute", run_compute_names);
    run->loss_scale = (run_loss_scale)SV_ENUM(p, SM_PRECISION, "loss_scale", run_loss_scale_names);
    /* The schema documents this conditional default: FP16 needs a loss scale to train. */
    if (!sv_has(p, SM_PRECISION, "loss_scale") && run->compute == RUN_FP16)
        run->loss_scale = RUN_LOSS_SCALE_DYNAMIC;
    run->init_scale = sv_float(p, SM_PRECISION, "init_scale");

    const ast_node *q = sv_msg(root, SM_SPEC, "parallel");
    run->ranks = sv_int(q, SM_PARALLEL, "ranks");
    run->ranks_for_show = run->ranks ? run->ranks : 1;
    run->ranks_per_node = sv_int(q, SM_PARALLEL, "ranks_per_node");
    run->bucket_mb = sv_float(q, SM_PARALLEL, "bucket_mb");
    run->overlap = sv_bool(q, SM_PARALLEL, "overlap");
    run->sync_bn = sv_bool(q, SM_PARALLEL, "sync_bn");
    run->hang_timeout_s = sv_float(q, SM_PARALLEL, "hang_timeout");
}

static void read_reference(run_config *run, const ast_node *root) {
    const ast_node *r = sv_msg(root, SM_SPEC, "reference");
    run->reference.source = sv_str(r, SM_REFERENCE, "source");
    run->reference.url = sv_str(r, SM_REFERENCE, "url");
    run->reference.time = sv_str(r, SM_REFERENCE, "time");
    run->reference.notes = sv_str(r, SM_REFERENCE, "notes");
    run->reference.top1 = sv_has(r, SM_REFERENCE, "top1") ? sv_float(r, SM_REFERENCE, "top1") : -1;
    run->reference.top5 = sv_has(r, SM_REFERENCE, "top5") ? sv_float(r, SM_REFERENCE, "top5") : -1;
    run->reference.gpus = sv_int(r, SM_REFERENCE, "gpus");
}

static void read_solver_misc(run_config *run, const ast_node *solver) {
    run->epochs = sv_int(solver, SM_SOLVER, "epochs");
    run->iterations = sv_int(solver, SM_SOLVER, "iterations");
    run->eval_every_iterations = sv_int(solver, SM_SOLVER, "eval_every_iterations");
    read_optimizer(run, solver);
    run->label_smoothing = sv_float(sv_msg(solver, SM_SOLVER, "loss"), SM_LOSS, "label_smoothing");
    run->loss_kind = (run_loss_kind)SV_ENUM(sv_msg(solver, SM_SOLVER, "loss"), SM_LOSS, "kind", run_loss_kind_names);
    run->bce_target_threshold = sv_float(sv_msg(solver, SM_SOLVER, "loss"), SM_LOSS, "bce_target_threshold");
    run->clip_grad_norm = sv_float(solver, SM_SOLVER, "clip_grad_norm");
    run->log_every = sv_int(solver, SM_SOLVER, "log_every");
    run->eval_every = sv_int(solver, SM_SOLVER, "eval_every");
    const ast_node *ck = sv_msg(solver, SM_SOLVER, "checkpoint");
    run->ckpt_every_epochs = sv_int(ck, SM_CHECKPOINT, "every_epochs");
    run->ckpt_every_iterations = sv_int(ck, SM_CHECKPOINT, "every_iterations");
    run->ckpt_keep = sv_int(ck, SM_CHECKPOINT, "keep");
}

/* Global batch, steps per epoch and total steps, each overflow-checked. */
static int derive_steps(run_config *run, diag_ctx *diag, const ast_node *train) {
    src_loc at = sv_loc(train, SM_TRAIN, "batch_per_rank");
    if (__builtin_mul_overflow(run->train.batch_per_rank, run->ranks_for_show, &run->global_batch)) {
        diag_error(diag, at, NULL, "global batch (batch_per_rank x ranks) overflows 64 bits");
        return 1;
    }
    run->steps_per_epoch = run->train_samples / run->global_batch;
    if (run->steps_per_epoch == 0) {
        diag_error(diag, at, "reduce batch_per_rank or ranks, or set data.train_samples",
                   "global batch %lld (%lld per rank x %lld ranks) is larger than the %lld "
                   "training samples", (long long)run->global_batch,
                   (long long)run->train.batch_per_rank, (long long)run->ranks_for_show,
                   (long long)run->train_samples);
        return 1;
    }
    if (run->iterations > 0) {   /* the epochs it touches, the last one maybe in part */
        run->total_steps = run->iterations;
        run->epochs = (run->iterations + run->steps_per_epoch - 1) / run->steps_per_epoch;
        if (run->epochs <= 1000000) return 0;
        diag_error(diag, at, "give fewer iterations or a larger global batch",
                   "%lld iterations are %lld epochs of %lld steps, more than 1000000",
                   (long long)run->iterations, (long long)run->epochs, (long long)run->steps_per_epoch);
        return 1;
    }
    if (__builtin_mul_overflow(run->steps_per_epoch, run->epochs, &run->total_steps)) {
        diag_error(diag, at, NULL, "total steps (steps per epoch x epochs) overflow 64 bits");
        return 1;
    }
    return 0;
}

/* NVCaffe's LARC and Intel Caffe's momentum correction exist in Caffe's form of plain SGD only
 * (their Nesterov solvers have neither). */
static int check_caffe_forks_sgd(const run_config *run, diag_ctx *diag, const ast_node *sgd) {
    int errors = 0;
    const char *field = run->larc != RT_LARC_NONE ? "larc" : run->warmup_momentum_correction ? "warmup_momentum_correction" : NULL;
    if (!field) return 0;
    if (!run->lr_in_velocity) {
        diag_error(diag, sv_loc(sgd, SM_SGD, field), "add lr_in_velocity: true (Caffe's form)",
                   "sgd.%s is the Caffe forks' rule for Caffe's SGD, whose LR is inside the velocity", field);
        errors++;
    }
    if (run->nesterov) {
        diag_error(diag, sv_loc(sgd, SM_SGD, field), "remove nesterov, or the rule",
                   "sgd.%s with nesterov: the Caffe forks' Nesterov solvers have no such rule", field);
        errors++;
    }
    if (run->warmup_momentum_correction && run->momentum == 0) {
        diag_error(diag, sv_loc(sgd, SM_SGD, "warmup_momentum_correction"), "remove warmup_momentum_correction, or set momentum",
                   "sgd.warmup_momentum_correction corrects a momentum of 0");
        errors++;
    }
    return errors;
}

int sema_build_run(run_config *run, diag_ctx *diag, const ast_node *root, const net_desc *net) {
    memset(run, 0, sizeof *run);
    run->name = sv_str(root, SM_SPEC, "name");
    run->seed = sv_int(root, SM_SPEC, "seed");
    read_precision_parallel(run, root);
    read_reference(run, root);
    const ast_node *data = sv_msg(root, SM_SPEC, "data");
    const ast_node *train = sv_msg(data, SM_DATA, "train");
    const ast_node *solver = sv_msg(root, SM_SPEC, "solver");
    int errors = 0;
    if (train) errors += read_train(run, diag, train, net);
    errors += read_val(run, diag, sv_msg(data, SM_DATA, "val"), net);
    errors += check_lmdb_pair(run, diag, train, sv_msg(data, SM_DATA, "val"));
    errors += check_hdf5_plain(diag, &run->train, train, SM_TRAIN) +
              check_hdf5_plain(diag, &run->val, sv_msg(data, SM_DATA, "val"), SM_VAL);
    run->val_samples = sv_int(data, SM_DATA, "val_samples");
    run->decode_threads = sv_int(data, SM_DATA, "decode_threads");
    run->max_decode_failures = sv_int(data, SM_DATA, "max_decode_failures");
    run->loader_slots = sv_int(data, SM_DATA, "loader_slots");
    if (solver) read_solver_misc(run, solver);
    const ast_node *sgd = solver ? sv_msg(solver, SM_SOLVER, "sgd") : NULL;
    if (run->lr_in_velocity && run->dampening != 0) {   /* Caffe's form has no dampening */
        diag_error(diag, sv_loc(sgd, SM_SGD, "dampening"), "remove dampening, or lr_in_velocity",
                   "sgd.lr_in_velocity (Caffe's form) has no dampening");
        errors++;
    }
    errors += check_caffe_forks_sgd(run, diag, sgd);
    if (!train || !solver || errors) return errors;
    if (read_train_samples(run, diag, data, train) || derive_steps(run, diag, train)) return errors + 1;
    errors += read_lr(run, diag, solver);
    if (!errors && run->warmup_momentum_correction && run->warmup_steps == 0) {
        diag_error(diag, sv_loc(sgd, SM_SGD, "warmup_momentum_correction"),
                   "add lr { warmup { ... } }, or remove warmup_momentum_correction",
                   "sgd.warmup_momentum_correction corrects the momentum during the LR's warmup, and there is none");
        errors++;
    }
    if (!errors && run->warmup_momentum_correction && rt_lr_at(&run->lr, 0) <= 0) {
        /* Intel Caffe divides by the previous step's LR: from 0 its momentum is NaN */
        diag_error(diag, sv_loc(sgd, SM_SGD, "warmup_momentum_correction"),
                   "start the warmup above 0 (start_lr or start_factor), or remove warmup_momentum_correction",
                   "sgd.warmup_momentum_correction divides by the previous step's LR, which is 0 at the warmup's start");
        errors++;
    }
    read_ema(run, solver);
    run->has_run = errors == 0;
    return errors;
}
