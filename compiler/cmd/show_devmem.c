/* `trainc show --device-memory GiB SPEC`: the largest per-rank batch whose planned device
 * memory fits a GPU with GiB free, with the CUDA trainer's own accounting (rt_devmem.h, the
 * formula its start-up check uses) over the arena re-planned at each candidate batch, as
 * `trainc build --backend cuda [--layout nhwc]` plans it (fused, in the spec's precision). */
#include "show.h"

#include <stdlib.h>
#include <string.h>

#include "ir_nhwc.h"
#include "lower.h"
#include "rt_devmem.h"
#include "rt_env.h"

typedef struct {
    const sema_result *res;
    build_options opt;    /* cuda, fused, the layout asked for */
    int act_bytes;
    size_t workspace;     /* cuDNN workspace bound: the cap, plus the 16-bit weight gradient */
    long n_state_per_param;
} devmem_ctx;

/* The arena of res's net lowered at batch b (planned for its forward alone, as build_eval.c
 * plans the evaluation resolution's), or 0 if it cannot be. */
static long arena_of(const sema_result *res, const build_options *opt, int forward_only, int b) {
    schedule s;
    int ok = lower(&s, res, opt, b, "") == 0;
    if (ok && forward_only) ir_plan_forward_only(&s.net);
    long bytes = ok ? s.net.arena_bytes : 0;
    schedule_free(&s);
    return bytes;
}

/* The arena of the evaluation resolution's schedule at batch b (data.val's crop other than
 * the input: the trainer's arena is the larger of it and the training one's), or 0. */
static long eval_arena_at(const devmem_ctx *d, int b) {
    if (!d->res->has_eval_net) return 0;
    sema_result at_eval = *d->res;
    at_eval.net = d->res->eval_net;
    return arena_of(&at_eval, &d->opt, 1, b);
}

/* What the trainer's start-up check demands at batch b; 0 if the net cannot be compiled. */
static size_t need_at(const devmem_ctx *d, int b, rt_devmem *m_out) {
    schedule s;
    if (lower(&s, d->res, &d->opt, b, "") != 0) {   /* compiled at batch 1 already */
        schedule_free(&s);
        return 0;
    }
    const ir_net *net = &s.net;
    /* evaluation at data.val's crop shares the arena and the input buffers: the larger counts */
    long arena = net->arena_bytes, eval_arena = eval_arena_at(d, b);
    long image = (long)net->in_c * net->in_h * net->in_w;
    long eval_image = (long)net->in_c * d->res->run.eval_h * d->res->run.eval_w;
    if (eval_arena > arena) arena = eval_arena;
    if (eval_image > image) image = eval_image;
    rt_devmem m = rt_devmem_plan(net->n_params, net->n_buffers, d->n_state_per_param * net->n_params, d->act_bytes,
                                 arena, b, image, net->classes, d->workspace);
    if (net->input_float) rt_devmem_float_input(&m, image, net->mixed_targets ? 3 : 1);
    if (d->opt.nhwc) rt_devmem_channels_last(&m, net->n_params, d->act_bytes);
    rt_devmem_op_scratch(&m, ir_partial_sum_channels(net), d->opt.nhwc);
    m.fixed += ir_bn_fold_scratch_bytes(net);   /* the trainer's rt_cuda_model.bn_fold_bytes */
    schedule_free(&s);
    if (m_out) *m_out = m;
    return m.fixed + m.per_sample * (size_t)b;
}

/* The workspace the trainer may take: TRAINC_CUDNN_WORKSPACE_MB (default 1024) when the net
 * has a convolution, plus the largest conv weight in 16 bits (its gradient's scratch).
 * Channels-last, a linear on a tensor with positions runs as a conv (emit_cuda.c). */
static size_t workspace_bound(const ir_net *net, int act_bytes, int nhwc) {
    size_t cap = (size_t)rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB) << 20;
    long biggest = 0;
    int convs = 0, c, h, w;
    for (int i = 0; i < net->n_ops; i++)
        if (net->ops[i].kind == IR_CONV ||
            (nhwc && net->ops[i].kind == IR_LINEAR && ir_nhwc_positions(net, net->ops[i].in[0], &c, &h, &w))) {
            convs = 1;
            if (net->ops[i].w_count > biggest) biggest = net->ops[i].w_count;
        }
    return convs ? cap + (act_bytes == 4 ? 0 : ((size_t)biggest * 2 + 255) / 256 * 256) : 0;
}

