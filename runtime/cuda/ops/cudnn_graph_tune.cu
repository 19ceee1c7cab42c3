/* The timing of a cuDNN graph's candidate plans at start-up (cudnn_graph.cuh graph_plan), as
 * the plain convs time their algorithms (conv2d.cu, cudnnFind*AlgorithmEx) and as the cuDNN
 * frontend's autotuning and PyTorch's cudnn.benchmark do: cuDNN's heuristics rank engine
 * configurations, and are not always right.
 *
 * The timing never touches the run's state: every tensor of the graph (its shape recorded by
 * graph_tensor) gets zeroed scratch of its own, by-value scalars a host 1, so a graph that
 * updates operands in place (the BN finalize's running statistics, genstats' sums) or writes
 * outputs that alias leaves no trace, and the first training step computes what it would
 * without the timing. The scratch is the memory the trainer lends at start-up
 * (rt_cuda_graph_tune_scratch: the activation arena, which the first step writes before it
 * reads, as the plain convs' search overwrites it) or the shared cuDNN workspace, both inside
 * the start-up memory check; where neither holds a graph's operands, that graph is not timed
 * and keeps the heuristics' first candidate (said once per kind): a trainer allocates nothing
 * its memory check did not count. Outside a trainer (test_ops_gpu: nothing lent) the timing
 * allocates scratch of its own, freed after.
 *
 * Each candidate runs once to warm up (the first launch of a kernel module loads it), then
 * TIMED_RUNS times between two CUDA events on the cuDNN handle's stream; the fastest mean
 * wins. A candidate that fails to execute is never chosen. The choice of a shape is remembered
 * (by graph_tune_key) for the process, so a net's repeated blocks finalize one plan each, not
 * the candidates again.
 *
 * Several ranks must compute alike, and their timings might differ (another GPU's clocks,
 * noise), so rank 0 alone picks, as the plain convs' algorithms (conv2d.cu
 * rt_cuda_conv_agree): between rt_cuda_graph_agree_begin and _end (model_host.cu, around the
 * selects), every graph_plan on every rank, refused graphs included, takes part in one
 * broadcast of rank 0's choice and one minimum of whether each rank could finalize it, in the
 * order the compiled step builds its graphs. The other ranks time nothing: they finalize the
 * configuration at rank 0's position in their heuristics' list, if it is rank 0's engine. Where
 * a rank cannot, every rank runs that graph unfused (the caller's fallback, named): ranks
 * compute alike, and no rank waits in a collective the others skipped. A rank at another graph
 * than rank 0's (its number or shape), or with more or fewer graphs, ends every rank with one
 * message. */
#include <stdio.h>
#include <string.h>
#include "../cuda_libs.cuh"
#include "cudnn_graph.cuh"

enum { TIMED_RUNS = 3, MAX_MEMO = 256 };

static int candidates;   /* 0: the heuristics' first (the build's --no-graph-autotune) */
static rt_comm *agreeing;   /* between rt_cuda_graph_agree_begin and _end, with several ranks */
static int agreed;          /* graphs agreed on so far */
static char *lent;       /* rt_cuda_graph_tune_scratch's memory */
static size_t lent_bytes;

void rt_cuda_graph_tune_scratch(void *p, size_t bytes) { lent = (char *)p, lent_bytes = p ? bytes : 0; }

void rt_cuda_graph_autotune(int k) { candidates = k > 0 ? k : 0; }

int graph_tune_candidates(void) { return candidates; }

void rt_cuda_graph_agree_begin(rt_comm *comm) {
    agreeing = rt_comm_size(comm) > 1 ? comm : NULL;
    agreed = 0;
}

int graph_agree_role(void) {
    if (!agreeing) return GRAPH_ALONE;
    return rt_comm_rank(agreeing) == 0 ? GRAPH_LEADER : GRAPH_FOLLOWER;
}

