/* Multi-head self-attention's core on cuDNN's fused scaled-dot-product attention (rt_cuda.h
 * rt_cuda_sdpa), through the graph (backend) API's single-node operations: SDPA forward
 * (Q, K, V, an FP32 scale passed by value -> O and the FP32 softmax statistics, each row's
 * log-sum-exp) and SDPA backward (Q, K, V, O, the statistics, dO -> dQ, dK, dV), BF16 or
 * FP16 with FP32 accumulation. The projections stay attention.cu's (attention_proj.cuh): the
 * projected queries, keys and values are rounded into a 16-bit copy beside the FP32 ones in
 * the saved tensor, read by cuDNN as [N, heads, T, head] with strides over that [N, T, 3C]
 * buffer (no transpose), and O comes back 16-bit into the same room, widened to the FP32 heads'
 * outputs the out-projection reads; the statistics land where attention.cu keeps its
 * log-sum-exp, so the runtime's own backward kernels can take over from a fused forward. The
 * plans are finalized once at start-up (rt_cuda_sdpa_select); where cuDNN, the device or the
 * precision refuses a direction, that direction runs on attention.cu's kernels, and each reason
 * is printed once (the backward only fuses behind a fused forward: it reads the forward's 16-bit
 * copies and statistics). */
#include <stdlib.h>
#include <string.h>
#include "../cuda_libs.cuh"
#include "attention_proj.cuh"
#include "cudnn_graph.cuh"

void rt_cuda_workspace_need(size_t bytes);   /* conv2d.cu: kept when the ranks agree on rank 0's conv algorithms */

/* The graph's tensors by unique id (the variant packs' order). */
enum { UID_Q = 1, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_DO, UID_DQ, UID_DK, UID_DV, N_UIDS = 10 };

typedef struct {
    cudnnBackendDescriptor_t plan;   /* NULL: our kernels */
    size_t ws;
    cudnnBackendDescriptor_t keep[24];   /* the graph's descriptors, configurations, heuristics */
    int n_keep;
    char why[200];
} sdpa_plan;

struct rt_cuda_sdpa {
    int n, c, t, heads, selected;
    float scale;   /* 1/sqrt(head): passed by value, so it lives as long as the plans (graph replays) */
    sdpa_plan fwd, bwd;
};

/* (a tensor of the graph: cudnn_graph.cuh's, none of them virtual) */
static cudnnBackendDescriptor_t tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                       const int64_t strides[4], bool by_value = false) {
    return graph_tensor(e, uid, dt, dims, strides, false, by_value);
}

/* The graph of one SDPA operation op (its descriptors in d[0..n_d)), and its plan: the first
 * engine configuration the heuristics offer (mode A, then the fallback list) that finalizes
 * within cap bytes of workspace. On failure p->why says which step refused. */
static void plan_graph(sdpa_plan *p, graph_err *e, cudnnBackendDescriptor_t *d, int n_d, int op, const char *what,
                       size_t cap) {
    cudnnBackendDescriptor_t graph = NULL;
    p->plan = graph_plan(e, &graph, &d[op], 1, cap, &p->ws, p->keep, &p->n_keep, p->why, sizeof p->why, what,
                         "TRAINC_CUDNN_WORKSPACE_MB; a net without convs has none");
    if (p->plan) {
        for (int i = 0; i < n_d; i++) p->keep[p->n_keep++] = d[i];
        p->keep[p->n_keep++] = graph;
        return;
    }
    graph_destroy_all(d, n_d);
    if (graph) cudnnBackendDestroyDescriptor(graph);
    if (e->step) snprintf(p->why, sizeof p->why, "cuDNN refused the %s graph at %s (%s)", what, e->step, cudnnGetErrorString(e->st));
}

/* Why this run cannot use the fused engines at all, or NULL. */
static const char *refusal(const rt_cuda_sdpa *a) {
    static char why[160];
    int dev = 0, dh = a->c / a->heads;
    cudaDeviceProp pr;
    if (rt_cuda_act_type() == RT_ACT_F32) return "FP32 activations (cuDNN's fused attention takes BF16 and FP16)";
    if (dh % 8 || dh > 128) {
        snprintf(why, sizeof why, "heads of %d channels (cuDNN's fused attention: a multiple of 8, at most 128)", dh);
        return why;
    }
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&pr, dev) != cudaSuccess)
        return "the device's compute capability is unknown";
    if (pr.major < 8) return "compute capability below 8.0 (cuDNN's fused attention needs 8.0 or higher)";
    return NULL;
}

