/* The training loop of every compiled trainer: data, steps, evaluation, logging,
 * checkpoints and exact resume. Model-specific work happens in the generated rt_model.
 * Data parallel: each of the `world` ranks trains on its slice of every global batch;
 * gradients are summed over ranks by buckets during backward (rt_comm.h) and divided by the
 * world size in the optimizer step, so every rank applies the global-batch mean and the
 * replicas stay identical. Only rank 0 logs and writes checkpoints. */
#include "rt_trainer.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_checkpoint.h"
#include "rt_core.h"
#include "rt_data.h"
#include "rt_ema.h"
#include "rt_env.h"
#include "rt_loss_guard.h"
#include "rt_metrics.h"
#include "rt_ops.h"
#include "rt_rng.h"
#include "rt_sha256.h"
#include "trainer_args.h"
#include "trainer_internal.h"

static int m_in(const trainer *t, int k) { return k ? t->m->in_w : t->m->in_h; }

static int has_scaler(const trainer *t) { return t->m->device && t->m->device->loss_scaler; }

/* The loss scaler's state from the device (a small synchronous copy), for logs and checkpoints. */
static void read_scaler(trainer *t) {
    if (!has_scaler(t)) return;
    double st[3];
    t->m->device->loss_scaler(&t->ctx, st, 0);
    t->scaler = (trainer_scaler_state){ st[0], st[1], st[2] };
}

/* run.mean_file, in the units the loader's table gives ((v/255 - mean) / std): the mean image
 * divided by 255 * std. */
static void load_mean_image(trainer *t) {
    const rt_run_config *run = &t->run;
    rt_err err;
    int c, h, w;
    if (!run->load_mean) rt_die("this trainer was generated without its mean file reader; rebuild it with trainc build");
    if (run->load_mean(run->mean_file, &c, &h, &w, &t->mean_image, &err)) rt_die_err(&err);
    t->mean_c = c, t->mean_h = h, t->mean_w = w;
    size_t plane = (size_t)h * w;
    for (size_t i = 0; i < (size_t)c * plane; i++) t->mean_image[i] /= 255.0f * (run->std[i / plane] != 0.0f ? run->std[i / plane] : 1.0f);
}

/* Caffe's ImageData with a mean_file: the mean image is of the resized images (resize_to), the
 * crop taken of both; images of another size are refused as they come (image_fill.c). */
static void trainer_image_mean(trainer *t) {
    const rt_run_config *run = &t->run;
    load_mean_image(t);
    const rt_image_transform *im[2] = { &run->train_image, &run->val_image };
    for (int k = 0; k < 2; k++) {
        int bad = t->mean_c != (im[k]->gray ? 1 : 3) || (im[k]->resize_h > 0 && (im[k]->resize_h != t->mean_h || im[k]->resize_w != t->mean_w));
        if (bad)
            rt_die_hint("compute the mean image of the resized images (Caffe's compute_image_mean), or resize them to "
                        "its size (resize_to)", "the mean file %s is a %dx%dx%d image, and data.%s resizes the images "
                        "to %dx%dx%d", run->mean_file, t->mean_c, t->mean_h, t->mean_w, k ? "val" : "train",
                        im[k]->gray ? 1 : 3, im[k]->resize_h, im[k]->resize_w);
        if (t->mean_h < m_in(t, 0) || t->mean_w < m_in(t, 1))
            rt_die_hint("compute the mean image of the resized images", "the mean file %s is a %dx%dx%d image, smaller "
                        "than the net's %dx%d input", run->mean_file, t->mean_c, t->mean_h, t->mean_w, m_in(t, 0), m_in(t, 1));
    }
}

/* Caffe's crop_size and mean_file on its databases: both sets are stored at one size, at least
 * the net's input (the crop), and the mean image is that size too. */
static void trainer_caffe_transform(trainer *t, const char *dir) {
    const rt_model *m = t->m;
    const rt_run_config *run = &t->run;
    const rt_dataset *sets[2] = { &t->train_set, &t->val_set };
    const char *where[2] = { dir, run->val_path };
    for (int k = 0; k < 2; k++) {
        const rt_dataset *d = sets[k];
        int ok = d->c == m->in_c && (run->db_crop ? d->h >= m->in_h && d->w >= m->in_w : d->h == m->in_h && d->w == m->in_w);
        if (!ok)
            rt_die_hint("point --data at a database of the spec's input shape, or at least its crop size",
                        "data in '%s' has images of %dx%dx%d but the spec's net takes %dx%dx%d%s", where[k], d->c, d->h,
                        d->w, m->in_c, m->in_h, m->in_w, run->db_crop ? " crops of them" : "");
    }
    if (run->mean_file) {
        load_mean_image(t);
        if (t->mean_c != t->train_set.c || t->mean_h != t->train_set.h || t->mean_w != t->train_set.w)
            rt_die_hint("compute the mean image of this database (Caffe's compute_image_mean)",
                        "the mean file %s is a %dx%dx%d image, the database's images %dx%dx%d", run->mean_file,
                        t->mean_c, t->mean_h, t->mean_w, t->train_set.c, t->train_set.h, t->train_set.w);
    }
    if (t->val_set.h != t->train_set.h || t->val_set.w != t->train_set.w)
        rt_die_hint("write both databases at one size (convert_imageset --resize_height/--resize_width)",
                    "the training images are %dx%d and the validation images %dx%d; Caffe's mean image and crop take one size",
                    t->train_set.h, t->train_set.w, t->val_set.h, t->val_set.w);
}

