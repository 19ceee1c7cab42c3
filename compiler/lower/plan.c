/* Autodiff schedule and static memory plan: which tensors the forward pass, the loss and
 * the reverse-order backward pass need, how long each lives, and where it sits in one arena. */
#include "ir.h"
#include "rt_ops.h"   /* attention_sdpa_extra_elems */

#include <stdlib.h>
#include <string.h>

const ir_op_info ir_ops[] = {
#define IR_INFO(kind, name, in, out, sums, wclass, bclass) { name, in, out, sums, wclass, bclass },
    IR_OPS(IR_INFO)
#undef IR_INFO
};
_Static_assert(sizeof ir_ops / sizeof ir_ops[0] == IR_OP_COUNT, "ir_ops: one entry per op kind");

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "error: out of memory while planning\n");
        exit(1);
    }
    return p;
}

long ir_value_elems(const ir_net *net, int value) {
    if (value == 0) return (long)net->batch * net->in_c * net->in_h * net->in_w;
    const ir_op *op = &net->ops[value - 1];
    return (long)net->batch * op->c * op->h * op->w;
}

/* Backward needs the op's own output (a fused ReLU masks with it too, unless it reads its
 * bitmask instead). */
static int backward_reads_output(const ir_op *op) {
    /* (a bn applied in the next conv's prologue recomputes its ReLU from its input) */
    return ir_ops[op->kind].backward_reads_output || (op->act && !op->relu_mask && !op->bn_in_conv);
}

/* A max pooling with the bn before it applied inside (lower.c choose_bn_pool; pool_bn is set
 * only after ir_build's first plan, so the bn's flag is asked too): its argmax is a byte an
 * element, and its backward is that bn's. */
static int pool_folded(const ir_net *net, const ir_op *op) {
    return op->kind == IR_MAXPOOL && op->pool_bn >= 0 && net->ops[op->pool_bn].bn_in_pool;
}

/* A 1x1 conv whose output's bn backward is folded through it (fuse_bn_fold.c): that bn's
 * backward, inside the add's, reads neither the conv's output nor its gradient. (The first
 * plan, ir_build's, comes before lower sets bn_fold and folded_in: an add is never op 0.) */
static int conv_folded(const ir_net *net, int c) {
    int a = net->ops[c].folded_in;
    return a > 0 && a < net->n_ops && net->ops[a].kind == IR_ADD && net->ops[a].bn_fold == c;
}

static long saved_bytes(const ir_net *net, const ir_op *op) {
    switch (op->kind) {
    /* mean and inv std (FP32); applied inside its conv, then that conv's prologue's scale and bias
     * (activation type, fuse_conv_bn.c) */
    case IR_BN: return 2L * op->c * (long)sizeof(float) + (op->bn_in_conv ? 2L * op->c * net->act_bytes : 0);
    case IR_LN: return 2L * net->batch * op->h * op->w * (long)sizeof(float);
    /* the argmax: int32 positions; with the bn before it applied inside (pool_bn), the window
     * offsets, a byte each, that only that bn's backward reads (lower.c choose_bn_pool) */
    case IR_MAXPOOL: return (long)net->batch * op->c * op->h * op->w * (pool_folded(net, op) ? 1L : (long)sizeof(int32_t));
    case IR_LRN: return (long)net->batch * op->c * op->h * op->w * (long)sizeof(float);
    /* attention: per image the projected queries, keys and values [T, 3C], the heads' outputs
     * before the out-projection [T, C] and each row's log-sum-exp [heads, T] (FP32), from which
     * the backward recomputes the attention weights block by block */
    case IR_ATTENTION: {   /* T = H*W: a token sequence has W 1, Swin's windowed attention a map */
        long t = (long)op->h * op->w;
        return ((long)net->batch * (t * op->c * 4 + (long)op->heads * t) +
                (op->attn_sdpa ? attention_sdpa_extra_elems(net->batch, op->c, (int)t) : 0)) * (long)sizeof(float);
    }
    case IR_CONV: case IR_LINEAR: case IR_RELU: case IR_GELU: case IR_ACTIVATION: case IR_AVGPOOL: case IR_GAP: case IR_DROPOUT:
    case IR_ADD: case IR_CONCAT: case IR_MUL: case IR_CHANNEL_SHUFFLE: case IR_CHANNEL_SLICE: case IR_FLATTEN: case IR_LAYER_SCALE: case IR_STOCHASTIC_DEPTH: case IR_OP_COUNT:
    case IR_LEARNED: case IR_SPACE_TO_DEPTH: case IR_STOP_GRADIENT:
        return 0;   /* backward needs nothing beyond activations */
    }
    return 0;
}