/* The SDPA forward (bwd 0) or backward (bwd 1) graph of a's shape. */
static void build(rt_cuda_sdpa *a, int bwd, size_t cap) {
    enum { Q, K, V, O, STATS, SCALE, DO, DQ, DK, DV, OP, N_DESC };
    sdpa_plan *p = bwd ? &a->bwd : &a->fwd;
    cudnnBackendDescriptor_t d[N_DESC] = { 0 };
    graph_err err = {}, *e = &err;   /* (no refusal yet) */
    cudnnDataType_t dt = rt_cuda_act_type() == RT_ACT_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    int64_t n = a->n, h = a->heads, t = a->t, c = a->c, dh = c / h;
    /* [N, heads, T, head] over the [N, T, 3C] projections (Q, K, V) and [N, T, C] heads' outputs */
    int64_t qd[4] = { n, h, t, dh }, qs[4] = { t * 3 * c, dh, 3 * c, 1 }, os[4] = { t * c, dh, c, 1 };
    int64_t sd[4] = { n, h, t, 1 }, ss[4] = { h * t, t, 1, 1 }, one[4] = { 1, 1, 1, 1 };
    d[Q] = tensor(e, UID_Q, dt, qd, qs);
    d[K] = tensor(e, UID_K, dt, qd, qs);
    d[V] = tensor(e, UID_V, dt, qd, qs);
    d[O] = tensor(e, UID_O, dt, qd, os);
    d[STATS] = tensor(e, UID_STATS, CUDNN_DATA_FLOAT, sd, ss);
    d[SCALE] = tensor(e, UID_SCALE, CUDNN_DATA_FLOAT, one, one, true);
    if (bwd) {
        d[DO] = tensor(e, UID_DO, dt, qd, os);
        d[DQ] = tensor(e, UID_DQ, dt, qd, qs);
        d[DK] = tensor(e, UID_DK, dt, qd, qs);
        d[DV] = tensor(e, UID_DV, dt, qd, qs);
    }
    const cudnnBackendDescriptorType_t kind = bwd ? CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR : CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR;
    G("sdpa create", cudnnBackendCreateDescriptor(kind, &d[OP]));
    const cudnnBackendAttributeType_t B = CUDNN_TYPE_BACKEND_DESCRIPTOR;
    if (!bwd) {
        G("sdpa q", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, B, 1, &d[Q]));
        G("sdpa k", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, B, 1, &d[K]));
        G("sdpa v", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, B, 1, &d[V]));
        G("sdpa o", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, B, 1, &d[O]));
        G("sdpa stats", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, B, 1, &d[STATS]));
        G("sdpa scale", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, B, 1, &d[SCALE]));
    } else {
        G("sdpa q", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, B, 1, &d[Q]));
        G("sdpa k", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, B, 1, &d[K]));
        G("sdpa v", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, B, 1, &d[V]));
        G("sdpa o", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, B, 1, &d[O]));
        G("sdpa stats", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, B, 1, &d[STATS]));
        G("sdpa scale", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, B, 1, &d[SCALE]));
        G("sdpa do", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, B, 1, &d[DO]));
        G("sdpa dq", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, B, 1, &d[DQ]));
        G("sdpa dk", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, B, 1, &d[DK]));
        G("sdpa dv", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, B, 1, &d[DV]));
    }
    G("sdpa finalize", cudnnBackendFinalize(d[OP]));
    plan_graph(p, e, d, N_DESC, OP, bwd ? "SDPA backward" : "SDPA forward", cap);
}

rt_cuda_sdpa *rt_cuda_sdpa_create(int n, int c, int t, int heads) {
    rt_cuda_sdpa *a = (rt_cuda_sdpa *)rt_xcalloc(1, sizeof *a);
    a->n = n, a->c = c, a->t = t, a->heads = heads;
    a->scale = (float)(1.0 / sqrt((double)(c / heads)));
    return a;
}

/* Each distinct reason once per process: a net's layers of one shape refuse alike. */
static void say_once(const rt_cuda_sdpa *a, const char *dir, const char *why) {
    if (!graph_first_time(dir, why)) return;
    rt_warn("attention %s on the runtime's own kernels, not cuDNN's fused attention (%d tokens, %d heads of %d, and "
            "any other refused alike): %s", dir, a->t, a->heads, a->c / a->heads, why);
}

