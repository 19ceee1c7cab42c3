/* The cuDNN graph (backend) API steps that the fused graphs (conv_bn_fprop.cu, conv_bn_wgrad.cu,
 * conv_bn_dgrad.cu, bn_finalize_graph.cu) and attention_sdpa.cu share: the first refusing step
 * remembered (G), a tensor descriptor, a pointwise operation, a convolution descriptor, an
 * operation graph with its plan (the first engine configuration the heuristics offer, mode A
 * then the fallback list, that finalizes within the workspace cap), the warning of a refused
 * graph, once per reason, and a plan run on its tensors. */
#ifndef RT_CUDA_CUDNN_GRAPH_CUH
#define RT_CUDA_CUDNN_GRAPH_CUH
#include <stddef.h>
#include "../cuda_libs.cuh"

/* A tensor of the graph as the timing at start-up needs it (cudnn_graph_tune.cu): its uid,
 * data type, the bytes it spans in memory (0: virtual) and whether it is passed by value. */
typedef struct {
    int64_t uid, dims[4], strides[4], bytes;
    cudnnDataType_t dt;
    bool is_virtual, by_value;
} graph_operand;
enum { GRAPH_MAX_OPERANDS = 24 };

typedef struct {
    cudnnStatus_t st;
    const char *step;   /* the first step cuDNN refused, or NULL */
    /* what graph_tensor and graph_conv made (the graph's shape, for the timing at start-up) */
    int n_operands;
    graph_operand operand[GRAPH_MAX_OPERANDS];
    int n_convs;
    int64_t conv[2][6];   /* a conv's paddings, strides, dilations */
} graph_err;

/* Runs call and keeps the first refusal (status and step) in *e, the caller's graph_err. */
#define G(step_, call)                                                              \
    do {                                                                            \
        cudnnStatus_t st_ = (call);                                                 \
        if (st_ != CUDNN_STATUS_SUCCESS && !e->step) e->st = st_, e->step = (step_); \
    } while (0)

/* A finalized 4-d tensor descriptor (16-byte aligned); is_virtual: an intermediate never in
 * memory; by_value: a scalar handed over in the variant pack's host memory. */
cudnnBackendDescriptor_t graph_tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                      const int64_t strides[4], bool is_virtual, bool by_value);
void graph_destroy_all(cudnnBackendDescriptor_t *d, int n);

/* After graph_plan: with a plan, the graph's n descriptors d join keep[*n_keep] (the plan may
 * not outlive them); without, they are destroyed and a step cuDNN refused is named in why. */
void graph_keep_or_explain(const graph_err *e, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t *d, int n,
                           cudnnBackendDescriptor_t *keep, int *n_keep, char *why, size_t why_cap);

/* conv2d.cu's hook: the shape of a conv's descriptors (nhwc, depthwise: its layout and kind). */
const rt_conv_shape *rt_cuda_conv_shape_of(const rt_cuda_conv *c, int *nhwc, int *depthwise);

/* One pointwise operation in FP32 math: y = mode(x, b) (b NULL: a unary mode) into *pw (the
 * mode) and *op (the operation). RELU_BWD takes the gradient as x, the forward's value as b
 * and writes its gradient to y (the frontend's DY, X, DX ports). */
void graph_pointwise(graph_err *e, cudnnBackendDescriptor_t *pw, cudnnBackendDescriptor_t *op, cudnnPointwiseMode_t mode,
                     cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y);
/* A 2-d cross-correlation with FP32 accumulation at the shape's paddings, strides and dilations. */
void graph_conv(graph_err *e, cudnnBackendDescriptor_t *conv, const rt_conv_shape *s);
/* Warns that `what` runs unfused for conv's shape and why, once per distinct reason and what
 * in the process (a net's convs of one shape refuse alike). */
void graph_warn_once(const char *what, const rt_cuda_conv *conv, const char *why);
/* True the first time this (what, why) pair is asked about in the process (graph_warn_once's
 * and attention's memory of what they have said). */
bool graph_first_time(const char *what, const char *why);

/* The operation graph of ops[0..n_ops) into *graph (NULL after a refused step), then its plan
 * (NULL if none), its workspace in *ws, and the 8 configurations and the heuristics it came
 * from appended to keep[*n_keep] (the plan may not outlive them). The plan: with the timing at
 * start-up on (graph_tune_candidates() > 0, cudnn_graph_tune.cu), the fastest of up to that
 * many configurations of heuristics mode A that finalize within cap bytes of workspace, timed
 * on scratch operands; else, or where mode A has none, the first configuration that finalizes
 * within cap (mode A, then the fallback list). With several ranks, rank 0 picks so and every
 * other rank finalizes rank 0's choice (graph_agree_choice); where a rank cannot, no rank keeps
 * a plan. Without a plan and without a refused step, why says why: a plan over the cap (what
 * and cap_hint name them), none finalized, or the rank that cannot run rank 0's. */
