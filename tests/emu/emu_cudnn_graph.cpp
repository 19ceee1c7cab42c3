/* Reference cuDNN graph (backend) API for the CUDA emulator: the descriptors the runtime
 * builds (runtime/cuda/ops/conv_bn_fprop.cu), written from cuDNN's graph-API documentation,
 * not from our CPU ops. Every descriptor keeps the attributes it is given (type and count
 * checked against the attribute's documented type) and is checked when finalized:
 *   TENSOR: data type, dimensions and strides (N,C,H,W order, any strides), unique id,
 *     byte alignment; CONVOLUTION: compute type, mode, 2 spatial dimensions, pre and post
 *     paddings, strides, dilations;
 *   OPERATION_CONVOLUTION_FORWARD: X, W, Y, the convolution, alpha, beta (Y = alpha·conv +
 *     beta·Y); OPERATION_GEN_STATS: mode SUM_SQSUM, math precision, X, SUM, SQSUM
 *     (per-channel sums of X and of X², [1,C,1,1]);
 *   OPERATIONGRAPH: handle and operations, whose tensors connect by unique id.
 *   POINTWISE: mode (MUL, ADD, RELU_FWD, IDENTITY emulated) and math precision; OPERATION_POINTWISE:
 *     the descriptor, X, B (the binary modes), Y; tensors may be virtual (IS_VIRTUAL).
 *   OPERATION_CONVOLUTION_BACKWARD_FILTER: X, DY, DW, the convolution, alpha, beta.
 * Two engines run the conv + genstats graph, each on the support surface its documentation
 * gives (bench/RESULTS.md, "cuDNN's engines for conv + statistics in BF16", quotes it):
 *  - ConvBNfprop (specialized, pre-compiled), optionally with its scale-bias-ReLU prologue
 *    (X = relu(raw·scale + bias): MUL, ADD, RELU_FWD into virtual tensors, FP16 per-channel
 *    [1,C,1,1] scale and bias, the ReLU'd value rounded to FP16 as the tensor cores read it):
 *    FP16 X, W, Y, C and K multiples of 8, 1x1 or 3x3 filters, dilation 1;
 *  - the generic runtime-fusion engine's support surface 70 (a GenStats node in the
 *    epilogue, whose input must be FP16 or FP32): 16-bit X and W (BF16 is what the runtime
 *    builds), the conv's output a virtual FP32 tensor that the genstats reads and a
 *    CUDNN_POINTWISE_IDENTITY (FP32 math) rounds into the 16-bit Y in memory, no prologue (its
 *    prologue is FP16 only), any filter size and dilation, C and K even (its 32-bit alignment
 *    of every tensor); the sums are of the conv's FP32 output;
 * and for both: a convolution forward whose output only the genstats (and the identity) read,
 * FP32 sums, compute FP32, cross-correlation, NHWC packed X and Y, KRSC packed W, alpha 1 and
 * beta 0. The heuristics
 * (any mode) offer the one engine configuration that takes such a graph and none otherwise;
 * an execution plan reports 1 KiB of workspace, which each execution overwrites with NaN.
 * Execution runs on the handle's stream: the convolution in double from the 16-bit operands,
 * Y stored in the data type, then the sums (ConvBNfprop: of the stored Y, the values every
 * reader of Y sees; runtime fusion: of the FP32 output) accumulated in double and stored in
 * FP32. ConvBNwgrad's pattern is emulated too (wgrad_takes): the same prologue into a
 * convolution backward filter, DW in FP16 from the products summed in double
 * (cudnn-frontend's scale-bias-relu-wgrad sample). DgradDreluBNBwdWeight too (a graph with a
 * CONVOLUTION_BACKWARD_DATA, the SUB, MUL, MUL, ADD chain recomputing the bn's output, a
 * RELU_BWD and a BN_BWD_WEIGHTS): its support surface and reference in emu_cudnn_dgrad.inc and
 * emu_cudnn_dgrad_exec.inc, included below. BN finalize too (OPERATION_BN_FINALIZE_STATISTICS alone
 * in its graph): its support surface and reference in emu_cudnn_bnfin.inc.
 * A second engine runs the fused attention operations, OPERATION_SDPA_FWD (Q, K, V, O, STATS,
 * SCALE) and OPERATION_SDPA_BWD (those and dO -> dQ, dK, dV), each alone in its graph, on the
 * reference and support surface of emu_cudnn_sdpa.cpp; tensors there may be BF16 and the scale
 * a by-value (IS_BY_VALUE) FP32 tensor whose variant-pack pointer is a host address. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <chrono>
#include <map>
#include <vector>
#include <cudnn.h>
#include "emu_internal.h"
#include "emu_sdpa.h"

using emu::fail;

namespace {

struct attr {
    cudnnBackendAttributeType_t type;
    int64_t count;
    std::vector<unsigned char> bytes;
};

struct tensor_info {
    cudnnDataType_t dt;
    int64_t dims[4], strides[4], uid;
    bool virt;   /* an intermediate the engine keeps to itself */
    bool by_value;   /* a host value in the variant pack (the SDPA scale) */
};

/* The graph's two operations, once the graph is finalized (an execution plan keeps a copy:
 * its graph's descriptors may be destroyed after it is finalized). */
struct conv_stats {
    const struct desc *fwd, *stats, *cv;
    tensor_info x, w, y, sum, sq;
    /* ConvBNwgrad instead: a convolution backward filter (bwd) whose X is the prologue's output;
     * then x, w, y are its X, DW, DY (w written, y read) and there are no sums */
    const struct desc *bwd;
    bool wgrad;
    int64_t pad[2], stride[2], dil[2];
    /* the scale-bias-ReLU prologue: x = relu(raw·scale + bias), when sbr */
    bool sbr;
    tensor_info raw, scale, bias;
    const struct desc *pw[3];   /* its operations, in graph order of finding */
    int n_pw;
    /* the runtime-fusion epilogue's identity: y (the conv's output, virtual FP32) rounded into
     * out, the 16-bit tensor in memory, when cast; else out is y */
    bool cast;
    tensor_info out;
    cudnnDataType_t cast_prec;
};

/* The DgradDreluBNBwdWeight graph's tensors (pick_dgrad): the conv's DY and W into the virtual
 * data gradient; the bn's input X, mean, inv_std, gamma (scale), beta (bias); DX the ReLU's
 * gradient, written; the five per-channel outputs of BN_BWD_WEIGHTS. */
struct dgrad_bn {
    tensor_info dy, w, grad, x, mean, inv_std, gamma, beta, dx, dgamma, dbeta, eq_dy, eq_x, eq_bias;
    int64_t pad[2], stride[2], dil[2];
};

/* The BN finalize graph's tensors (emu_cudnn_bnfin.inc: its ports' order, BNF_*). */
struct bn_fin {
    tensor_info t[15];
};

