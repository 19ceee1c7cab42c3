/* The CUDA context of a trainer: device selection, one compute stream (and a copy stream for
 * the next batch), the cuDNN and cuBLASLt handles, device memory and copies, and the
 * fits-or-refuses memory check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cuda_libs.cuh"
#include "rt_devmem.h"

#define CUBLASLT_WORKSPACE (32u << 20)   /* what cuBLAS itself uses on Hopper */

static struct {
    int ready;
    rt_cuda_math math;
    cudaStream_t stream;
    cudaStream_t copy;           /* stages the next batch while a step computes */
    cudaEvent_t input_read;      /* the compute stream is done reading the input bytes */
    cudaEvent_t staged;          /* the staged batch is on the device */
    cudnnHandle_t cudnn;
    cublasLtHandle_t lt;
    void *lt_work;
    char name[320];
    void **pinned;   /* every buffer page-locked, unregistered at exit */
    int n_pinned;
} ctx;

void rt_cuda_check_(cudaError_t err, const char *what, const char *file, int line) {
    if (err == cudaSuccess) return;
    const char *hint = err == cudaErrorMemoryAllocation
        ? "use a smaller batch_per_rank, or a GPU with more memory"
        : err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver
        ? "run on a machine with an NVIDIA GPU and a driver at least as new as this CUDA build"
        : "run with compute-sanitizer to find the failing kernel; report the spec if it persists";
    rt_die_hint(hint, "CUDA: %s failed at %s:%d: %s (%s)", what, file, line, cudaGetErrorString(err),
                cudaGetErrorName(err));
}

void rt_cudnn_check_(cudnnStatus_t st, const char *what, const char *file, int line) {
    if (st == CUDNN_STATUS_SUCCESS) return;
    rt_die_hint("check that cuDNN 9 matches this CUDA (CUDNN_HOME at build time, LD_LIBRARY_PATH at run time)",
                "cuDNN: %s failed at %s:%d: %s", what, file, line, cudnnGetErrorString(st));
}

void rt_cublas_check_(cublasStatus_t st, const char *what, const char *file, int line) {
    if (st == CUBLAS_STATUS_SUCCESS) return;
    rt_die_hint("check that cuBLAS matches this CUDA (LD_LIBRARY_PATH at run time)",
                "cuBLASLt: %s failed at %s:%d: status %d", what, file, line, (int)st);
}

void rt_cuda_init(int device, rt_cuda_math math) {
    if (ctx.ready) return;
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0)
        rt_die_hint("run this trainer on a machine with an NVIDIA GPU, or build the spec for the CPU "
                    "(trainc build SPEC -o BIN, without --backend cuda)",
                    "no CUDA device is available (%s)", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    if (device >= n)
        rt_die_hint("set CUDA_VISIBLE_DEVICES or the rank layout so that each rank sees its GPU",
                    "CUDA device %d requested but only %d visible", device, n);
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    snprintf(ctx.name, sizeof ctx.name, "%.256s (sm_%d%d, %.1f GiB)", prop.name, prop.major, prop.minor,
             prop.totalGlobalMem / 1073741824.0);
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.copy, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ctx.input_read, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ctx.staged, cudaEventDisableTiming));
    CUDNN_CHECK(cudnnCreate(&ctx.cudnn));
    CUDNN_CHECK(cudnnSetStream(ctx.cudnn, ctx.stream));
    CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
    CUDA_CHECK(cudaMalloc(&ctx.lt_work, CUBLASLT_WORKSPACE));
    ctx.math = math;
    ctx.ready = 1;
}

rt_cuda_math rt_cuda_math_mode(void) { return ctx.math; }
void rt_cuda_set_math(rt_cuda_math math) { ctx.math = math; }
rt_cuda_act rt_cuda_act_type(void) {
    return ctx.math == RT_CUDA_BF16 ? RT_ACT_BF16 : ctx.math == RT_CUDA_FP16 ? RT_ACT_F16 : RT_ACT_F32;
}
size_t rt_cuda_act_bytes(void) { return rt_cuda_act_type() == RT_ACT_F32 ? 4 : 2; }
void *rt_cuda_stream(void) { return ctx.stream; }
const char *rt_cuda_device_name(void) { return ctx.name; }
cudnnHandle_t rt_cudnn(void) { return ctx.cudnn; }
cublasLtHandle_t rt_cublaslt(void) { return ctx.lt; }
void *rt_cublaslt_workspace(size_t *bytes) {
    *bytes = CUBLASLT_WORKSPACE;
    return ctx.lt_work;
}