size_t rt_cuda_sdpa_select(rt_cuda_sdpa *a, int training) {
    if (!a->selected) {
        a->selected = 1;
        size_t cap;
        (void)rt_cuda_shared_workspace(&cap);
        cap &= ~(size_t)255;
        const char *no = refusal(a);
        if (no) snprintf(a->fwd.why, sizeof a->fwd.why, "%s", no);
        else build(a, 0, cap);
        if (!a->fwd.plan) say_once(a, "forward and backward", a->fwd.why);
        else if (training) {
            build(a, 1, cap);
            if (!a->bwd.plan) say_once(a, "backward", a->bwd.why);
        }
    }
    size_t f = a->fwd.plan ? a->fwd.ws : 0, b = a->bwd.plan ? a->bwd.ws : 0;
    size_t need = ((f > b ? f : b) + 255) & ~(size_t)255;   /* the shared workspace is set in 256-byte steps */
    rt_cuda_workspace_need(need);
    return need;
}

int rt_cuda_sdpa_fused(const rt_cuda_sdpa *a, int backward, const char **why) {
    const sdpa_plan *p = backward && a->fwd.plan ? &a->bwd : &a->fwd;
    if (why) *why = p->plan ? NULL : p->why[0] ? p->why : "not selected";
    return p->plan != NULL;
}

static void execute(const rt_cuda_sdpa *a, const sdpa_plan *p, void *const ptrs[N_UIDS], int n_uids) {
    static const int64_t uids[N_UIDS] = { UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_DO, UID_DQ, UID_DK, UID_DV };
    size_t ws_bytes;
    void *ws = rt_cuda_shared_workspace(&ws_bytes);
    if (p->ws > ws_bytes)
        rt_die("report this: attention: cuDNN's fused plan needs %zu bytes of workspace, %zu are set", p->ws, ws_bytes);
    graph_execute(p->plan, n_uids, uids, ptrs, ws);
    (void)a;
}

/* The 16-bit room after `base` FP32 values of a tensor (rt_ops.h attention_sdpa_extra_elems). */
static void *sixteen(float *tensor, long base) { return tensor + ((base + 63) & ~63L); }

void cuda_attention_sdpa_forward(const rt_cuda_sdpa *a, void *out, float *saved, const void *x, const float *w,
                                 const float *b) {
    int n = a->n, c = a->c, t = a->t, heads = a->heads;
    long c3 = 3L * c, nq = (long)n * t * c3, no = (long)n * t * c;
    float *qkv = saved, *o = saved + nq, *lse = o + no;
    attn_launch_in_proj(qkv, x, w, b, n, c, t);
    if (a->fwd.plan) {
        size_t e = rt_cuda_act_bytes();
        char *qkv16 = (char *)sixteen(saved, attention_saved_elems(n, c, t, heads)), *o16 = qkv16 + nq * e;
        rt_cuda_to_act(qkv16, qkv, nq);
        void *ptrs[N_UIDS] = { qkv16, qkv16 + c * e, qkv16 + 2 * c * e, o16, lse, (void *)&a->scale };
        execute(a, &a->fwd, ptrs, 6);
        rt_cuda_from_act(o, o16, no);
    } else {
        attn_launch_core_forward(o, lse, qkv, n, c, t, heads);
    }
    attn_launch_out_proj(out, o, w + c3 * c, b + c3, n, c, t);
}

void cuda_attention_sdpa_backward(const rt_cuda_sdpa *a, void *dx, float *dw, float *db, const void *dout, const void *x,
                                  const float *w, const float *saved, float *work) {
    int n = a->n, c = a->c, t = a->t, heads = a->heads;
    long c3 = 3L * c, nq = (long)n * t * c3, no = (long)n * t * c;
    const float *qkv = saved, *o = saved + nq, *lse = o + no;
    float *dqkv = work, *dO = dqkv + nq;
    attn_launch_out_backward(dO, dw + c3 * c, db + c3, dout, o, w + c3 * c, n, c, t);
    if (a->fwd.plan && a->bwd.plan) {
        size_t e = rt_cuda_act_bytes();
        char *qkv16 = (char *)sixteen((float *)saved, attention_saved_elems(n, c, t, heads)), *o16 = qkv16 + nq * e;
        char *dq16 = (char *)sixteen(work, attention_work_elems(n, c, t)), *do16 = dq16 + nq * e;
        rt_cuda_to_act(do16, dO, no);
        void *ptrs[N_UIDS] = { qkv16, qkv16 + c * e, qkv16 + 2 * c * e, o16, (void *)lse, (void *)&a->scale,
                               do16, dq16, dq16 + c * e, dq16 + 2 * c * e };
        execute(a, &a->bwd, ptrs, N_UIDS);
        rt_cuda_from_act(dqkv, dq16, nq);
    } else {
        attn_launch_core_backward(dqkv, qkv, o, dO, lse, n, c, t, heads);
    }
    attn_launch_in_backward(dx, dw, db, dqkv, x, w, n, c, t);
}
