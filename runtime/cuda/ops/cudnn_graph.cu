/* The cuDNN graph (backend) API steps that the fused conv graphs and attention_sdpa.cu share
 * (cudnn_graph.cuh): tensor, pointwise and convolution descriptors, an operation graph's plan
 * within a workspace cap (the heuristics' first, or the fastest of a few timed at start-up:
 * cudnn_graph_tune.cu; with several ranks, rank 0's choice on every rank), and the
 * once-per-reason warning of a refused graph. */
#include <stdio.h>
#include <string.h>
#include "cudnn_graph.cuh"

cudnnBackendDescriptor_t graph_tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                      const int64_t strides[4], bool is_virtual, bool by_value) {
    cudnnBackendDescriptor_t t = NULL;
    int64_t align = 16;
    G("tensor create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    if (e->step) return t;
    if (e->n_operands < GRAPH_MAX_OPERANDS) {   /* the graph's shape, for the timing (cudnn_graph_tune.cu) */
        graph_operand *o = &e->operand[e->n_operands++];
        int64_t span = 1, size = dt == CUDNN_DATA_FLOAT || dt == CUDNN_DATA_INT32 ? 4 : dt == CUDNN_DATA_INT64 || dt == CUDNN_DATA_DOUBLE ? 8 : 2;
        for (int i = 0; i < 4; i++) o->dims[i] = dims[i], o->strides[i] = strides[i], span += (dims[i] - 1) * strides[i];
        o->uid = uid, o->dt = dt, o->is_virtual = is_virtual, o->by_value = by_value;
        o->bytes = is_virtual ? 0 : span * size;
    } else {
        e->n_operands = GRAPH_MAX_OPERANDS + 1;   /* more than the timing knows: it stays off */
    }
    G("tensor data type", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt));
    G("tensor dims", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims));
    G("tensor strides", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides));
    G("tensor uid", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
    G("tensor alignment", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align));
    if (is_virtual)
        G("tensor virtual", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual));
    if (by_value)
        G("tensor by value", cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value));
    G("tensor finalize", cudnnBackendFinalize(t));
    return t;
}

void graph_pointwise(graph_err *e, cudnnBackendDescriptor_t *pw, cudnnBackendDescriptor_t *op, cudnnPointwiseMode_t mode,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y) {
    if (e->step) return;
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    G("pointwise create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, pw));
    G("pointwise mode", cudnnBackendSetAttribute(*pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
    G("pointwise precision", cudnnBackendSetAttribute(*pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec));
    G("pointwise finalize", cudnnBackendFinalize(*pw));
    G("pointwise op create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op));
    G("pointwise op desc", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, pw));
    if (mode == CUDNN_POINTWISE_RELU_BWD) {   /* x: the gradient, b: the forward's value */
        G("pointwise op dy", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
        G("pointwise op x", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b));
        G("pointwise op dx", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
    } else {
        G("pointwise op x", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x));
        if (b)
            G("pointwise op b", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b));
        G("pointwise op y", cudnnBackendSetAttribute(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y));
    }
    G("pointwise op finalize", cudnnBackendFinalize(*op));
}

void graph_conv(graph_err *e, cudnnBackendDescriptor_t *conv, const rt_conv_shape *s) {
    if (e->step) return;
    if (e->n_convs < 2) {
        int64_t *g = e->conv[e->n_convs++];
        g[0] = s->ph, g[1] = s->pw, g[2] = s->sh, g[3] = s->sw, g[4] = s->dh, g[5] = s->dw;
    }
    int64_t dims = 2, pad[2] = { s->ph, s->pw }, stride[2] = { s->sh, s->sw }, dil[2] = { s->dh, s->dw };
    cudnnDataType_t acc = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    G("conv create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, conv));
    G("conv comp type", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &acc));
    G("conv mode", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
    G("conv dims", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims));
    G("conv pre paddings", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    G("conv post paddings", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad));
    G("conv strides", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride));
    G("conv dilations", cudnnBackendSetAttribute(*conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil));
    G("conv finalize", cudnnBackendFinalize(*conv));
}

bool graph_first_time(const char *what, const char *why) {
    enum { MAX_SAID = 48 };
    static char said[MAX_SAID][256];
    static int n_said;
    char key[256];
    snprintf(key, sizeof key, "%s: %s", what, why);
    for (int i = 0; i < n_said; i++)
        if (!strcmp(said[i], key)) return false;
    if (n_said < MAX_SAID) snprintf(said[n_said++], sizeof said[0], "%s", key);
    return true;
}

void graph_warn_once(const char *what, const rt_cuda_conv *conv, const char *why) {
    if (!graph_first_time(what, why)) return;
    int nhwc, dw;
    const rt_conv_shape *s = rt_cuda_conv_shape_of(conv, &nhwc, &dw);
    rt_warn("%s unfused (a %dx%d conv, %d->%d channels, and any other refused alike): %s", what, s->kh, s->kw, s->c, s->oc,
            why);
}

void graph_keep_or_explain(const graph_err *e, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t *d, int n,
                           cudnnBackendDescriptor_t *keep, int *n_keep, char *why, size_t why_cap) {
    if (plan) {
        for (int i = 0; i < n; i++) keep[(*n_keep)++] = d[i];
        return;
    }
    graph_destroy_all(d, n);
    if (e->step) snprintf(why, why_cap, "cuDNN refused the graph at %s (%s)", e->step, cudnnGetErrorString(e->st));
}

void graph_destroy_all(cudnnBackendDescriptor_t *d, int n) {
    for (int i = 0; i < n; i++)
        if (d[i]) cudnnBackendDestroyDescriptor(d[i]), d[i] = NULL;
}

/* The plan of one engine configuration, or NULL: not finalized (the status in *last), or over
 * cap (why says so). Its workspace in *ws. */
static cudnnBackendDescriptor_t finalize_plan(cudnnBackendDescriptor_t cfg, size_t cap, size_t *ws_out, cudnnStatus_t *last,
                                              char *why, size_t why_cap, const char *what, const char *cap_hint) {
    cudnnBackendDescriptor_t plan = NULL;
    cudnnHandle_t handle = rt_cudnn();
    int64_t ws = 0, one = 0;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    if (st == CUDNN_STATUS_SUCCESS)
        (void)cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &one, &ws);
    if (st == CUDNN_STATUS_SUCCESS && (size_t)ws <= cap) {
        *ws_out = (size_t)ws;
        return plan;
    }
    if (st == CUDNN_STATUS_SUCCESS)
        snprintf(why, why_cap, "the %s plan needs %lld bytes of workspace, over the %zu the run has (%s)", what,
                 (long long)ws, cap, cap_hint);
    else *last = st;
    if (plan) cudnnBackendDestroyDescriptor(plan);
    return NULL;
}