static int add_tensor(ir_net *net, ir_tensor_kind kind, int op, long bytes, int first, int last) {
    ir_tensor *t = &net->tensors[net->n_tensors];
    t->kind = kind;
    t->op = op;
    t->bytes = (bytes + net->align_bytes - 1) / net->align_bytes * net->align_bytes;
    t->first = first;
    t->last = last;
    t->offset = -1;
    return net->n_tensors++;
}

static void extend(ir_tensor *t, int step) {
    if (step < t->first) t->first = step;
    if (step > t->last) t->last = step;
}

/* Greedy placement, largest first: each tensor goes at the lowest offset where it overlaps
 * no already-placed tensor that is live at the same time. */
static void assign_offsets(ir_net *net) {
    int n = net->n_tensors;
    int *order = xcalloc((size_t)n, sizeof *order);
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++)   /* insertion sort: stable, deterministic */
        for (int j = i; j > 0 && net->tensors[order[j]].bytes > net->tensors[order[j - 1]].bytes; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    long peak = 0, naive = 0;
    for (int k = 0; k < n; k++) {
        ir_tensor *t = &net->tensors[order[k]];
        naive += t->bytes;
        long offset = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (int q = 0; q < k; q++) {
                const ir_tensor *o = &net->tensors[order[q]];
                int live_together = o->first <= t->last && t->first <= o->last;
                int overlap = offset < o->offset + o->bytes && o->offset < offset + t->bytes;
                if (live_together && overlap) {
                    offset = o->offset + o->bytes;
                    moved = 1;
                }
            }
        }
        t->offset = offset;
        if (offset + t->bytes > peak) peak = offset + t->bytes;
    }
    net->arena_bytes = peak > 0 ? peak : net->align_bytes;
    net->arena_naive_bytes = naive;
    free(order);
}

/* Whether some op after op j reads value v. */
static int consumed_after(const ir_net *net, int v, int j) {
    for (int c = j + 1; c < net->n_ops; c++)
        for (int k = 0; k < net->ops[c].n_in; k++)
            if (net->ops[c].kind != IR_FLATTEN && net->alias[net->ops[c].in[k]] == v) return 1;
    return 0;
}
/* Every consumer of x other than op j comes before op `before` in the schedule. */
static int others_before(const ir_net *net, int x, int j, int before) {
    for (int c = 0; c < net->n_ops; c++) {
        if (c == j || net->ops[c].kind == IR_FLATTEN) continue;
        for (int k = 0; k < net->ops[c].n_in; k++)
            if (net->alias[net->ops[c].in[k]] == x && c >= before) return 0;
    }
    return 1;
}
/* Whether the backward of value v's producer masks v's gradient in place (a ReLU fused into
 * an add or a linear, emit_cpu.c; only the CPU schedule shares add gradients): any other value
 * sharing that buffer sees the change. */
static int masks_own_grad(const ir_net *net, int v) {
    const ir_op *p = &net->ops[v - 1];
    return p->act && (p->kind == IR_ADD || p->kind == IR_LINEAR);
}
/* Whether values x and y, handed one gradient buffer by the adds jx and jy, can share it when
 * neither is an add that handed it to the other: each producer reads the buffer before the
 * other value's other consumers add to it and before the other's producer masks it (the
 * producer of one runs later in the forward than the other's). Since a value's own other
 * consumers add to the buffer before its producer reads it, at most one of the two may have
 * other consumers. */
static int may_share(const ir_net *net, int x, int jx, int y, int jy) {
    return x != y && others_before(net, x, jx, y - 1) && others_before(net, y, jy, x - 1) &&
           (!masks_own_grad(net, x) || x < y) && (!masks_own_grad(net, y) || y < x);
}
/* Copy elision for sums (residual adds): an add's input gradient is the add's output
 * gradient itself, so an input whose gradient the add writes first (no later consumer) can
 * take over that buffer instead of receiving a copy of it (in a ResNet, 2 copies of a whole
 * activation per block). An add whose own gradient already sits in a later add's buffer
 * hands that buffer on (a chain: in a ResNet, block after block). Every pair of values in
 * one buffer must pass may_share(), except an add and the values it handed the buffer to
 * (those read it after the add's backward, as they should). Returns per value the add value
 * that handed it its gradient buffer, or 0. */
