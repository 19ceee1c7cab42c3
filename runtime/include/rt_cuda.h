/* CUDA ops of libtrainrt_cuda: the device side of every op in rt_ops.h, plus the context
 * (stream, cuDNN and cuBLASLt handles), device memory with a fits-or-refuses check, the
 * multi-tensor optimizer with loss scaling, CUDA graphs of the step and the NCCL gradient
 * all-reduce. Callable from C: the generated host schedule is plain C11.
 *
 * CONVENTIONS (those of rt_ops.h, except where said here)
 * - Names: cuda_<cpu name>. Same argument order and meaning as the CPU op; every pointer is
 *   device memory unless its name ends in _host.
 * - Precision: activations, their gradients and the compute copy of conv/linear weights are
 *   `void *` in the context's activation type (rt_cuda_act_bytes): FP32 for FP32 and TF32,
 *   BF16 or FP16 for those. Parameters, their gradients, batch-norm statistics and every
 *   `float *` are FP32 in all modes (FP32 master weights); arithmetic is FP32 in registers,
 *   reductions in double, and cuDNN / cuBLASLt accumulate in FP32. Layout: NCHW.
 * - Streams: every launch goes to the one compute stream of the context (rt_cuda_stream());
 *   nothing synchronizes except the functions documented as returning host values, so a
 *   step can be captured into a CUDA graph (rt_cuda_graph_run).
 * - Backward OVERWRITES, as on the CPU; NULL gradient outputs are skipped.
 * - Errors: a failing CUDA / cuDNN / cuBLAS / NCCL call dies with file, line, the library's
 *   message and a HINT; a user never sees a raw error code alone.
 * - Determinism: no atomics in any op. Reductions have a fixed order for a given shape, so a
 *   run repeats bit for bit on one GPU model with one library version. cuDNN algorithms are
 *   chosen by timing at start-up, so two processes may pick different ones; set
 *   TRAINC_CUDNN_DETERMINISTIC=1 to restrict them to deterministic ones.
 *
 *   rt_cuda_init(0, RT_CUDA_BF16);
 *   rt_cuda_conv *c1 = rt_cuda_conv_create(&conv1_shape);        // descriptors only
 *   ... memory check counting rt_cuda_conv_workspace_bound(cap), allocation ...
 *   ... rt_cuda_conv_select(c1, cap, out, in, ...): time algorithms once on c1's buffers ...
 *   cuda_conv2d_forward(c1, out, in, weight_act);               // no bias: a fused kernel adds it
 */
#ifndef RT_CUDA_H
#define RT_CUDA_H
#include <stddef.h>
#include <stdint.h>