/* The timing at start-up (cudnn_graph_tune.cu): among mode A's configurations cfg[0..got), up
 * to graph_tune_candidates() plans that finalize within cap, each timed, the fastest kept and
 * the rest destroyed. Runtime-compiled engines compile at finalize (NVRTC, seconds each), so at
 * most MAX_COMPILED of them are finalized for one graph, the others skipped before finalize.
 * Graphs of one shape (a net's repeated blocks) take the first one's choice without timing
 * again. NULL when none finalizes (the caller goes on with the heuristics' first, as untimed).
 * The kept one's position in cfg, and how it was come to, in *c. */
static cudnnBackendDescriptor_t timed(graph_err *e, const char *key, cudnnBackendDescriptor_t *cfg, int got, size_t cap,
                                      size_t *ws_out, graph_choice *c, int *offered, cudnnStatus_t *last, char *why,
                                      size_t why_cap, const char *what, const char *cap_hint) {
    enum { MAX_CAND = 8, MAX_COMPILED = 2 };
    int64_t engine = -1, want = -1;
    int at = graph_tune_recall(key, &want);
    if (at >= 0 && at < got) {   /* this shape timed before: its choice, if the heuristics still offer it there */
        bool rtc;
        graph_tune_engine(cfg[at], &engine, &rtc);
        if (engine == want) {
            (*offered)++;
            cudnnBackendDescriptor_t plan = finalize_plan(cfg[at], cap, ws_out, last, why, why_cap, what, cap_hint);
            if (plan) {
                c->position = at;
                return plan;
            }
        }
    }
    cudnnBackendDescriptor_t plan[MAX_CAND] = { 0 };
    size_t ws[MAX_CAND];
    int64_t engines[MAX_CAND];
    int position[MAX_CAND], n = 0, compiled = 0, rtc_skipped = 0;
    int k = graph_tune_candidates() < MAX_CAND ? graph_tune_candidates() : MAX_CAND;
    for (int i = 0; i < got && n < k; i++) {
        bool rtc;
        graph_tune_engine(cfg[i], &engine, &rtc);
        if (rtc && compiled >= MAX_COMPILED) {
            rtc_skipped++;
            continue;
        }
        (*offered)++;
        plan[n] = finalize_plan(cfg[i], cap, &ws[n], last, why, why_cap, what, cap_hint);
        if (!plan[n]) continue;
        compiled += rtc;
        engines[n] = engine, position[n++] = i;
    }
    if (!n) return NULL;
    float ms[MAX_CAND];
    char untimed[200] = "";
    int best = n > 1 ? graph_tune_time(e, plan, ws, n, ms, untimed, sizeof untimed) : 0;
    if (n == 1) ms[0] = -1.0f;
    c->candidates = n, c->timed = n > 1 && best >= 0;
    if (best < 0) best = 0;   /* not timed: the heuristics' first of them */
    else if (n > 1) graph_tune_remember(key, position[best], engines[best]);
    graph_tune_report(what, n, best, engines, ms, rtc_skipped, untimed[0] ? untimed : NULL);
    for (int i = 0; i < n; i++)
        if (i != best) cudnnBackendDestroyDescriptor(plan[i]);
    *ws_out = ws[best];
    why[0] = 0;   /* a refusal of another candidate is no reason now */
    c->position = position[best];
    return plan[best];
}