void trainer_load_data(trainer *t) {
    const rt_model *m = t->m;
    const rt_run_config *run = &t->run;
    const char *dir = t->args.data_dir ? t->args.data_dir : run->data_path;
    if (run->source == RT_DATA_IMAGES) {
        rt_data_open_images(run, t->args.data_dir, m->in_c, m->in_h, m->in_w, m->classes, &t->train_set, &t->val_set);
    } else if (run->source == RT_DATA_SYNTHETIC) {
        rt_dataset_synthetic(&t->train_set, run->train_samples, m->in_c, m->in_h, m->in_w,
                             m->classes, run->seed);
        rt_dataset_synthetic(&t->val_set, run->val_samples, m->in_c, m->in_h, m->in_w,
                             m->classes, run->seed + 1);
    } else if (run->source == RT_DATA_LMDB) {   /* --data replaces the training database */
        rt_err err;
        if (!run->load_lmdb) rt_die("this trainer was generated without its LMDB reader; rebuild it with trainc build");
        if (run->load_lmdb(&t->train_set, dir, m->classes, &err) || run->load_lmdb(&t->val_set, run->val_path, m->classes, &err))
            rt_die_err(&err);
    } else if (run->source == RT_DATA_HDF5) {   /* --data replaces the training list */
        rt_err err;
        if (!run->load_hdf5) rt_die("this trainer was generated without its HDF5 reader; rebuild it with trainc build");
        if (run->load_hdf5(&t->train_set, dir, m->classes, &err) || run->load_hdf5(&t->val_set, run->val_path, m->classes, &err))
            rt_die_err(&err);
    } else {
        rt_dataset_load_idx(&t->train_set, dir, "train", m->classes, NULL);
        rt_dataset_load_idx(&t->val_set, dir, "t10k", m->classes, NULL);
    }
    rt_data_honour_sample_counts(run, dir, &t->train_set, &t->val_set, t->rank == 0);
    if (run->eval_h) t->val_set.h = run->eval_h, t->val_set.w = run->eval_w;   /* read at the eval resolution */
    const rt_dataset *d = &t->train_set;
    if (run->source == RT_DATA_IMAGES && run->mean_file) trainer_image_mean(t);
    if (run->source == RT_DATA_LMDB && (run->db_crop || run->mean_file)) {
        trainer_caffe_transform(t, dir);
        return;
    }
    if (d->c != m->in_c || d->h != m->in_h || d->w != m->in_w)
        rt_die_hint("point --data at a dataset of the spec's input shape, or change net.input_shape",
                    "data in '%s' has images of %dx%dx%d but the spec's net takes %dx%dx%d", dir,
                    d->c, d->h, d->w, m->in_c, m->in_h, m->in_w);
}

void trainer_make_loader(trainer *t, rt_loader *l, const rt_dataset *ds, int train) {
    rt_loader_config cfg;
    rt_loader_config_default(&cfg);
    cfg.global_batch = t->global_batch;   /* each rank gets its slice of every global batch */
    cfg.rank = t->rank;
    cfg.world = t->world;
    cfg.train = train;
    cfg.seed = t->run.seed;
    cfg.crop_pad = train ? t->run.crop_pad : 0;
    cfg.flip = train ? t->run.flip : 0;
    if (t->run.db_crop) cfg.window_h = cfg.window_w = t->run.db_crop;   /* random in training, else the center */
    cfg.mean_image = t->mean_image;
    cfg.mean_h = t->mean_h, cfg.mean_w = t->mean_w;
    cfg.raw_u8 = t->m->input_u8;   /* a device model normalizes on the device */
    if (train) cfg.augment = t->run.augment;   /* mixup/cutmix, erasing, repeats: training only */
    cfg.nhwc = t->m->input_nhwc;
    memcpy(cfg.mean, t->run.mean, sizeof cfg.mean);
    memcpy(cfg.std, t->run.std, sizeof cfg.std);
    rt_data_image_loader_config(&t->run, train, t->args.decode_threads, ds->h, ds->w, &cfg);
    rt_loader_init(l, ds, &cfg, NULL);
}

void trainer_allocate(trainer *t) {
    const rt_model *m = t->m;
    t->ctx.params = rt_alloc_aligned((size_t)m->n_params * sizeof(float));
    t->ctx.grads = rt_alloc_aligned((size_t)m->n_params * sizeof(float));
    t->ctx.buffers = rt_alloc_aligned((size_t)(m->n_buffers ? m->n_buffers : 1) * sizeof(float));
    /* the evaluation resolution's forward plans its own offsets in the same arena (a device
     * model's arena is on the device: the host one only holds its logits) */
    long arena = m->device || m->arena_bytes > t->run.eval_arena_bytes ? m->arena_bytes : t->run.eval_arena_bytes;
    t->ctx.arena = rt_alloc_aligned((size_t)arena);
    t->n_state = (long)rt_optim_state_per_param(&t->run.optim) * m->n_params;
    t->opt_state = rt_alloc_aligned((size_t)(t->n_state ? t->n_state : 1) * sizeof(float));
    t->logits = rt_alloc_aligned((size_t)m->batch * m->classes * sizeof(float));
}

#define MAX_SECTIONS 9   /* checkpoint_sections's 8 and the data section */

static int checkpoint_sections(trainer *t, rt_ckpt_section *secs, trainer_resume_state *st) {   /* at most 8 */
    const rt_model *m = t->m;
    st->step = t->step;
    st->seed = t->run.seed;
    st->n_params = m->n_params;
    st->n_buffers = m->n_buffers;
    st->n_state = t->n_state;
    st->interval_loss = t->interval_loss;
    st->interval_correct = t->interval_correct;
    st->interval_steps = t->interval_steps;
    st->world = t->world;
    int n = 0;
    secs[n++] = (rt_ckpt_section){ "trainer", st, sizeof *st };
    secs[n++] = (rt_ckpt_section){ "params", t->ctx.params, (size_t)m->n_params * sizeof(float) };
    if (m->n_buffers)
        secs[n++] = (rt_ckpt_section){ "buffers", t->ctx.buffers, (size_t)m->n_buffers * sizeof(float) };
    if (t->n_state)
        secs[n++] = (rt_ckpt_section){ "optimizer", t->opt_state, (size_t)t->n_state * sizeof(float) };
    if (has_scaler(t)) secs[n++] = (rt_ckpt_section){ "loss_scale", &t->scaler, sizeof t->scaler };
    if (rt_ema_on(&t->ema)) {   /* sections of their own: checkpoints without an EMA keep their layout */
        secs[n++] = (rt_ckpt_section){ "ema_params", t->ema.params, (size_t)m->n_params * sizeof(float) };
        if (m->n_buffers)
            secs[n++] = (rt_ckpt_section){ "ema_buffers", t->ema.buffers, (size_t)m->n_buffers * sizeof(float) };
        secs[n++] = (rt_ckpt_section){ "ema_count", &t->ema.count, sizeof t->ema.count };
    }
    return n;
}

