/* CUDA fusion pass: absorbs each ReLU into the op producing its input (conv/linear bias,
 * batch-norm apply, residual add) when it is that value's only consumer, then moves the
 * lifetimes the fused schedule needs and re-plans the arena. */
#include "emit_cuda.h"

#include <stdlib.h>

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "trainc: error: out of memory while fusing\n");
        exit(1);
    }
    return p;
}

/* Ops (other than flatten views) that read value v. */
static int consumers(const ir_net *net, int v) {
    int n = 0;
    for (int j = 0; j < net->n_ops; j++) {
        if (net->ops[j].kind == IR_FLATTEN) continue;
        for (int k = 0; k < net->ops[j].n_in; k++) n += net->alias[net->ops[j].in[k]] == v;
    }
    return n;
}

static cuda_fusion fusion_for(const ir_op *producer) {
    switch (producer->kind) {
    case IR_CONV: case IR_LINEAR: return producer->b_off >= 0 ? FUSE_BIAS_RELU : FUSE_NONE;
    case IR_BN: return FUSE_BN_RELU;
    case IR_ADD: return FUSE_ADD_RELU;
    default: return FUSE_NONE;
    }
}

/* Replays the backward schedule's first-writer rule (emit_c.c: the first consumer in
 * backward order writes a gradient, later ones add) for the inputs of every add. */
static void plan_add_gradients(cuda_fuse_plan *fp, const ir_net *net) {
    int L = net->n_ops, last = net->alias[L];
    int *written = xcalloc((size_t)L + 1, sizeof *written);
    for (int j = L - 1; j >= 0; j--) {
        const ir_op *op = &net->ops[j];
        if (op->kind == IR_FLATTEN) continue;
        for (int k = 0; k < op->n_in; k++) {
            int v = net->alias[op->in[k]];
            if (op->kind == IR_ADD) fp->add_assign[j * IR_MAX_INPUTS + k] = v != 0 && !written[v] && v != last;
            if (v != 0) written[v] = 1;
        }
    }
    free(written);
}

/* 16-bit activations: every activation, gradient and scratch tensor takes half the bytes
 * (rounded up to the plan's alignment); saved statistics and indices stay as planned. */
static void shrink_activations(ir_net *net, int act_bytes) {
    long a = net->align_bytes;
    for (int t = 0; t < net->n_tensors; t++) {
        ir_tensor *ts = &net->tensors[t];
        if (ts->kind == T_SAVED) continue;
        ts->bytes = (ts->bytes / 4 * act_bytes + a - 1) / a * a;
    }
}

void cuda_fuse(cuda_fuse_plan *fp, ir_net *net, int enable, int act_bytes) {
    int L = net->n_ops;
    if (act_bytes != 4) shrink_activations(net, act_bytes);
    fp->kind = xcalloc((size_t)L, sizeof *fp->kind);
    fp->relu_of = xcalloc((size_t)L, sizeof *fp->relu_of);
    fp->fused_into = xcalloc((size_t)L, sizeof *fp->fused_into);
    fp->add_assign = xcalloc((size_t)L * IR_MAX_INPUTS, sizeof *fp->add_assign);
    for (int i = 0; i < L; i++) fp->relu_of[i] = fp->fused_into[i] = -1;
    plan_add_gradients(fp, net);
    if (!enable) {
        if (act_bytes != 4) ir_replan(net);
        return;
    }
    /* Schedule steps as in plan.c: forward op i at i, backward op i at 2L - i. */
    #define FWD(i) (i)
    #define BWD(i) (2 * L - (i))
    int last = net->alias[L];
    for (int r = 0; r < L; r++) {
        const ir_op *relu = &net->ops[r];
        if (relu->kind != IR_RELU || r + 1 == last) continue;
        int v = net->alias[relu->in[0]];
        if (v == 0 || v == last || consumers(net, v) != 1) continue;
        int p = v - 1;
        cuda_fusion f = fusion_for(&net->ops[p]);
        if (f == FUSE_NONE) continue;
        fp->kind[p] = f;
        fp->relu_of[p] = r;
        fp->fused_into[r] = p;
        ir_tensor *relu_out = &net->tensors[net->act_of[r + 1]];
        ir_tensor *relu_grad = &net->tensors[net->grad_of[r + 1]];
        /* The fused forward writes the ReLU's output at the producer's step. */
        if (relu_out->first > FWD(p)) relu_out->first = FWD(p);
        if (f == FUSE_BN_RELU || f == FUSE_ADD_RELU) {
            /* The producer's own output and gradient are never materialized, and its
             * backward reads the ReLU's output (mask) and gradient instead. */
            net->tensors[net->act_of[v]].bytes = 0;
            net->tensors[net->grad_of[v]].bytes = 0;
            if (relu_out->last < BWD(p)) relu_out->last = BWD(p);
            if (relu_grad->last < BWD(p)) relu_grad->last = BWD(p);
        }
    }
    #undef FWD
    #undef BWD
    ir_replan(net);
}

void cuda_fuse_free(cuda_fuse_plan *fp) {
    free(fp->kind);
    free(fp->relu_of);
    free(fp->fused_into);
    free(fp->add_assign);
}
