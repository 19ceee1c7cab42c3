/* The gradient all-reduce of a multi-GPU run: NCCL over the MPI world, one bucket at a time
 * on a stream of its own as soon as backward completes it (an event on the compute stream
 * marks that), so the sums overlap the rest of backward; the optimizer's stream waits for
 * the last one. Built without NCCL (RT_HAVE_NCCL 0), a world of one still works. */
#include <stdlib.h>
#include "cuda_common.cuh"
#if RT_HAVE_NCCL
#include <nccl.h>

#define NCCL_CHECK(call) nccl_check_((call), #call, __FILE__, __LINE__)
static void nccl_check_(ncclResult_t r, const char *what, const char *file, int line) {
    if (r == ncclSuccess) return;
    rt_die_hint("if another rank failed, its own message says why; NCCL_DEBUG=WARN shows NCCL's view",
                "NCCL: %s failed at %s:%d: %s", what, file, line, ncclGetErrorString(r));
}
#endif

static struct {
    rt_comm *comm;   /* NULL: a world of one, nothing to do */
    float *grads;
    const rt_grad_bucket *buckets;
    int n_buckets, overlap;
    cudaStream_t stream;
    cudaEvent_t *ready, done;
#if RT_HAVE_NCCL
    ncclComm_t nccl;
#endif
    double watched_at;   /* the wait's time at the last look for a hung peer */
} nc;

#if RT_HAVE_NCCL
/* The watchdog found a hung peer: free the kernels blocked on it before the rank ends. */
static void abort_nccl(void *arg) {
    (void)arg;
    ncclCommAbort(nc.nccl);
}
#endif

int rt_cuda_nccl_available(void) { return RT_HAVE_NCCL; }

void rt_cuda_nccl_init(rt_comm *comm, float *grads, const rt_grad_bucket *buckets, int n_buckets, int overlap) {
    if (!comm) return;
#if RT_HAVE_NCCL
    ncclUniqueId id;
    if (rt_comm_rank(comm) == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    rt_comm_bcast(comm, &id, sizeof id, "the NCCL id from rank 0");
    NCCL_CHECK(ncclCommInitRank(&nc.nccl, rt_comm_size(comm), id, rt_comm_rank(comm)));
    CUDA_CHECK(cudaStreamCreateWithFlags(&nc.stream, cudaStreamNonBlocking));
    nc.ready = (cudaEvent_t *)rt_xcalloc((size_t)(n_buckets ? n_buckets : 1), sizeof *nc.ready);
    for (int k = 0; k < n_buckets; k++) CUDA_CHECK(cudaEventCreateWithFlags(&nc.ready[k], cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&nc.done, cudaEventDisableTiming));
    nc.comm = comm, nc.grads = grads, nc.buckets = buckets, nc.n_buckets = n_buckets, nc.overlap = overlap;
    rt_comm_on_abort(comm, abort_nccl, NULL);
#else
    (void)grads, (void)buckets, (void)n_buckets, (void)overlap;
    rt_die_hint("rebuild with NCCL (make cuda NCCL_HOME=DIR, the directory with include/nccl.h), or run one rank",
                "this CUDA trainer was built without NCCL, so it cannot all-reduce gradients over %d ranks",
                rt_comm_size(comm));
#endif
}

#if RT_HAVE_NCCL
static void allreduce(int k, cudaStream_t s) {
    const rt_grad_bucket *b = &nc.buckets[k];
    NCCL_CHECK(ncclAllReduce(nc.grads + b->offset, nc.grads + b->offset, (size_t)b->count, ncclFloat, ncclSum,
                             nc.nccl, s));
}
#endif

void rt_cuda_grad_bucket_ready(int k) {
    if (!nc.comm || !nc.overlap) return;
#if RT_HAVE_NCCL
    CUDA_CHECK(cudaEventRecord(nc.ready[k], rt_stream()));
    CUDA_CHECK(cudaStreamWaitEvent(nc.stream, nc.ready[k], 0));
    allreduce(k, nc.stream);
#else
    (void)k;
#endif
}

void rt_cuda_grads_finish(void) {
    if (!nc.comm) return;
#if RT_HAVE_NCCL
    if (nc.overlap) {
        CUDA_CHECK(cudaEventRecord(nc.done, nc.stream));
        CUDA_CHECK(cudaStreamWaitEvent(rt_stream(), nc.done, 0));
    } else {   /* the blocking variant, for comparison: one bucket after another after backward */
        for (int k = 0; k < nc.n_buckets; k++) allreduce(k, rt_stream());
    }
#endif
}

int rt_cuda_world(void) { return nc.comm ? rt_comm_size(nc.comm) : 1; }

void rt_cuda_nccl_check_async(double waited_s) {
#if RT_HAVE_NCCL
    if (!nc.comm) return;
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(nc.nccl, &async));
    if (async != ncclSuccess && async != ncclInProgress) {
        ncclCommAbort(nc.nccl);   /* frees the kernels blocked on the dead peer */
        nc.comm = NULL;
        rt_die_hint("another rank failed or was killed: its own message says why (NCCL_DEBUG=WARN shows NCCL's view)",
                    "NCCL: the gradient all-reduce failed: %s", ncclGetErrorString(async));
    }
    /* A stopped or silent peer raises no NCCL error: its kernels just never arrive. The MPI
     * watchdog (rt_comm_watch) names it, aborts the communicator (abort_nccl) and ends the
     * job; it looks a few times a second, not at every poll. */
    if (waited_s < nc.watched_at) nc.watched_at = 0;   /* a new wait */
    if (waited_s - nc.watched_at < 0.25) return;
    nc.watched_at = waited_s;
    rt_comm_watch(nc.comm, waited_s, "the NCCL collectives on the GPU");
#else
    (void)waited_s;
#endif
}

/* NCCL serializes one communicator's operations in the order they were issued (the same on
 * every rank), so this also waits for the gradient buckets issued before it: synchronized
 * batch norm costs some of backward's overlap. */
void rt_cuda_allreduce_f64(double *buf, long n) {
    if (!nc.comm || n == 0) return;
#if RT_HAVE_NCCL
    NCCL_CHECK(ncclAllReduce(buf, buf, (size_t)n, ncclDouble, ncclSum, nc.nccl, rt_stream()));
#else
    (void)buf;
#endif
}

void rt_cuda_broadcast(float *buf, long n) {
    if (!nc.comm || n == 0) return;
#if RT_HAVE_NCCL
    NCCL_CHECK(ncclBroadcast(buf, buf, (size_t)n, ncclFloat, 0, nc.nccl, rt_stream()));
#else
    (void)buf;
#endif
}
