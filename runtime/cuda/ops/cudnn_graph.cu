/* The cuDNN graph (backend) API steps that conv_bn_fprop.cu and attention_sdpa.cu share
 * (cudnn_graph.cuh): tensor descriptors, and an operation graph's plan within a workspace cap. */
#include <stdio.h>
#include "cudnn_graph.cuh"

cudnnBackendDescriptor_t graph_tensor(graph_err *e, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                      const int64_t strides[4], bool is_virtual, bool by_value) {
    cudnnBackendDescriptor_t t = NULL;
    int64_t align = 16;
    G("tensor create", cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    if (e->step) return t;
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

void graph_destroy_all(cudnnBackendDescriptor_t *d, int n) {
    for (int i = 0; i < n; i++)
        if (d[i]) cudnnBackendDestroyDescriptor(d[i]), d[i] = NULL;
}

cudnnBackendDescriptor_t graph_plan(graph_err *e, cudnnBackendDescriptor_t *graph, const cudnnBackendDescriptor_t *ops,
                                    int64_t n_ops, size_t cap, size_t *ws_out, cudnnBackendDescriptor_t *keep, int *n_keep,
                                    char *why, size_t why_cap, const char *what, const char *cap_hint) {
    cudnnBackendDescriptor_t found = NULL;
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
    static const cudnnBackendHeurMode_t modes[] = { CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK };
    for (int m = 0; m < 2 && !e->step && !found; m++) {
        enum { MAX_CFG = 8 };
        cudnnBackendDescriptor_t heur = NULL, cfg[MAX_CFG] = { 0 };
        int64_t got = 0;
        cudnnBackendHeurMode_t mode = modes[m];
        cudnnStatus_t st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
        if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(heur);
        for (int i = 0; i < MAX_CFG && st == CUDNN_STATUS_SUCCESS; i++)
            st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
        if (st == CUDNN_STATUS_SUCCESS)
            st = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, MAX_CFG, &got, cfg);
        if (st != CUDNN_STATUS_SUCCESS) last = st, got = 0;
        for (int i = 0; i < got && i < MAX_CFG && !found; i++) {
            cudnnBackendDescriptor_t plan = NULL;
            cudnnHandle_t handle = rt_cudnn();
            int64_t ws = 0, one = 0;
            offered++;
            st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
            if (st == CUDNN_STATUS_SUCCESS)
                (void)cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
            if (st == CUDNN_STATUS_SUCCESS)
                st = cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
            if (st == CUDNN_STATUS_SUCCESS) st = cudnnBackendFinalize(plan);
            if (st == CUDNN_STATUS_SUCCESS)
                st = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &one, &ws);
            if (st == CUDNN_STATUS_SUCCESS && (size_t)ws <= cap) found = plan, *ws_out = (size_t)ws;
            else {
                if (st == CUDNN_STATUS_SUCCESS)
                    snprintf(why, why_cap, "the %s plan needs %lld bytes of workspace, over the %zu the run has (%s)", what,
                             (long long)ws, cap, cap_hint);
                else last = st;
                if (plan) cudnnBackendDestroyDescriptor(plan);
            }
        }
        if (found) {
            for (int i = 0; i < MAX_CFG; i++) keep[(*n_keep)++] = cfg[i];
            keep[(*n_keep)++] = heur;
        } else {
            graph_destroy_all(cfg, MAX_CFG);
            if (heur) cudnnBackendDestroyDescriptor(heur);
        }
    }
    if (!found && !e->step && !why[0])
        snprintf(why, why_cap, "cuDNN finalizes no plan for %s (%d engine configurations offered%s%s)", what, offered,
                 last != CUDNN_STATUS_SUCCESS ? ", last: " : "", last != CUDNN_STATUS_SUCCESS ? cudnnGetErrorString(last) : "");
    return found;
}