int rt_cublaslt_algo(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                     cublasLtMatrixLayout_t d, uint32_t align, cublasLtMatmulAlgo_t *algo) {
    size_t ws_bytes = CUBLASLT_WORKSPACE;
    cublasLtMatmulPreference_t pref;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                      sizeof ws_bytes));
    const cublasLtMatmulPreferenceAttributes_t aligns[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES };
    for (int i = 0; i < 4; i++) CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, aligns[i], &align, sizeof align));
    cublasLtMatmulHeuristicResult_t res;
    int got = 0;
    CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(ctx.lt, desc, a, b, d, d, pref, 1, &res, &got));
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (got < 1) return 0;
    *algo = res.algo;
    return 1;
}

/* One GPU: a plain synchronize. Several: the stream is polled and NCCL asked for errors in
 * between, so a dead or hung peer ends the job (rt_cuda_nccl_check_async) rather than hanging
 * it. The pause is 20 us (far below a step, far above a poll) while the step's work drains; a
 * wait past 20 ms is held by a slow or stopped peer: 1 ms, so the rank does not spin a core. */
void rt_cuda_sync(void) {
    if (rt_cuda_world() == 1) {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        return;
    }
    cudaError_t err;
    double t0 = rt_time_s();
    while ((err = cudaStreamQuery(ctx.stream)) == cudaErrorNotReady) {
        double waited = rt_time_s() - t0;
        rt_cuda_nccl_check_async(waited);
        struct timespec pause = { 0, waited > 0.02 ? 1000000 : 20000 };
        nanosleep(&pause, NULL);
    }
    CUDA_CHECK(err);
}

void rt_cuda_launched(const char *file, int line) { rt_cuda_check_(cudaGetLastError(), "kernel launch", file, line); }

static long env_long(const char *name, long fallback) {
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    long x = strtol(v, &end, 10);
    if (*end || x < 0)
        rt_die_hint("unset it or give a non-negative integer", "environment variable %s='%s' is not a number", name, v);
    return x;
}

int rt_cuda_device_from_env(void) {
    long d = rt_env_long(RT_ENV_TRAINC_CUDA_DEVICE);   /* -1 when unset */
    if (d >= 0) return (int)d;
    static const char *const local_rank[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID" };
    for (size_t i = 0; i < sizeof local_rank / sizeof local_rank[0]; i++) {
        long r = env_long(local_rank[i], -1);
        if (r >= 0) {
            int n = 0;
            if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) return 0;
            return (int)(r % n);
        }
    }
    return 0;
}

size_t rt_cuda_workspace_cap(void) { return (size_t)rt_env_long(RT_ENV_TRAINC_CUDNN_WORKSPACE_MB) << 20; }

void *rt_cuda_malloc(size_t bytes, const char *what) {
    void *p = NULL;
    cudaError_t err = cudaMalloc(&p, bytes ? bytes : 256);
    if (err != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        cudaMemGetInfo(&free_b, &total_b);
        rt_die_hint("use a smaller batch_per_rank, or a GPU with more memory",
                    "cannot allocate %.1f MiB of device memory for %s: %s (%.1f MiB free of %.1f MiB)",
                    bytes / 1048576.0, what, cudaGetErrorString(err), free_b / 1048576.0,
                    total_b / 1048576.0);
    }
    return p;
}

void *rt_cuda_scratch_get(rt_cuda_scratch *s, size_t bytes, const char *what) {
    if (bytes <= s->bytes) return s->p;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(ctx.stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone)
        rt_die("internal: %s would grow to %zu bytes inside a CUDA graph capture", what, bytes);
    s->p = rt_cuda_malloc(bytes, what);
    s->bytes = bytes;
    return s->p;
}

void rt_cuda_free(void *p) {
    if (p) CUDA_CHECK(cudaFree(p));
}

void rt_cuda_memset0(void *p, size_t bytes) { CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, ctx.stream)); }

void rt_cuda_copy_h2d(void *dst, const void *src_host, size_t bytes) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src_host, bytes, cudaMemcpyHostToDevice, ctx.stream));
}