/* The heuristics of mode m for graph: *heur and its configurations cfg[0..*got) (MAX_CFG of
 * them created); a refusal's status in *last and none. */
enum { MAX_CFG = 8 };
static void heuristics(cudnnBackendDescriptor_t *graph, int m, cudnnBackendDescriptor_t *heur, cudnnBackendDescriptor_t *cfg,
                       int *got, cudnnStatus_t *last) {
    static const cudnnBackendHeurMode_t modes[] = { CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK };
    cudnnBackendHeurMode_t mode = modes[m];
    int64_t n = 0;
    *heur = NULL;
    for (int i = 0; i < MAX_CFG; i++) cfg[i] = NULL;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, heur);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(*heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendSetAttribute(*heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(*heur);
    for (int i = 0; i < MAX_CFG && st == CUDNN_STATUS_SUCCESS; i++)
        st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendGetAttribute(*heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, MAX_CFG, &n, cfg);
    if (st != CUDNN_STATUS_SUCCESS) *last = st, n = 0;
    *got = n > MAX_CFG ? MAX_CFG : (int)n;
}

static void release(cudnnBackendDescriptor_t *heur, cudnnBackendDescriptor_t *cfg) {
    graph_destroy_all(cfg, MAX_CFG);
    if (*heur) cudnnBackendDestroyDescriptor(*heur), *heur = NULL;
}

/* The plan one rank picks alone (and rank 0 for every rank): the timed or the heuristics'
 * first, mode A then the fallback list; what it is in *c; its heuristics in *heur and cfg. */
static cudnnBackendDescriptor_t pick(graph_err *e, cudnnBackendDescriptor_t *graph, const char *key, size_t cap,
                                     size_t *ws_out, cudnnBackendDescriptor_t *heur, cudnnBackendDescriptor_t *cfg,
                                     graph_choice *c, int *offered, cudnnStatus_t *last, char *why, size_t why_cap,
                                     const char *what, const char *cap_hint) {
    cudnnBackendDescriptor_t found = NULL;
    for (int m = 0; m < 2 && !found; m++) {
        int got = 0;
        heuristics(graph, m, heur, cfg, &got, last);
        /* (the timing finalizes every configuration until it has its candidates: where it found
         * none, the untimed search would only finalize, and compile, the same ones again) */
        const bool tune = m == 0 && graph_tune_candidates() > 0 && got > 0;
        if (tune) found = timed(e, key, cfg, got, cap, ws_out, c, offered, last, why, why_cap, what, cap_hint);
        for (int i = 0; i < got && !found && !tune; i++) {   /* the heuristics' first that fits */
            (*offered)++;
            found = finalize_plan(cfg[i], cap, ws_out, last, why, why_cap, what, cap_hint);
            c->position = i;
        }
        if (found) {
            bool rtc;
            c->mode = m;
            graph_tune_engine(cfg[c->position], &c->engine, &rtc);
        } else {
            release(heur, cfg);
        }
    }
    return found;
}

/* Another rank's plan: rank 0's choice c, if this rank's heuristics offer rank 0's engine at
 * rank 0's position and it finalizes within cap; NULL otherwise (why says which). */
static cudnnBackendDescriptor_t follow(cudnnBackendDescriptor_t *graph, const graph_choice *c, size_t cap, size_t *ws_out,
                                       cudnnBackendDescriptor_t *heur, cudnnBackendDescriptor_t *cfg, int *offered,
                                       cudnnStatus_t *last, char *why, size_t why_cap, const char *what,
                                       const char *cap_hint) {
    int got = 0;
    int64_t engine = -1;
    bool rtc;
    cudnnBackendDescriptor_t found = NULL;
    heuristics(graph, c->mode, heur, cfg, &got, last);
    if (c->position < got) graph_tune_engine(cfg[c->position], &engine, &rtc);
    if (engine != c->engine) {
        snprintf(why, why_cap, "this rank's cuDNN heuristics do not offer rank 0's engine %lld for %s at its place",
                 (long long)c->engine, what);
    } else {
        (*offered)++;
        found = finalize_plan(cfg[c->position], cap, ws_out, last, why, why_cap, what, cap_hint);
        if (!found && !why[0])   /* (over the cap: finalize_plan said so) */
            snprintf(why, why_cap, "this rank's cuDNN does not finalize rank 0's engine %lld for %s (%s)",
                     (long long)c->engine, what, cudnnGetErrorString(*last));
    }
    if (!found) release(heur, cfg);
    return found;
}

cudnnBackendDescriptor_t graph_plan(graph_err *e, cudnnBackendDescriptor_t *graph, const cudnnBackendDescriptor_t *ops,
                                    int64_t n_ops, size_t cap, size_t *ws_out, cudnnBackendDescriptor_t *keep, int *n_keep,
                                    char *why, size_t why_cap, const char *what, const char *cap_hint) {
    cudnnBackendDescriptor_t found = NULL, heur = NULL, cfg[MAX_CFG] = { 0 };
    *graph = NULL;
    if (!e->step) {
        cudnnHandle_t handle = rt_cudnn();
        G("graph create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, graph));
        /* (cuDNN 9 deprecates the graph's and the plan's handle attributes, which 8 needs:
         * set, and a refusal of them ignored) */
        (void)cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        G("graph ops", cudnnBackendSetAttribute(*graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n_ops, ops));
        G("graph finalize", cudnnBackendFinalize(*graph));
    }
    int offered = 0;
    cudnnStatus_t last = CUDNN_STATUS_SUCCESS;
    char key[1024];
    graph_tune_key(e, what, key, sizeof key);
    graph_choice c;
    memset(&c, 0, sizeof c);
    c.mode = -1, c.refused = e->step != NULL;
    const int role = graph_agree_role();
    if (role != GRAPH_FOLLOWER && !e->step)
        found = pick(e, graph, key, cap, ws_out, &heur, cfg, &c, &offered, &last, why, why_cap, what, cap_hint);
    if (role != GRAPH_ALONE) {   /* every rank, whatever it built: the same collectives in the same order */
        graph_agree_choice(&c, what, key);
        if (role == GRAPH_FOLLOWER && c.mode >= 0 && !e->step)
            found = follow(graph, &c, cap, ws_out, &heur, cfg, &offered, &last, why, why_cap, what, cap_hint);
        else if (role == GRAPH_FOLLOWER && c.mode < 0 && !e->step)
            snprintf(why, why_cap, "rank 0 has no plan for %s (its warning says why), and ranks must compute alike", what);
        int who = 0;
        const bool mine = c.mode < 0 || found;
        if (!graph_agree_all(mine, &who)) {   /* someone cannot: every rank runs it unfused */
            if (found) cudnnBackendDestroyDescriptor(found), release(&heur, cfg);
            found = NULL;
            size_t at = mine ? 0 : strlen(why);
            if (mine)
                snprintf(why, why_cap, "rank %d cannot run rank 0's engine %lld for %s (its warning says why), and ranks "
                         "must compute alike: every rank runs it unfused", who, (long long)c.engine, what);
            else if (at)
                snprintf(why + at, why_cap - at, "; ranks must compute alike: every rank runs it unfused");
        }
        if (found && role == GRAPH_FOLLOWER) graph_tune_report_followed(what, &c);
    }
    if (found) {
        for (int i = 0; i < MAX_CFG; i++) keep[(*n_keep)++] = cfg[i];
        keep[(*n_keep)++] = heur;
    }
    if (!found && !e->step && !why[0])
        snprintf(why, why_cap, "cuDNN finalizes no plan for %s (%d engine configurations offered%s%s)", what, offered,
                 last != CUDNN_STATUS_SUCCESS ? ", last: " : "", last != CUDNN_STATUS_SUCCESS ? cudnnGetErrorString(last) : "");
    return found;
}

cudnnStatus_t graph_execute_status(cudnnBackendDescriptor_t plan, int64_t n, const int64_t *uids, void *const *ptrs,
                                   void *workspace) {
    cudnnBackendDescriptor_t pack = NULL;
    cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs);
    if (st == CUDNN_STATUS_SUCCESS)
        st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(pack);
    if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendExecute(rt_cudnn(), plan, pack);
    if (pack) cudnnBackendDestroyDescriptor(pack);
    return st;
}

void graph_execute(cudnnBackendDescriptor_t plan, int64_t n, const int64_t *uids, void *const *ptrs, void *workspace) {
    CUDNN_CHECK(graph_execute_status(plan, n, uids, ptrs, workspace));
}