int show_device_memory(FILE *out, const char *path, const sema_result *res, double gib, int nhwc) {
    const run_config *r = &res->run;
    if (!r->has_run) {
        fprintf(stderr, "%s: error: the spec has no 'solver' or 'data.train', so it has no trainer to plan\n"
                        "  hint: a model spec is planned through a run spec that extends it\n", path);
        return 1;
    }
    devmem_ctx d = { res, { .backend = BACKEND_CUDA, .fuse = 1, .nhwc = nhwc }, r->compute == RUN_BF16 || r->compute == RUN_FP16 ? 2 : 4, 0, 0 };
    schedule at1;   /* the net at batch 1: reports (once) a net that cannot be compiled */
    if (lower(&at1, res, &d.opt, 1, path) != 0) {
        schedule_free(&at1);
        return 1;
    }
    d.workspace = workspace_bound(&at1.net, d.act_bytes, nhwc);
    schedule_free(&at1);
    d.n_state_per_param = r->optimizer == RUN_OPT_ADAMW || r->optimizer == RUN_OPT_LAMB || r->optimizer == RUN_OPT_ADADELTA ? 2
                          : r->optimizer == RUN_OPT_RMSPROP ? 1 + (r->momentum != 0)
                          : r->optimizer == RUN_OPT_ADAGRAD ? 1 : r->momentum != 0;
    size_t total = (size_t)(gib * 1073741824.0);
    size_t avail = total > RT_DEVMEM_RESERVE ? total - RT_DEVMEM_RESERVE : 0;
    /* need grows with the batch: double to an upper bound, then bisect */
    int lo = 0, hi = 1;
    const int limit = 1 << 22;
    while (hi < limit && need_at(&d, hi, NULL) <= avail) lo = hi, hi *= 2;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (need_at(&d, mid, NULL) <= avail) lo = mid;
        else hi = mid;
    }
    static const char *const names[] = { "FP32", "TF32", "FP16", "BF16" };
    int spec_b = (int)r->train.batch_per_rank;
    rt_devmem m = { 0, 0 };
    size_t spec_need = need_at(&d, spec_b, &m);
    fprintf(out, "device memory of the CUDA trainer (%s, fused%s), as its start-up check counts it\n", names[r->compute],
            nhwc ? ", channels-last" : "");
    fprintf(out, "  device            %.2f GiB free, %.0f MiB kept back for the CUDA context: %.1f MiB usable\n", gib,
            RT_DEVMEM_RESERVE / 1048576.0, avail / 1048576.0);
    fprintf(out, "  fixed             %.1f MiB: parameters, gradients, optimizer state, batch-norm buffers%s%s, "
                 "cuDNN workspace up to %.0f MiB\n",
            m.fixed / 1048576.0, d.act_bytes == 4 ? "" : nhwc ? ", 16-bit weight copies (NCHW and channels-last)" : ", 16-bit weight copy",
            nhwc ? ", per-channel partial sums" : "", d.workspace / 1048576.0);
    fprintf(out, "  per sample        %.2f MiB at batch %d: activation arena, batch buffers%s\n",
            m.per_sample / 1048576.0, spec_b, nhwc ? "" : ", per-channel partial sums");
    if (res->has_eval_net)
        fprintf(out, "  evaluation        at %lldx%lld (data.val's crop) by a forward of its own, sharing the arena "
                     "and the batch buffers: counted as the larger of the two (%.1f MiB training, %.1f MiB "
                     "evaluation arena at batch %d)\n",
                (long long)r->eval_h, (long long)r->eval_w, arena_of(res, &d.opt, 0, spec_b) / 1048576.0,
                eval_arena_at(&d, spec_b) / 1048576.0, spec_b);
    fprintf(out, "  spec batch        %d per rank needs %.1f MiB: %s\n", spec_b, spec_need / 1048576.0,
            spec_need <= avail ? "fits" : "does not fit");
    if (lo == 0) {
        fprintf(out, "  largest batch     none: batch 1 needs %.1f MiB\n", need_at(&d, 1, NULL) / 1048576.0);
    } else if (lo >= limit) {
        fprintf(out, "  largest batch     at least %d per rank\n", lo);
    } else {
        fprintf(out, "  largest batch     %d per rank (needs %.1f MiB; %d would need %.1f MiB)\n", lo,
                need_at(&d, lo, NULL) / 1048576.0, lo + 1, need_at(&d, lo + 1, NULL) / 1048576.0);
    }
    return 0;
}
