/* BIN --eval CKPT [--data DIR] [--out DIR]: a checkpoint's weights evaluated on the validation
 * split without training, by the same evaluation the training loop runs (so the top-1 equals
 * the training run's evaluation at that step), on every backend and under mpirun (each rank
 * evaluates its slice of every batch). It prints loss, top-1 and top-5 and appends the same
 * "eval" record as metrics.jsonl's, with the checkpoint's step, path and spec hash, to
 * OUT/eval.jsonl (OUT: --out, else the run folder that holds the checkpoint). */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"
#include "trainer_internal.h"

/* What --eval and --predict read of a checkpoint: its weights and BN statistics, and the
 * EMA's where the spec keeps one. Loaded on rank 0 and broadcast; a damaged, foreign or
 * other-backend file is one message and exit 1. */
long trainer_load_weights(trainer *t, const char *path, int *has_ema, long *epoch) {
    const rt_model *m = t->m;
    double pos[2] = { 0, 0 };
    if (t->rank == 0) {
        rt_ckpt_section secs[4];
        int n = 0;
        secs[n++] = (rt_ckpt_section){ "params", t->ctx.params, (size_t)m->n_params * sizeof(float) };
        if (m->n_buffers)
            secs[n++] = (rt_ckpt_section){ "buffers", t->ctx.buffers, (size_t)m->n_buffers * sizeof(float) };
        if (rt_ema_on(&t->ema)) {
            secs[n++] = (rt_ckpt_section){ "ema_params", t->ema.params, (size_t)m->n_params * sizeof(float) };
            if (m->n_buffers)
                secs[n++] = (rt_ckpt_section){ "ema_buffers", t->ema.buffers, (size_t)m->n_buffers * sizeof(float) };
        }
        int64_t step = 0, ep = 0;
        rt_err err;
        if (rt_ckpt_load(path, m->spec_hash, &step, &ep, secs, n, &err) != RT_OK) {
            /* the loader's hints speak of --resume; here the fix is another file */
            const char *hint = "the file is damaged or not a checkpoint: pass another one of the run "
                               "(OUT/checkpoints/ckpt-<step>.bin)";
            if (strstr(err.msg, "bytes, this trainer"))
                hint = "pass a checkpoint written by a trainer of this spec built for the same backend "
                       "(CPU and CUDA lay the parameters out differently)";
            else if (err.code == RT_E_MISMATCH)
                hint = "pass a checkpoint written by a trainer of this spec (`BIN --print-spec` shows it)";
            rt_die_hint(hint, "%s", err.msg);
        }
        pos[0] = (double)step, pos[1] = (double)ep;
    }
    rt_comm_bcast(t->comm, pos, sizeof pos, "the checkpoint's step from rank 0");
    rt_comm_bcast(t->comm, t->ctx.params, (size_t)m->n_params * sizeof(float), "the parameters from rank 0");
    rt_comm_bcast(t->comm, t->ctx.buffers, (size_t)m->n_buffers * sizeof(float), "the buffers from rank 0");
    if (rt_ema_on(&t->ema)) {
        rt_comm_bcast(t->comm, t->ema.params, (size_t)m->n_params * sizeof(float), "the EMA weights from rank 0");
        rt_comm_bcast(t->comm, t->ema.buffers, (size_t)m->n_buffers * sizeof(float), "the EMA statistics from rank 0");
    }
    *has_ema = rt_ema_on(&t->ema);
    *epoch = (long)pos[1];
    return (long)pos[0];
}

void trainer_run_dir(const trainer *t, const char *ckpt, char *out, size_t cap) {
    if (t->args.out_given) {
        snprintf(out, cap, "%s", t->args.out_dir);
        return;
    }
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", ckpt);
    char *dir = dirname(buf);
    size_t n = strlen(dir);
    if (n >= 11 && !strcmp(dir + n - 11, "checkpoints") && (n == 11 || dir[n - 12] == '/')) {
        if (n == 11) snprintf(out, cap, ".");
        else dir[n - 12] = '\0', snprintf(out, cap, "%s", n == 12 ? "/" : dir);
    } else {
        snprintf(out, cap, "%s", dir);
    }
}

static void write_record(rt_metrics *mx, const char *event, const trainer *t, long epoch, long step, double loss,
                         double top1, double top5, double wall_s) {
    rt_json *j = &mx->line;
    rt_json_begin(j);
    rt_json_str(j, "event", event);
    rt_json_int(j, "epoch", epoch);
    rt_json_int(j, "step", step);
    rt_json_num(j, "loss", loss);
    rt_json_num(j, "top1", top1);
    rt_json_num(j, "top5", top5);
    rt_json_num(j, "wall_s", wall_s);
    rt_json_str(j, "spec_hash", t->m->spec_hash);
    rt_json_str(j, "checkpoint", t->args.eval);
    rt_json_int(j, "ranks", t->world);
    rt_json_end(j);
    rt_metrics_write(mx, j);
}

int trainer_run_eval(trainer *t) {
    const rt_model *m = t->m;
    double t0 = rt_time_s();
    trainer_load_data(t);
    trainer_make_loader(t, &t->val, &t->val_set, 0);
    trainer_allocate(t);
    m->init(t->ctx.params, t->ctx.buffers, t->run.seed);   /* every value defined before the load */
    rt_ema_init(&t->ema, &t->run.ema, m->n_params, m->n_buffers, t->global_batch, t->run.epochs);
    int has_ema;
    long epoch, step = trainer_load_weights(t, t->args.eval, &has_ema, &epoch);
    t->ctx.training = 0;
    t->ctx.comm = t->comm;
    t->ctx.no_graph = t->args.no_graph;
    if (m->device) m->device->upload(&t->ctx, &t->run, t->opt_state, t->n_state);
    rt_metrics mx;
    if (t->rank == 0) {
        char dir[4096];
        trainer_run_dir(t, t->args.eval, dir, sizeof dir);
        rt_err err;
        /* a log of its own, appended to: every record is kept (the step bound is no bound) */
        if (rt_metrics_open(&mx, dir, "eval.jsonl", INT64_MAX, &err) != RT_OK) rt_die_err(&err);
    } else {
        rt_metrics_off(&mx);
    }
    double loss, top1, top5;
    trainer_evaluate(t, &loss, &top1, &top5);
    write_record(&mx, "eval", t, epoch, step, loss, top1, top5, rt_time_s() - t0);
    if (t->rank == 0)
        printf("%s: checkpoint %s (step %ld): test loss %.4f  top-1 %.2f%%  top-5 %.2f%%  (%ld images)\n", m->name,
               t->args.eval, step, loss, 100 * top1, 100 * top5, t->val_set.n);
    if (has_ema) {
        trainer_evaluate_ema(t, &loss, &top1, &top5);
        write_record(&mx, "eval_ema", t, epoch, step, loss, top1, top5, rt_time_s() - t0);
        if (t->rank == 0)
            printf("  EMA of the weights: test loss %.4f  top-1 %.2f%%  top-5 %.2f%%\n", loss, 100 * top1, 100 * top5);
    }
    if (t->rank == 0) printf("record appended to %s\n", mx.path);
    rt_metrics_close(&mx);
    return 0;
}