static uint64_t hash_key(const char *what, const char *key) {   /* FNV-1a over what and the shape */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = key[0] ? key : what; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void agree(graph_choice *c, const char *what) {
    graph_choice mine = *c;
    rt_comm_bcast(agreeing, c, sizeof *c, "rank 0's cuDNN graph engines");
    bool shape = c->key == mine.key || c->refused || mine.refused;
    double same = c->kind == mine.kind && c->seq == mine.seq && shape ? 1.0 : 0.0;
    rt_comm_min(agreeing, &same, 1, "the ranks' cuDNN graphs");
    if (same == 0.0) {   /* rank 0 prints: its own graph is the one it can name */
        if (mine.kind == GRAPH_AGREE_END)
            rt_comm_die_all(agreeing, "run every rank with the same trainer on the same GPU model and cuDNN version",
                            "cuDNN graphs: another rank builds more or fewer cuDNN graphs at start-up than rank 0's %d, "
                            "so the ranks cannot agree on their engines", mine.seq);
        rt_comm_die_all(agreeing, "run every rank with the same trainer on the same GPU model and cuDNN version",
                        "cuDNN graphs: another rank builds a different graph, or none, where rank 0 builds its cuDNN "
                        "graph #%d (%s) at start-up, so the ranks cannot agree on its engine", mine.seq + 1, what);
    }
}

void graph_agree_choice(graph_choice *c, const char *what, const char *key) {
    c->kind = GRAPH_AGREE_GRAPH, c->seq = agreed++, c->key = hash_key(what, key);
    agree(c, what);
}

bool graph_agree_all(bool ok, int *who) {
    double v = ok ? 1e9 : (double)rt_comm_rank(agreeing);   /* the lowest rank that cannot */
    rt_comm_min(agreeing, &v, 1, "whether every rank runs rank 0's cuDNN graph engine");
    *who = (int)v;
    return v >= 1e9;
}

void rt_cuda_graph_agree_end(void) {
    if (!agreeing) return;
    graph_choice c;
    memset(&c, 0, sizeof c);
    c.kind = GRAPH_AGREE_END, c.seq = agreed, c.mode = -1;
    agree(&c, "the end of the start-up's graphs");
    agreeing = NULL;
}

void graph_tune_engine(cudnnBackendDescriptor_t cfg, int64_t *engine, bool *runtime_compiled) {
    cudnnBackendDescriptor_t eng = NULL;
    int64_t got = 0;
    *engine = -1, *runtime_compiled = false;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) != CUDNN_STATUS_SUCCESS) return;
    if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &eng) ==
        CUDNN_STATUS_SUCCESS) {
        cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
        int64_t id = -1, n = 0;
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &got, &id) == CUDNN_STATUS_SUCCESS)
            *engine = id;
        if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                     CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, notes) == CUDNN_STATUS_SUCCESS)
            for (int64_t i = 0; i < n && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT; i++)
                if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION) *runtime_compiled = true;
    }
    cudnnBackendDestroyDescriptor(eng);
}

void graph_tune_key(const graph_err *e, const char *what, char *key, size_t cap) {
    size_t n = (size_t)snprintf(key, cap, "%s", what);
    for (int i = 0; i < e->n_operands && i < GRAPH_MAX_OPERANDS && n < cap; i++) {
        const graph_operand *o = &e->operand[i];
        n += (size_t)snprintf(key + n, cap - n, "|%lld:%d%s%s:%lldx%lldx%lldx%lld/%lld,%lld,%lld,%lld", (long long)o->uid,
                              (int)o->dt, o->is_virtual ? "v" : "", o->by_value ? "s" : "", (long long)o->dims[0],
                              (long long)o->dims[1], (long long)o->dims[2], (long long)o->dims[3], (long long)o->strides[0],
                              (long long)o->strides[1], (long long)o->strides[2], (long long)o->strides[3]);
    }
    for (int c = 0; c < e->n_convs && n < cap; c++)
        n += (size_t)snprintf(key + n, cap - n, "|conv %lld,%lld,%lld,%lld,%lld,%lld", (long long)e->conv[c][0],
                              (long long)e->conv[c][1], (long long)e->conv[c][2], (long long)e->conv[c][3],
                              (long long)e->conv[c][4], (long long)e->conv[c][5]);
    if (n >= cap || e->n_operands > GRAPH_MAX_OPERANDS) key[0] = 0;   /* not a key: nothing remembered */
}

static struct {
    char *key;
    int position;
    int64_t engine;
} memo[MAX_MEMO];
static int n_memo;

int graph_tune_recall(const char *key, int64_t *engine) {
    for (int i = 0; key[0] && i < n_memo; i++)
        if (!strcmp(memo[i].key, key)) {
            *engine = memo[i].engine;
            return memo[i].position;
        }
    return -1;
}

void graph_tune_remember(const char *key, int position, int64_t engine) {
    if (!key[0] || n_memo == MAX_MEMO) return;
    memo[n_memo].key = strdup(key);
    if (!memo[n_memo].key) return;
    memo[n_memo].position = position, memo[n_memo++].engine = engine;
}