static void save_checkpoint(trainer *t) {
    if (t->rank != 0) return;   /* the replicas are identical: rank 0 speaks for all */
    if (t->m->device) t->m->device->download(&t->ctx, t->opt_state, t->n_state);
    read_scaler(t);
    rt_ckpt_section secs[MAX_SECTIONS];
    trainer_resume_state st;
    int n = checkpoint_sections(t, secs, &st);
    trainer_data_state ds = { TRAINER_DATA_STATE_VERSION, 0, t->decode_failures };
    if (t->run.source == RT_DATA_IMAGES) secs[n++] = (rt_ckpt_section){ "data", &ds, sizeof ds };
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s/checkpoints", t->args.out_dir);
    rt_ckpt_save(dir, t->m->spec_hash, t->step, t->step / t->steps_per_epoch, secs, n,
                 t->run.ckpt_keep, path, sizeof path, NULL);
    rt_progress_note(&t->progress, "checkpoint %s (step %ld)", path, t->step);
}

/* The "data" section, loaded after the others (so the file is known to be whole): a
 * checkpoint from before the section existed has none, and counts no failures. */
static long load_data_state(trainer *t, const char *path) {
    if (t->run.source != RT_DATA_IMAGES) return 0;
    trainer_data_state ds;
    rt_ckpt_section sec = { "data", &ds, sizeof ds };
    rt_err err;
    if (rt_ckpt_load(path, t->m->spec_hash, NULL, NULL, &sec, 1, &err) != RT_OK) {
        if (strstr(err.msg, "has no section 'data'")) return 0;
        rt_die_hint(err.hint, "%s", err.msg);
    }
    if (ds.version != TRAINER_DATA_STATE_VERSION)
        rt_die_hint("resume with the trainc version that wrote it",
                    "checkpoint '%s': data section version %u, this trainer reads %d", path,
                    (unsigned)ds.version, TRAINER_DATA_STATE_VERSION);
    return (long)ds.decode_failures;
}

static void resume(trainer *t, const char *path) {
    rt_ckpt_section secs[MAX_SECTIONS];
    trainer_resume_state st, want;
    int n = checkpoint_sections(t, secs, &want);
    secs[0].data = &st;
    int64_t step, epoch;
    rt_ckpt_load(path, t->m->spec_hash, &step, &epoch, secs, n, NULL);
    if (st.seed != t->run.seed)
        rt_die_hint("resume without --seed, or with the seed the run started with",
                    "checkpoint '%s' was written by a run with seed %llu, this run has seed %llu",
                    path, (unsigned long long)st.seed, (unsigned long long)t->run.seed);
    if (st.world != t->world)
        rt_die_hint("resume with as many ranks as the run that wrote it: the sample order and the "
                    "replicas' state of a step depend on the world size",
                    "checkpoint '%s' was written by a run of %lld rank%s, this run has %d", path,
                    (long long)st.world, st.world == 1 ? "" : "s", t->world);
    if (st.step > t->total_steps)
        rt_die_hint("pass --epochs at least as large as the original run's",
                    "checkpoint '%s' is at step %lld, beyond this run's %ld steps", path,
                    (long long)st.step, t->total_steps);
    t->step = st.step;
    t->decode_failures = load_data_state(t, path);
    t->interval_loss = st.interval_loss;
    t->interval_correct = st.interval_correct;
    t->interval_steps = st.interval_steps;
}

/* The spec's init block, or --init-from: another spec's weights over the fresh ones, on
 * rank 0 (share_start_state hands them to every rank). A resumed run restores its own. */
static void start_from_weights(trainer *t) {
    if (t->args.init_from && !t->run.init)
        rt_die_status(2, "add init { } to the spec for a state_dict (torchvision's keys; .safetensors, .pth or .pt), or "
                         "init { spec: \"...\" } naming the spec that wrote a trainc checkpoint",
                      "--init-from needs a trainer built from a spec with an init block");
    if (!t->run.init || t->args.resume || t->rank != 0) return;
    long n = rt_init_apply(t->run.init, t->args.init_from, t->ctx.params, t->m->n_params, t->ctx.buffers,
                           t->m->n_buffers);
    printf("%s: %ld values from %s, %d layer%s fresh, %d tensor%s frozen\n", t->m->name, n,
           t->args.init_from ? t->args.init_from : t->run.init->checkpoint, t->run.init->n_fresh,
           t->run.init->n_fresh == 1 ? "" : "s", t->run.init->n_frozen, t->run.init->n_frozen == 1 ? "" : "s");
}

/* Rank 0's output: metrics.jsonl (benchmark.jsonl for --benchmark; a resumed run keeps the
 * records up to its checkpoint) and the progress line. A new run refuses an out dir that
 * already holds checkpoints, so nothing is overwritten by accident. */