static int *share_add_gradients(ir_net *net) {
    int L = net->n_ops, last = net->alias[L];
    int *taken = xcalloc((size_t)L + 1, sizeof *taken);
    int *root = xcalloc((size_t)L + 1, sizeof *root);        /* the value owning the buffer */
    int *via = xcalloc((size_t)L + 1, sizeof *via);          /* the add op that handed it on */
    int *handed_down = xcalloc((size_t)L + 1, sizeof *handed_down);
    for (int j = L - 1; j >= 0; j--) {
        const ir_op *op = &net->ops[j];
        int a = j + 1;
        if (op->kind != IR_ADD || net->dead[j]) continue;
        int r = taken[a] ? root[a] : a;
        /* a and the adds above it hand the buffer down to this add's inputs */
        memset(handed_down, 0, sizeof *handed_down * ((size_t)L + 1));
        for (int p = a; p; p = taken[p]) handed_down[p] = 1;
        for (int k = 0; k < op->n_in; k++) {
            int v = net->alias[op->in[k]], ok = v != 0 && ir_route(net, j, k) != GRAD_NONE && v != last &&
                                                !ir_is_head_value(net, v) && !taken[v] && !consumed_after(net, v, j);
            for (int x = 1; ok && x <= L; x++)
                if (root[x] == r && !handed_down[x]) ok = may_share(net, x, via[x], v, j);
            if (!ok) continue;
            net->route[j * IR_MAX_INPUTS + k] = GRAD_SHARED;
            ir_tensor *mine = &net->tensors[net->grad_of[v]], *owner = &net->tensors[net->grad_of[r]];
            extend(owner, mine->first);
            extend(owner, mine->last);
            mine->bytes = 0;
            taken[v] = a, root[v] = r, via[v] = j;
        }
    }
    /* callers want the buffer's owner */
    for (int v = 1; v <= L; v++) taken[v] = root[v];
    free(root);
    free(via);
    free(handed_down);
    return taken;
}

/* Whether the ReLU of add j, which computes a bn (ir_op.bn_in), can mask its gradient inside
 * that bn's backward: the add's backward then does nothing, because every input's gradient
 * buffer is the add's own (GRAD_SHARED) or absent; the bn's backward runs next and masks the
 * shared buffer in place before any other reader sees it. */
static int mask_fits_bn(const ir_net *net, int j) {
    for (int k = 0; k < net->ops[j].n_in; k++)
        if (ir_route(net, j, k) != GRAD_SHARED && ir_route(net, j, k) != GRAD_NONE) return 0;
    return 1;
}

/* Which ops run no backward (ir_net.dead): walking back from the loss heads, a value is fed
 * when a live reader sends it a gradient; a stop_gradient sends none, and an op whose output
 * is never fed is dead and sends none either. Views pass their readers' gradients to their
 * root. */
static void mark_dead(ir_net *net) {
    int L = net->n_ops;
    char *fed = xcalloc((size_t)L + 1, 1);
    fed[net->alias[L]] = 1;
    for (int h = 0; h < net->n_heads; h++) fed[net->alias[net->heads[h].value]] = 1;
    for (int j = L - 1; j >= 0; j--) {
        const ir_op *op = &net->ops[j];
        if (op->kind == IR_FLATTEN) continue;
        net->dead[j] = !fed[j + 1];
        if (net->dead[j] || op->kind == IR_STOP_GRADIENT) continue;
        for (int k = 0; k < op->n_in; k++) fed[net->alias[op->in[k]]] = 1;
    }
    free(fed);
}