struct desc {
    cudnnBackendDescriptorType_t type;
    bool finalized = false;
    std::map<int, attr> attrs;
    /* what finalize derived */
    tensor_info t{};                    /* TENSOR */
    bool pattern_ok = false;            /* OPERATIONGRAPH: the emulated engine takes it */
    desc *graph = nullptr;              /* ENGINECFG, EXECUTION_PLAN: the graph it runs */
    cudnnHandle_t handle = nullptr;     /* OPERATIONGRAPH, EXECUTION_PLAN */
    conv_stats run{};                   /* EXECUTION_PLAN: what it computes */
    /* SDPA: an operation's tensors (finalized op), the graph's (pattern_ok), a plan's */
    bool is_sdpa = false, sdpa_bwd = false;
    emu::sdpa_tensor sdpa[emu::SDPA_N]{};
    size_t ws = 0;                      /* EXECUTION_PLAN: the workspace it reports */
    int engine = 0;                     /* ENGINECFG, ENGINE, EXECUTION_PLAN: the emulated engine (EMU_ENGINES) */
    /* DgradDreluBNBwdWeight (emu_dgrad_graph): the graph's (is_dgrad, pattern_ok), a plan's */
    bool is_dgrad = false;
    dgrad_bn dg{};
    /* BN finalize (emu_cudnn_bnfin.inc): the graph's (is_bnf, pattern_ok), a plan's */
    bool is_bnf = false;
    bn_fin bnf{};
};
/* emu_cudnn_bnfin.inc, included below */
bool bnf_attr_type(int name, cudnnBackendAttributeType_t *t);
cudnnStatus_t finalize_bnf_op(const desc *d);
bool pick_bnf(const desc *g, bn_fin *p);
cudnnStatus_t execute_bnf(cudnnHandle_t h, const desc *plan, const desc *pack);

const size_t PLAN_WORKSPACE = 1024;

/* The emulated engine configurations the heuristics offer for a graph they take, in their
 * order: all compute the same reference, so that the timing at start-up
 * (runtime/cuda/ops/cudnn_graph_tune.cu) has candidates to choose among and a test can show
 * its choice changes no result. The slow ones take twice the reference's time and 3 ms more
 * (host time is what the emulator's events measure; slow_engine, so that no machine's load
 * turns the order around): the heuristics' first everywhere, so that the timing keeps another
 * plan than the first, and one more that depends on the MPI rank, as two GPUs' timings may
 * rank engines differently (emu_cudnn.cpp's algorithm search does the same): the fourth on
 * even ranks, the second on odd ones. So rank 0 times the second (41) fastest and rank 1 would
 * time the fourth (43): ranks that chose alone would run different engines, which the emulated
 * NCCL stops (it compares the plans each rank holds: plan_digest). The second and fourth are
 * marked runtime-compiled, the fifth too (a third, which the timing skips), and the third
 * needs more workspace than any cap. Each needs its extra workspace over the graph's own, and
 * checks it has it. */
struct emu_engine {
    int64_t id;          /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX */
    bool compiled;       /* CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION */
    size_t extra_ws;     /* workspace over the graph's own */
    int sleep_us[2];     /* slow (slow_engine) by that much on even and on odd MPI ranks; 0: fast */
};
const emu_engine EMU_ENGINES[] = { { 40, false, 0, { 3000, 3000 } }, { 41, true, 256, { 0, 3000 } },
                                   { 42, false, (size_t)1 << 40, { 0, 0 } }, { 43, true, 512, { 3000, 0 } },
                                   { 44, true, 768, { 0, 0 } } };
const int N_EMU_ENGINES = (int)(sizeof EMU_ENGINES / sizeof EMU_ENGINES[0]);
int engine_sleep_us(int engine) { return EMU_ENGINES[engine].sleep_us[emu::launcher_rank() % 2]; }
/* Whether this process's emulated cuDNN refuses to finalize a plan of engine id: EMU_GRAPH_REFUSE
 * lists such ids (comma-separated), for a test to give one rank a cuDNN that cannot run what
 * another chose (tests/emu/graph_ranks_emu_test.sh). */
bool engine_refused(int64_t id) {
    static std::vector<int64_t> ids;
    static bool read = false;
    if (!read) {
        read = true;
        const char *e = getenv("EMU_GRAPH_REFUSE");
        for (const char *p = e ? e : ""; *p;) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p || (*end && *end != ','))
                emu::fail("EMU_GRAPH_REFUSE='%s': not a comma-separated list of engine ids", e);
            ids.push_back(v);
            p = *end ? end + 1 : end;
        }
    }
    for (int64_t v : ids)
        if (v == id) return true;
    return false;
}
/* A slow engine's execution, held in its scope: it takes twice the reference's time and its
 * sleep (so that the timing tells it from a fast one whatever the machine's load). */
struct slow_engine {
    int sleep_us;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    explicit slow_engine(int us) : sleep_us(us) {}
    ~slow_engine() {
        if (!sleep_us) return;
        auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
        usleep((useconds_t)(took + sleep_us));
    }
};

/* A finalized plan's share of emu::cudnn_digest while it lives (added at finalize, taken
 * back at destroy): its engine and what it computes. The plans a rank holds after start-up
 * are the ones it runs; counting executions instead would count rank 0's timing, which the
 * other ranks never do. */
uint64_t plan_digest(const desc *d) {
    uint64_t kind = d->is_sdpa ? (d->sdpa_bwd ? 1 : 2) : d->is_bnf ? 3 : d->is_dgrad ? 4 : d->run.wgrad ? 5 : 6;
    return ((uint64_t)EMU_ENGINES[d->engine].id * 8 + kind) * 0xc2b2ae3d27d4eb4full;
}

size_t type_bytes(cudnnBackendAttributeType_t t) {
    switch (t) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_VOID_PTR: case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void *);
    case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_CHAR: return 1;
    default: return 4;   /* FLOAT, INT32 and the enumerations */
    }
}

bool has(const desc *d, int name) { return d->attrs.count(name) != 0; }
template <typename T> T one(const desc *d, int name) {
    T v;
    memcpy(&v, d->attrs.at(name).bytes.data(), sizeof v);
    return v;
}
template <typename T> std::vector<T> many(const desc *d, int name) {
    const attr &a = d->attrs.at(name);
    std::vector<T> v((size_t)a.count);
    memcpy(v.data(), a.bytes.data(), sizeof(T) * v.size());
    return v;
}
desc *sub(const desc *d, int name, cudnnBackendDescriptorType_t want) {
    if (!has(d, name)) return nullptr;
    desc *s = one<desc *>(d, name);
    return s && s->type == want && s->finalized ? s : nullptr;
}
double scalar(const desc *d, int name) {
    const attr &a = d->attrs.at(name);
    if (a.type == CUDNN_TYPE_DOUBLE) return one<double>(d, name);
    return one<float>(d, name);
}

