/* CUDA ops of libtrainrt_cuda: the device side of every op in rt_ops.h, plus the context
 * (stream, cuDNN and cuBLASLt handles), device memory with a fits-or-refuses check, and the
 * multi-tensor optimizer. Callable from C: the generated host schedule is plain C11.
 *
 * CONVENTIONS (those of rt_ops.h, except where said here)
 * - Names: cuda_<cpu name>. Same argument order and meaning as the CPU op; every pointer is
 *   device memory unless its name ends in _host. FP32, NCHW.
 * - Streams: every launch goes to the one compute stream of the context (rt_cuda_stream());
 *   nothing synchronizes except the functions documented as returning host values.
 * - Backward OVERWRITES, as on the CPU; NULL gradient outputs are skipped.
 * - Errors: a failing CUDA / cuDNN / cuBLAS call dies with file, line, the library's message
 *   and a HINT; a user never sees a raw error code alone.
 * - Determinism: no atomics in any op. Reductions have a fixed order for a given shape, so a
 *   run repeats bit for bit on one GPU model with one library version. cuDNN algorithms are
 *   chosen by timing at start-up, so two processes may pick different ones; set
 *   TRAINC_CUDNN_DETERMINISTIC=1 to restrict them to deterministic ones.
 *
 *   rt_cuda_init(0, RT_CUDA_FP32);
 *   rt_cuda_conv *c1 = rt_cuda_conv_create(&conv1_shape);        // descriptors only
 *   ... rt_cuda_conv_select_all(): time algorithms once, size the shared workspace ...
 *   cuda_conv2d_forward(c1, out, in, weight);                    // no bias: a fused kernel adds it
 */
#ifndef RT_CUDA_H
#define RT_CUDA_H
#include <stddef.h>
#include <stdint.h>