static void open_output(trainer *t) {
    const rt_model *m = t->m;
    int bench = t->args.benchmark_steps > 0;
    long resumed_at = t->args.resume ? t->step : -1;
    char dir[4096], found[4096];
    snprintf(dir, sizeof dir, "%s/checkpoints", t->args.out_dir);
    if (resumed_at < 0 && !bench && rt_ckpt_find_latest(dir, found, sizeof found))
        rt_die_hint("resume it with --resume FILE, or pass another --out",
                    "output directory '%s' already holds a run's checkpoints", t->args.out_dir);
    int stale = rt_ckpt_remove_temps(dir);   /* left by a write that a crash or kill -9 cut short */
    rt_metrics_open(&t->metrics, t->args.out_dir, bench ? "benchmark.jsonl" : "metrics.jsonl", resumed_at, NULL);
    /* spec_hash (training only) gates resume; the text hash tells edited descriptions apart. */
    char text_hash[RT_SHA256_HEX_LEN + 1];
    rt_sha256_hex(m->spec_text, strlen(m->spec_text), text_hash);
    rt_data_write_classes(&t->train_set, t->args.out_dir);
    if (t->args.tensorboard && !bench) rt_tb_open(&t->tb, t->args.tensorboard, resumed_at);
    rt_metrics_start(&t->metrics, &(rt_start_record){ .name = m->name, .spec_hash = m->spec_hash,
                     .spec_text_hash = text_hash,
                     .batch = m->batch, .ranks = t->world, .params = m->param_count, .resumed_at = resumed_at });
    rt_progress_init(&t->progress, stdout, t->step, t->total_steps);
    if (stale)
        rt_progress_note(&t->progress, "removed %d temp file%s of an interrupted checkpoint write in %s", stale,
                         stale == 1 ? "" : "s", dir);
    if (resumed_at >= 0)
        rt_progress_note(&t->progress, "%s: resumed at step %ld", m->name, resumed_at);
    else if (t->world > 1)
        rt_progress_note(&t->progress, "%s: %ld parameters, batch %d = %d ranks x %d, spec %.12s", m->name,
                         m->param_count, t->global_batch, t->world, m->batch, m->spec_hash);
    else
        rt_progress_note(&t->progress, "%s: %ld parameters, batch %d, spec %.12s", m->name, m->param_count,
                         m->batch, m->spec_hash);
}

/* Rank 0 holds the state to start from (initialized or resumed); every rank starts from it. */
static void share_start_state(trainer *t) {
    if (!t->comm) return;
    const rt_model *m = t->m;
    double pos[5] = { (double)t->step, t->interval_loss, (double)t->interval_correct, (double)t->interval_steps,
                      (double)t->decode_failures };
    rt_comm_bcast(t->comm, pos, sizeof pos, "the start state from rank 0");
    t->step = (long)pos[0], t->interval_loss = pos[1];
    t->interval_correct = (long)pos[2], t->interval_steps = (long)pos[3], t->decode_failures = (long)pos[4];
    rt_comm_bcast(t->comm, t->ctx.params, (size_t)m->n_params * sizeof(float), "the parameters from rank 0");
    rt_comm_bcast(t->comm, t->ctx.buffers, (size_t)m->n_buffers * sizeof(float), "the buffers from rank 0");
    rt_comm_bcast(t->comm, t->opt_state, (size_t)t->n_state * sizeof(float), "the optimizer state from rank 0");
    if (!rt_ema_on(&t->ema)) return;
    rt_comm_bcast(t->comm, t->ema.params, (size_t)m->n_params * sizeof(float), "the EMA weights from rank 0");
    rt_comm_bcast(t->comm, t->ema.buffers, (size_t)m->n_buffers * sizeof(float), "the EMA statistics from rank 0");
    rt_comm_bcast(t->comm, &t->ema.count, sizeof t->ema.count, "the EMA's update count from rank 0");
}

/* Loss and top-1/top-5 over the whole validation split, each rank evaluating its slice of
 * every batch. Per-rank batch norm leaves each rank its own running statistics: like torch
 * DDP, evaluation (and the checkpoint) use rank 0's. */
void trainer_evaluate(trainer *t, double *loss, double *top1, double *top5) {
    const rt_model *m = t->m;
    if (m->device && t->comm) m->device->broadcast_buffers(&t->ctx);
    else rt_comm_bcast(t->comm, t->ctx.buffers, (size_t)m->n_buffers * sizeof(float), "rank 0's batch norm statistics");
    rt_loader_seek(&t->val, 0, 0);
    long steps = rt_loader_steps_per_epoch(&t->val);
    double sum_loss = 0;
    long c1 = 0, c5 = 0, seen = 0;
    t->ctx.training = 0;
    for (long s = 0; s < steps; s++) {
        const void *x;
        const int32_t *y;
        /* the compiled batch is fixed: the loader pads the last one with zeros */
        int got = rt_loader_next_view(&t->val, &x, &y);
        if (got == 0) continue;   /* the last partial batch may not reach every rank */
        m->eval_forward(&t->ctx, x, t->logits);
        sum_loss += softmax_xent_forward(NULL, t->logits, y, got, m->classes, 0.0f, 0.0f) * got;
        int a1, a5;
        topk_correct(&a1, &a5, t->logits, y, got, m->classes);
        c1 += a1, c5 += a5, seen += got;
    }
    t->ctx.training = 1;
    double sums[4] = { sum_loss, (double)c1, (double)c5, (double)seen };
    rt_comm_sum(t->comm, sums, 4, "the evaluation results");
    sum_loss = sums[0], c1 = (long)sums[1], c5 = (long)sums[2], seen = (long)sums[3];
    *loss = seen ? sum_loss / seen : NAN;
    *top1 = seen ? (double)c1 / seen : NAN;
    *top5 = seen ? (double)c5 / seen : NAN;
}

/* The same over the EMA's weights and statistics (solver.ema), put in the model's place. */
void trainer_evaluate_ema(trainer *t, double *loss, double *top1, double *top5) {
    const rt_device_hooks *dev = t->m->device;
    float *params = t->ctx.params, *buffers = t->ctx.buffers;
    if (dev) {   /* the model's weights wait in the host mirror while the EMA's are on the device */
        dev->download(&t->ctx, NULL, 0);
        dev->load_weights(&t->ctx, t->ema.params, t->ema.buffers);
    }
    t->ctx.params = t->ema.params, t->ctx.buffers = t->ema.buffers;
    trainer_evaluate(t, loss, top1, top5);
    t->ctx.params = params, t->ctx.buffers = buffers;
    if (dev) dev->load_weights(&t->ctx, params, buffers);
}

