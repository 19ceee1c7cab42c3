/* A batch norm's statistics finalized by cuDNN's BN finalize graph (rt_cuda.h
 * rt_cuda_bn_finalize; lowering decides: compiler/lower/fuse_bn_finalize.c): where a conv's
 * epilogue wrote the bn's per-channel sum and sum of squares (conv_bn_fprop.cu, in the
 * batch-norm channel-sums scratch), one BN_FINALIZE_STATISTICS operation (the cudnn-frontend's
 * bn_finalize; cuDNN 8.4 or later) turns them, the bn's gamma and beta and its running
 * statistics into the saved mean and inverse std, the next running mean and variance (in
 * place) and the equivalent scale gamma·inv_std and bias beta - mean·gamma·inv_std, FP16, which
 * are the next conv's prologue's scale and bias where it applies the bn (conv_bn_sbr.cu's
 * layout, [2][c]) and land unread in the scratch's tail otherwise. Epsilon, the exponential
 * average factor (our momentum) and the accumulation count (n·h·w) are by-value scalars.
 * The plan is finalized once per layer at start-up; before it is kept it runs once on a known
 * input (probe), so that the trainer never updates running statistics by a convention other
 * than the spec's (unbiased running variance, next = (1 - momentum)·previous + momentum·batch):
 * where cuDNN refuses the graph or its result differs, the layer keeps our kernels
 * (cuda_conv_bn_stats, cuda_conv_bn_stats_scale_bias) and the first refusal of each kind is
 * printed, with why. */
#include <math.h>
#include <string.h>
#include "../cuda_libs.cuh"
#include "batchnorm_sums.cuh"
#include "cudnn_graph.cuh"

void *rt_cuda_conv_workspace_of(const rt_cuda_conv *c, size_t *bytes);
size_t rt_cuda_conv_add_workspace(rt_cuda_conv *c, size_t bytes);

/* The graph's tensors by unique id (the variant pack's order). */
enum { UID_SUM = 1, UID_SQSUM, UID_GAMMA, UID_BETA, UID_PREV_MEAN, UID_PREV_VAR, UID_NEXT_MEAN, UID_NEXT_VAR,
       UID_SAVED_MEAN, UID_SAVED_INV_STD, UID_EQ_SCALE, UID_EQ_BIAS, UID_EPS, UID_FACTOR, UID_COUNT, N_UIDS = 15 };

struct rt_cuda_bn_finalize {
    const rt_cuda_conv_bn *summed;   /* the conv graph whose epilogue writes the sums */
    rt_cuda_conv *conv;              /* whose workspace the plan shares */
    int c;
    cudnnBackendDescriptor_t plan;   /* NULL: our kernels */
    size_t ws;
    cudnnBackendDescriptor_t keep[32];   /* the graph's (N_DESC), the configurations (8), the heuristics */
    int n_keep;
    char why[240];
};

/* The per-channel vectors' pointers of one execution (FP32 but eq_scale, eq_bias: FP16). */
typedef struct {
    const float *sum, *sqsum, *gamma, *beta;
    float *running_mean, *running_var, *save_mean, *save_inv_std;
    void *eq_scale, *eq_bias;
} fin_ptrs;