/* The runtime's C headers are included inside the C linkage block: nvcc compiles this as C++. */
#ifdef __cplusplus
extern "C" {
#endif
#include "rt_ops.h"
#include "rt_optim.h"

/* ---- Context ------------------------------------------------------------------------- */
/* Math mode of convolutions and GEMMs: FP32 is IEEE single precision (cuDNN FMA math, cuBLAS
 * 32F compute); TF32 lets both use TF32 tensor cores with FP32 storage. */
typedef enum { RT_CUDA_FP32 = 0, RT_CUDA_TF32 = 1 } rt_cuda_math;

/* Selects the device (dies with a clear message when there is none), creates the stream and
 * the library handles. Idempotent. */
void rt_cuda_init(int device, rt_cuda_math math);
rt_cuda_math rt_cuda_math_mode(void);
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
/* Page-locks a host buffer that is copied every step (the batch) so copies run at full
 * speed; a no-op for a buffer already registered. */
void rt_cuda_pin_host(void *p, size_t bytes);

/* Refuses, before anything large is allocated, a run whose planned device memory does not
 * fit: prints needed vs free and the largest per-rank batch that would fit (fixed_bytes do
 * not grow with the batch, per_sample_bytes do) and exits 1. Returns the free bytes. */
size_t rt_cuda_check_memory(const char *model, size_t fixed_bytes, size_t per_sample_bytes,
                            int batch);
/* Largest batch for which fixed + batch·per_sample fits in avail bytes (0 if none). */
long rt_cuda_max_batch(size_t avail, size_t fixed_bytes, size_t per_sample_bytes);

/* ---- Convolution (cuDNN) ---------------------------------------------------------------
 * One object per conv layer: descriptors, and the algorithms rt_cuda_conv_select picks by
 * timing (once, at start-up; layers of equal shape share the result). The workspace is one
 * device buffer shared by every layer, sized to the largest choice. Bias is not part of the
 * convolution: a fused kernel adds it (with the activation that follows, if any). */
typedef struct rt_cuda_conv rt_cuda_conv;
rt_cuda_conv *rt_cuda_conv_create(const rt_conv_shape *s);
/* Times forward, backward-data (unless no_din) and backward-filter algorithms within
 * workspace_cap bytes; returns the workspace the choice needs. Needs no model memory. */
size_t rt_cuda_conv_select(rt_cuda_conv *c, int no_din, size_t workspace_cap);
/* The shared workspace; set once after every layer is selected. */
void rt_cuda_conv_set_workspace(void *work, size_t bytes);
void cuda_conv2d_forward(const rt_cuda_conv *c, float *out, const float *in, const float *weight);
void cuda_conv2d_backward(const rt_cuda_conv *c, float *din /*or NULL*/, float *dweight,
                          const float *dout, const float *in, const float *weight);

/* ---- Linear (cuBLASLt): out[N,O] = in[N,I] · W[O,I]^T, bias added by a fused kernel ----- */
typedef struct rt_cuda_linear rt_cuda_linear;
rt_cuda_linear *rt_cuda_linear_create(int n, int in_features, int out_features);
void cuda_linear_forward(const rt_cuda_linear *l, float *out, const float *in, const float *weight);
void cuda_linear_backward(const rt_cuda_linear *l, float *din /*or NULL*/, float *dweight,
                          const float *dout, const float *in, const float *weight);

/* ---- Per-channel bias (conv and linear; linear is hw = 1) ------------------------------ */
void cuda_bias_forward(float *out, const float *in, const float *bias, int n, int c, long hw);
/* dbias[c] = sum over n, hw of dout. If relu_out is not NULL, dout is first masked by
 * relu_out > 0 and the masked gradient is written to dmasked (the fused bias+ReLU backward:
 * dmasked may alias dout). */
void cuda_bias_backward(float *dbias, float *dmasked, const float *dout, const float *relu_out,
                        int n, int c, long hw);

/* ---- Batch norm -------------------------------------------------------------------------
 * The statistics kernel writes save_mean / save_inv_std (and updates the running stats in
 * training); applying them, y = (x - mean)·inv_std·gamma + beta, is a per-net fused kernel
 * (with the ReLU after it, when there is one), or cuda_batchnorm_apply. */
void cuda_batchnorm_stats_train(float *save_mean, float *save_inv_std, float *running_mean,
                                float *running_var, const float *in, int n, int c, int hw,
                                float momentum, float eps);
/* Eval: mean = running_mean, inv_std = 1/sqrt(running_var + eps), into the same slots. */
void cuda_batchnorm_stats_eval(float *save_mean, float *save_inv_std, const float *running_mean,
                               const float *running_var, int c, float eps);
void cuda_batchnorm_apply(float *out, const float *in, const float *gamma, const float *beta,
                          const float *mean, const float *inv_std, int n, int c, int hw, int relu);
/* relu_out not NULL: dout is the gradient of ReLU(bn(x)) and is masked by relu_out > 0 first
 * (the fused BN+ReLU backward). */
void cuda_batchnorm_backward(float *din /*or NULL*/, float *dgamma, float *dbeta,
                             const float *dout, const float *relu_out, const float *in,
                             const float *gamma, const float *save_mean,
                             const float *save_inv_std, int n, int c, int hw);

/* ---- Layer norm over C per (n, pixel) --------------------------------------------------- */
void cuda_layernorm_forward(float *out, float *save_mean, float *save_rstd, const float *in,
                            const float *gamma, const float *beta, int n, int c, int hw, float eps);
void cuda_layernorm_backward(float *din, float *dgamma, float *dbeta, const float *dout,
                             const float *in, const float *gamma, const float *save_mean,
                             const float *save_rstd, int n, int c, int hw);

/* ---- Elementwise ------------------------------------------------------------------------- */
void cuda_relu_forward(float *out, const float *in, long n);
void cuda_relu_backward(float *din, const float *dout, const float *out, long n);
void cuda_gelu_forward(float *out, const float *in, long n);
void cuda_gelu_backward(float *din, const float *dout, const float *in, long n);
void cuda_add_forward(float *out, const float *a, const float *b, long n);
void cuda_tensor_accumulate(float *dst, const float *src, long n);
void cuda_dropout_forward(float *out, const float *in, long n, float p, uint64_t seed, int train);
void cuda_dropout_backward(float *din, const float *dout, long n, float p, uint64_t seed, int train);
void cuda_drop_path_forward(float *out, const float *in, int n, long per_sample, float p,
                            uint64_t seed, int train);
void cuda_drop_path_backward(float *din, const float *dout, int n, long per_sample, float p,
                             uint64_t seed, int train);
void cuda_layer_scale_forward(float *out, const float *in, const float *gamma, int n, int c, int hw);
void cuda_layer_scale_backward(float *din, float *dgamma, const float *dout, const float *in,
                               const float *gamma, int n, int c, int hw);

/* ---- Pooling ----------------------------------------------------------------------------- */
void cuda_maxpool2d_forward(float *out, int32_t *argmax, const float *in, const rt_pool_shape *s);
void cuda_maxpool2d_backward(float *din, const float *dout, const int32_t *argmax,
                             const rt_pool_shape *s);
void cuda_avgpool2d_forward(float *out, const float *in, const rt_pool_shape *s);
void cuda_avgpool2d_backward(float *din, const float *dout, const rt_pool_shape *s);
void cuda_global_avgpool_forward(float *out, const float *in, int n, int c, int hw);
void cuda_global_avgpool_backward(float *din, const float *dout, int n, int c, int hw);

/* ---- LRN, concat --------------------------------------------------------------------------- */
void cuda_lrn_forward(float *out, float *save_scale, const float *in, int n, int c, int hw,
                      int size, float alpha, float beta, float k);
void cuda_lrn_backward(float *din, const float *dout, const float *in, const float *out,
                       const float *save_scale, int n, int c, int hw, int size, float alpha,
                       float beta);
/* ins / dins are host arrays of device pointers. */
void cuda_concat_forward(float *out, const float *const *ins, const int *channels, int k, int n,
                         int hw);
void cuda_concat_backward(float *const *dins, const float *dout, const int *channels, int k,
                          int n, int hw);

/* ---- Loss -------------------------------------------------------------------------------
 * Softmax cross-entropy with label smoothing fused with its backward (dlogits may be NULL).
 * Writes the batch mean loss to *loss (device double) without synchronizing. */
void cuda_softmax_xent(double *loss, float *dlogits, const float *logits, const int32_t *labels,
                       int n, int k, float smoothing, float dscale);

/* ---- Optimizer: one multi-tensor kernel over all parameters ------------------------------
 * Same semantics as rt_optim_step per tensor with the trainer's rules: weight decay per
 * tensor (0 for exempt ones when exempt_bn_bias), LARS trust ratios per tensor, optional
 * global-norm clipping folded into the gradient scale. Norms reduce in a fixed order. */
typedef struct rt_cuda_optim rt_cuda_optim;
rt_cuda_optim *rt_cuda_optim_create(const rt_optim_config *cfg, const long *offsets,
                                    const long *counts, const int *exempt, int n_tensors,
                                    float weight_decay, double clip_grad_norm);
/* state: the host layout (rt_optim.h): a tensor at parameter offset o keeps its
 * rt_optim_state_per_param planes of count floats at state + planes·o. */
void rt_cuda_optim_step(rt_cuda_optim *o, float *params, float *state, const float *grads,
                        long n_params, double lr, long step);

#ifdef __cplusplus
}
#endif
#endif