/* The documented type of each attribute the emulator knows; another attribute is refused. */
bool attr_type(cudnnBackendDescriptorType_t dt, int name, cudnnBackendAttributeType_t *t) {
    switch (name) {
    case CUDNN_ATTR_POINTWISE_MODE: *t = CUDNN_TYPE_POINTWISE_MODE; return true;
    case CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR: case CUDNN_ATTR_OPERATION_POINTWISE_XDESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_BDESC: case CUDNN_ATTR_OPERATION_POINTWISE_YDESC:
        *t = CUDNN_TYPE_BACKEND_DESCRIPTOR; return true;
    case CUDNN_ATTR_POINTWISE_MATH_PREC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC:
    case CUDNN_ATTR_TENSOR_DATA_TYPE: case CUDNN_ATTR_CONVOLUTION_COMP_TYPE: case CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC:
        *t = CUDNN_TYPE_DATA_TYPE; return true;
    case CUDNN_ATTR_TENSOR_DIMENSIONS: case CUDNN_ATTR_TENSOR_STRIDES: case CUDNN_ATTR_TENSOR_UNIQUE_ID:
    case CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT: case CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS: case CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS:
    case CUDNN_ATTR_CONVOLUTION_POST_PADDINGS: case CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES:
    case CUDNN_ATTR_CONVOLUTION_DILATIONS: case CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS:
        *t = CUDNN_TYPE_INT64; return true;
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL: case CUDNN_ATTR_TENSOR_IS_BY_VALUE: *t = CUDNN_TYPE_BOOLEAN; return true;
    case CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC: case CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC:
    case CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC: case CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC:
    case CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC: case CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC:
    case CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC: case CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC:
    case CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC: case CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC:
    case CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC: case CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC:
    case CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC: case CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC:
    case CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC: case CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC:
        *t = CUDNN_TYPE_BACKEND_DESCRIPTOR; return true;
    case CUDNN_ATTR_CONVOLUTION_CONV_MODE: *t = CUDNN_TYPE_CONVOLUTION_MODE; return true;
    case CUDNN_ATTR_OPERATION_GENSTATS_MODE: *t = CUDNN_TYPE_GENSTATS_MODE; return true;
    case CUDNN_ATTR_ENGINEHEUR_MODE: *t = CUDNN_TYPE_HEUR_MODE; return true;
    case CUDNN_ATTR_OPERATIONGRAPH_HANDLE: case CUDNN_ATTR_EXECUTION_PLAN_HANDLE: *t = CUDNN_TYPE_HANDLE; return true;
    case CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS: case CUDNN_ATTR_VARIANT_PACK_WORKSPACE: *t = CUDNN_TYPE_VOID_PTR; return true;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA: case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA:
        *t = CUDNN_TYPE_FLOAT; return true;   /* or DOUBLE: set_attribute takes either */
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC:
    case CUDNN_ATTR_OPERATION_POINTWISE_DXDESC: case CUDNN_ATTR_OPERATION_POINTWISE_DYDESC:
    case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC:
    case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC:
    case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC:
    case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC:
    case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC: case CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW: case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC:
        *t = CUDNN_TYPE_BACKEND_DESCRIPTOR; return true;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X: case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y: case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC:
    case CUDNN_ATTR_OPERATION_GENSTATS_XDESC: case CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC:
    case CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC: case CUDNN_ATTR_OPERATIONGRAPH_OPS:
    case CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH: case CUDNN_ATTR_ENGINEHEUR_RESULTS:
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        *t = CUDNN_TYPE_BACKEND_DESCRIPTOR; return true;
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: *t = CUDNN_TYPE_INT64; return true;
    default: (void)dt; return bnf_attr_type(name, t);
    }
}

size_t dt_bytes(cudnnDataType_t t) {
    return t == CUDNN_DATA_FLOAT ? 4 : t == CUDNN_DATA_HALF || t == CUDNN_DATA_BFLOAT16 ? 2 : t == CUDNN_DATA_INT64 ? 8 : 0;
}

/* The last address + 1 a tensor spans, in elements. */
int64_t span(const tensor_info &t) {
    int64_t s = 1;
    for (int i = 0; i < 4; i++) s += (t.dims[i] - 1) * t.strides[i];
    return s;
}
bool nhwc_packed(const tensor_info &t) {
    const int64_t *d = t.dims, *s = t.strides;
    return s[1] == 1 && s[3] == d[1] && s[2] == d[3] * d[1] && s[0] == d[2] * d[3] * d[1];
}

cudnnStatus_t finalize_tensor(desc *d) {
    for (int a : { CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_ATTR_TENSOR_STRIDES,
                   CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT })
        if (!has(d, a)) return CUDNN_STATUS_BAD_PARAM;
    std::vector<int64_t> dims = many<int64_t>(d, CUDNN_ATTR_TENSOR_DIMENSIONS), st = many<int64_t>(d, CUDNN_ATTR_TENSOR_STRIDES);
    if (dims.size() != 4 || st.size() != 4) return CUDNN_STATUS_NOT_SUPPORTED;   /* 4-D only emulated */
    for (int i = 0; i < 4; i++)
        if (dims[i] <= 0 || st[i] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d->t.virt = has(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL) && one<bool>(d, CUDNN_ATTR_TENSOR_IS_VIRTUAL);
    d->t.by_value = has(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE) && one<bool>(d, CUDNN_ATTR_TENSOR_IS_BY_VALUE);
    d->t.dt = one<cudnnDataType_t>(d, CUDNN_ATTR_TENSOR_DATA_TYPE);
    if (!dt_bytes(d->t.dt)) return CUDNN_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < 4; i++) d->t.dims[i] = dims[(size_t)i], d->t.strides[i] = st[(size_t)i];
    d->t.uid = one<int64_t>(d, CUDNN_ATTR_TENSOR_UNIQUE_ID);
    return CUDNN_STATUS_SUCCESS;
}