void rt_cuda_input_consumed(void) { CUDA_CHECK(cudaEventRecord(ctx.input_read, ctx.stream)); }

void rt_cuda_stage_h2d(void *dst, const void *src_host, size_t bytes) {
    CUDA_CHECK(cudaStreamWaitEvent(ctx.copy, ctx.input_read, 0));   /* dst's last reader is done */
    CUDA_CHECK(cudaMemcpyAsync(dst, src_host, bytes, cudaMemcpyHostToDevice, ctx.copy));
    CUDA_CHECK(cudaEventRecord(ctx.staged, ctx.copy));
}

void rt_cuda_wait_staged(void) { CUDA_CHECK(cudaStreamWaitEvent(ctx.stream, ctx.staged, 0)); }

void rt_cuda_staged_done(void) { CUDA_CHECK(cudaEventSynchronize(ctx.staged)); }

void rt_cuda_copy_d2h(void *dst_host, const void *src, size_t bytes) {
    /* A copy into pageable memory holds the host inside the call until the stream reaches it:
     * with several GPUs the stream is waited for first in rt_cuda_sync, which sees a hung
     * peer (the emulator showed the copy after a stalled all-reduce waiting forever). */
    if (rt_cuda_world() > 1) rt_cuda_sync();
    CUDA_CHECK(cudaMemcpyAsync(dst_host, src, bytes, cudaMemcpyDeviceToHost, ctx.stream));
    rt_cuda_sync();
}

void rt_cuda_copy_d2d(void *dst, const void *src, size_t bytes) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx.stream));
}

static void unpin_all(void) {
    /* Pending copies may still read these pages: the device finishes first. */
    if (cudaDeviceSynchronize() != cudaSuccess) return;
    for (int i = 0; i < ctx.n_pinned; i++) (void)cudaHostUnregister(ctx.pinned[i]);
    ctx.n_pinned = 0;
}

void rt_cuda_pin_host(void *p, size_t bytes) {
    for (int i = 0; i < ctx.n_pinned; i++)
        if (ctx.pinned[i] == p) return;
    /* Pinning is an optimization: if the system refuses (locked-memory limits), copies
     * still work from pageable memory, only slower. */
    if (cudaHostRegister(p, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        (void)cudaGetLastError();
        rt_warn("could not page-lock a %.1f MiB host buffer; batch copies will be slower", bytes / 1048576.0);
        return;
    }
    if (ctx.n_pinned == 0) atexit(unpin_all);
    ctx.pinned = (void **)realloc(ctx.pinned, sizeof *ctx.pinned * (size_t)(ctx.n_pinned + 1));
    if (!ctx.pinned) rt_die("out of host memory");
    ctx.pinned[ctx.n_pinned++] = p;
}

long rt_cuda_max_batch(size_t avail, size_t fixed_bytes, size_t per_sample_bytes) {
    if (avail <= fixed_bytes || per_sample_bytes == 0) return 0;
    return (long)((avail - fixed_bytes) / per_sample_bytes);
}

size_t rt_cuda_check_memory(const char *model, size_t fixed_bytes, size_t per_sample_bytes, int batch) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t reserve = RT_DEVMEM_RESERVE;
    size_t avail = free_b > reserve ? free_b - reserve : 0;
    size_t need = fixed_bytes + per_sample_bytes * (size_t)batch;
    if (need <= avail) return free_b;
    long fits = rt_cuda_max_batch(avail, fixed_bytes, per_sample_bytes);
    char hint[384];
    if (fits > 0)
        snprintf(hint, sizeof hint, "set data.train.batch_per_rank to %ld or less (and scale the LR), "
                 "or run on a GPU with more memory", fits);
    else
        snprintf(hint, sizeof hint, "even batch 1 does not fit: the parameters and optimizer state need "
                 "%.1f MiB; use a GPU with more memory", fixed_bytes / 1048576.0);
    rt_die_hint(hint, "model '%s' needs %.1f MiB of device memory at batch %d (%.1f MiB fixed + "
                "%.2f MiB per sample) but %s has %.1f MiB free",
                model, need / 1048576.0, batch, fixed_bytes / 1048576.0, per_sample_bytes / 1048576.0,
                ctx.name, avail / 1048576.0);
}