int graph_tune_time(const graph_err *e, cudnnBackendDescriptor_t *plans, const size_t *ws, int n, float *ms, char *why,
                    size_t why_cap) {
    if (e->n_operands > GRAPH_MAX_OPERANDS) {
        snprintf(why, why_cap, "a graph of more than %d tensors", GRAPH_MAX_OPERANDS);
        return -1;
    }
    int64_t uids[GRAPH_MAX_OPERANDS];
    void *ptrs[GRAPH_MAX_OPERANDS];
    int64_t host[GRAPH_MAX_OPERANDS];   /* the by-value scalars: 1 in their type */
    size_t at[GRAPH_MAX_OPERANDS], bytes = 0, ws_max = 0;
    int m = 0;
    for (int i = 0; i < e->n_operands; i++) {
        const graph_operand *o = &e->operand[i];
        if (o->is_virtual) continue;
        at[m] = bytes, uids[m] = o->uid;
        if (o->by_value) {
            float one = 1.0f;
            host[m] = 0;
            if (o->dt == CUDNN_DATA_INT64) host[m] = 1;
            else memcpy(&host[m], &one, sizeof one);
        } else {
            bytes += ((size_t)o->bytes + 255) & ~(size_t)255;
        }
        m++;
    }
    for (int i = 0; i < n; i++) ws_max = ws[i] > ws_max ? ws[i] : ws_max;
    ws_max = (ws_max + 255) & ~(size_t)255;
    size_t shared_bytes;
    char *shared = (char *)rt_cuda_shared_workspace(&shared_bytes), *scratch = NULL, *work = NULL, *own = NULL;
    if (!shared) shared_bytes = 0;
    if (bytes + ws_max <= lent_bytes) scratch = lent, work = lent + bytes;                 /* all in the arena */
    else if (bytes <= lent_bytes && ws_max <= shared_bytes) scratch = lent, work = shared;  /* the workspace apart */
    else if (bytes + ws_max <= shared_bytes) scratch = shared, work = shared + bytes;       /* all in the workspace */
    else if (!lent) {   /* nothing lent (outside a trainer's start-up): memory of its own, if the device has it */
        if (cudaMalloc((void **)&own, bytes + ws_max + 256) != cudaSuccess) {
            (void)cudaGetLastError();   /* not sticky: the run goes on */
            snprintf(why, why_cap, "its %zu bytes of scratch operands do not fit in device memory", bytes + ws_max);
            return -1;
        }
        scratch = own, work = own + bytes;
    } else {   /* a trainer allocates nothing its start-up memory check did not count */
        snprintf(why, why_cap, "its %zu bytes of scratch operands fit neither the activation arena (%zu) nor the cuDNN "
                 "workspace (%zu)", bytes + ws_max, lent_bytes, shared_bytes);
        return -1;
    }
    cudaStream_t stream = rt_stream();   /* the cuDNN handle's (context.cu) */
    if (bytes) CUDA_CHECK(cudaMemsetAsync(scratch, 0, bytes, stream));
    int k = 0;
    for (int i = 0; i < e->n_operands; i++) {
        const graph_operand *o = &e->operand[i];
        if (o->is_virtual) continue;
        ptrs[k] = o->by_value ? (void *)&host[k] : (void *)(scratch + at[k]);
        k++;
    }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    int best = -1;
    for (int i = 0; i < n; i++) {
        ms[i] = -1.0f;
        if (graph_execute_status(plans[i], m, uids, ptrs, work) != CUDNN_STATUS_SUCCESS) continue;   /* warm-up */
        CUDA_CHECK(cudaEventRecord(start, stream));
        cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
        for (int r = 0; r < TIMED_RUNS && st == CUDNN_STATUS_SUCCESS; r++)
            st = graph_execute_status(plans[i], m, uids, ptrs, work);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
        if (st != CUDNN_STATUS_SUCCESS) continue;
        ms[i] = t / (float)TIMED_RUNS;
        if (best < 0 || ms[i] < ms[best]) best = i;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    if (own) CUDA_CHECK(cudaFree(own));
    if (best < 0) snprintf(why, why_cap, "no candidate executed on scratch operands");
    return best;
}

void graph_tune_report(const char *what, int n, int chosen, const int64_t *engines, const float *ms, int rtc_skipped,
                       const char *untimed) {
    if (!graph_first_time(untimed ? "graph autotune, untimed" : "graph autotune", what)) return;   /* once per kind each */
    char skipped[96] = "";
    const char *ranks = graph_agree_role() == GRAPH_LEADER ? "; rank 0 times for every rank" : "";
    if (rtc_skipped)
        snprintf(skipped, sizeof skipped, "; %d more runtime-compiled engine%s skipped", rtc_skipped, rtc_skipped == 1 ? "" : "s");
    if (untimed)
        rt_warn("cuDNN graph %s: not timed (%s): engine %lld, the heuristics' first of %d candidate%s%s%s", what, untimed,
                (long long)engines[chosen], n, n == 1 ? "" : "s", skipped, ranks);
    else if (n == 1)
        rt_warn("cuDNN graph %s: engine %lld, the only candidate that finalized within the workspace%s%s", what,
                (long long)engines[0], skipped, ranks);
    else
        rt_warn("cuDNN graph %s: engine %lld timed fastest of %d candidates at start-up (%.3f ms; the heuristics' "
                "first, engine %lld: %.3f ms)%s; other shapes of this kind are timed alike, unreported%s",
                what, (long long)engines[chosen], n, ms[chosen], (long long)engines[0], ms[0], skipped, ranks);
}

void graph_tune_report_followed(const char *what, const graph_choice *c) {
    if (!c->candidates || !graph_first_time("graph autotune, rank 0's", what)) return;   /* as rank 0 reports */
    char how[96];
    if (c->candidates == 1) snprintf(how, sizeof how, "its only candidate within the workspace");
    else if (c->timed) snprintf(how, sizeof how, "timed there fastest of %d candidates at start-up", c->candidates);
    else snprintf(how, sizeof how, "the heuristics' first of %d candidates there, not timed", c->candidates);
    rt_warn("cuDNN graph %s: engine %lld, rank 0's choice (%s), which every rank runs; other shapes of this kind "
            "alike, unreported", what, (long long)c->engine, how);
}