cudnnBackendDescriptor_t graph_plan(graph_err *e, cudnnBackendDescriptor_t *graph, const cudnnBackendDescriptor_t *ops,
                                    int64_t n_ops, size_t cap, size_t *ws, cudnnBackendDescriptor_t *keep, int *n_keep,
                                    char *why, size_t why_cap, const char *what, const char *cap_hint);

/* Runs a finalized plan once on the stream of rt_cudnn(): graph tensor uids[i] at ptrs[i]
 * (a by-value scalar's host address), with the plan's workspace. */
void graph_execute(cudnnBackendDescriptor_t plan, int64_t n, const int64_t *uids, void *const *ptrs, void *workspace);
/* The same, returning cuDNN's status instead of dying on a refusal (the timing's). */
cudnnStatus_t graph_execute_status(cudnnBackendDescriptor_t plan, int64_t n, const int64_t *uids, void *const *ptrs,
                                   void *workspace);

/* cudnn_graph_tune.cu: the timing of a graph's candidate plans at start-up, and the ranks'
 * agreement on rank 0's choice. */
/* How many candidates graph_plan times (0: the heuristics' first, as the build asked). */
int graph_tune_candidates(void);

/* What rank 0 chose for one graph, as every rank receives it: the graph's number among the
 * start-up's graphs and its shape (graph_tune_key, hashed), so that a rank building another
 * graph there is caught; the plan's heuristics mode (0: A, 1: the fallback list; -1: none,
 * the graph runs unfused), its position in that mode's list and its engine's global index; and
 * how rank 0 came to it (candidates: how many it finalized for the timing, 0 none; timed: it
 * timed them), for the other ranks' report. kind: GRAPH_AGREE_GRAPH or GRAPH_AGREE_END (the
 * end of the start-up's graphs, so that a rank with fewer graphs is caught too). */
enum { GRAPH_AGREE_GRAPH = 1, GRAPH_AGREE_END = 2 };
typedef struct {
    int32_t kind, seq;
    uint64_t key;
    int32_t mode, position;
    int64_t engine;
    int32_t candidates, timed;
    int32_t refused;   /* cuDNN refused a step of the graph (its shape, so its key, may be cut short) */
} graph_choice;
/* Who picks the graphs' plans: GRAPH_ALONE (one rank), GRAPH_LEADER (rank 0 of several, which
 * picks as one rank would) or GRAPH_FOLLOWER (another rank, which finalizes rank 0's choice
 * and never times). */
enum { GRAPH_FOLLOWER = -1, GRAPH_ALONE = 0, GRAPH_LEADER = 1 };
int graph_agree_role(void);
/* Several ranks, once per graph_plan, on every rank (a refused graph, and none offered,
 * included): rank 0's choice c (its own in; every rank's out), for the graph of key and what.
 * Every rank checks that it is at the same graph as rank 0; where one is not, every rank ends
 * with one message (rt_comm_die_all): ranks that build different graphs cannot run alike. */
void graph_agree_choice(graph_choice *c, const char *what, const char *key);
/* Then, on every rank: whether every rank holds rank 0's choice (ok: this rank does); false
 * gives the lowest rank that does not in *who. */
bool graph_agree_all(bool ok, int *who);
/* A follower's report of rank 0's choice, once per graph kind (what). */
void graph_tune_report_followed(const char *what, const graph_choice *c);
/* A configuration's engine: its global index (-1 unknown) and whether it compiles at
 * finalize (CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION). */
void graph_tune_engine(cudnnBackendDescriptor_t cfg, int64_t *engine, bool *runtime_compiled);
/* The graph's shape as a key (what, its tensors, its convs' geometry): graphs of equal key
 * take the same choice. */
void graph_tune_key(const graph_err *e, const char *what, char *key, size_t cap);
/* The heuristics' position (mode A) of the configuration chosen for key before, and its
 * engine, or -1; graph_tune_remember records one. */
int graph_tune_recall(const char *key, int64_t *engine);
void graph_tune_remember(const char *key, int position, int64_t engine);
/* Times plans[0..n) (workspaces ws[i]) on scratch operands made from e's tensors, none of the
 * run's memory: a warm-up execution, then a few timed ones each. Returns the fastest's index,
 * its time and the first's in ms[i] (negative: not timed; a plan that fails to execute is
 * never the fastest), or -1 when nothing could be timed (no scratch memory), in which case
 * why says so. */
int graph_tune_time(const graph_err *e, cudnnBackendDescriptor_t *plans, const size_t *ws, int n, float *ms, char *why,
                    size_t why_cap);
/* The start-up report, once per graph kind (what). */
void graph_tune_report(const char *what, int n, int chosen, const int64_t *engines, const float *ms, int rtc_skipped,
                       const char *untimed);
#endif