/* A pointwise operation's mode, and its X, B (or nullptr) and Y tensors. */
cudnnPointwiseMode_t pw_mode(const desc *op) {
    return one<cudnnPointwiseMode_t>(sub(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR),
                                     CUDNN_ATTR_POINTWISE_MODE);
}
const tensor_info *pw_t(const desc *op, int name) {
    const desc *t = sub(op, name, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    return t ? &t->t : nullptr;
}

/* The prologue of the ConvBNfprop pattern: the conv's X is relu(add(mul(raw, scale), bias)),
 * three pointwise operations chained by unique id (in any order in the graph). */
bool prologue(conv_stats *p) {
    if (p->n_pw != 3) return false;
    const desc *mul = nullptr, *add = nullptr, *relu = nullptr;
    for (int i = 0; i < 3; i++) {
        cudnnPointwiseMode_t m = pw_mode(p->pw[i]);
        if (m == CUDNN_POINTWISE_MUL && !mul) mul = p->pw[i];
        else if (m == CUDNN_POINTWISE_ADD && !add) add = p->pw[i];
        else if (m == CUDNN_POINTWISE_RELU_FWD && !relu) relu = p->pw[i];
        else return false;
    }
    if (!mul || !add || !relu) return false;
    const tensor_info *relu_y = pw_t(relu, CUDNN_ATTR_OPERATION_POINTWISE_YDESC), *relu_x = pw_t(relu, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    const tensor_info *add_y = pw_t(add, CUDNN_ATTR_OPERATION_POINTWISE_YDESC), *add_x = pw_t(add, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    const tensor_info *mul_y = pw_t(mul, CUDNN_ATTR_OPERATION_POINTWISE_YDESC), *mul_x = pw_t(mul, CUDNN_ATTR_OPERATION_POINTWISE_XDESC);
    const tensor_info *scale = pw_t(mul, CUDNN_ATTR_OPERATION_POINTWISE_BDESC), *bias = pw_t(add, CUDNN_ATTR_OPERATION_POINTWISE_BDESC);
    if (!relu_y || !relu_x || !add_y || !add_x || !mul_y || !mul_x || !scale || !bias) return false;
    if (relu_y->uid != p->x.uid || relu_x->uid != add_y->uid || add_x->uid != mul_y->uid) return false;
    if (!relu_y->virt || !add_y->virt || !mul_y->virt || mul_x->virt || scale->virt || bias->virt) return false;
    p->sbr = true, p->raw = *mul_x, p->scale = *scale, p->bias = *bias;
    return true;
}

bool pick(const desc *g, conv_stats *p) {
    std::vector<desc *> ops = many<desc *>(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    p->fwd = p->stats = p->bwd = nullptr;
    p->sbr = p->wgrad = false, p->n_pw = 0, p->cast = false;
    const desc *cast = nullptr;
    for (desc *o : ops) {
        if (o->type == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR && !p->fwd) p->fwd = o;
        else if (o->type == CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR && !p->stats) p->stats = o;
        else if (o->type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR && !p->bwd) p->bwd = o;
        else if (o->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && pw_mode(o) == CUDNN_POINTWISE_IDENTITY && !cast)
            cast = o;
        else if (o->type == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR && p->n_pw < 3) p->pw[p->n_pw++] = o;
        else return false;   /* another operation: no emulated engine takes it */
    }
    if (p->bwd) {   /* ConvBNwgrad: the weight gradient alone (with its prologue, checked below) */
        if (p->fwd || p->stats || cast) return false;
        p->wgrad = true;
        p->cv = sub(p->bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
        p->x = sub(p->bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->w = sub(p->bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->y = sub(p->bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
    } else {
        if (!p->fwd || !p->stats) return false;
        p->cv = sub(p->fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
        p->x = sub(p->fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->w = sub(p->fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->y = sub(p->fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->sum = sub(p->stats, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
        p->sq = sub(p->stats, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR)->t;
    }
    if (p->n_pw && !prologue(p)) return false;
    p->out = p->y;
    if (cast) {   /* the identity must read the conv's output */
        const tensor_info *cx = pw_t(cast, CUDNN_ATTR_OPERATION_POINTWISE_XDESC), *cy = pw_t(cast, CUDNN_ATTR_OPERATION_POINTWISE_YDESC);
        if (!cx || !cy || cx->uid != p->y.uid) return false;
        p->cast = true, p->out = *cy;
        p->cast_prec = one<cudnnDataType_t>(sub(cast, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR),
                                            CUDNN_ATTR_POINTWISE_MATH_PREC);
    }
    std::vector<int64_t> pre = many<int64_t>(p->cv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
    std::vector<int64_t> st = many<int64_t>(p->cv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
    std::vector<int64_t> dl = many<int64_t>(p->cv, CUDNN_ATTR_CONVOLUTION_DILATIONS);
    for (int i = 0; i < 2; i++) p->pad[i] = pre[(size_t)i], p->stride[i] = st[(size_t)i], p->dil[i] = dl[(size_t)i];
    return true;
}

/* The ConvBNwgrad engine's support surface (the documentation's specialized pre-compiled
 * engine, as ConvBNfprop's): the prologue required, FP16 X (the bn's input), scale, bias, DY
 * and DW, FP32 compute, cross-correlation, NHWC packed X and DY, KRSC packed DW, C and K
 * multiples of 8, 1x1 or 3x3 filters, dilation 1, alpha 1, beta 0 (DW overwritten). */
bool wgrad_takes(const conv_stats &p) {
    if (!p.sbr || !p.x.virt || p.w.virt || p.y.virt) return false;
    if (p.raw.dt != CUDNN_DATA_HALF || p.scale.dt != CUDNN_DATA_HALF || p.bias.dt != CUDNN_DATA_HALF) return false;
    if (p.x.dt != CUDNN_DATA_HALF || p.w.dt != CUDNN_DATA_HALF || p.y.dt != CUDNN_DATA_HALF) return false;
    if (!nhwc_packed(p.raw) || memcmp(p.raw.dims, p.x.dims, sizeof p.x.dims)) return false;
    for (const tensor_info *t : { &p.scale, &p.bias })
        if (t->dims[0] != 1 || t->dims[1] != p.x.dims[1] || t->dims[2] != 1 || t->dims[3] != 1) return false;
    if (one<cudnnDataType_t>(p.cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) != CUDNN_DATA_FLOAT) return false;
    if (one<cudnnConvolutionMode_t>(p.cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE) != CUDNN_CROSS_CORRELATION) return false;
    if (!nhwc_packed(p.y) || !nhwc_packed(p.w)) return false;
    int64_t c = p.x.dims[1], k = p.w.dims[0], r = p.w.dims[2], s = p.w.dims[3];
    if (c % 8 || k % 8 || r != s || (r != 1 && r != 3)) return false;
    if (p.dil[0] != 1 || p.dil[1] != 1) return false;
    return scalar(p.bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA) == 1.0 &&
           scalar(p.bwd, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA) == 0.0;
}

/* Whether the emulated ConvBNfprop (or ConvBNwgrad) engine takes the finalized graph g. */
bool engine_takes(const desc *g) {
    conv_stats p;
    if (!pick(g, &p)) return false;
    if (p.wgrad) return wgrad_takes(p);
    const desc *genstats_x = sub(p.stats, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (genstats_x->t.uid != p.y.uid) return false;   /* the genstats must read the conv's output */
    if (p.sbr) {   /* FP16 input, FP16 per-channel scale and bias, FP16 into the MMA */
        if (p.raw.dt != CUDNN_DATA_HALF || p.scale.dt != CUDNN_DATA_HALF || p.bias.dt != CUDNN_DATA_HALF) return false;
        if (!nhwc_packed(p.raw) || memcmp(p.raw.dims, p.x.dims, sizeof p.x.dims)) return false;
        for (const tensor_info *t : { &p.scale, &p.bias })
            if (t->dims[0] != 1 || t->dims[1] != p.x.dims[1] || t->dims[2] != 1 || t->dims[3] != 1) return false;
    } else if (p.x.virt) {
        return false;
    }
    if (p.out.virt || p.sum.virt || p.sq.virt || p.w.virt) return false;
    cudnnDataType_t dt = p.x.dt;
    if (p.cast) {   /* runtime fusion (surface 70): 16-bit data, the conv's FP32 output virtual, no prologue */
        if ((dt != CUDNN_DATA_HALF && dt != CUDNN_DATA_BFLOAT16) || p.sbr) return false;
        if (!p.y.virt || p.y.dt != CUDNN_DATA_FLOAT || p.cast_prec != CUDNN_DATA_FLOAT) return false;
        if (memcmp(p.out.dims, p.y.dims, sizeof p.y.dims) || !nhwc_packed(p.out)) return false;
    } else if (p.y.virt || p.y.dt != dt) {
        return false;
    }
    /* ConvBNfprop: FP16 only; GenStats in runtime fusion reads FP16 or FP32 (so BF16 needs the cast) */
    if (!p.cast && dt != CUDNN_DATA_HALF) return false;
    if (p.w.dt != dt || p.out.dt != dt) return false;
    if (p.sum.dt != CUDNN_DATA_FLOAT || p.sq.dt != CUDNN_DATA_FLOAT) return false;
    if (one<cudnnDataType_t>(p.cv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) != CUDNN_DATA_FLOAT) return false;
    if (one<cudnnConvolutionMode_t>(p.cv, CUDNN_ATTR_CONVOLUTION_CONV_MODE) != CUDNN_CROSS_CORRELATION) return false;
    if (one<cudnnGenStatsMode_t>(p.stats, CUDNN_ATTR_OPERATION_GENSTATS_MODE) != CUDNN_GENSTATS_SUM_SQSUM) return false;
    if (!nhwc_packed(p.x) || !nhwc_packed(p.y) || !nhwc_packed(p.w)) return false;   /* KRSC is W's NHWC */
    int64_t c = p.x.dims[1], k = p.w.dims[0], r = p.w.dims[2], s = p.w.dims[3];
    if (!p.cast) {   /* ConvBNfprop's limits */
        if (c % 8 || k % 8 || r != s || (r != 1 && r != 3)) return false;
        if (p.dil[0] != 1 || p.dil[1] != 1) return false;
    } else if (c % 2 || k % 2) {   /* runtime fusion: 32-bit aligned rows of 16-bit channels */
        return false;
    }
    if (scalar(p.fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA) != 1.0 ||
        scalar(p.fwd, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA) != 0.0)
        return false;
    for (const tensor_info *t : { &p.sum, &p.sq })
        if (t->dims[0] != 1 || t->dims[1] != k || t->dims[2] != 1 || t->dims[3] != 1) return false;
    return true;
}

#include "emu_cudnn_dgrad.inc"

/* The graph's tensors checked against each other, as finalizing a graph does. */
cudnnStatus_t finalize_graph(desc *g) {
    if (!has(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE) || !has(g, CUDNN_ATTR_OPERATIONGRAPH_OPS)) return CUDNN_STATUS_BAD_PARAM;
    g->handle = one<cudnnHandle_t>(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE);
    for (desc *o : many<desc *>(g, CUDNN_ATTR_OPERATIONGRAPH_OPS))
        if (!o || !o->finalized) return CUDNN_STATUS_BAD_PARAM;
    conv_stats p;
    if (pick(g, &p)) {   /* the conv's shapes agree (cuDNN's rule for any conv) */
        int64_t oh = 1 + (p.x.dims[2] + 2 * p.pad[0] - ((p.w.dims[2] - 1) * p.dil[0] + 1)) / p.stride[0];
        int64_t ow = 1 + (p.x.dims[3] + 2 * p.pad[1] - ((p.w.dims[3] - 1) * p.dil[1] + 1)) / p.stride[1];
        if (p.x.dims[1] != p.w.dims[1] || p.y.dims[1] != p.w.dims[0] || p.y.dims[0] != p.x.dims[0] || p.y.dims[2] != oh ||
            p.y.dims[3] != ow)
            return CUDNN_STATUS_BAD_PARAM;
    }
    std::vector<desc *> ops = many<desc *>(g, CUDNN_ATTR_OPERATIONGRAPH_OPS);
    if (ops.size() == 1 && ops[0]->is_sdpa) {   /* the fused attention engine: its operation alone */
        g->is_sdpa = true, g->sdpa_bwd = ops[0]->sdpa_bwd;
        memcpy(g->sdpa, ops[0]->sdpa, sizeof g->sdpa);
        g->pattern_ok = emu::sdpa_refusal(g->sdpa_bwd, g->sdpa) == nullptr;
        return CUDNN_STATUS_SUCCESS;
    }
    for (desc *o : ops)
        if (o->is_sdpa) return CUDNN_STATUS_NOT_SUPPORTED;   /* SDPA with other operations: not emulated */
    for (desc *o : ops)
        if (o->type == CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR) {   /* BN finalize */
            g->is_bnf = true;
            g->pattern_ok = pick_bnf(g, &g->bnf);
            return CUDNN_STATUS_SUCCESS;
        }
    for (desc *o : ops)
        if (o->type == CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR) {   /* DgradDreluBNBwdWeight */
            g->is_dgrad = true;
            g->pattern_ok = pick_dgrad(g, &g->dg) && dgrad_takes(g->dg);
            return CUDNN_STATUS_SUCCESS;
        }
    g->pattern_ok = engine_takes(g);
    return CUDNN_STATUS_SUCCESS;
}

/* An SDPA operation's tensors, by the attribute each is set with (Q, K, V, O required; the
 * backward's dO, dQ, dK, dV too). */
cudnnStatus_t finalize_sdpa(desc *d, bool bwd) {
    static const int fwd_names[emu::SDPA_N] = { CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC,
        CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, -1, -1, -1, -1 };
    static const int bwd_names[emu::SDPA_N] = { CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC,
        CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC };
    const int *names = bwd ? bwd_names : fwd_names;
    for (int i = 0; i < emu::SDPA_N; i++) {
        emu::sdpa_tensor &t = d->sdpa[i];
        t.set = false;
        if (names[i] < 0 || !has(d, names[i])) continue;
        const desc *td = sub(d, names[i], CUDNN_BACKEND_TENSOR_DESCRIPTOR);
        if (!td) return CUDNN_STATUS_BAD_PARAM;
        t.set = true, t.dt = td->t.dt, t.uid = td->t.uid, t.virt = td->t.virt, t.by_value = td->t.by_value;
        memcpy(t.dims, td->t.dims, sizeof t.dims), memcpy(t.strides, td->t.strides, sizeof t.strides);
    }
    for (int i : { emu::SDPA_Q, emu::SDPA_K, emu::SDPA_V, emu::SDPA_O })
        if (!d->sdpa[i].set) return CUDNN_STATUS_BAD_PARAM;
    if (bwd)
        for (int i : { emu::SDPA_DO, emu::SDPA_DQ, emu::SDPA_DK, emu::SDPA_DV })
            if (!d->sdpa[i].set) return CUDNN_STATUS_BAD_PARAM;
    d->is_sdpa = true, d->sdpa_bwd = bwd;
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t finalize(desc *d) {
    auto need = [&](std::initializer_list<int> names) {
        for (int a : names)
            if (!has(d, a)) return false;
        return true;
    };
    switch (d->type) {
    case CUDNN_BACKEND_TENSOR_DESCRIPTOR: return finalize_tensor(d);
    case CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR:
        if (!need({ CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                    CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                    CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS }))
            return CUDNN_STATUS_BAD_PARAM;
        if (one<int64_t>(d, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS) != 2) return CUDNN_STATUS_NOT_SUPPORTED;
        for (int a : { CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                       CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_ATTR_CONVOLUTION_DILATIONS })
            if (d->attrs.at(a).count != 2) return CUDNN_STATUS_BAD_PARAM;
        if (many<int64_t>(d, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS) != many<int64_t>(d, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS))
            return CUDNN_STATUS_NOT_SUPPORTED;   /* asymmetric padding: not emulated */
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        if (!sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) ||
            !need({ CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA }))
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        if (!sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) ||
            !need({ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA }))
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        if (!sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR) ||
            !need({ CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA }))
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATION_BN_BWD_WEIGHTS_DESCRIPTOR:
        for (int a : { CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_X_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DY_DESC,
                       CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_INVSTD_DESC,
                       CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_BN_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_SCALE_DESC,
                       CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_DBN_BIAS_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_DY_SCALE_DESC,
                       CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_X_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_EQ_BIAS })
            if (!sub(d, a, CUDNN_BACKEND_TENSOR_DESCRIPTOR)) return CUDNN_STATUS_BAD_PARAM;
        return need({ CUDNN_ATTR_OPERATION_BN_BWD_WEIGHTS_MATH_PREC }) ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
    case CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR:
        if (!sub(d, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !sub(d, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) ||
            !need({ CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC }))
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return finalize_graph(d);
    case CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR: return finalize_bnf_op(d);
    case CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR: return finalize_sdpa(d, false);
    case CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR: return finalize_sdpa(d, true);
    case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
        return need({ CUDNN_ATTR_POINTWISE_MODE, CUDNN_ATTR_POINTWISE_MATH_PREC }) ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR: {
        const desc *pw = sub(d, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        if (!pw || !sub(d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR)) return CUDNN_STATUS_BAD_PARAM;
        cudnnPointwiseMode_t m = one<cudnnPointwiseMode_t>(pw, CUDNN_ATTR_POINTWISE_MODE);
        if (m == CUDNN_POINTWISE_RELU_BWD)   /* the backward ports: DY (gradient), X (forward value) -> DX */
            return sub(d, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) &&
                           sub(d, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) &&
                           !sub(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR)
                       ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
        if (!sub(d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR)) return CUDNN_STATUS_BAD_PARAM;
        bool binary = m == CUDNN_POINTWISE_ADD || m == CUDNN_POINTWISE_MUL || m == CUDNN_POINTWISE_SUB;
        if (binary != (sub(d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_BACKEND_TENSOR_DESCRIPTOR) != nullptr))
            return CUDNN_STATUS_BAD_PARAM;
        if (!binary && m != CUDNN_POINTWISE_RELU_FWD && m != CUDNN_POINTWISE_IDENTITY) return CUDNN_STATUS_NOT_SUPPORTED;   /* not emulated */
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR:
        if (!sub(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) ||
            !need({ CUDNN_ATTR_ENGINEHEUR_MODE }))
            return CUDNN_STATUS_BAD_PARAM;
        d->graph = sub(d, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: {
        desc *cfg = sub(d, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        if (!cfg || !cfg->graph || !need({ CUDNN_ATTR_EXECUTION_PLAN_HANDLE })) return CUDNN_STATUS_BAD_PARAM;
        if (!cfg->graph->pattern_ok || engine_refused(EMU_ENGINES[cfg->engine].id)) return CUDNN_STATUS_NOT_SUPPORTED;
        d->handle = one<cudnnHandle_t>(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
        d->engine = cfg->engine;
        const size_t extra = EMU_ENGINES[d->engine].extra_ws;
        if (cfg->graph->is_sdpa) {
            d->is_sdpa = true, d->sdpa_bwd = cfg->graph->sdpa_bwd;
            memcpy(d->sdpa, cfg->graph->sdpa, sizeof d->sdpa);
            d->ws = emu::sdpa_workspace(d->sdpa_bwd, d->sdpa) + extra;
            return CUDNN_STATUS_SUCCESS;
        }
        if (cfg->graph->is_bnf) {   /* no workspace of its own */
            d->is_bnf = true, d->bnf = cfg->graph->bnf, d->ws = extra;
            return CUDNN_STATUS_SUCCESS;
        }
        d->ws = PLAN_WORKSPACE + extra;
        if (cfg->graph->is_dgrad) {
            d->is_dgrad = true, d->dg = cfg->graph->dg;
            return CUDNN_STATUS_SUCCESS;
        }
        if (!pick(cfg->graph, &d->run)) return CUDNN_STATUS_NOT_SUPPORTED;
        d->run.fwd = d->run.stats = d->run.cv = d->run.bwd = nullptr;   /* the plan outlives them */
        d->run.n_pw = 0;
        d->handle = one<cudnnHandle_t>(d, CUDNN_ATTR_EXECUTION_PLAN_HANDLE);
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR:
        if (!need({ CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS }) ||
            d->attrs.at(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS).count != d->attrs.at(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS).count)
            return CUDNN_STATUS_BAD_PARAM;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_BACKEND_ENGINECFG_DESCRIPTOR: return d->graph ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
    case CUDNN_BACKEND_ENGINE_DESCRIPTOR: return CUDNN_STATUS_NOT_SUPPORTED;   /* only from a configuration */
    default: return CUDNN_STATUS_NOT_SUPPORTED;
    }
}

/* The pointer of tensor uid in a variant pack, or NULL. */
void *pointer_of(const desc *pack, int64_t uid) {
    std::vector<int64_t> uids = many<int64_t>(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    std::vector<void *> ptrs = many<void *>(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    for (size_t i = 0; i < uids.size(); i++)
        if (uids[i] == uid) return ptrs[i];
    return nullptr;
}

inline int64_t at(const tensor_info &t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

/* A fused attention plan's execution: every operand inside one device allocation (the scale a
 * host value), the workspace overwritten with NaN, then the reference on the handle's stream. */
cudnnStatus_t execute_sdpa(cudnnHandle_t h, const desc *plan, const desc *pack) {
    const char *what = "cudnnBackendExecute (SDPA)";
    void *ptr[emu::SDPA_N] = {};
    bool bwd = plan->sdpa_bwd;
    for (int i = 0; i < emu::SDPA_N; i++) {
        const emu::sdpa_tensor &t = plan->sdpa[i];
        if (!t.set) continue;
        ptr[i] = pointer_of(pack, t.uid);
        if (!ptr[i]) return CUDNN_STATUS_BAD_PARAM;
        if (!t.by_value) emu::check_device(ptr[i], emu::sdpa_bytes(t), what);
    }
    void *ws = has(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) ? one<void *>(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) : nullptr;
    size_t ws_bytes = plan->ws;
    if (ws_bytes) {
        if (!ws) return CUDNN_STATUS_BAD_PARAM;
        emu::check_device(ws, ws_bytes, what);
    }
    emu::sdpa_tensor t[emu::SDPA_N];
    memcpy(t, plan->sdpa, sizeof t);
    float scale = *(const float *)ptr[emu::SDPA_SCALE];   /* by value: read when the call is made */
    const int sleep_us = engine_sleep_us(plan->engine);
    emu::enqueue(emu::cudnn_stream(h), what, [=]() {
        slow_engine slow(sleep_us);
        static const int outs_fwd[] = { emu::SDPA_O, emu::SDPA_STATS }, outs_bwd[] = { emu::SDPA_DQ, emu::SDPA_DK, emu::SDPA_DV };
        for (int i = 0; i < emu::SDPA_N; i++) {
            if (!t[i].set || t[i].by_value) continue;
            bool out = false;
            for (int o : outs_fwd) out |= !bwd && o == i;
            for (int o : outs_bwd) out |= bwd && o == i;
            emu::traffic_touch(ptr[i], emu::sdpa_bytes(t[i]), out);
        }
        float nan = NAN;
        for (size_t i = 0; i + 4 <= ws_bytes; i += 4) memcpy((char *)ws + i, &nan, 4);
        void *p[emu::SDPA_N];
        memcpy(p, ptr, sizeof p);
        float s = scale;
        p[emu::SDPA_SCALE] = &s;
        emu::sdpa_run(bwd, t, p);
    });
    return CUDNN_STATUS_SUCCESS;
}

/* The prologue's output, relu(raw·scale + bias) in FP32 rounded to FP16 as the tensor cores
 * read it, in x's layout. */
std::vector<__half> prologue_out(const conv_stats &g, const void *raw, const void *scale, const void *bias) {
    std::vector<__half> xin((size_t)span(g.x));
    const __half *R = (const __half *)raw, *S = (const __half *)scale, *B = (const __half *)bias;
    for (int64_t b = 0; b < g.x.dims[0]; b++)
        for (int64_t ch = 0; ch < g.x.dims[1]; ch++)
            for (int64_t i = 0; i < g.x.dims[2]; i++)
                for (int64_t j = 0; j < g.x.dims[3]; j++) {
                    float v = __half2float(R[at(g.raw, b, ch, i, j)]) * __half2float(S[at(g.scale, 0, ch, 0, 0)]) +
                              __half2float(B[at(g.bias, 0, ch, 0, 0)]);
                    xin[(size_t)at(g.x, b, ch, i, j)] = __float2half(v > 0 ? v : 0.0f);
                }
    return xin;
}

/* ConvBNwgrad's execution: DW[k][c][u][v] = sum over images and output positions of DY times the
 * prologue's output at the tap, in double, stored in FP16 (beta 0: overwritten); the workspace
 * overwritten with NaN. */
cudnnStatus_t execute_wgrad(cudnnHandle_t h, const desc *plan, const desc *pack) {
    const conv_stats &p = plan->run;
    const void *x = pointer_of(pack, p.raw.uid), *scale = pointer_of(pack, p.scale.uid), *bias = pointer_of(pack, p.bias.uid);
    const void *dy = pointer_of(pack, p.y.uid);
    void *dw = pointer_of(pack, p.w.uid);
    void *ws = has(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) ? one<void *>(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) : nullptr;
    if (!x || !scale || !bias || !dy || !dw || !ws) return CUDNN_STATUS_BAD_PARAM;
    const char *what = "cudnnBackendExecute (ConvBNwgrad)";
    emu::check_device(x, (size_t)span(p.raw) * 2, what);
    emu::check_device(scale, (size_t)span(p.scale) * 2, what), emu::check_device(bias, (size_t)span(p.bias) * 2, what);
    emu::check_device(dy, (size_t)span(p.y) * 2, what);
    emu::check_device(dw, (size_t)span(p.w) * 2, what);
    emu::check_device(ws, plan->ws, what);
    conv_stats g = p;
    const int sleep_us = engine_sleep_us(plan->engine);
    const size_t ws_bytes = plan->ws;
    emu::enqueue(emu::cudnn_stream(h), what, [=]() {
        slow_engine slow(sleep_us);
        emu::traffic_touch(x, (size_t)span(g.raw) * 2, false);
        emu::traffic_touch(scale, (size_t)span(g.scale) * 2, false), emu::traffic_touch(bias, (size_t)span(g.bias) * 2, false);
        emu::traffic_touch(dy, (size_t)span(g.y) * 2, false);
        emu::traffic_touch(dw, (size_t)span(g.w) * 2, true);
        float nan = NAN;
        for (size_t i = 0; i + 4 <= ws_bytes; i += 4) memcpy((char *)ws + i, &nan, 4);
        std::vector<__half> xin = prologue_out(g, x, scale, bias);
        const __half *X = xin.data(), *DY = (const __half *)dy;
        __half *DW = (__half *)dw;
        int64_t n = g.x.dims[0], c = g.x.dims[1], ih = g.x.dims[2], iw = g.x.dims[3];
        int64_t k = g.w.dims[0], r = g.w.dims[2], s = g.w.dims[3], oh = g.y.dims[2], ow = g.y.dims[3];
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t ch = 0; ch < c; ch++)
                for (int64_t u = 0; u < r; u++)
                    for (int64_t v = 0; v < s; v++) {
                        double acc = 0;
                        for (int64_t b = 0; b < n; b++)
                            for (int64_t i = 0; i < oh; i++) {
                                int64_t hi = i * g.stride[0] - g.pad[0] + u * g.dil[0];
                                if (hi < 0 || hi >= ih) continue;
                                for (int64_t j = 0; j < ow; j++) {
                                    int64_t wi = j * g.stride[1] - g.pad[1] + v * g.dil[1];
                                    if (wi < 0 || wi >= iw) continue;
                                    acc += (double)__half2float(DY[at(g.y, b, kk, i, j)]) *
                                           (double)__half2float(X[at(g.x, b, ch, hi, wi)]);
                                }
                            }
                        DW[at(g.w, kk, ch, u, v)] = __float2half((float)acc);
                    }
    });
    return CUDNN_STATUS_SUCCESS;
}

#include "emu_cudnn_dgrad_exec.inc"
#include "emu_cudnn_bnfin.inc"

}   // namespace

extern "C" {

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d) {
    if (!d) return CUDNN_STATUS_BAD_PARAM;
    desc *n = new desc;
    n->type = type;
    *d = n;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d) {
    const desc *p = (const desc *)d;
    if (p && p->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && p->finalized) emu::cudnn_digest -= plan_digest(p);
    delete (desc *)d;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t dp, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count, const void *elems) {
    desc *d = (desc *)dp;
    cudnnBackendAttributeType_t want;
    if (!d || d->finalized || count <= 0 || !elems) return CUDNN_STATUS_BAD_PARAM;
    if (!attr_type(d->type, name, &want)) return CUDNN_STATUS_NOT_SUPPORTED;
    bool scalar_either = want == CUDNN_TYPE_FLOAT && (type == CUDNN_TYPE_FLOAT || type == CUDNN_TYPE_DOUBLE);
    if (type != want && !scalar_either) return CUDNN_STATUS_BAD_PARAM;
    attr a{ type, count, std::vector<unsigned char>(type_bytes(type) * (size_t)count) };
    memcpy(a.bytes.data(), elems, a.bytes.size());
    d->attrs[name] = a;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t dp) {
    desc *d = (desc *)dp;
    if (!d || d->finalized) return CUDNN_STATUS_BAD_PARAM;
    cudnnStatus_t st = finalize(d);
    d->finalized = st == CUDNN_STATUS_SUCCESS;
    if (d->finalized && d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) emu::cudnn_digest += plan_digest(d);   /* ranks must hold alike */
    return st;
}
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const dp, cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested, int64_t *count, void *elems) {
    desc *d = (desc *)dp;
    if (!d || !d->finalized) return CUDNN_STATUS_BAD_PARAM;
    if (d->type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR && name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
        if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR) return CUDNN_STATUS_BAD_PARAM;
        int64_t n = d->graph->pattern_ok ? N_EMU_ENGINES : 0;   /* the emulated engines, where they take the graph */
        if (count) *count = n;
        desc **out = (desc **)elems;
        for (int64_t i = 0; i < n && i < requested; i++) {
            if (!out[i] || out[i]->type != CUDNN_BACKEND_ENGINECFG_DESCRIPTOR) return CUDNN_STATUS_BAD_PARAM;
            out[i]->graph = d->graph;
            out[i]->engine = (int)i;
            out[i]->finalized = true;
        }
        return CUDNN_STATUS_SUCCESS;
    }
    if (d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR && name == CUDNN_ATTR_ENGINECFG_ENGINE) {   /* its engine */
        desc **out = (desc **)elems;
        if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || requested < 1 || !out[0] || out[0]->type != CUDNN_BACKEND_ENGINE_DESCRIPTOR)
            return CUDNN_STATUS_BAD_PARAM;
        out[0]->graph = d->graph, out[0]->engine = d->engine, out[0]->finalized = true;
        if (count) *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR && name == CUDNN_ATTR_ENGINE_GLOBAL_INDEX) {
        if (type != CUDNN_TYPE_INT64 || requested < 1) return CUDNN_STATUS_BAD_PARAM;
        *(int64_t *)elems = EMU_ENGINES[d->engine].id;
        if (count) *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR && name == CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE) {
        if (type != CUDNN_TYPE_BEHAVIOR_NOTE) return CUDNN_STATUS_BAD_PARAM;
        int64_t n = EMU_ENGINES[d->engine].compiled ? 1 : 0;
        if (n && requested >= 1) *(cudnnBackendBehaviorNote_t *)elems = CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
        if (count) *count = n;
        return CUDNN_STATUS_SUCCESS;
    }
    if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE) {
        if (type != CUDNN_TYPE_INT64 || requested < 1) return CUDNN_STATUS_BAD_PARAM;
        *(int64_t *)elems = (int64_t)d->ws;
        if (count) *count = 1;
        return CUDNN_STATUS_SUCCESS;
    }
    if (!has(d, name)) return CUDNN_STATUS_NOT_SUPPORTED;
    const attr &a = d->attrs.at(name);
    if (a.type != type) return CUDNN_STATUS_BAD_PARAM;
    int64_t n = a.count < requested ? a.count : requested;
    if (count) *count = a.count;
    if (elems) memcpy(elems, a.bytes.data(), type_bytes(type) * (size_t)n);
    return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t planp, cudnnBackendDescriptor_t packp) {
    const desc *plan = (const desc *)planp, *pack = (const desc *)packp;
    if (!plan || !pack || !plan->finalized || !pack->finalized || plan->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR ||
        pack->type != CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)
        return CUDNN_STATUS_BAD_PARAM;
    if (plan->is_sdpa) return execute_sdpa(h, plan, pack);
    if (plan->run.wgrad) return execute_wgrad(h, plan, pack);
    if (plan->is_dgrad) return execute_dgrad(h, plan, pack);
    if (plan->is_bnf) return execute_bnf(h, plan, pack);
    const conv_stats &p = plan->run;
    const void *x = pointer_of(pack, p.sbr ? p.raw.uid : p.x.uid), *w = pointer_of(pack, p.w.uid);
    void *y = pointer_of(pack, p.out.uid), *sum = pointer_of(pack, p.sum.uid), *sq = pointer_of(pack, p.sq.uid);
    const void *scale = p.sbr ? pointer_of(pack, p.scale.uid) : nullptr, *bias = p.sbr ? pointer_of(pack, p.bias.uid) : nullptr;
    void *ws = has(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) ? one<void *>(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) : nullptr;
    if (!x || !w || !y || !sum || !sq || !ws || (p.sbr && (!scale || !bias))) return CUDNN_STATUS_BAD_PARAM;
    const char *what = "cudnnBackendExecute";
    const bool bf = p.x.dt == CUDNN_DATA_BFLOAT16;
    emu::check_device(x, (size_t)span(p.x) * 2, what);
    if (p.sbr) emu::check_device(scale, (size_t)span(p.scale) * 2, what), emu::check_device(bias, (size_t)span(p.bias) * 2, what);
    emu::check_device(w, (size_t)span(p.w) * 2, what);
    emu::check_device(y, (size_t)span(p.out) * 2, what);
    emu::check_device(sum, (size_t)span(p.sum) * 4, what);
    emu::check_device(sq, (size_t)span(p.sq) * 4, what);
    emu::check_device(ws, plan->ws, what);
    conv_stats g = p;
    const int sleep_us = engine_sleep_us(plan->engine);
    const size_t ws_bytes = plan->ws;
    emu::enqueue(emu::cudnn_stream(h), what, [=]() {
        slow_engine slow(sleep_us);
        emu::traffic_touch(x, (size_t)span(g.x) * 2, false);
        emu::traffic_touch(w, (size_t)span(g.w) * 2, false);
        if (g.sbr) emu::traffic_touch(scale, (size_t)span(g.scale) * 2, false), emu::traffic_touch(bias, (size_t)span(g.bias) * 2, false);
        emu::traffic_touch(y, (size_t)span(g.out) * 2, true);
        emu::traffic_touch(sum, (size_t)span(g.sum) * 4, true);
        emu::traffic_touch(sq, (size_t)span(g.sq) * 4, true);
        float nan = NAN;
        for (size_t i = 0; i + 4 <= ws_bytes; i += 4) memcpy((char *)ws + i, &nan, 4);
        /* a 16-bit element of the graph's data type, and one stored rounded to it */
        auto ld = [bf](const void *base, int64_t i) {
            return bf ? __bfloat162float(((const __nv_bfloat16 *)base)[i]) : __half2float(((const __half *)base)[i]);
        };
        auto st = [bf](void *base, int64_t i, float v) {
            if (bf) ((__nv_bfloat16 *)base)[i] = __float2bfloat16(v);
            else ((__half *)base)[i] = __float2half(v);
        };
        int64_t n = g.x.dims[0], c = g.x.dims[1], ih = g.x.dims[2], iw = g.x.dims[3];
        /* the conv's input: x, or the prologue's relu(raw·scale + bias), rounded to FP16 as the
         * tensor cores read it (the prologue is FP16 only) */
        std::vector<float> X((size_t)span(g.x));
        if (g.sbr) {
            std::vector<__half> xin = prologue_out(g, x, scale, bias);
            for (size_t i = 0; i < X.size(); i++) X[i] = __half2float(xin[i]);
        } else {
            for (size_t i = 0; i < X.size(); i++) X[i] = ld(x, (int64_t)i);
        }
        int64_t k = g.w.dims[0], r = g.w.dims[2], s = g.w.dims[3], oh = g.y.dims[2], ow = g.y.dims[3];
        std::vector<double> tot((size_t)k, 0.0), tot2((size_t)k, 0.0);
        for (int64_t b = 0; b < n; b++)
            for (int64_t kk = 0; kk < k; kk++)
                for (int64_t i = 0; i < oh; i++)
                    for (int64_t j = 0; j < ow; j++) {
                        double acc = 0;
                        for (int64_t u = 0; u < r; u++) {
                            int64_t hi = i * g.stride[0] - g.pad[0] + u * g.dil[0];
                            if (hi < 0 || hi >= ih) continue;
                            for (int64_t v = 0; v < s; v++) {
                                int64_t wi = j * g.stride[1] - g.pad[1] + v * g.dil[1];
                                if (wi < 0 || wi >= iw) continue;
                                for (int64_t ch = 0; ch < c; ch++)
                                    acc += (double)X[(size_t)at(g.x, b, ch, hi, wi)] * (double)ld(w, at(g.w, kk, ch, u, v));
                            }
                        }
                        /* ConvBNfprop: the sums of the stored Y; runtime fusion: of the
                         * conv's FP32 output, which the identity then rounds into Y */
                        int64_t o = at(g.out, b, kk, i, j);
                        st(y, o, (float)acc);
                        double stored = g.cast ? (double)(float)acc : (double)ld(y, o);
                        tot[(size_t)kk] += stored, tot2[(size_t)kk] += stored * stored;
                    }
        for (int64_t kk = 0; kk < k; kk++) {
            ((float *)sum)[at(g.sum, 0, kk, 0, 0)] = (float)tot[(size_t)kk];
            ((float *)sq)[at(g.sq, 0, kk, 0, 0)] = (float)tot2[(size_t)kk];
        }
    });
    return CUDNN_STATUS_SUCCESS;
}

}   // extern "C"
