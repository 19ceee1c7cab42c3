/* CUDA graphs of the training step: the host schedule enqueues a few hundred launches per
 * step, and replaying them as one graph removes the per-launch CPU cost that starves small
 * layers. The first call runs directly (cuDNN and cuBLASLt set themselves up lazily, buffers
 * that grow are allocated), the second captures, later calls replay. */
#include <stdlib.h>
#include <string.h>
#include "cuda_common.cuh"

struct rt_cuda_graph {
    int calls;
    cudaGraphExec_t exec;
};

static int graphs_off = -1;   /* -1: not decided yet */

int rt_cuda_graph_enabled(void) {
    if (graphs_off < 0) graphs_off = !rt_env_bool(RT_ENV_TRAINC_CUDA_GRAPH);
    return !graphs_off;
}

void rt_cuda_graph_disable(void) { graphs_off = 1; }

void rt_cuda_graph_run(rt_cuda_graph **gp, void (*fn)(void *), void *arg) {
    if (!rt_cuda_graph_enabled()) {
        fn(arg);
        return;
    }
    if (!*gp) *gp = (rt_cuda_graph *)rt_xcalloc(1, sizeof **gp);
    rt_cuda_graph *g = *gp;
    if (g->exec) {
        CUDA_CHECK(cudaGraphLaunch(g->exec, rt_stream()));
        return;
    }
    if (g->calls++ == 0) {
        fn(arg);
        return;
    }
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamBeginCapture(rt_stream(), cudaStreamCaptureModeThreadLocal));
    fn(arg);
    cudaError_t err = cudaStreamEndCapture(rt_stream(), &graph);
    if (err == cudaSuccess) err = cudaGraphInstantiate(&g->exec, graph, 0);
    if (err != cudaSuccess)
        rt_die_hint("run the trainer with --no-graph (or TRAINC_CUDA_GRAPH=0) and report the spec",
                    "CUDA: capturing the training step into a graph failed: %s (%s)", cudaGetErrorString(err),
                    cudaGetErrorName(err));
    CUDA_CHECK(cudaGraphDestroy(graph));
    CUDA_CHECK(cudaGraphLaunch(g->exec, rt_stream()));
}