/* Intel Caffe's momentum correction during the warmup (sgd.warmup_momentum_correction): the
 * momentum times lr_t/lr_t-1 this step; 1 otherwise. */
static double optimizer_momentum_scale(const trainer *t) {
    if (t->run.optim.kind != RT_OPTIM_SGD || !t->run.optim.sgd.warmup_momentum_correction) return 1.0;
    return rt_lr_warmup_ratio(&t->run.lr, t->step);
}

/* The gradients hold the sum over ranks of per-rank means; 1/world makes them the mean
 * over the global batch (exact for a power-of-two world). */
static void optimizer_step(trainer *t, double lr) {
    const rt_model *m = t->m;
    if (m->device) {   /* the device kernel applies the same update (and divides by the world size) */
        m->device->optimizer_step(&t->ctx, lr, optimizer_momentum_scale(t), t->step);
        return;
    }
    float grad_scale = 1.0f / (float)t->world;
    rt_init_zero_frozen(t->run.init, t->ctx.grads);   /* init.freeze: outside norms and updates */
    rt_param_zero_frozen_grads(m->tensors, m->n_tensors, t->ctx.grads);   /* lr_mult 0: no gradient, as in Caffe */
    if (t->run.clip_grad_norm > 0) {
        double norm = sqrt(rt_sum_squares(t->ctx.grads, m->n_params)) / t->world;
        grad_scale *= rt_grad_clip_coef(norm, t->run.clip_grad_norm);
    }
    if (t->run.optim.kind == RT_OPTIM_LAMB)   /* timm's Lamb clips the global norm itself */
        grad_scale *= rt_lamb_clip_coef(sqrt(rt_sum_squares(t->ctx.grads, m->n_params)) * grad_scale,
                                        t->run.optim.lamb.max_grad_norm);
    int per = rt_optim_state_per_param(&t->run.optim);
    float momentum_scale = (float)optimizer_momentum_scale(t);
    for (int i = 0; i < m->n_tensors; i++) {
        const rt_param_tensor *p = &m->tensors[i];
        if (rt_init_is_frozen(t->run.init, p->offset)) continue;
        int exempt = rt_param_exempt(&t->run, p);
        rt_optim_args a = { (float)lr, exempt ? 0.0f : t->run.weight_decay, grad_scale, t->step, momentum_scale };
        if (!rt_optim_apply_mults(&t->run.optim, &a, rt_param_lr_mult(p), rt_param_decay_mult(p))) continue;
        rt_optim_step(t->ctx.params + p->offset, t->opt_state + per * p->offset,
                      t->ctx.grads + p->offset, p->count, exempt, &t->run.optim, &a);
    }
}

/* One optimizer step on the next global batch; returns its mean loss and adds to the top-1
 * count. In a multi-rank run the loss, the count and the ranks' stop signals are summed, so
 * every rank sees the global numbers and takes the same decisions. */
static double train_one_step(trainer *t, long *correct) {
    const rt_model *m = t->m;
    const void *x;   /* the loader's own buffer: no copy of the batch */
    const int32_t *y;
    int failures;   /* undecodable samples in this step's batch (image sources) */
    if (t->have_next) x = t->next_x, y = t->next_y, failures = t->next_failures;
    else rt_loader_next_view(&t->train, &x, &y), failures = rt_loader_last_failures(&t->train);
    /* The next batch now (the loader keeps both views valid), so a device model copies it
     * while this step computes. Taken at the last step too: nothing reads the loader's
     * position afterwards, and a resumed run seeks it from the step count. Its failures
     * count at the step that trains on it: a checkpoint's count then holds the steps done,
     * and the resumed run, which takes that batch again, does not count it twice. */
    rt_loader_next_view(&t->train, &t->next_x, &t->next_y);
    t->next_failures = rt_loader_last_failures(&t->train);
    t->have_next = 1;
    t->ctx.next_x = t->next_x;
    /* One seed for all ranks: masks are keyed by the sample's index in the global batch
     * (ctx.first_sample), so dropout and drop-path draw the same masks at any world size. */
    t->ctx.step_seed = rt_hash_u64(t->run.seed, RT_STREAM_DROPOUT, (uint64_t)t->step);
    double loss = m->train_step(&t->ctx, x, y);
    int c1, c5;
    topk_correct(&c1, &c5, m->logits(&t->ctx), y, m->batch, m->classes);
    rt_comm_grads_finish(t->comm);
    if (t->comm) {
        double s[4] = { loss, (double)c1, rt_stop_requested() ? 1.0 : 0.0, failures };
        rt_comm_sum(t->comm, s, 4, "the step's loss");
        loss = s[0] / t->world, c1 = (int)s[1], t->stop_votes = (int)s[2], failures = (int)s[3];
    }
    if (rt_data_failures_over_cap(&t->run, &t->decode_failures, failures))   /* the same sum on every rank */
        rt_comm_die_all(t->comm, "fix or remove the files named above (trainc pack reports and converts them), "
                        "or raise data.max_decode_failures (--max-decode-failures)",
                        "%ld samples could not be decoded by step %ld, more than the run's cap of %ld",
                        t->decode_failures, t->step + 1, t->run.max_decode_failures);
    /* Under FP16 loss scaling a step whose forward overflowed is skipped by the device's
     * optimizer step and counted, as an overflowing backward is; its loss goes into the
     * interval's mean, which the metrics then write as null. */
    if (rt_loss_guard_step(&t->loss_guard, loss, has_scaler(t))) {
        if (has_scaler(t))
            rt_comm_die_all(t->comm, "set precision.compute: BF16 (float's range), or lower solver.lr.base",
                            "training diverged: the loss was not finite for %d steps in a row up to step %ld "
                            "(the FP16 forward overflows)", RT_LOSS_GUARD_MAX_RUN + 1, t->step);
        rt_comm_die_all(t->comm, "lower solver.lr.base, add warmup, or set solver.clip_grad_norm",
                        "training diverged: loss is %g at step %ld", loss, t->step);
    }
    *correct += c1;
    optimizer_step(t, rt_lr_at(&t->run.lr, t->step));
    if (rt_ema_due(&t->ema, t->step, t->steps_per_epoch)) {
        if (m->device) m->device->download(&t->ctx, NULL, 0);   /* the weights only, into the host mirror */
        rt_ema_after_step(&t->ema, t->ctx.params, t->ctx.buffers, t->step, t->steps_per_epoch);
    }
    t->step++;
    return loss;
}