void ir_plan(ir_net *net) {
    int L = net->n_ops, values = L + 1;
    /* per op at most: act, grad, saved, scratch, mask and work tensors */
    net->tensors = xcalloc((size_t)(6 * L + 4), sizeof *net->tensors);
    net->mask_of = xcalloc((size_t)L, sizeof(int));
    net->act_of = xcalloc((size_t)values, sizeof(int));
    net->grad_of = xcalloc((size_t)values, sizeof(int));
    net->saved_of = xcalloc((size_t)L, sizeof(int));
    net->work_of = xcalloc((size_t)L, sizeof(int));
    net->alias = xcalloc((size_t)values, sizeof(int));
    net->scratch_of = xcalloc((size_t)L * IR_MAX_INPUTS, sizeof(int));
    net->route = xcalloc((size_t)L * IR_MAX_INPUTS, sizeof *net->route);
    if (net->act_bytes == 0) net->act_bytes = (int)sizeof(float);
    for (int s = 0; s < L * IR_MAX_INPUTS; s++) net->scratch_of[s] = -1;
    for (int v = 0; v < values; v++) net->alias[v] = v, net->act_of[v] = net->grad_of[v] = -1;
    for (int i = 0; i < L; i++) net->mask_of[i] = -1;
    for (int i = 0; i < L; i++)
        if (net->ops[i].kind == IR_FLATTEN) net->alias[i + 1] = net->alias[net->ops[i].in[0]];
    net->dead = net->forward_only ? NULL : xcalloc((size_t)L, sizeof(int));
    if (net->dead) mark_dead(net);

    const int loss_step = L;
    #define FWD(i) (i)
    #define BWD(i) (2 * L - (i))
    int last_value = net->alias[L];
    /* Activations: produced by their op's forward step. */
    for (int i = 0; i < L; i++) {
        const ir_op *op = &net->ops[i];
        if (op->kind == IR_FLATTEN) continue;
        if (!op->into_add && !op->bn_in_pool) {   /* a bn computed by the add or the pooling after it has no output tensor */
            int t = add_tensor(net, T_ACT, i, ir_value_elems(net, i + 1) * (long)net->act_bytes, FWD(i), FWD(i));
            net->act_of[i + 1] = t;
            if (backward_reads_output(op) && !net->forward_only && !net->dead[i]) extend(&net->tensors[t], BWD(i));
        }
        long sb = saved_bytes(net, op);   /* written by the forward (the add's, into_add), so planned in both */
        int written = op->into_add ? FWD(i + 1) : FWD(i);
        net->saved_of[i] = sb ? add_tensor(net, T_SAVED, i, sb, FWD(i), net->forward_only ? written : BWD(i)) : -1;
        /* attention's backward: the gradients of its queries, keys, values and heads' outputs,
         * [N, T, 4C] FP32 (windowed: and its windows' score gradients; cuDNN's: 16-bit copies),
         * live for that step alone */
        net->work_of[i] = op->kind == IR_ATTENTION && !net->forward_only
                              ? add_tensor(net, T_SCRATCH, i,
                                           ((long)net->batch * op->h * op->w *
                                                ((long)op->c * 4 + (long)op->heads * op->window * op->window) +
                                            (op->attn_sdpa ? attention_sdpa_extra_elems(net->batch, op->c, op->h * op->w) : 0)) *
                                               (long)sizeof(float),
                                           BWD(i), BWD(i))
                              : -1;
        /* a conv with the previous bn in its prologue (fuse_conv_bn.c): where cuDNN refuses its
         * weight gradient's graph, the prologue's output is recomputed here for the unfused one
         * (the bn's output tensor lives only as far as this conv's forward, which writes it
         * only where cuDNN refuses the forward's graph) */
        if (op->conv_bn == IR_CONV_BN_SBR && !net->forward_only)
            net->work_of[i] = add_tensor(net, T_SCRATCH, i, ir_value_elems(net, op->in[0]) * (long)net->act_bytes, BWD(i),
                                         BWD(i));
    }
    /* ReLU bitmasks (lower.c): written by the op's forward, read by its backward; one bit an
     * element. The evaluation's forward-only plan has none (its forward writes none). */
    for (int i = 0; i < L && !net->forward_only; i++)
        if (net->ops[i].relu_mask)
            net->mask_of[i] = add_tensor(net, T_MASK, i, (ir_value_elems(net, i + 1) + 7) / 8, FWD(i), BWD(i));
    /* The logits outlive the step: the trainer reads them after it for the training top-1
     * (rt_model.logits). Ending their life at the loss let backward tensors overwrite them. */
    net->tensors[net->act_of[last_value]].last = net->forward_only ? loss_step : BWD(0);
    /* An auxiliary head's logits live until its loss reads them (the main's, above, longer). */
    for (int h = 1; h < net->n_heads && !net->forward_only; h++)
        extend(&net->tensors[net->act_of[net->alias[net->heads[h].value]]], loss_step);
    /* Gradients: written first by the last consumer's backward (or the loss), read last by
     * the producer's backward. */
    for (int i = 0; i < L && !net->forward_only; i++) {
        if (net->ops[i].kind == IR_FLATTEN || net->ops[i].kind == IR_STOP_GRADIENT) continue;   /* no reader writes it */
        if (net->ops[i].bn_in_pool) continue;   /* its backward gathers dy from the pooling's gradient */
        int t = add_tensor(net, T_GRAD, i, ir_value_elems(net, i + 1) * (long)net->act_bytes, BWD(i), BWD(i));
        net->grad_of[i + 1] = t;
    }
    for (int h = 0; h < net->n_heads && !net->forward_only; h++)   /* each head's loss writes its gradient */
        extend(&net->tensors[net->grad_of[net->alias[net->heads[h].value]]], loss_step);
    if (!net->forward_only) extend(&net->tensors[net->grad_of[last_value]], loss_step);
    /* Consumers extend what they read, and each input's gradient gets its route: the first
     * consumer in backward order writes it (the loss heads write their logits' gradients first),
     * later ones add. An add adds straight from dout; a conv adds its input gradient in place
     * (rt_conv_shape.din_add: the CPU op, or cuDNN with beta = 1); any other op writes a
     * scratch tensor, live for one backward step, that is then accumulated. */
    int *grad_written = xcalloc((size_t)values, sizeof(int));
    for (int j = L - 1; j >= 0; j--) {
        const ir_op *op = &net->ops[j];
        if (op->kind == IR_FLATTEN) continue;
        for (int k = 0; k < op->n_in; k++) {
            int v = net->alias[op->in[k]];
            if (v == 0) {
                continue;   /* the input data needs no gradient (GRAD_NONE) */
            }
            /* a bn inside this add: the add reads the bn's input instead */
            int read = net->act_of[v] >= 0 ? v : net->alias[net->ops[v - 1].in[0]];
            if (read) extend(&net->tensors[net->act_of[read]], FWD(j));
            ir_tensor *act = net->act_of[v] >= 0 ? &net->tensors[net->act_of[v]] : NULL;
            /* no backward (the plan's, a stop's or a dead op's): no gradient, no route */
            if (net->forward_only || op->kind == IR_STOP_GRADIENT || net->dead[j]) continue;
            if (op->conv_bn == IR_CONV_BN_SBR && k == 0)   /* its backward reads the bn's input, not its output */
                extend(&net->tensors[net->act_of[net->alias[net->ops[v - 1].in[0]]]], BWD(j));
            else if (ir_ops[op->kind].backward_reads_input && (k == 0 || op->kind == IR_MUL) &&
                     !(op->kind == IR_BN && conv_folded(net, v - 1)))   /* a folded bn3 reads no x */
                extend(act, BWD(j));   /* never a fused bn; mul reads both its inputs */
            if (net->ops[v - 1].kind == IR_STOP_GRADIENT) continue;   /* GRAD_NONE: it passes none back */
            if (pool_folded(net, op)) {   /* no backward: the bn's reads this pooling's gradient and argmax */
                extend(&net->tensors[net->grad_of[j + 1]], BWD(v - 1));
                extend(&net->tensors[net->saved_of[j]], BWD(v - 1));
                continue;
            }
            extend(&net->tensors[net->grad_of[v]], BWD(j));
            ir_grad_route *route = &net->route[j * IR_MAX_INPUTS + k];
            if (!grad_written[v] && v != last_value && !ir_is_head_value(net, v)) *route = GRAD_WRITE;
            else if (op->kind == IR_ADD || op->kind == IR_CONV) *route = GRAD_ADD;
            else {
                *route = GRAD_SCRATCH;
                net->scratch_of[j * IR_MAX_INPUTS + k] =
                    add_tensor(net, T_SCRATCH, j, ir_value_elems(net, v) * (long)net->act_bytes, BWD(j), BWD(j));
            }
            grad_written[v] = 1;
        }
    }
    free(grad_written);
    /* An add whose backward runs its bns' (add_bwd_fused) writes their inputs' gradients at
     * its own backward step, before theirs. */
    for (int j = 0; j < L && !net->forward_only; j++) {
        if (!net->ops[j].add_bwd_fused) continue;
        for (int k = 0; k < net->ops[j].n_in; k++) {
            int v = net->ops[j].in[k];
            if (v > 0 && net->ops[v - 1].bn_bwd_in_add && net->ops[v - 1].in[0] > 0)
                extend(&net->tensors[net->grad_of[net->alias[net->ops[v - 1].in[0]]]], BWD(j));
        }
        /* folded through conv3 (fuse_bn_fold.c): conv3's input gradient too */
        int c = net->ops[j].bn_fold;
        if (c >= 0) extend(&net->tensors[net->grad_of[net->alias[net->ops[c].in[0]]]], BWD(j));
    }
    int *taken = net->share_add_grads ? share_add_gradients(net) : NULL;
    for (int j = 0; j < L && !net->forward_only; j++)
        if (net->ops[j].bn_in && net->ops[j].act && mask_fits_bn(net, j)) {
            net->ops[j].mask_in_bn = 1;   /* the bn's backward, right after the add's, masks */
            extend(&net->tensors[net->act_of[j + 1]], BWD(j - 1));
        }
    #undef FWD
    #undef BWD
    assign_offsets(net);
    for (int v = 1; taken && v <= L; v++)   /* a taken-over gradient sits in its owner's buffer */
        if (taken[v]) net->tensors[net->grad_of[v]].offset = net->tensors[net->grad_of[taken[v]]].offset;
    free(taken);
}