static void build(rt_cuda_bn_finalize *f, size_t cap) {
    if (rt_cuda_act_type() != RT_ACT_F16) {
        snprintf(f->why, sizeof f->why, "not FP16 activations: the graph's equivalent scale and bias are FP16 here");
        return;
    }
    enum { SUM, SQ, GAMMA, BETA, PREV_M, PREV_V, NEXT_M, NEXT_V, SAVED_M, SAVED_IS, EQ_S, EQ_B, EPS, FACTOR, COUNT, OP,
           GRAPH, N_DESC };
    cudnnBackendDescriptor_t d[N_DESC] = { 0 };
    graph_err err = {}, *e = &err;   /* (no refusal yet) */
    int64_t c = f->c, vd[4] = { 1, c, 1, 1 }, vs[4] = { c, 1, c, c }, sd[4] = { 1, 1, 1, 1 }, ss[4] = { 1, 1, 1, 1 };
    static const int vec_uid[12] = { UID_SUM, UID_SQSUM, UID_GAMMA, UID_BETA, UID_PREV_MEAN, UID_PREV_VAR, UID_NEXT_MEAN,
                                     UID_NEXT_VAR, UID_SAVED_MEAN, UID_SAVED_INV_STD, UID_EQ_SCALE, UID_EQ_BIAS };
    for (int i = 0; i < 12; i++)
        d[i] = graph_tensor(e, vec_uid[i], i >= EQ_S ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT, vd, vs, false, false);
    d[EPS] = graph_tensor(e, UID_EPS, CUDNN_DATA_FLOAT, sd, ss, false, true);
    d[FACTOR] = graph_tensor(e, UID_FACTOR, CUDNN_DATA_FLOAT, sd, ss, false, true);
    d[COUNT] = graph_tensor(e, UID_COUNT, CUDNN_DATA_INT64, sd, ss, false, true);
    if (!e->step) {
        cudnnBnFinalizeStatsMode_t mode = CUDNN_BN_FINALIZE_STATISTICS_TRAINING;
        cudnnDataType_t prec = CUDNN_DATA_FLOAT;
        static const cudnnBackendAttributeName_t port[15] = {
            CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SUM_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_Y_SQ_SUM_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_BIAS_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_PREV_RUNNING_VAR_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_UPDATED_RUNNING_VAR_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_MEAN_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_SAVED_INV_STD_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_SCALE_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_EQ_BIAS_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_EPSILON_DESC, CUDNN_ATTR_OPERATION_BN_FINALIZE_EXP_AVERATE_FACTOR_DESC,
            CUDNN_ATTR_OPERATION_BN_FINALIZE_ACCUM_COUNT_DESC };
        G("bn finalize create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_BN_FINALIZE_STATISTICS_DESCRIPTOR, &d[OP]));
        G("bn finalize mode", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_BN_FINALIZE_STATS_MODE,
                                                       CUDNN_TYPE_BN_FINALIZE_STATS_MODE, 1, &mode));
        G("bn finalize precision", cudnnBackendSetAttribute(d[OP], CUDNN_ATTR_OPERATION_BN_FINALIZE_MATH_PREC,
                                                            CUDNN_TYPE_DATA_TYPE, 1, &prec));
        for (int i = 0; i < 15; i++)
            G("bn finalize tensor", cudnnBackendSetAttribute(d[OP], port[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &d[i]));
        G("bn finalize finalize", cudnnBackendFinalize(d[OP]));
    }
    f->plan = graph_plan(e, &d[GRAPH], &d[OP], 1, cap, &f->ws, f->keep, &f->n_keep, f->why, sizeof f->why,
                         "BN finalize", "TRAINC_CUDNN_WORKSPACE_MB");
    static_assert(N_DESC + 8 + 1 <= (int)(sizeof f->keep / sizeof f->keep[0]), "room for every kept descriptor");
    graph_keep_or_explain(e, f->plan, d, N_DESC, f->keep, &f->n_keep, f->why, sizeof f->why);
}

/* One execution of f's plan on the stream; m values a channel, by-value scalars read now. */
static void execute(const rt_cuda_bn_finalize *f, const fin_ptrs *p, long m, float momentum, float eps,
                    void *ws /* NULL: the conv's */) {
    size_t ws_bytes = f->ws;
    if (!ws) ws = rt_cuda_conv_workspace_of(f->conv, &ws_bytes);
    if (f->ws > ws_bytes) rt_die("bn finalize: internal: the plan needs %zu bytes of workspace, %zu are set", f->ws, ws_bytes);
    int64_t count = m;
    int64_t uids[N_UIDS] = { UID_SUM, UID_SQSUM, UID_GAMMA, UID_BETA, UID_PREV_MEAN, UID_PREV_VAR, UID_NEXT_MEAN,
                             UID_NEXT_VAR, UID_SAVED_MEAN, UID_SAVED_INV_STD, UID_EQ_SCALE, UID_EQ_BIAS, UID_EPS,
                             UID_FACTOR, UID_COUNT };
    /* the running statistics updated in place: previous and next share their memory */
    void *ptrs[N_UIDS] = { (void *)p->sum, (void *)p->sqsum, (void *)p->gamma, (void *)p->beta, p->running_mean,
                           p->running_var, p->running_mean, p->running_var, p->save_mean, p->save_inv_std,
                           p->eq_scale, p->eq_bias, &eps, &momentum, &count };
    graph_execute(f->plan, N_UIDS, uids, ptrs, ws);
}

/* The plan run once on a known input, every channel alike: two values 0 and 2 (m = 2, sum 2,
 * sum of squares 4: mean 1, biased variance 1, unbiased 2), gamma 2, beta 0.5, running mean
 * 0 and variance 1, momentum 0.25, epsilon 1. The spec's answers: mean 1, inv std 1/sqrt(2),
 * running mean 0.25, running variance 0.75 + 0.25·2 = 1.25 (1.0 by the biased variance),
 * scale 2/sqrt(2), bias 0.5 - 2/sqrt(2). Returns NULL, or what differs (in why). */
static const char *probe(rt_cuda_bn_finalize *f) {
    int c = f->c;
    size_t vb = sizeof(float) * (size_t)c;
    enum { N_VEC = 8 };   /* sum, sqsum, gamma, beta, running mean, running var, saved mean, saved inv std */
    float *host = (float *)rt_xcalloc((size_t)N_VEC * c + (size_t)c, sizeof(float));
    static const float in[6] = { 2.0f, 4.0f, 2.0f, 0.5f, 0.0f, 1.0f };
    for (int v = 0; v < 6; v++)
        for (int ch = 0; ch < c; ch++) host[(size_t)v * c + ch] = in[v];
    size_t eq_at = N_VEC * vb, ws_at = (eq_at + 2 * sizeof(__half) * (size_t)c + 255) & ~(size_t)255, have = 0;
    /* in the shared cuDNN workspace, which the algorithm search (when select runs) also
     * overwrites and which the start-up memory check counted at its cap; where it is smaller,
     * device memory of the probe's own, freed after it */
    char *dev = (char *)rt_cuda_shared_workspace(&have);
    int own = !dev || have < ws_at + f->ws;
    if (own) dev = (char *)rt_cuda_malloc(ws_at + f->ws, "the BN finalize graph's probe");
    rt_cuda_copy_h2d(dev, host, N_VEC * vb);
    float *d = (float *)dev;
    fin_ptrs p = { d, d + c, d + 2 * c, d + 3 * c, d + 4 * c, d + 5 * c, d + 6 * c, d + 7 * c, dev + N_VEC * vb,
                   dev + N_VEC * vb + sizeof(__half) * (size_t)c };
    execute(f, &p, 2, 0.25f, 1.0f, dev + ws_at);
    rt_cuda_sync();
    rt_cuda_copy_d2h(host, dev, N_VEC * vb);
    __half *eq = (__half *)(host + N_VEC * c);
    rt_cuda_copy_d2h(eq, dev + N_VEC * vb, 2 * sizeof(__half) * (size_t)c);
    if (own) rt_cuda_free(dev);
    const double r2 = 1.0 / sqrt(2.0);
    static const char *const names[6] = { "running mean", "running variance", "saved mean", "saved inverse std",
                                          "equivalent scale", "equivalent bias" };
    const double want[6] = { 0.25, 1.25, 1.0, r2, 2.0 * r2, 0.5 - 2.0 * r2 };
    const char *bad = NULL;
    for (int ch = 0; ch < c && !bad; ch++)
        for (int k = 0; k < 6 && !bad; k++) {
            double got = k < 4 ? host[(size_t)(4 + k) * c + ch] : __half2float(eq[(size_t)(k - 4) * c + ch]);
            if (!(fabs(got - want[k]) <= 2e-3 * (1.0 + fabs(want[k])))) {
                if (k == 1 && fabs(got - 1.0) < 1e-3)
                    snprintf(f->why, sizeof f->why, "cuDNN's BN finalize updates the running variance with the biased batch "
                                                    "variance; the spec's is unbiased (m/(m-1)), so our kernel keeps it");
                else
                    snprintf(f->why, sizeof f->why, "cuDNN's BN finalize gives %s %g on a known input where the spec's "
                                                    "formulas give %g (channel %d)", names[k], got, want[k], ch);
                bad = f->why;
            }
        }
    free(host);
    return bad;
}

rt_cuda_bn_finalize *rt_cuda_bn_finalize_create(const rt_cuda_conv_bn *summed, rt_cuda_conv *conv) {
    rt_cuda_bn_finalize *f = (rt_cuda_bn_finalize *)rt_xcalloc(1, sizeof *f);
    int nhwc, dw;
    f->summed = summed, f->conv = conv, f->c = rt_cuda_conv_shape_of(conv, &nhwc, &dw)->oc;
    return f;
}

size_t rt_cuda_bn_finalize_select(rt_cuda_bn_finalize *f, size_t cap) {
    if (!f->plan && !f->why[0]) {
        const char *why = NULL;
        if (!rt_cuda_conv_bn_fused(f->summed, &why))
            snprintf(f->why, sizeof f->why, "the conv that sums its input runs unfused (%s)", why);
        else build(f, cap & ~(size_t)255);
        if (f->plan && probe(f)) {
            cudnnBackendDestroyDescriptor(f->plan);
            f->plan = NULL;
        }
        if (!f->plan) graph_warn_once("batch-norm finalize (cuDNN's BN finalize graph)", f->conv, f->why);
    }
    return rt_cuda_conv_add_workspace(f->conv, f->plan ? f->ws : 0);
}

int rt_cuda_bn_finalize_fused(const rt_cuda_bn_finalize *f, const char **why) {
    if (why) *why = f->plan ? NULL : f->why[0] ? f->why : "not selected";
    return f->plan != NULL;
}

static fin_ptrs ptrs_of(float *save_mean, float *save_inv_std, float *running_mean, float *running_var,
                        const float *gamma, const float *beta, void *scale_bias, int c) {
    const float *sums = (const float *)bn_channel_totals(c);   /* where conv_bn_fprop.cu's graph wrote them */
    /* without a prologue to read them, the equivalent scale and bias go to the scratch's unused
     * tail: it holds 2c doubles, the sums take its first 2c floats */
    char *eq = scale_bias ? (char *)scale_bias : (char *)(sums + 2 * (size_t)c);
    fin_ptrs p = { sums, sums + c, gamma, beta, running_mean, running_var, save_mean, save_inv_std, eq,
                   eq + sizeof(__half) * (size_t)c };
    return p;
}

void cuda_bn_finalize_stats(const rt_cuda_bn_finalize *f, float *save_mean, float *save_inv_std, float *running_mean,
                            float *running_var, const float *gamma, const float *beta, const void *out, int n, int c,
                            int hw, float momentum, float eps, int retire) {
    if (!f->plan) {
        cuda_conv_bn_stats(f->summed, save_mean, save_inv_std, running_mean, running_var, out, n, c, hw, momentum, eps,
                           retire);
        return;
    }
    fin_ptrs p = ptrs_of(save_mean, save_inv_std, running_mean, running_var, gamma, beta, NULL, c);
    execute(f, &p, (long)n * hw, momentum, eps, NULL);
}

void cuda_bn_finalize_scale_bias(const rt_cuda_bn_finalize *f, float *save_mean, float *save_inv_std,
                                 float *running_mean, float *running_var, void *scale_bias, const float *gamma,
                                 const float *beta, const void *out, int n, int c, int hw, float momentum, float eps) {
    if (!f->plan) {
        cuda_conv_bn_stats_scale_bias(f->summed, save_mean, save_inv_std, running_mean, running_var, scale_bias, gamma,
                                      beta, out, n, c, hw, momentum, eps);
        return;
    }
    fin_ptrs p = ptrs_of(save_mean, save_inv_std, running_mean, running_var, gamma, beta, scale_bias, c);
    execute(f, &p, (long)n * hw, momentum, eps, NULL);
}