/* Times benchmark_steps steps. Besides rank 0's communication wait it reports the exposed
 * communication: per step the least any rank waited. The last rank to finish backward waits
 * only for the all-reduce work compute did not hide, while the others also wait for it, so
 * the minimum leaves out how unevenly the ranks computed (which dominates on shared cores). */
static int run_benchmark(trainer *t) {
    long correct = 0;
    for (int i = 0; i < 3; i++) train_one_step(t, &correct);   /* warm caches and threads */
    long n = t->args.benchmark_steps;
    rt_comm_barrier(t->comm, "the start of the benchmark");
    rt_comm_take_exposed_s(t->comm);
    if (!t->m->device) rt_op_stats_start();   /* the CPU ops' rates by class */
    double wait_s = 0, exposed_s = 0, t0 = rt_time_s();
    for (long i = 0; i < n; i++) {
        train_one_step(t, &correct);
        double w = rt_comm_take_exposed_s(t->comm);
        wait_s += w;
        if (t->comm) {   /* outside the timed region: its own exchange is not step time */
            double pause = rt_time_s();
            rt_comm_min(t->comm, &w, 1, "the benchmark's exposed communication time");
            exposed_s += w;
            t0 += rt_time_s() - pause;
            rt_comm_take_exposed_s(t->comm);
        }
    }
    double secs = rt_time_s() - t0;
    rt_op_stats_stop();
    double comm_ms = t->comm ? 1e3 * wait_s / n : NAN;   /* NaN: no MPI */
    double exposed_ms = t->comm ? 1e3 * exposed_s / n : NAN;
    double ips = (double)n * t->global_batch / secs;
    if (t->rank == 0) {
        printf("benchmark: %ld steps of batch %d (%d rank%s x %d) in %.3f s: %.1f images/s", n, t->global_batch,
               t->world, t->world == 1 ? "" : "s", t->m->batch, secs, ips);
        if (t->comm)
            printf(", comm wait %.3f ms/step, exposed comm %.3f ms/step (%s all-reduce)", comm_ms, exposed_ms,
                   t->run.overlap ? "overlapped" : "blocking");
        printf("\n");
        if (!t->m->device) rt_op_stats_print(stdout, secs);
    }
    rt_metrics_benchmark(&t->metrics, &(rt_benchmark_record){ .steps = n, .batch = t->global_batch,
                         .ranks = t->world, .overlap = t->run.overlap, .seconds = secs, .images_per_s = ips,
                         .comm_wait_ms = comm_ms, .comm_exposed_ms = exposed_ms });
    return 0;
}

/* Evaluation after this step: every eval_every_steps steps, or at the end of every
 * eval_every-th epoch; always after the last step. */
static int should_eval(const trainer *t, int epoch_end, int last) {
    if (last) return 1;
    if (t->run.eval_every_steps > 0) return t->step % t->run.eval_every_steps == 0;
    return epoch_end && (t->step / t->steps_per_epoch) % t->run.eval_every == 0;
}

/* The same for checkpoints, which are off when every_epochs is 0 (and must not divide by it). */
static int should_checkpoint(const trainer *t, int epoch_end, int last) {
    if (t->run.ckpt_every_steps > 0) return last || t->step % t->run.ckpt_every_steps == 0;
    if (t->run.ckpt_every <= 0) return 0;
    return last || (epoch_end && (t->step / t->steps_per_epoch) % t->run.ckpt_every == 0);
}

/* The EMA's evaluation, on a line of its own under the model's. */
static void report_ema(trainer *t, long epochs_done, double t_start) {
    double loss, top1, top5;
    trainer_evaluate_ema(t, &loss, &top1, &top5);
    rt_metrics_eval_ema(&t->metrics, epochs_done, t->step, loss, top1, top5, rt_time_s() - t_start);
    rt_tb_scalar(&t->tb, "eval_ema/loss", t->step, loss);
    rt_tb_scalar(&t->tb, "eval_ema/top1", t->step, top1);
    rt_tb_scalar(&t->tb, "eval_ema/top5", t->step, top5);
    rt_progress_note(&t->progress, "  EMA of the weights: test loss %.4f  top-1 %.2f%%  top-5 %.2f%%", loss,
                     100 * top1, 100 * top5);
}

/* The EMA's hash, which every rank computes and compares with rank 0's: the averages are
 * identical by construction (identical parameters, the same elementwise rule). */
static void report_final_ema(trainer *t) {
    char hash[RT_PARAMS_HASH_LEN + 1], rank0[RT_PARAMS_HASH_LEN + 1];
    rt_params_hash(t->ema.params, t->m->n_params, hash);
    memcpy(rank0, hash, sizeof hash);
    rt_comm_bcast(t->comm, rank0, sizeof rank0, "rank 0's EMA hash");
    double differ = strcmp(hash, rank0) != 0;
    rt_comm_sum(t->comm, &differ, 1, "the ranks' EMA hash comparison");
    int differs = (int)differ;
    if (differs)
        rt_comm_die_all(t->comm, "report this: the EMA must not depend on the rank",
                        "the EMA weights differ between ranks (%d rank%s differ from rank 0's %s)", differs,
                        differs == 1 ? "" : "s", rank0);
    if (t->world > 1)
        rt_progress_note(&t->progress, "final EMA weights: params %s (%lld updates averaged), the same on %d ranks",
                         hash, (long long)t->ema.count, t->world);
    else
        rt_progress_note(&t->progress, "final EMA weights: params %s (%lld updates averaged)", hash,
                         (long long)t->ema.count);
}