void ir_layout_params(ir_net *net) {
    long p = 0, b = 0, a = net->param_align > 0 ? net->param_align : 1;
    net->param_count = 0;
    for (int i = net->n_ops - 1; i >= 0; i--) {
        ir_op *op = &net->ops[i];
        op->w_off = op->b_off = -1;
        if (op->w_count > 0) p = (p + a - 1) / a * a, op->w_off = p, p += op->w_count;
        if (op->b_count > 0) p = (p + a - 1) / a * a, op->b_off = p, p += op->b_count;
        net->param_count += op->w_count + op->b_count;
    }
    for (int i = 0; i < net->n_ops; i++) {
        ir_op *op = &net->ops[i];
        op->buf_off = -1;
        if (op->kind == IR_BN) op->buf_off = b, b += 2L * op->c;
    }
    net->n_params = p;
    net->n_buffers = b;
}

static void plan_free(ir_net *net) {
    free(net->tensors), free(net->act_of), free(net->grad_of), free(net->saved_of), free(net->mask_of);
    free(net->work_of), free(net->alias), free(net->scratch_of), free(net->route), free(net->dead);
    net->tensors = NULL, net->mask_of = NULL, net->work_of = NULL, net->dead = NULL;
    net->n_tensors = 0;
}

void ir_replan(ir_net *net) {
    plan_free(net);
    ir_plan(net);
}