/* The runtime's C headers are included inside the C linkage block: nvcc compiles this as C++. */
#ifdef __cplusplus
extern "C" {
#endif
#include "rt_comm.h"
#include "rt_ops.h"
#include "rt_optim.h"

/* ---- Context ------------------------------------------------------------------------- */
/* Precision of a trainer: FP32 is IEEE single precision (cuDNN FMA math, cuBLAS 32F compute);
 * TF32 lets both use TF32 tensor cores with FP32 storage; BF16 and FP16 store activations in
 * 16 bits and run convolutions and GEMMs on tensor cores with FP32 accumulation. */
typedef enum { RT_CUDA_FP32 = 0, RT_CUDA_TF32 = 1, RT_CUDA_BF16 = 2, RT_CUDA_FP16 = 3 } rt_cuda_math;
/* The activation element type that follows from it. */
typedef enum { RT_ACT_F32 = 0, RT_ACT_BF16 = 1, RT_ACT_F16 = 2 } rt_cuda_act;

/* Selects the device (dies with a clear message when there is none), creates the stream and
 * the library handles. Idempotent. */
void rt_cuda_init(int device, rt_cuda_math math);
rt_cuda_math rt_cuda_math_mode(void);
/* Changes the precision of plans created from now on (tests run every op in each mode). */
void rt_cuda_set_math(rt_cuda_math math);
rt_cuda_act rt_cuda_act_type(void);
size_t rt_cuda_act_bytes(void);             /* 4, or 2 for BF16 / FP16 */
/* FP32 <-> activation type, n elements (a copy in FP32 mode). Async. */
void rt_cuda_to_act(void *dst, const float *src, long n);
/* dst[i] (activation type) = lut[channel of i][src[i]]; src is n bytes of [b, channels, hw]. */
void rt_cuda_normalize_input(void *dst, const uint8_t *src, const float *lut, long n, int channels, long hw);
/* The same into channels-last [b, hw, channels]. */
void rt_cuda_normalize_input_nhwc(void *dst, const uint8_t *src, const float *lut, long n, int channels, long hw);
void rt_cuda_from_act(float *dst, const void *src, long n);
void *rt_cuda_stream(void);                 /* the cudaStream_t all ops use */
const char *rt_cuda_device_name(void);
void rt_cuda_sync(void);                    /* waits for the stream; dies on a kernel error */
/* After a kernel launch: dies on a bad launch configuration, naming file and line (faults
 * inside a kernel surface at the next synchronizing call, which checks too). */
void rt_cuda_launched(const char *file, int line);
/* Device of this process: TRAINC_CUDA_DEVICE, else the node-local MPI rank (Open MPI,
 * MPICH, Slurm) modulo the visible devices, else 0. */
int rt_cuda_device_from_env(void);
/* Cap on one conv's cuDNN workspace: TRAINC_CUDNN_WORKSPACE_MB, default 1024 MiB. */
size_t rt_cuda_workspace_cap(void);

/* Device memory. rt_cuda_malloc dies with the size and what it was for on failure. */
void *rt_cuda_malloc(size_t bytes, const char *what);
void rt_cuda_free(void *p);
void rt_cuda_memset0(void *p, size_t bytes);                          /* async */
void rt_cuda_copy_h2d(void *dst, const void *src_host, size_t bytes); /* async on the stream */
void rt_cuda_copy_d2h(void *dst_host, const void *src, size_t bytes); /* synchronous */
void rt_cuda_copy_d2d(void *dst, const void *src, size_t bytes);      /* async */
/* The next batch's copy, overlapping the step in flight: after the compute stream has read
 * its input (rt_cuda_input_consumed, recorded where it has), rt_cuda_stage_h2d copies on a
 * stream of its own into the other input buffer (src page-locked, and unchanged until the copy
 * is waited for); rt_cuda_wait_staged makes the compute stream wait for that copy. */
void rt_cuda_input_consumed(void);
void rt_cuda_stage_h2d(void *dst, const void *src_host, size_t bytes);
void rt_cuda_wait_staged(void);
void rt_cuda_staged_done(void);   /* the host waits for the last staged copy */
/* Page-locks a host buffer that is copied every step so copies run at full speed; a no-op for
 * a buffer already registered. The buffer must own its pages (rt_alloc_pages) and live until
 * the process ends: the loader's batch slots. */
void rt_cuda_pin_host(void *p, size_t bytes);

/* Refuses, before anything large is allocated, a run whose planned device memory does not
 * fit: prints needed vs free and the largest per-rank batch that would fit (fixed_bytes do
 * not grow with the batch, per_sample_bytes do) and exits 1. Returns the free bytes. */
size_t rt_cuda_check_memory(const char *model, size_t fixed_bytes, size_t per_sample_bytes,
                            int batch);
/* Largest batch for which fixed + batch·per_sample fits in avail bytes (0 if none). */
long rt_cuda_max_batch(size_t avail, size_t fixed_bytes, size_t per_sample_bytes);

/* ---- Convolution (cuDNN) ---------------------------------------------------------------
 * One object per conv layer: descriptors in the activation type (FP32 compute), and the
 * algorithms rt_cuda_conv_select picks by timing (once, at start-up; layers of equal shape
 * share the result). The workspace is one device buffer shared by every layer, sized to the
 * largest need (in BF16/FP16 it also holds the 16-bit weight gradient that is widened into
 * the FP32 dweight). Bias is not part of the convolution: a fused kernel adds it. */
typedef struct rt_cuda_conv rt_cuda_conv;
rt_cuda_conv *rt_cuda_conv_create(const rt_conv_shape *s);
/* Channels-last: in/out [N,H,W,C], weight [K][R][S][C] (16-bit modes only; dweight stays
 * [K][C][R][S] FP32, like the parameters). */
rt_cuda_conv *rt_cuda_conv_create_nhwc(const rt_conv_shape *s);
/* Who computes the conv: "depthwise" (our kernels for depthwise shapes, unless
 * TRAINC_CUDA_DEPTHWISE=cudnn) or "cudnn". */
const char *rt_cuda_conv_engine(const rt_cuda_conv *c);
/* The [K][R][S][C] copy a channels-last conv reads, from the [K][C][R][S] compute weights
 * ([R][S][C] for a conv whose engine is "depthwise"). */
void rt_cuda_conv_weight_nhwc(const rt_cuda_conv *c, void *dst, const void *src);
/* The workspace to allocate (and to count in the memory check) before the search, once every
 * conv is created: cuDNN's part at the cap, and room for the largest 16-bit weight gradient
 * (0 without convs; `trainc show --device-memory` counts the same bound). */
size_t rt_cuda_conv_workspace_bound(size_t workspace_cap);
/* Times forward, backward-data (unless din is NULL) and backward-filter algorithms with
 * cudnnFind*AlgorithmEx on the layer's own device buffers and the workspace set by
 * rt_cuda_conv_set_workspace (at least the bound), keeping those within workspace_cap bytes;
 * with dout, din and dweight NULL, the forward algorithm alone (a conv of the evaluation's
 * schedule, which has no gradients, or one whose backward is folded into its block's add:
 * cuda_bn_fold_conv1x1_backward_nhwc). Returns the workspace the choice needs. cuDNN allocates
 * nothing of its own. The search leaves arbitrary values in out, din and (FP32) dweight, and
 * the workspace: call it where these are recomputed before they are read (activations and
 * their gradients; gradients before they are zeroed), never on parameters or optimizer
 * state; in, weight and dout are only read. */
size_t rt_cuda_conv_select(rt_cuda_conv *c, size_t workspace_cap, void *out, const void *in, const void *weight,
                           const void *dout /*or NULL*/, void *din /*or NULL*/,
                           float *dweight /*or NULL*/);
/* Several ranks: rank 0's algorithms (and math types) for every selected conv, broadcast
 * over comm and adopted by every rank, so that all ranks compute alike and size the same
 * workspace (each rank's own timing may rank them differently). Returns the workspace rank
 * 0's choice needs. Call on every rank after every rt_cuda_conv_select. */
size_t rt_cuda_conv_agree(rt_comm *comm);
/* The shared workspace: set at the bound before the search, and again at what the choice
 * needs (rt_cuda_conv_select's or rt_cuda_conv_agree's largest) when it shrinks after it. */
void rt_cuda_conv_set_workspace(void *work, size_t bytes);
/* The shared workspace as set, for the graphs that are not a conv's (attention_sdpa.cu). */
void *rt_cuda_shared_workspace(size_t *bytes);
/* weight: the compute copy (activation type); dweight: FP32. */
void cuda_conv2d_forward(const rt_cuda_conv *c, void *out, const void *in, const void *weight);
/* din is overwritten, or added to when the shape says din_add. */
void cuda_conv2d_backward(const rt_cuda_conv *c, void *din /*or NULL*/, float *dweight,
                          const void *dout, const void *in, const void *weight);
/* A conv that takes its bias (lower: fuse_dw_bias.c, a depthwise conv's): the forward with
 * bias (FP32 [oc]) added, and the backward with dbias (FP32 [oc], overwritten) = dout's
 * channel sums. Our depthwise kernels do both inside their passes (conv2d_depthwise.cu);
 * cuDNN (TRAINC_CUDA_DEPTHWISE=cudnn) adds a bias pass each way (bias.cu). */
void cuda_conv2d_forward_bias(const rt_cuda_conv *c, void *out, const void *in, const void *weight,
                              const float *bias);
void cuda_conv2d_backward_bias(const rt_cuda_conv *c, void *din /*or NULL*/, float *dweight, float *dbias,
                               const void *dout, const void *in, const void *weight);

/* ---- The cuDNN graphs' engines (cudnn_graph_tune.cu) ------------------------------------
 * How every cuDNN graph (conv_bn_fprop.cu, conv_bn_wgrad.cu, conv_bn_dgrad.cu,
 * bn_finalize_graph.cu, attention_sdpa.cu) picks its engine configuration when its plan is
 * finalized at start-up: candidates > 0 times up to that many of heuristics mode A's
 * configurations on scratch operands and keeps the fastest; 0 takes the heuristics' first (the
 * build's --no-graph-autotune; lowering decides, the generated find_algorithms says). Call
 * before the graphs' selects. */
void rt_cuda_graph_autotune(int candidates);
/* Around the graphs' selects, on every rank: with several ranks (comm), rank 0 picks each
 * graph's engine as above and every rank runs rank 0's choice (their timings might differ,
 * and ranks must compute alike), or, where a rank cannot finalize it, every rank runs that
 * graph unfused; ranks that build different graphs end with one message. NULL or one rank:
 * each picks alone. */
void rt_cuda_graph_agree_begin(rt_comm *comm);
void rt_cuda_graph_agree_end(void);
/* The device memory the timing may overwrite (the activation arena at start-up, which the
 * first step writes before it reads); NULL: none (the timing allocates its own). */
void rt_cuda_graph_tune_scratch(void *p, size_t bytes);

/* ---- Conv + batch-norm statistics (conv_bn_fprop.cu: cuDNN's ConvBNfprop engine) -------
 * A channels-last FP16 conv whose output only a training batch norm reads (lowering decides:
 * compiler/lower/fuse_conv_bn.c) writes that bn's per-channel sum and sum of squares from its
 * epilogue, through cuDNN's graph API (conv forward -> genstats). Where cuDNN (or the device,
 * or the precision) refuses the graph, the conv and the statistics run unfused and the
 * trainer says why, once. Create after the conv, select after the conv's select (the graph's
 * workspace joins the conv's). */
typedef struct rt_cuda_conv_bn rt_cuda_conv_bn;
rt_cuda_conv_bn *rt_cuda_conv_bn_create(rt_cuda_conv *conv);
/* Builds and finalizes the graph's plan (or records why not); returns the conv's workspace
 * with the graph's. */
size_t rt_cuda_conv_bn_select(rt_cuda_conv_bn *f, size_t workspace_cap);
/* 1 when the fused graph runs; else *why (when not NULL) says why not. */
int rt_cuda_conv_bn_fused(const rt_cuda_conv_bn *f, const char **why);
/* The same graph with the previous bn's apply + ReLU as the conv's prologue (MLPerf's
 * scale-bias-ReLU-conv-genstats): the conv reads relu(x·scale + bias) of the previous bn's raw
 * input x, which is never written when fused (lowering decides: fuse_conv_bn.c
 * IR_CONV_BN_SBR; the weight gradient reads it recomputed, cuda_bn_scale_bias_relu, and the
 * bn's backward recomputes the ReLU, cuda_batchnorm_backward_nhwc_sbr). */
rt_cuda_conv_bn *rt_cuda_conv_bn_create_sbr(rt_cuda_conv *conv);
/* scale_bias: [2][c] in the activation type, from cuda_bn_scale_bias. Unfused (or not
 * training) the prologue writes `normalized`, which the conv then reads. */
void cuda_conv_bn_forward_sbr(const rt_cuda_conv_bn *f, void *out, const void *in, void *normalized, const void *weight,
                              const void *scale_bias, int training);
/* The prologue's per-channel scale = gamma·inv_std and bias = beta - mean·scale. */
void cuda_bn_scale_bias(void *scale_bias, const float *gamma, const float *beta, const float *mean,
                        const float *inv_std, int c);
/* The conv (training: with the sums, fused or not; else the conv alone). */
void cuda_conv_bn_forward(const rt_cuda_conv_bn *f, void *out, const void *in, const void *weight, int training);
/* A bn applied inside the next conv's prologue (conv_bn_sbr.cu): its training statistics of out
 * (as cuda_conv_bn_stats, retiring; f: the conv that summed out, or NULL where none did) and
 * the prologue's scale and bias ([2][c], activation type) from them, one launch where f's
 * sums were fused. */
void cuda_conv_bn_stats_scale_bias(const rt_cuda_conv_bn *f /*or NULL*/, float *save_mean, float *save_inv_std,
                                   float *running_mean, float *running_var, void *scale_bias, const float *gamma,
                                   const float *beta, const void *out, int n, int c, int hw, float momentum, float eps);
/* out = relu(in·scale + bias) over rows of c channels: the prologue's values, for the conv's
 * weight gradient where its fused graph is refused (conv_bn_sbr.cu). */
void cuda_bn_scale_bias_relu(void *out, const void *in, const void *scale_bias, long rows, int c);
/* The backward of a conv with that prologue (conv_bn_wgrad.cu): cuDNN's ConvBNwgrad graph
 * recomputes relu(in·scale + bias) inside the weight gradient, then the data gradient as
 * cuda_conv2d_backward's; where cuDNN refuses the graph (said once, with why), the prologue's
 * output is recomputed into `normalized` and the conv's own backward reads it. Create after
 * the conv, select after the conv's select (its workspace joins the conv's). */
typedef struct rt_cuda_conv_bn_wgrad rt_cuda_conv_bn_wgrad;
rt_cuda_conv_bn_wgrad *rt_cuda_conv_bn_wgrad_create(rt_cuda_conv *conv);
size_t rt_cuda_conv_bn_wgrad_select(rt_cuda_conv_bn_wgrad *f, size_t workspace_cap);
int rt_cuda_conv_bn_wgrad_fused(const rt_cuda_conv_bn_wgrad *f, const char **why);
/* in: the previous bn's input (the conv's forward input before its prologue); scale_bias as
 * cuda_conv_bn_forward_sbr's; din as cuda_conv2d_backward's. */
void cuda_conv_bn_backward_sbr(const rt_cuda_conv_bn_wgrad *f, void *din /*or NULL*/, float *dweight, const void *dout,
                               const void *in, void *normalized, const void *weight, const void *scale_bias);
/* The data gradient of such a conv with the bn's backward sums (conv_bn_dgrad.cu): cuDNN's
 * DgradDreluBNBwdWeight graph writes din = the bn's output gradient (the conv's data gradient
 * through the ReLU, whose condition it recomputes from in, save_mean, save_inv_std, gamma, beta)
 * and the bn's dgamma = sum din·xhat, dbeta = sum din; refused (said once, with why): the conv's
 * own data gradient into din, and the bn's backward sums it. Create and select as the wgrad's. */
typedef struct rt_cuda_conv_bn_dgrad rt_cuda_conv_bn_dgrad;
rt_cuda_conv_bn_dgrad *rt_cuda_conv_bn_dgrad_create(rt_cuda_conv *conv);
size_t rt_cuda_conv_bn_dgrad_select(rt_cuda_conv_bn_dgrad *f, size_t workspace_cap);
int rt_cuda_conv_bn_dgrad_fused(const rt_cuda_conv_bn_dgrad *f, const char **why);
void cuda_conv_bn_dgrad(const rt_cuda_conv_bn_dgrad *f, void *din, float *dgamma, float *dbeta, const void *dout,
                        const void *weight, const void *in, const float *gamma, const float *beta, const float *save_mean,
                        const float *save_inv_std);
/* That bn's backward: with f fused, only its dx pass (dout: the graph's din, already through
 * the ReLU; dgamma and dbeta: the graph's sums); else cuda_batchnorm_backward_nhwc_sbr's. */
void cuda_batchnorm_backward_nhwc_dgrad(const rt_cuda_conv_bn_dgrad *f, void *din /*or NULL*/, float *dgamma, float *dbeta,
                                        const void *dout, const void *scale_bias, const void *in, const float *gamma,
                                        const float *save_mean, const float *save_inv_std, int n, int c, int hw);
/* The bn's training statistics of out (the conv's output, n*hw rows of c channels): from the
 * fused sums (a finalize launch), or unfused, a statistics pass over out (retire: the
 * retiring one). Same results as cuda_batchnorm_stats_train_nhwc up to summation order. */
void cuda_conv_bn_stats(const rt_cuda_conv_bn *f, float *save_mean, float *save_inv_std, float *running_mean,
                        float *running_var, const void *out, int n, int c, int hw, float momentum, float eps,
                        int retire);
/* That bn's finalize through cuDNN's BN finalize graph (bn_finalize_graph.cu; lowering decides:
 * compiler/lower/fuse_bn_finalize.c): the sums summed's epilogue wrote into the saved mean and
 * inv std, the running statistics (in place) and, for a bn applied in the next conv's
 * prologue, that prologue's scale_bias ([2][c], FP16). The plan is built and checked on a
 * known input at select (after the conv's and summed's selects; its workspace joins the
 * conv's); refused, or summed unfused, each call runs cuda_conv_bn_stats or
 * cuda_conv_bn_stats_scale_bias instead, and the first refusal of each kind is said. */
typedef struct rt_cuda_bn_finalize rt_cuda_bn_finalize;
rt_cuda_bn_finalize *rt_cuda_bn_finalize_create(const rt_cuda_conv_bn *summed, rt_cuda_conv *conv);
size_t rt_cuda_bn_finalize_select(rt_cuda_bn_finalize *f, size_t workspace_cap);
int rt_cuda_bn_finalize_fused(const rt_cuda_bn_finalize *f, const char **why);
void cuda_bn_finalize_stats(const rt_cuda_bn_finalize *f, float *save_mean, float *save_inv_std, float *running_mean,
                            float *running_var, const float *gamma, const float *beta, const void *out, int n, int c,
                            int hw, float momentum, float eps, int retire);
void cuda_bn_finalize_scale_bias(const rt_cuda_bn_finalize *f, float *save_mean, float *save_inv_std,
                                 float *running_mean, float *running_var, void *scale_bias, const float *gamma,
                                 const float *beta, const void *out, int n, int c, int hw, float momentum, float eps);

/* ---- Linear (cuBLASLt): out[N,O] = in[N,I] · W[O,I]^T, bias added by a fused kernel -----
 * weight: the compute copy (activation type); dweight: FP32 (cuBLASLt writes it directly). */
typedef struct rt_cuda_linear rt_cuda_linear;
rt_cuda_linear *rt_cuda_linear_create(int n, int in_features, int out_features);
void cuda_linear_forward(const rt_cuda_linear *l, void *out, const void *in, const void *weight);
void cuda_linear_backward(const rt_cuda_linear *l, void *din /*or NULL*/, float *dweight,
                          const void *dout, const void *in, const void *weight);

/* ---- Per-channel bias (conv and linear; linear is hw = 1) ------------------------------ */
void cuda_bias_forward(void *out, const void *in, const float *bias, int n, int c, long hw);
/* dbias[c] = sum over n, hw of dout. If relu_out is not NULL, dout is first masked by
 * relu_out > 0 and the masked gradient is written to dmasked (the fused bias+ReLU backward:
 * dmasked may alias dout). */
void cuda_bias_backward(float *dbias, void *dmasked, const void *dout, const void *relu_out,
                        int n, int c, long hw);

/* ---- Batch norm -------------------------------------------------------------------------
 * The statistics kernel writes save_mean / save_inv_std (and updates the running stats in
 * training); applying them, y = (x - mean)·inv_std·gamma + beta, is a per-net fused kernel
 * (with the ReLU after it, when there is one), or cuda_batchnorm_apply. */
/* Sizes the partial-sums scratch of every per-channel sum (batchnorm_sums.cu) once, at
 * start-up: partial_bytes (rt_devmem_partials_bytes) and channels' totals. */
void cuda_reserve_partial_sums(size_t partial_bytes, long channels);
void cuda_batchnorm_stats_train(float *save_mean, float *save_inv_std, float *running_mean,
                                float *running_var, const void *in, int n, int c, int hw,
                                float momentum, float eps, int sync);
/* Eval: mean = running_mean, inv_std = 1/sqrt(running_var + eps), into the same slots. */
void cuda_batchnorm_stats_eval(float *save_mean, float *save_inv_std, const float *running_mean,
                               const float *running_var, int c, float eps);
void cuda_batchnorm_apply(void *out, const void *in, const float *gamma, const float *beta,
                          const float *mean, const float *inv_std, int n, int c, int hw, int relu);
/* relu_out not NULL: dout is the gradient of ReLU(bn(x)) and is masked by relu_out > 0 first
 * (the fused BN+ReLU backward). */
void cuda_batchnorm_backward(void *din /*or NULL*/, float *dgamma, float *dbeta,
                             const void *dout, const void *relu_out, const void *in,
                             const float *gamma, const float *save_mean,
                             const float *save_inv_std, int n, int c, int hw, int sync);
/* Frozen statistics (Caffe's use_global_stats): forward with cuda_batchnorm_stats_eval in
 * training too; this backward treats the running statistics (in save_mean / save_inv_std) as
 * constants: din = dout·gamma·inv_std (batchnorm_frozen.cu). NCHW only. */
void cuda_batchnorm_backward_frozen(void *din /*or NULL*/, float *dgamma, float *dbeta,
                                    const void *dout, const void *relu_out, const void *in,
                                    const float *gamma, const float *save_mean,
                                    const float *save_inv_std, int n, int c, int hw);
/* sync (parallel.sync_bn): the statistics and the input gradient's sums are those of the
 * global batch, all-reduced over the ranks (NCCL) as one process holding it would compute;
 * dgamma and dbeta stay this rank's share, which the gradient all-reduce sums. */
/* The same on channels-last tensors [N, H, W, C]. */
void cuda_batchnorm_stats_train_nhwc(float *save_mean, float *save_inv_std, float *running_mean,
                                     float *running_var, const void *in, int n, int c, int hw,
                                     float momentum, float eps, int sync);
void cuda_batchnorm_apply_nhwc(void *out, const void *in, const float *gamma, const float *beta,
                               const float *mean, const float *inv_std, int n, int c, int hw, int relu);
void cuda_batchnorm_backward_nhwc(void *din /*or NULL*/, float *dgamma, float *dbeta,
                                  const void *dout, const void *relu_out, const void *in,
                                  const float *gamma, const float *save_mean,
                                  const float *save_inv_std, int n, int c, int hw, int sync);

/* The same with the per-channel sums finished by each channel tile's last block (a retire
 * counter) instead of launches of their own: one launch for the statistics, two for the
 * backward (ir_op.bn_retire, decided by lower.c). Several ranks with sync take the launches
 * apart (their sums are all-reduced in between), as TRAINC_CUDA_BN=old does. */
void cuda_batchnorm_stats_train_nhwc_retire(float *save_mean, float *save_inv_std, float *running_mean,
                                            float *running_var, const void *in, int n, int c, int hw,
                                            float momentum, float eps, int sync);
void cuda_batchnorm_backward_nhwc_retire(void *din /*or NULL*/, float *dgamma, float *dbeta,
                                         const void *dout, const void *relu_out, const void *in,
                                         const float *gamma, const float *save_mean,
                                         const float *save_inv_std, int n, int c, int hw, int sync);
/* The retiring backward of a bn whose fused ReLU left a bitmask (lower.c ir_op.relu_mask): its
 * bits (bit i of relu_bits[i / 8]: the ReLU passed element i) instead of its output. No sync. */
void cuda_batchnorm_backward_nhwc_bits(void *din /*or NULL*/, float *dgamma, float *dbeta, const void *dout,
                                       const uint8_t *relu_bits, const void *in, const float *gamma,
                                       const float *save_mean, const float *save_inv_std, int n, int c, int hw);
/* The retiring backward of a bn applied inside the next conv's prologue (ir_op.bn_in_conv): the
 * ReLU's condition recomputed from in and that prologue's scale and bias (in·scale + bias > 0,
 * cuda_conv_bn_stats_scale_bias's [2][c]), so neither its output nor bits are read. No sync. */
void cuda_batchnorm_backward_nhwc_sbr(void *din /*or NULL*/, float *dgamma, float *dbeta, const void *dout,
                                      const void *scale_bias, const void *in, const float *gamma,
                                      const float *save_mean, const float *save_inv_std, int n, int c, int hw);

/* A residual block's closing batch norm(s), add and ReLU in one channels-last pass that writes
 * only out (bn_add_relu_nhwc.cu): out = act(bn_a(xa) + bn_b(xb)) with mean / inv_std from the
 * bns' statistics passes; gb == NULL: xb is the identity shortcut, added as it is. rows = N*H*W. */
void cuda_bn_add_relu_nhwc(void *out, const void *xa, const float *ga, const float *ba, const float *ma,
                           const float *sa, const void *xb, const float *gb, const float *bb, const float *mb,
                           const float *sb, long rows, int c, int relu);
/* The same, writing also the ReLU's bitmask: bit i of bits[i / 8] set where out[i] > 0 (the
 * stored value). bits holds (rows * c + 7) / 8 bytes (lower.c ir_op.relu_mask). */
void cuda_bn_add_relu_bits_nhwc(void *out, uint8_t *bits, const void *xa, const float *ga, const float *ba,
                                const float *ma, const float *sa, const void *xb, const float *gb, const float *bb,
                                const float *mb, const float *sb, long rows, int c, int relu);
/* Its backward in two passes (bn_add_relu_backward_nhwc.cu; lower.c ir_op.add_bwd_fused): from
 * dz (the block output's gradient) and relu_bits (NULL: no ReLU), bn a's dgamma, dbeta and
 * input gradient dxa; xb != NULL (a projection): bn b's likewise (dxb); xb == NULL (the
 * identity shortcut): dxb gets the shortcut's gradient, written or added (short_add), or
 * nothing when NULL. Batch statistics of this rank (no sync BN). */
void cuda_bn_add_relu_backward_nhwc(const void *dz, const uint8_t *relu_bits, void *dxa, float *dga, float *dba,
                                    const void *xa, const float *ga, const float *ma, const float *sa, void *dxb,
                                    float *dgb, float *dbb, const void *xb, const float *gb, const float *mb,
                                    const float *sb, int short_add, long rows, int c);
/* The same backward for an identity block whose bn input x is a 1x1 stride-1 convolution's
 * output (x = W h per pixel, W: cout x cin FP32, no bias), the bn's backward folded through
 * that convolution (bn_fold_conv1x1_backward.cu): from dz and relu_bits (NULL: no ReLU), g
 * (the shortcut's gradient, rows x cout) written, the bn's dgamma and dbeta, the conv's
 * weight gradient dw (FP32) and its input gradient dh (rows x cin) written; neither x nor the
 * bn's input gradient is read or written. Batch statistics of this rank (no sync BN). */
void cuda_bn_fold_conv1x1_backward_nhwc(const void *dz, const uint8_t *relu_bits, void *g, const void *h,
                                        const float *w, float *dw, void *dh, float *dgamma, float *dbeta,
                                        const float *gamma, const float *mean, const float *istd, long rows, int cin,
                                        int cout);
/* Sizes its scratch (bytes: rt_devmem_bn_fold_bytes of the largest fold) before a CUDA graph's
 * capture, which cannot grow it: the trainer calls it at start-up (model_host.cu). */
void cuda_bn_fold_reserve(size_t bytes);

/* ---- Layer norm over C per (n, pixel) --------------------------------------------------- */
void cuda_layernorm_forward(void *out, float *save_mean, float *save_rstd, const void *in,
                            const float *gamma, const float *beta, int n, int c, int hw, float eps);
void cuda_layernorm_backward(void *din, float *dgamma, float *dbeta, const void *dout,
                             const void *in, const float *gamma, const float *save_mean,
                             const float *save_rstd, int n, int c, int hw);
/* The norm of a conv's output that adds that conv's bias as it reads it (lower: fuse_ln_bias.c):
 * in is the conv's output without its bias xb (FP32 [c]); every pass reads x = in + xb rounded
 * to the activation type as bias.cu would have stored it, so the values equal the unfused
 * passes'. The backward also writes dxb (FP32 [c], overwritten) = din's channel sums:
 * channels-last rows (hw = 1) of at most RT_LN_BGRAD_MAX_C channels in the input gradient's own
 * launch, else in bias.cu's pass over din. dxb needs din. */
#define RT_LN_BGRAD_MAX_C 256   /* 8 warps x 256 doubles: the 16 KiB static shared memory budget */
void cuda_layernorm_forward_bias(void *out, float *save_mean, float *save_rstd, const void *in, const float *xb,
                                 const float *gamma, const float *beta, int n, int c, int hw, float eps);
void cuda_layernorm_backward_bias(void *din, float *dgamma, float *dbeta, float *dxb, const void *dout,
                                  const void *in, const float *xb, const float *gamma, const float *save_mean,
                                  const float *save_rstd, int n, int c, int hw);

/* ---- Elementwise -------------------------------------------------------------------------
 * Masks: the seed of a dropout / drop-path op is rt_hash_u64(*step_seed, salt, 0), derived
 * on the device from the step's seed (a device word the trainer sets before each step), so a
 * replayed graph draws new masks every step; the masks equal the CPU op's for that seed.
 * Masks are keyed by the index in the global batch, as on the CPU: `first` is the index of
 * this rank's element 0 (dropout) or sample 0 (drop-path), so any world size draws alike. */
void cuda_relu_forward(void *out, const void *in, long n);
void cuda_relu_backward(void *din, const void *dout, const void *out, long n);
void cuda_gelu_forward(void *out, const void *in, long n);
void cuda_gelu_backward(void *din, const void *dout, const void *in, long n);
void cuda_activation_forward(void *out, const void *in, long n, rt_activation fn);
void cuda_activation_backward(void *din, const void *dout, const void *in, long n, rt_activation fn);
/* A conv's or linear's bias and its activation in one pass: out = act(in + bias[c]), in kept
 * without the bias; din = dout * act'(in + bias[c]). fn: an rt_activation, or RT_BIAS_ACT_GELU.
 * Channel of element i: (i / hw) % c (channels-last rows: hw = 1). */
#define RT_BIAS_ACT_GELU (-1)
void cuda_bias_act_forward(void *out, const void *in, const float *bias, int n, int c, long hw, int fn);
void cuda_bias_act_backward(void *din, const void *dout, const void *in, const float *bias, int n, int c, long hw,
                            int fn);
/* That backward and the bias's gradient in one pass (bias_act_bgrad.cu): din as above, dbias =
 * the per-channel sums of din as stored, in cuda_bias_backward's order (the same bits). */
void cuda_bias_act_backward_bgrad(void *din, float *dbias, const void *dout, const void *in, const float *bias, int n,
                                  int c, long hw, int fn);
/* The channel ops of rt_ops.h. A gate (mul) channels-last: nhwc = 1, x [N,HW,C], g [N,C];
 * shuffle and slice take channels-last tensors as n = N*H*W rows, hw = 1. */
void cuda_channel_mul_forward(void *out, const void *x, const void *g, int n, int c, long hw, int nhwc);
void cuda_channel_mul_backward(void *dx, void *dg, const void *dout, const void *x, const void *g, int n, int c,
                               long hw, int nhwc);
void cuda_channel_shuffle_forward(void *out, const void *in, long n, int c, long hw, int groups);
void cuda_channel_shuffle_backward(void *din, const void *dout, long n, int c, long hw, int groups);
void cuda_channel_slice_forward(void *out, const void *in, long n, int c, long hw, int start, int count);
void cuda_channel_slice_backward(void *din, const void *dout, long n, int c, long hw, int start, int count);
/* The token ops of rt_ops.h: a learned tensor (w FP32, the same for each image; dw the sum over
 * them) and multi-head self-attention (attention.cu: w, b, dw, db and saved FP32, x, out and
 * their gradients in the activation type; heads of at most RT_ATTN_CUDA_MAX_HEAD channels). */
void cuda_space_to_depth_forward(void *out, const void *in, int n, int c, int h, int w, int block);
void cuda_space_to_depth_backward(void *din, const void *dout, int n, int c, int h, int w, int block);
void cuda_learned_forward(void *out, const float *w, int n, long count);
void cuda_learned_backward(float *dw, const void *dout, int n, long count);
void cuda_attention_forward(void *out, float *saved, const void *x, const float *w, const float *b, int n, int c, int t,
                            int heads);
void cuda_attention_backward(void *dx /*or NULL*/, float *dw, float *db, const void *dout, const void *x, const float *w,
                             const float *saved, float *work /*attention_work_elems*/, int n, int c, int t, int heads);
/* ---- Attention's core on cuDNN's fused scaled-dot-product attention (attention_sdpa.cu) --
 * Lowering chooses it (compiler/lower/choose_attention.c: BF16/FP16, a global attention whose
 * heads are a multiple of 8 channels, at most 128; trainc build --no-cudnn-attention turns it
 * off); the projections stay the runtime's own. saved holds attention_saved_elems +
 * attention_sdpa_extra_elems values, work attention_work_elems + attention_sdpa_extra_elems.
 * Where cuDNN, the device or the precision refuses a direction at start-up, it runs on
 * attention.cu's kernels and the trainer says why, once. Select after the shared workspace is
 * set (find_algorithms): returns the workspace the plans need. */
typedef struct rt_cuda_sdpa rt_cuda_sdpa;
rt_cuda_sdpa *rt_cuda_sdpa_create(int n, int c, int t, int heads);
size_t rt_cuda_sdpa_select(rt_cuda_sdpa *a, int training);
/* 1 when that direction runs fused; else *why (when not NULL) says why not. */
int rt_cuda_sdpa_fused(const rt_cuda_sdpa *a, int backward, const char **why);
void cuda_attention_sdpa_forward(const rt_cuda_sdpa *a, void *out, float *saved, const void *x, const float *w,
                                 const float *b);
void cuda_attention_sdpa_backward(const rt_cuda_sdpa *a, void *dx /*or NULL*/, float *dw, float *db, const void *dout,
                                  const void *x, const float *w, const float *saved, float *work);
/* Swin's shifted-window attention (window_attention.cu; rt_ops.h's window_attention_forward):
 * w, b, dw, db, saved and work FP32, x, out and their gradients in the activation type. */
void cuda_window_attention_forward(void *out, float *saved, const void *x, const float *w, const float *b, int n,
                                   int c, int h, int wd, int heads, int window, int shift);
void cuda_window_attention_backward(void *dx /*or NULL*/, float *dw, float *db, const void *dout, const void *x,
                                    const float *w, const float *saved, float *work /*window_attention_work_elems*/,
                                    int n, int c, int h, int wd, int heads, int window, int shift);
void cuda_add_forward(void *out, const void *a, const void *b, long n);
void cuda_tensor_accumulate(void *dst, const void *src, long n);
void cuda_dropout_forward(void *out, const void *in, long n, float p, const uint64_t *step_seed,
                          uint64_t salt, long first, int train);
void cuda_dropout_backward(void *din, const void *dout, long n, float p, const uint64_t *step_seed,
                           uint64_t salt, long first, int train);
void cuda_drop_path_forward(void *out, const void *in, int n, long per_sample, float p,
                            const uint64_t *step_seed, uint64_t salt, long first, int train);
void cuda_drop_path_backward(void *din, const void *dout, int n, long per_sample, float p,
                             const uint64_t *step_seed, uint64_t salt, long first, int train);
void cuda_layer_scale_forward(void *out, const void *in, const float *gamma, int n, int c, int hw);
void cuda_layer_scale_backward(void *din, float *dgamma, const void *dout, const void *in,
                               const float *gamma, int n, int c, int hw);
/* A residual block's tail (residual_tail.cu): out = res + s·gamma·(conv + bias), s the drop
 * path's per-sample scale (p = 0: none); the backward writes the conv's output gradient, the
 * shortcut's (added when dres_add; dres NULL: none) and dbias, dgamma, from the add's. n, c, hw
 * as the bias ops take them (channels-last: n = rows, hw = 1); per_sample = C·H·W. */
void cuda_residual_tail_forward(void *out, const void *conv, const void *res, const float *bias, const float *gamma,
                                int n, int c, long hw, long per_sample, float p, const uint64_t *step_seed, uint64_t salt,
                                long first_sample, int train);
void cuda_residual_tail_backward(void *dconv, void *dres, int dres_add, float *dbias, float *dgamma, const void *dout,
                                 const void *conv, const float *bias, const float *gamma, int n, int c, long hw,
                                 long per_sample, float p, const uint64_t *step_seed, uint64_t salt, long first_sample);

/* ---- Pooling ----------------------------------------------------------------------------- */
void cuda_maxpool2d_forward(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s);
void cuda_maxpool2d_backward(void *din, const void *dout, const int32_t *argmax,
                             const rt_pool_shape *s);
void cuda_avgpool2d_forward(void *out, const void *in, const rt_pool_shape *s);
void cuda_avgpool2d_backward(void *din, const void *dout, const rt_pool_shape *s);
void cuda_global_avgpool_forward(void *out, const void *in, int n, int c, int hw);
void cuda_global_avgpool_backward(void *din, const void *dout, int n, int c, int hw);
/* Channels-last [N, H, W, C] inputs (argmax: the position iy * w + ix, as in NCHW). */
void cuda_maxpool2d_forward_nhwc(void *out, int32_t *argmax, const void *in, const rt_pool_shape *s);
void cuda_maxpool2d_backward_nhwc(void *din, const void *dout, const int32_t *argmax,
                                  const rt_pool_shape *s);
/* A bn's apply + ReLU and the 3x3 stride-2 pad-1 max pooling that alone reads them, in one
 * channels-last pass (bn_relu_maxpool_nhwc.cu; lower.c ir_op.bn_in_pool): from the bn's input
 * and statistics, the pooled output as cuda_maxpool2d_forward_nhwc's, its argmax as each
 * winner's window offset ki * 3 + kj (a byte an element), and the ReLU's
 * bitmask over the bn's output as its bits apply writes it (bits NULL: none). s: the pooling's
 * shape; cuda_bn_relu_maxpool_fits says which it takes (even extents, C % 8 == 0). */
int cuda_bn_relu_maxpool_fits(const rt_pool_shape *s);
/* Its backward: the pooling's folded into the bn's two retiring passes (batchnorm_nhwc_vec.cu),
 * each gathering the bn's output gradient from pool_dout and the byte argmax itself. */
void cuda_batchnorm_backward_nhwc_pool(void *din /*or NULL*/, float *dgamma, float *dbeta, const void *pool_dout,
                                       const uint8_t *argmax, const uint8_t *relu_bits, const void *in,
                                       const float *gamma, const float *save_mean, const float *save_inv_std,
                                       const rt_pool_shape *s);
void cuda_bn_relu_maxpool_forward_nhwc(void *out, uint8_t *argmax, uint8_t *bits, const void *in, const float *gamma,
                                       const float *beta, const float *mean, const float *inv_std,
                                       const rt_pool_shape *s);
void cuda_global_avgpool_forward_nhwc(void *out, const void *in, int n, int c, int hw);
void cuda_global_avgpool_backward_nhwc(void *din, const void *dout, int n, int c, int hw);
void cuda_avgpool2d_forward_nhwc(void *out, const void *in, const rt_pool_shape *s);
void cuda_avgpool2d_backward_nhwc(void *din, const void *dout, const rt_pool_shape *s);

/* ---- LRN, concat --------------------------------------------------------------------------- */
/* save_scale: FP32 in every mode. Channels-last, a [N,H,W,C] tensor is [N*H*W, C, 1] to the
 * across-channels pair (the window then slides along the contiguous C axis). */
void cuda_lrn_forward(void *out, float *save_scale, const void *in, int n, int c, int hw,
                      int size, float alpha, float beta, float k);
void cuda_lrn_backward(void *din, const void *dout, const void *in, const void *out,
                       const float *save_scale, int n, int c, int hw, int size, float alpha,
                       float beta);
/* region WITHIN_CHANNEL (Caffe): a size x size zero-padded spatial window, alpha / size^2
 * (lrn_within.cu, as the CPU's lrn_within_forward / _backward); NCHW. */
void cuda_lrn_within_forward(void *out, float *save_scale, const void *in, int n, int c, int h, int w,
                             int size, float alpha, float beta, float k);
void cuda_lrn_within_backward(void *din, const void *dout, const void *in, const void *out,
                              const float *save_scale, int n, int c, int h, int w, int size, float alpha,
                              float beta);
/* The same on channels-last [N, H, W, C] tensors and saved scale (lrn_within.cu). */
void cuda_lrn_within_forward_nhwc(void *out, float *save_scale, const void *in, int n, int c, int h, int w,
                                  int size, float alpha, float beta, float k);
void cuda_lrn_within_backward_nhwc(void *din, const void *dout, const void *in, const void *out,
                                   const float *save_scale, int n, int c, int h, int w, int size, float alpha,
                                   float beta);
/* ins / dins are host arrays of device pointers. Channels-last, a [N,H,W,C] tensor is
 * [N*H*W, C, 1] to them: every position's channel ranges interleave, one row per position. */
void cuda_concat_forward(void *out, const void *const *ins, const int *channels, int k, int n,
                         int hw);
void cuda_concat_backward(void *const *dins, const void *dout, const int *channels, int k,
                          int n, int hw);

/* ---- Loss -------------------------------------------------------------------------------
 * Softmax cross-entropy with label smoothing fused with its backward (dlogits may be NULL).
 * Writes the batch mean loss (unscaled) to *loss (device double) without synchronizing;
 * dlogits = dscale · (*loss_scale, a device float, when not NULL) · d(loss)/d(logits). */
void cuda_softmax_xent(double *loss, void *dlogits, const void *logits, const int32_t *labels,
                       int n, int k, float smoothing, float dscale, const float *loss_scale);
/* The loss against dense targets (target_loss_forward's semantics, runtime/cpu/ops/
 * target_loss.c): softmax CE (bce = 0) or per-class sigmoid BCE; targets are n labels, or with
 * `mixed` 3n words (labels, partner labels, weights as float bits). Same outputs as above. */
void cuda_target_loss(double *loss, void *dlogits, const void *logits, const int32_t *targets, int mixed, int n,
                      int k, int bce, float smoothing, float bce_threshold, float dscale, const float *loss_scale);
/* Several loss heads (auxiliary classifiers): each head's batch mean goes to a double of its
 * own, which this adds, times the head's weight, into the step's loss on the device:
 * *total = (first ? 0 : *total) + weight * *head. The dscale a head's loss call gets carries
 * the same weight, so its gradient is scaled alike. */
void cuda_loss_add(double *total, const double *head, double weight, int first);

/* ---- Optimizer: one multi-tensor kernel over all parameters ------------------------------
 * Same semantics as rt_optim_step per tensor with the trainer's rules: weight decay per
 * tensor (0 for exempt ones when exempt_bn_bias), LARS trust ratios per tensor, optional
 * global-norm clipping folded into the gradient scale, and grad_div (1 / world size) for the
 * sum the all-reduce leaves. Norms reduce in a fixed order. */
typedef struct rt_cuda_optim rt_cuda_optim;
rt_cuda_optim *rt_cuda_optim_create(const rt_optim_config *cfg, const long *offsets,
                                    const long *counts, const int *exempt, int n_tensors,
                                    float weight_decay, double clip_grad_norm, float grad_div);
/* Loss scaling (precision.loss_scale): mode 0 none, 1 static, 2 dynamic. The backward is
 * seeded with the scale (rt_cuda_optim_loss_scale); the step divides it out. A step whose
 * gradients hold an inf or NaN is skipped (parameters and state untouched) and counted; in
 * dynamic mode the scale then halves, and doubles after 2000 clean steps in a row (torch's
 * GradScaler defaults). All of it happens on the device, identically on every rank (the
 * gradients are the all-reduced ones), so the step needs no synchronization. */
/* Caffe's lr_mult / decay_mult per tensor (all 1 unless set): the update of tensor t uses
 * lr × lr_mult[t] and weight decay × decay_mult[t], as rt_optim_apply_mults; a tensor with
 * lr_mult 0 is neither updated nor counted in the norms (rt_param_zero_frozen_grads). */
void rt_cuda_optim_set_mults(rt_cuda_optim *o, const float *lr_mult, const float *decay_mult);
void rt_cuda_optim_set_loss_scale(rt_cuda_optim *o, int mode, float init_scale);
const float *rt_cuda_optim_loss_scale(const rt_cuda_optim *o);   /* device float */
/* The scaler's state for checkpoints and metrics: { scale, clean steps in a row, skipped
 * steps so far }. get synchronizes; set is async. */
void rt_cuda_optim_scaler_get(const rt_cuda_optim *o, double state_host[3]);
void rt_cuda_optim_scaler_set(rt_cuda_optim *o, const double state_host[3]);
/* A step in two halves, so that the launch can be captured in a CUDA graph: set_step (never
 * captured) enqueues a write of the step's scalars (LR, bias corrections) to device memory,
 * frozen at the call, so nothing needs a synchronize between steps (momentum_scale:
 * rt_optim_args.momentum_scale); launch runs the kernels
 * that read them. params_act (or NULL) receives the updated parameters in
 * the activation type: the compute copy conv and linear read.
 * state: the host layout (rt_optim.h): a tensor at parameter offset o keeps its
 * rt_optim_state_per_param planes of count floats at state + planes·o. */
void rt_cuda_optim_set_step(rt_cuda_optim *o, double lr, double momentum_scale, long step);
void rt_cuda_optim_launch(rt_cuda_optim *o, float *params, void *params_act, float *state,
                          const float *grads);
/* Both, for a caller that does not capture (momentum_scale 1). */
void rt_cuda_optim_step(rt_cuda_optim *o, float *params, void *params_act, float *state,
                        const float *grads, double lr, long step);

/* ---- CUDA graphs ---------------------------------------------------------------------------
 * rt_cuda_graph_run(&g, fn, arg) runs fn(arg), which only enqueues work on the stream: the
 * first call runs it directly (lazy library set-up happens there), the second captures it
 * into a graph and every later call replays that graph. Shapes and pointers are static, and
 * per-step values live in device words that are set before each replay, so a replay does the
 * same work as a direct call. TRAINC_CUDA_GRAPH=0 or rt_cuda_graph_disable() runs fn directly
 * every time. */
typedef struct rt_cuda_graph rt_cuda_graph;
void rt_cuda_graph_run(rt_cuda_graph **g, void (*fn)(void *), void *arg);
void rt_cuda_graph_disable(void);
int rt_cuda_graph_enabled(void);

/* ---- Gradient all-reduce over NCCL ----------------------------------------------------------
 * One NCCL communicator over the MPI world (rank 0 makes the unique id and broadcasts it over
 * MPI) and one stream of its own. bucket_ready(k), called right after backward writes the
 * last gradient of bucket k, records an event on the compute stream; the NCCL stream waits
 * for it and sums the bucket in place, overlapping the rest of backward. grads_finish makes
 * the compute stream wait for every bucket (the optimizer runs after it). With comm == NULL
 * (a world of one) all of it is a no-op. Built without NCCL (rt_cuda_nccl_available() == 0),
 * init refuses a world of more than one rank. */
int rt_cuda_nccl_available(void);
void rt_cuda_nccl_init(rt_comm *comm, float *grads, const rt_grad_bucket *buckets, int n_buckets,
                       int overlap);
void rt_cuda_grad_bucket_ready(int k);
void rt_cuda_grads_finish(void);
/* Copies rank 0's floats to every rank (batch-norm statistics before evaluation). */
void rt_cuda_broadcast(float *buf, long n);
/* Ranks in the NCCL world (1 without one), and an in-place sum of n doubles over them on the
 * compute stream, in order with the ops around it (synchronized batch norm). */
int rt_cuda_world(void);
/* Dies, after aborting the communicator, if NCCL reports an asynchronous error (a peer that
 * died or timed out), or if the wait (waited_s so far) is held by a stopped or silent peer
 * (the MPI watchdog, rt_comm_watch): rt_cuda_sync polls it while a multi-GPU step runs, so a
 * dead or hung rank ends the job instead of hanging the stream synchronize. */
void rt_cuda_nccl_check_async(double waited_s);
void rt_cuda_allreduce_f64(double *buf, long n);

#ifdef __cplusplus
}
#endif
#endif