static int train(trainer *t) {
    const rt_model *m = t->m;
    double t_start = rt_time_s(), t_interval = t_start;
    double last_top1 = NAN, last_top5 = NAN, last_loss = NAN;
    if (m->device) m->device->drop_staged(&t->ctx);   /* the seek hands the loader's slots out anew */
    rt_loader_seek(&t->train, t->step / t->steps_per_epoch, t->step % t->steps_per_epoch);
    t->have_next = 0;
    while (t->step < t->total_steps) {
        double step_t0 = rt_time_s();
        t->interval_loss += train_one_step(t, &t->interval_correct);
        rt_comm_step_done(t->comm, rt_time_s() - step_t0);   /* the hung-peer watchdog's yardstick */
        t->interval_steps++;
        t->interval_comm_s += rt_comm_take_exposed_s(t->comm);
        long epoch = (t->step - 1) / t->steps_per_epoch;
        if (t->step % t->run.log_every == 0 || t->step == t->total_steps) {
            read_scaler(t);
            double now = rt_time_s();
            double lr = rt_lr_at(&t->run.lr, t->step - 1), loss = t->interval_loss / t->interval_steps;
            double ips = t->interval_steps * t->global_batch / (now - t_interval);
            double comm_ms = t->comm ? 1e3 * t->interval_comm_s / t->interval_steps : NAN;
            rt_metrics_train(&t->metrics, &(rt_train_record){ .epoch = epoch, .step = t->step, .lr = lr,
                             .loss = loss, .images_per_s = ips, .comm_wait_ms = comm_ms,
                             .top1 = (double)t->interval_correct / ((double)t->interval_steps * t->global_batch),
                             .loss_scaling = has_scaler(t), .skipped_steps = (int64_t)t->scaler.skipped });
            rt_progress_update(&t->progress, t->step, epoch, loss, lr, ips, comm_ms);
            rt_tb_scalar(&t->tb, "train/loss", t->step, loss);
            rt_tb_scalar(&t->tb, "train/lr", t->step, lr);
            rt_tb_scalar(&t->tb, "train/top1", t->step,
                         (double)t->interval_correct / ((double)t->interval_steps * t->global_batch));
            rt_tb_scalar(&t->tb, "train/images_per_s", t->step, ips);
            t->interval_loss = 0, t->interval_correct = 0, t->interval_steps = 0, t_interval = now;
            t->interval_comm_s = 0;
        }
        int epoch_end = t->step % t->steps_per_epoch == 0, last = t->step == t->total_steps;
        int do_eval = should_eval(t, epoch_end, last), do_ckpt = should_checkpoint(t, epoch_end, last);
        if (do_eval || do_ckpt) {
            if (do_eval) {
                /* the epochs completed; a run measured in iterations may stop inside one */
                long done = epoch_end ? epoch + 1 : t->step / t->steps_per_epoch;
                trainer_evaluate(t, &last_loss, &last_top1, &last_top5);
                rt_metrics_eval(&t->metrics, done, t->step, last_loss, last_top1, last_top5,
                                rt_time_s() - t_start);
                rt_tb_scalar(&t->tb, "eval/loss", t->step, last_loss);
                rt_tb_scalar(&t->tb, "eval/top1", t->step, last_top1);
                rt_tb_scalar(&t->tb, "eval/top5", t->step, last_top5);
                if (epoch_end)
                    rt_progress_note(&t->progress, "epoch %ld: test loss %.4f  top-1 %.2f%%  top-5 %.2f%%", epoch + 1,
                                     last_loss, 100 * last_top1, 100 * last_top5);
                else
                    rt_progress_note(&t->progress, "step %ld: test loss %.4f  top-1 %.2f%%  top-5 %.2f%%", t->step,
                                     last_loss, 100 * last_top1, 100 * last_top5);
                if (rt_ema_on(&t->ema)) report_ema(t, done, t_start);
            }
            if (do_ckpt) save_checkpoint(t);
            t_interval = rt_time_s();
            rt_comm_take_exposed_s(t->comm);   /* evaluation's exchanges are not step time */
        }
        /* Ranks stop together: at the step where any of them got the signal. */
        int sig = t->comm ? (t->stop_votes ? (rt_stop_requested() ? rt_stop_requested() : SIGTERM) : 0)
                          : rt_stop_requested();
        if (sig && t->step < t->total_steps) {
            save_checkpoint(t);
            rt_progress_note(&t->progress, "stopped by signal %d at step %ld; resume with --resume", sig,
                             t->step);
            /* No rank exits before rank 0's checkpoint is on disk: a launcher kills the rest
             * of the job (mpirun: 1 s after the first rank's exit) as soon as one rank ends. */
            rt_comm_barrier(t->comm, "the checkpoint written at a stop signal");
            return 128 + sig;
        }
    }
    if (isnan(last_top1)) trainer_evaluate(t, &last_loss, &last_top1, &last_top5);
    char hash[RT_PARAMS_HASH_LEN + 1];
    if (m->device) m->device->download(&t->ctx, t->opt_state, t->n_state);
    read_scaler(t);
    rt_params_hash(t->ctx.params, m->n_params, hash);
    double wall_s = rt_time_s() - t_start;
    rt_metrics_summary(&t->metrics, &(rt_summary_record){ .step = t->step, .loss = last_loss, .top1 = last_top1,
                       .top5 = last_top5, .wall_s = wall_s, .params_hash = hash,
                       .loss_scaling = has_scaler(t), .skipped_steps = (int64_t)t->scaler.skipped });
    char wall[32];
    rt_progress_note(&t->progress, "final: test top-1 %.2f%%  top-5 %.2f%%  loss %.4f  after %ld steps  wall time %s  "
                     "params %s", 100 * last_top1, 100 * last_top5, last_loss, t->step,
                     rt_format_duration(wall_s, wall, sizeof wall), hash);
    if (rt_ema_on(&t->ema)) report_final_ema(t);
    return 0;
}