static const char *tensor_kind_name(ir_tensor_kind k) {
    static const char *const names[] = { "act", "grad", "saved", "scratch", "mask" };
    return names[k];
}

void ir_print_plan(FILE *out, const ir_net *net) {
    fprintf(out, "# Static memory plan: schedule steps 0..%d are forward ops, %d is the loss,\n"
                 "# %d..%d are backward ops in reverse. Offsets and sizes in bytes.\n",
            net->n_ops - 1, net->n_ops, net->n_ops + 1, 2 * net->n_ops);
    fprintf(out, "%-8s %-32s %12s %12s %6s %6s\n", "kind", "layer", "offset", "bytes", "first", "last");
    for (int i = 0; i < net->n_tensors; i++) {
        const ir_tensor *t = &net->tensors[i];
        fprintf(out, "%-8s %-32s %12ld %12ld %6d %6d\n", tensor_kind_name(t->kind), net->ops[t->op].name,
                t->offset, t->bytes, t->first, t->last);
    }
    fprintf(out, "planned peak: %ld bytes; naive sum: %ld bytes (%.1fx)\n", net->arena_bytes,
            net->arena_naive_bytes, (double)net->arena_naive_bytes / (double)net->arena_bytes);
}

void ir_plan_forward_only(ir_net *net) {
    plan_free(net);
    net->forward_only = 1;
    net->share_add_grads = 0;
    ir_plan(net);
}

long ir_partial_sum_channels(const ir_net *net) {
    long most = 0;
    for (int i = 0; i < net->n_ops; i++) {
        const ir_op *op = &net->ops[i];
        int sums = ir_ops[op->kind].sums == IR_SUMS || (ir_ops[op->kind].sums == IR_SUMS_IF_BIAS && op->b_off >= 0);
        if (sums && op->c > most) most = op->c;
        /* a projection block's fused backward (add_bwd_fused) sums both bns in one pass */
        if (op->add_bwd_fused && op->add_bns == 2 && 2L * op->c > most) most = 2L * op->c;
    }
    return most;
}

void ir_net_free(ir_net *net) {
    free(net->ops);
    free(net->tensors);
    free(net->act_of);
    free(net->grad_of);
    free(net->saved_of);
    free(net->mask_of);
    free(net->work_of);
    free(net->alias);
    free(net->scratch_of);
    free(net->route);
    free(net->dead);
    free(net->buckets);
    memset(net, 0, sizeof *net);
}