int rt_trainer_main(const rt_model *m, const rt_run_config *run, int argc, char **argv) {
    rt_trainer_choose_omp_policy(argv);   /* may re-execute this binary once (omp_policy.c) */
    /* Every TRAINC_* value, before anything reads one: a typo stops the run even where the op
     * that reads it never runs (not with --help or --help-env: those show what to set). */
    if (!rt_trainer_wants_help(argc, argv)) rt_env_check(RT_ENV_ANY_TRAINER);
    static trainer t;   /* large; lives for the whole process */
    t.m = m;
    t.run = *run;
    char default_out[512];
    snprintf(default_out, sizeof default_out, "runs/%s", m->name);
    /* The world first: a mistake every rank makes (a bad option) is then said once. */
    t.comm = rt_comm_init();
    rt_trainer_parse_args(&t.args, argv[0], default_out, argc, argv);
    if (t.args.print_spec) {
        if (rt_comm_rank(t.comm) == 0) fputs(m->spec_text, stdout);
        rt_comm_finalize(t.comm);
        return 0;
    }
    if (!m->device) {   /* precision.compute of the CPU ops, before init sizes their workspace */
        char why[256];
        if (rt_gemm_set_compute(run->cpu_compute, why, sizeof why) != 0)
            rt_die_hint("set precision { compute: FP32 } in the spec, or run on a CPU with avx512_bf16", "%s", why);
    }
    if (t.args.has_seed) t.run.seed = t.args.seed;
    if (t.args.epochs) t.run.epochs = t.run.lr.epochs = t.args.epochs, t.run.lr.iterations = 0;
    if (t.args.epochs) t.run.epochs = t.run.lr.epochs = t.args.epochs;
    if (t.args.max_decode_failures >= 0) t.run.max_decode_failures = t.args.max_decode_failures;
    t.rank = rt_comm_rank(t.comm);
    t.world = rt_comm_size(t.comm);
    t.global_batch = m->batch * t.world;
    if (t.args.eval || t.args.predict) {   /* no training: any world size evaluates the same */
        rt_comm_handshake(t.comm, m->spec_hash, 0);
        rt_comm_set_hang_timeout(t.comm, t.run.hang_timeout_s);
        int rc = t.args.eval ? trainer_run_eval(&t) : trainer_run_predict(&t);
        rt_comm_finalize(t.comm);
        return rc;
    }
    if (!t.comm && t.run.ranks > 1)
        rt_die_hint("launch with mpirun -np N (or srun -n N), or set parallel.ranks: 1 (or 0 for any) in the spec",
                    "the spec asks for %d ranks but this process runs alone", t.run.ranks);
    rt_comm_handshake(t.comm, m->spec_hash, t.run.ranks);
    rt_comm_set_hang_timeout(t.comm, t.run.hang_timeout_s);
    /* From here on a SIGTERM is a stop, not an end: Slurm's time-limit warning may come while
     * a requeued job still loads its data, and the run then stops after its first step with a
     * checkpoint instead of dying without one (the benchmark has no stop: it just ends). */
    if (!t.args.benchmark_steps) rt_install_stop_signals();
    trainer_load_data(&t);
    trainer_make_loader(&t, &t.train, &t.train_set, 1);
    trainer_make_loader(&t, &t.val, &t.val_set, 0);
    t.steps_per_epoch = rt_loader_steps_per_epoch(&t.train);
    if (t.steps_per_epoch < 1)
        rt_die_hint("use a smaller batch or more data", "the dataset (%ld samples) is smaller than one batch (%d)",
                    t.train_set.n, t.global_batch);
    t.run.lr.steps_per_epoch = t.steps_per_epoch;
    t.run.lr.global_batch = t.global_batch;   /* the LR scaling rule sees the global batch */
    if (t.run.lr.iterations > 0)   /* the epochs it touches, for this dataset's steps per epoch */
        t.run.epochs = t.run.lr.epochs = (int)((t.run.lr.iterations + t.steps_per_epoch - 1) / t.steps_per_epoch);
    rt_lr_validate(&t.run.lr, NULL);
    t.total_steps = rt_lr_total_steps(&t.run.lr);
    trainer_allocate(&t);
    m->init(t.ctx.params, t.ctx.buffers, t.run.seed);
    start_from_weights(&t);
    rt_ema_init(&t.ema, &t.run.ema, m->n_params, m->n_buffers, t.global_batch, t.run.epochs);
    rt_ema_reset(&t.ema, t.ctx.params, t.ctx.buffers);   /* torchvision copies the model at the start */
    t.ctx.training = 1;
    t.ctx.comm = t.comm;
    t.ctx.no_graph = t.args.no_graph;
    t.ctx.first_sample = (long)t.rank * m->batch;   /* rank r trains slice r of each global batch */
    /* A device model all-reduces its gradients on the device (NCCL) inside train_step. */
    if (!m->device) rt_comm_attach_grads(t.comm, t.ctx.grads, m->buckets, m->n_buckets, t.run.overlap);
    if (t.args.resume && t.rank == 0) resume(&t, t.args.resume);
    if (t.rank == 0)
        open_output(&t);
    else
        rt_metrics_off(&t.metrics), rt_progress_init(&t.progress, NULL, 0, 0);
    share_start_state(&t);
    if (m->device) m->device->upload(&t.ctx, &t.run, t.opt_state, t.n_state);
    if (has_scaler(&t)) {   /* a resumed run continues with the checkpoint's scale, on every rank */
        rt_comm_bcast(t.comm, &t.scaler, sizeof t.scaler, "the loss scale from rank 0");
        if (t.args.resume) {
            double st[3] = { t.scaler.scale, t.scaler.clean, t.scaler.skipped };
            m->device->loss_scaler(&t.ctx, st, 1);
        }
        read_scaler(&t);
    }
    int rc = t.args.benchmark_steps > 0 ? run_benchmark(&t) : train(&t);
    rt_progress_finish(&t.progress);
    rt_metrics_close(&t.metrics);
    rt_tb_close(&t.tb);
    rt_comm_finalize(t.comm);
    return rc;
}
