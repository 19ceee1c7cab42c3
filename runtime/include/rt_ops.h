/* CPU training ops of libtrainrt: forward and backward of every layer the compiler emits,
 * NCHW layout, batch N explicit. This header is the reference for their conventions.
 *
 * CONVENTIONS
 * - Signatures: outputs first, then inputs, then sizes. Gradients carry a `d` prefix.
 * - Precision: every op exists as `name` (float) and `name_f64` (double). Op sources are
 *   written once against real_t/RT_FN (rt_real.h); the double build exists for the
 *   central-difference gradient checks in tests/unit/test_grad_*.c.
 * - Backward OVERWRITES: dinput, dweight, dbias, dgamma, dbeta are written with `=`, never
 *   accumulated; a gradient output passed as NULL is skipped (e.g. dinput of the first layer).
 *   The one exception is a tensor that feeds several consumers: the generated code lets the
 *   first consumer's backward write its gradient and, for each further consumer, writes into
 *   a scratch buffer and calls tensor_accumulate(dst, scratch, n). Ops never do this themselves.
 * - In-place: elementwise ops (relu, gelu, dropout, drop_path, layer_scale, add) allow
 *   out == in and din == dout. Nothing else may alias.
 * - Workspace: conv2d needs a scratch buffer of conv2d_workspace_elems(s) elements, the
 *   same for forward and backward: per OpenMP thread, the im2col matrix of one image and
 *   group (none for 1x1 stride-1 pad-0 convs) plus a private dweight (Winograd: the
 *   transformed kernels and per thread a block of transformed tiles). It depends on
 *   omp_get_max_threads(), so the trainer sizes it at start-up, after fixing its thread
 *   count, takes the maximum over layers, and shares one buffer between them.
 * - Threading: ops use OpenMP; OpenBLAS is pinned to one thread (see rt_gemm.h).
 * - Saved state: batchnorm saves mean and inv_std per channel, layernorm mean and rstd per
 *   pixel, maxpool int32 argmax per output, LRN its scale per element; backward reads them.
 * - Stateless masks: dropout and drop_path hold no RNG state and no mask buffer. Element
 *   (or sample) i is kept iff rt_hash_uniform(seed, first + i) >= p, where `first` is the
 *   index of element (sample) 0 in the global batch, so a sample's mask does not depend on
 *   the rank that trains it or the world size; kept values are scaled by
 *   1/(1-p); backward recomputes the same mask from the same seed. The caller derives a
 *   fresh seed per layer and step (e.g. hash of run seed, step, layer id).
 * - Flatten is a no-op: a contiguous NCHW tensor [N,C,H,W] is already [N, C*H*W]; the
 *   compiler aliases the buffer and emits no call.
 * - Labels are int32_t class indices in [0, k).
 * - Fused activation: conv2d (rt_conv_shape.act) and batchnorm (an rt_act argument) can
 *   apply a ReLU to their output in the same pass, so the pre-activation tensor is never
 *   stored. Their backward then takes `act_out`, the activated output, whose sign is the
 *   ReLU's mask (batchnorm_backward instead recomputes the mask from its input), and `dout`
 *   is the gradient with respect to that activated output.
 */
#ifndef RT_OPS_PROTOTYPES
#ifndef RT_OPS_H
#define RT_OPS_H
#include <stdint.h>
#include <stdio.h>
#include "rt_hash.h"   /* rt_hash_uniform: dropout and drop-path masks */

/* Synchronized batch norm: `sum` adds v[0..n) over all processes in place (an all-reduce;
 * `what` names it in failure messages), `ranks` processes hold the global batch. The
 * *_sync batchnorm variants take NULL for per-process statistics. */
typedef struct {
    void (*sum)(void *ctx, double *v, int n, const char *what);
    void *ctx;
    int ranks;
} rt_bn_sync;

/* Achieved rates of the ops by class, for `--benchmark` (runtime/cpu/op_stats.c). While
 * counting, the ops add each call's useful FLOPs (2 x the direct convolution's or plain GEMM's
 * multiply-adds, whatever algorithm ran) and wall seconds; conv backward splits its wall time
 * into data and weights by the threads' measured time in the input-gradient part. */
typedef enum { RT_OP_CONV_FWD = 0, RT_OP_CONV_BWD_DATA, RT_OP_CONV_BWD_WEIGHTS, RT_OP_LINEAR,
               RT_OP_CLASSES } rt_op_class;
void rt_op_stats_start(void);
void rt_op_stats_stop(void);
/* rt_time_s() while counting, else 0: an op times itself only when this is non-zero. */
double rt_op_stats_clock(void);
void rt_op_stats_add(rt_op_class c, double useful_flops, double seconds);
/* One line per class that ran; step_seconds (the timed steps' wall time) gives the shares. */
void rt_op_stats_print(FILE *out, double step_seconds);
/* A conv backward call that began at t0 (rt_op_stats_clock), whose threads spent data_s
 * seconds on average in the input-gradient part. */
void rt_op_stats_conv_backward(double useful_flops_each, int has_din, double t0, double data_s);

/* Activation fused into the op that produces its input (see CONVENTIONS). */
typedef enum { RT_ACT_NONE = 0, RT_ACT_RELU = 1 } rt_act;

/* The elementwise activation family of activation_forward/backward (torch's definitions):
 * relu6 min(max(x,0),6); sigmoid 1/(1+e^-x); silu x·sigmoid(x); hardswish x·relu6(x+3)/6;
 * hardsigmoid relu6(x+3)/6. */
typedef enum {
    RT_ACTIVATION_RELU6 = 0, RT_ACTIVATION_SIGMOID, RT_ACTIVATION_SILU, RT_ACTIVATION_HARDSWISH,
    RT_ACTIVATION_HARDSIGMOID, RT_ACTIVATION_COUNT
} rt_activation;

/* How conv2d computes: im2col + GEMM (any shape), or Winograd on the shapes that
 * rt_conv_winograd_fits(): RT_CONV_WINOGRAD is F(2x2,3x3) on 3x3 and F(2x2,5x5) on 5x5
 * kernels, RT_CONV_WINOGRAD_F4 is F(4x4,3x3) (3x3 only); 2.25x, 2.8x and 4x fewer
 * multiply-adds than im2col, less the tiles' overhang at the edges. The strided ones:
 * RT_CONV_STRIDED one GEMM per tap on the polyphase planes (conv2d_strided.h),
 * RT_CONV_STRIDED_WINOGRAD 3x3/2 by Winograd on those planes (conv2d_strided_winograd.h). The
 * ones that need something of the host (rt_conv_choice.h says what, and what runs instead):
 * RT_CONV_DNNL_BF16 oneDNN's BF16 primitives (rt_conv_bf16.h), RT_CONV_C1 the 1-channel
 * AVX-512 kernel (rt_conv_c1.h). The compiler picks (rt_conv_choose); conv2d only follows. */
typedef enum {
    RT_CONV_IM2COL = 0, RT_CONV_WINOGRAD = 1, RT_CONV_WINOGRAD_F4 = 2, RT_CONV_STRIDED = 3,
    RT_CONV_STRIDED_WINOGRAD = 4, RT_CONV_DNNL_BF16 = 5, RT_CONV_C1 = 6
} rt_conv_algo;

/* conv2d sizes; oh/ow must equal rt_conv_out_dim() of the rest (the compiler sets them). */
typedef struct {
    int n, c, h, w;        /* input */
    int oc, kh, kw;        /* output channels, kernel */
    int sh, sw, ph, pw;    /* stride, zero padding */
    int dh, dw;            /* dilation (1 = dense) */
    int groups;            /* c and oc divisible by groups; groups == c is depthwise */
    int oh, ow;            /* output */
    rt_act act;            /* fused activation of the output (0: none) */
    rt_conv_algo algo;     /* RT_CONV_WINOGRAD(_F4) only where rt_conv_winograd_fits() */
    int din_add;           /* backward adds its input gradient into din (a gradient other
                            * consumers of the input wrote first) instead of writing it */
    /* What runs where the host does not take `algo` (rt_conv_choice.h's rule): alt, and
     * where it does not take alt either, fallback (host-independent). 0 (im2col) unless set. */
    rt_conv_algo alt, fallback;
} rt_conv_shape;

/* Shapes the Winograd path computes: square 3x3 or 5x5 kernels, stride 1, "same" padding,
 * no dilation or groups; RT_CONV_WINOGRAD_F4 takes 3x3 only. */
static inline int rt_conv_winograd_fits(const rt_conv_shape *s) {
    int k = s->kh, p = (k - 1) / 2;
    int kernel_ok = (k == 3 || (k == 5 && s->algo != RT_CONV_WINOGRAD_F4)) && s->kw == k;
    return kernel_ok && s->sh == 1 && s->sw == 1 && s->ph == p && s->pw == p && s->dh == 1 &&
           s->dw == 1 && s->groups == 1 && s->oh == s->h && s->ow == s->w;
}

/* maxpool2d / avgpool2d sizes; oh, ow in floor mode (torch's default) or ceil mode (Caffe's,
 * whose last window starts inside the padded input and may run past it: it is clipped). */
typedef struct {
    int n, c, h, w;
    int kh, kw, sh, sw, ph, pw;
    int oh, ow;
} rt_pool_shape;

/* Output extent of a convolution or pooling window along one axis. */
static inline int rt_conv_out_dim(int in, int k, int stride, int pad, int dilation) {
    return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

/* attention (below): the tile side of its blocked core, and the values its forward saves. */
#define RT_ATTN_BLOCK 64
/* The widest head the CUDA kernels take (attention.cu; trainc refuses wider ones for CUDA). */
#define RT_ATTN_CUDA_MAX_HEAD 64
static inline long attention_saved_elems(int n, int c, int t, int heads) {
    return (long)n * ((long)t * c * 4 + (long)heads * t);
}
static inline long attention_work_elems(int n, int c, int t) { return (long)n * t * c * 4; }
/* cuDNN's fused attention (rt_cuda.h rt_cuda_sdpa): the 16-bit copies it adds to attention's
 * saved values (Q, K, V, O) and to its work (dO, dQ, dK, dV), n*t*4c 2-byte values each, after
 * room to start them 256-byte aligned. */
static inline long attention_sdpa_extra_elems(int n, int c, int t) { return 64 + (long)n * t * c * 2; }
/* window_attention: its backward's work, attention's at T = H*W and the score gradients of
 * every window and head ([N, H*W / window^2, heads, window^2, window^2]). */
static inline long window_attention_work_elems(int n, int c, int h, int w, int heads, int window) {
    return (long)n * h * w * ((long)c * 4 + (long)heads * window * window);
}

/* Prototypes, declared once per precision: RT_OPS_R is the element type, RT_OPS_FN the name. */
#define RT_OPS_PROTOTYPES
#define RT_OPS_R float
#define RT_OPS_FN(name) name
#include "rt_ops.h"
#undef RT_OPS_R
#undef RT_OPS_FN
#define RT_OPS_R double
#define RT_OPS_FN(name) name##_f64
#include "rt_ops.h"
#undef RT_OPS_R
#undef RT_OPS_FN
#undef RT_OPS_PROTOTYPES

#endif /* RT_OPS_H */
#else  /* RT_OPS_PROTOTYPES: this part is read twice, once per precision */

/* dst += src: gradient of a tensor with several consumers (see CONVENTIONS). */
void RT_OPS_FN(tensor_accumulate)(RT_OPS_R *dst, const RT_OPS_R *src, long n);

/* ---- conv2d (im2col + GEMM; 1x1 stride-1 pad-0 without im2col; Winograd when s->algo
 * says so and the shape fits, im2col otherwise) ----
 * With s->act set, forward applies the activation and backward reads act_out (the forward's
 * out) to mask dout; act_out may be NULL otherwise. */
long RT_OPS_FN(conv2d_workspace_elems)(const rt_conv_shape *s);
void RT_OPS_FN(conv2d_forward)(RT_OPS_R *out /*N,OC,OH,OW*/, const RT_OPS_R *in /*N,C,H,W*/,
                               const RT_OPS_R *weight /*OC,C/groups,KH,KW*/,
                               const RT_OPS_R *bias /*OC or NULL*/, RT_OPS_R *work,
                               const rt_conv_shape *s);
void RT_OPS_FN(conv2d_backward)(RT_OPS_R *din /*N,C,H,W or NULL*/,
                                RT_OPS_R *dweight /*OC,C/groups,KH,KW*/,
                                RT_OPS_R *dbias /*OC or NULL*/,
                                const RT_OPS_R *dout /*N,OC,OH,OW*/,
                                const RT_OPS_R *act_out /*N,OC,OH,OW or NULL*/,
                                const RT_OPS_R *in, const RT_OPS_R *weight, RT_OPS_R *work,
                                const rt_conv_shape *s);

/* ---- conv2d with a ReLU (s->act) followed by max pooling, as one op (the generated code's
 * pair of a 1-channel first conv and its pooling): where the 1-channel kernel takes the conv
 * (float build, AVX-512) and the pooling is 2x2 stride 2, each image's conv output stays in a
 * per-thread plane of the workspace that is pooled from there, and the backward expands the
 * pooled gradient into such a plane, masked where the pooled output is not > 0: conv_out and
 * conv_dout are not touched (12.8 MB each way for LeNet's batch of 128), with the same values
 * and sums as the two ops. Elsewhere it runs the two ops through conv_out and conv_dout.
 * The conv's input gradient is not computed (its input is the net's data). ---- */
void RT_OPS_FN(conv2d_relu_maxpool_forward)(RT_OPS_R *pool_out, int32_t *argmax,
                                            RT_OPS_R *conv_out, const RT_OPS_R *in,
                                            const RT_OPS_R *weight, const RT_OPS_R *bias,
                                            RT_OPS_R *work, const rt_conv_shape *cs,
                                            const rt_pool_shape *ps);
void RT_OPS_FN(conv2d_relu_maxpool_backward)(RT_OPS_R *dweight, RT_OPS_R *dbias,
                                             const RT_OPS_R *pool_dout, const RT_OPS_R *pool_out,
                                             const int32_t *argmax, RT_OPS_R *conv_dout,
                                             const RT_OPS_R *conv_out, const RT_OPS_R *in,
                                             const RT_OPS_R *weight, RT_OPS_R *work,
                                             const rt_conv_shape *cs, const rt_pool_shape *ps);

/* ---- linear: out = in . weight^T + bias (PyTorch layout) ---- */
void RT_OPS_FN(linear_forward)(RT_OPS_R *out /*N,O*/, const RT_OPS_R *in /*N,I*/,
                               const RT_OPS_R *weight /*O,I*/, const RT_OPS_R *bias /*O or NULL*/,
                               int n, int in_features, int out_features);
void RT_OPS_FN(linear_backward)(RT_OPS_R *din /*N,I or NULL*/, RT_OPS_R *dweight /*O,I*/,
                                RT_OPS_R *dbias /*O or NULL*/, const RT_OPS_R *dout /*N,O*/,
                                const RT_OPS_R *in, const RT_OPS_R *weight,
                                int n, int in_features, int out_features);

/* ---- batchnorm over N,H,W per channel; [N,C] inputs use hw = 1 ---- */
/* Training: batch statistics (biased var for normalizing), saves mean and inv_std, and
 * updates running stats like torch: r = (1-momentum)*r + momentum*batch, var unbiased. */
void RT_OPS_FN(batchnorm_forward_train)(RT_OPS_R *out /*N,C,HW*/, RT_OPS_R *save_mean /*C*/,
                                        RT_OPS_R *save_inv_std /*C*/, RT_OPS_R *running_mean /*C*/,
                                        RT_OPS_R *running_var /*C*/, const RT_OPS_R *in /*N,C,HW*/,
                                        const RT_OPS_R *gamma /*C*/, const RT_OPS_R *beta /*C*/,
                                        int n, int c, int hw, RT_OPS_R momentum, RT_OPS_R eps,
                                        rt_act act);
void RT_OPS_FN(batchnorm_forward_eval)(RT_OPS_R *out, const RT_OPS_R *in, const RT_OPS_R *gamma,
                                       const RT_OPS_R *beta, const RT_OPS_R *running_mean,
                                       const RT_OPS_R *running_var, int n, int c, int hw,
                                       RT_OPS_R eps, rt_act act);
/* Backward of the training forward with the same act: a fused ReLU's mask is recomputed from
 * in, gamma, beta and the saved statistics (bit for bit the forward's), so the activated
 * output is not read again. */
void RT_OPS_FN(batchnorm_backward)(RT_OPS_R *din /*N,C,HW or NULL*/, RT_OPS_R *dgamma /*C*/,
                                   RT_OPS_R *dbeta /*C*/, const RT_OPS_R *dout /*N,C,HW*/,
                                   const RT_OPS_R *in /*N,C,HW*/, const RT_OPS_R *gamma /*C*/,
                                   const RT_OPS_R *beta /*C*/, const RT_OPS_R *save_mean /*C*/,
                                   const RT_OPS_R *save_inv_std /*C*/, int n, int c, int hw,
                                   rt_act act);

/* A residual block's closing bn + add + act in one pass: out = act(batchnorm(in) + residual),
 * bit for bit batchnorm_forward_* (act none), then add_act_forward; the normalized tensor is
 * never stored. The backward takes dout at out and the add's output act_out (NULL: no ReLU):
 * it masks dout IN PLACE by act_out > 0 (so the residual's gradient, which shares dout's
 * buffer, is the masked one too) and computes batchnorm_backward's gradients from it. */
void RT_OPS_FN(batchnorm_add_forward_train)(RT_OPS_R *out /*N,C,HW*/, RT_OPS_R *save_mean /*C*/,
                                            RT_OPS_R *save_inv_std /*C*/, RT_OPS_R *running_mean /*C*/,
                                            RT_OPS_R *running_var /*C*/, const RT_OPS_R *in /*N,C,HW*/,
                                            const RT_OPS_R *residual /*N,C,HW*/, const RT_OPS_R *gamma,
                                            const RT_OPS_R *beta, int n, int c, int hw,
                                            RT_OPS_R momentum, RT_OPS_R eps, rt_act act);
void RT_OPS_FN(batchnorm_add_forward_eval)(RT_OPS_R *out, const RT_OPS_R *in, const RT_OPS_R *residual,
                                           const RT_OPS_R *gamma, const RT_OPS_R *beta,
                                           const RT_OPS_R *running_mean, const RT_OPS_R *running_var,
                                           int n, int c, int hw, RT_OPS_R eps, rt_act act);
void RT_OPS_FN(batchnorm_add_backward)(RT_OPS_R *din /*N,C,HW or NULL*/, RT_OPS_R *dgamma /*C*/,
                                       RT_OPS_R *dbeta /*C*/, RT_OPS_R *dout /*N,C,HW: masked in place*/,
                                       const RT_OPS_R *act_out /*N,C,HW or NULL*/, const RT_OPS_R *in,
                                       const RT_OPS_R *gamma, const RT_OPS_R *beta,
                                       const RT_OPS_R *save_mean, const RT_OPS_R *save_inv_std,
                                       int n, int c, int hw);

/* Frozen statistics (Caffe's use_global_stats): the training forward is
 * batchnorm_forward_eval; this backward holds the running statistics constant
 * (batchnorm_frozen.c). din = dout·gamma/sqrt(var + eps), dgamma = sum dout·xhat, dbeta = sum
 * dout, with dout masked by a fused ReLU's output when act_out is given. */
void RT_OPS_FN(batchnorm_backward_frozen)(RT_OPS_R *din /*N,C,HW or NULL*/, RT_OPS_R *dgamma /*C*/,
                                          RT_OPS_R *dbeta /*C*/, const RT_OPS_R *dout,
                                          const RT_OPS_R *act_out, const RT_OPS_R *in, const RT_OPS_R *gamma,
                                          const RT_OPS_R *running_mean, const RT_OPS_R *running_var,
                                          int n, int c, int hw, RT_OPS_R eps);

/* The same with the per-channel sums added over processes (sync may be NULL). dgamma and
 * dbeta stay this process's share; din uses the global sums. */
void RT_OPS_FN(batchnorm_forward_train_sync)(RT_OPS_R *out, RT_OPS_R *save_mean,
                                             RT_OPS_R *save_inv_std, RT_OPS_R *running_mean,
                                             RT_OPS_R *running_var, const RT_OPS_R *in,
                                             const RT_OPS_R *gamma, const RT_OPS_R *beta,
                                             int n, int c, int hw, RT_OPS_R momentum,
                                             RT_OPS_R eps, rt_act act, const rt_bn_sync *sync);
void RT_OPS_FN(batchnorm_backward_sync)(RT_OPS_R *din, RT_OPS_R *dgamma, RT_OPS_R *dbeta,
                                        const RT_OPS_R *dout, const RT_OPS_R *in,
                                        const RT_OPS_R *gamma, const RT_OPS_R *beta,
                                        const RT_OPS_R *save_mean, const RT_OPS_R *save_inv_std,
                                        int n, int c, int hw, rt_act act,
                                        const rt_bn_sync *sync);

/* ---- layernorm over C per (n, pixel): ConvNeXt channels_first; [N,C] uses hw = 1 ---- */
void RT_OPS_FN(layernorm_forward)(RT_OPS_R *out /*N,C,HW*/, RT_OPS_R *save_mean /*N,HW*/,
                                  RT_OPS_R *save_rstd /*N,HW*/, const RT_OPS_R *in /*N,C,HW*/,
                                  const RT_OPS_R *gamma /*C*/, const RT_OPS_R *beta /*C*/,
                                  int n, int c, int hw, RT_OPS_R eps);
void RT_OPS_FN(layernorm_backward)(RT_OPS_R *din /*N,C,HW or NULL*/, RT_OPS_R *dgamma /*C*/,
                                   RT_OPS_R *dbeta /*C*/, const RT_OPS_R *dout, const RT_OPS_R *in,
                                   const RT_OPS_R *gamma, const RT_OPS_R *save_mean,
                                   const RT_OPS_R *save_rstd, int n, int c, int hw);

/* ---- activations ---- */
void RT_OPS_FN(relu_forward)(RT_OPS_R *out, const RT_OPS_R *in, long n);
/* Takes the forward OUTPUT (out > 0 iff in > 0), so relu may run in place. */
void RT_OPS_FN(relu_backward)(RT_OPS_R *din, const RT_OPS_R *dout, const RT_OPS_R *out, long n);
/* Exact erf form: 0.5 x (1 + erf(x / sqrt 2)), torch's default. */
void RT_OPS_FN(gelu_forward)(RT_OPS_R *out, const RT_OPS_R *in, long n);
void RT_OPS_FN(gelu_backward)(RT_OPS_R *din, const RT_OPS_R *dout, const RT_OPS_R *in, long n);
/* relu6, sigmoid, silu, hardswish, hardsigmoid (rt_activation). Backward reads the forward
 * INPUT (silu and hardswish cannot be inverted from their output); at a kink (relu6 at 0 and
 * 6, the hard ones at -3 and 3) the gradient is torch's one-sided choice. */
void RT_OPS_FN(activation_forward)(RT_OPS_R *out, const RT_OPS_R *in, long n, rt_activation fn);
void RT_OPS_FN(activation_backward)(RT_OPS_R *din, const RT_OPS_R *dout, const RT_OPS_R *in, long n,
                                    rt_activation fn);

/* ---- channel ops: SE gate, ShuffleNet's shuffle and split ---- */
/* out[n,c,p] = x[n,c,p] * g[n,c]: a per-channel gate (squeeze-and-excitation); with hw = 1 and
 * c = C*H*W the elementwise product of two tensors of one shape. Backward: dx = dout * g,
 * dg[n,c] = sum over p of dout * x (either may be NULL; dx may be dout). */
void RT_OPS_FN(channel_mul_forward)(RT_OPS_R *out, const RT_OPS_R *x /*N,C,HW*/, const RT_OPS_R *g /*N,C*/,
                                    int n, int c, long hw);
void RT_OPS_FN(channel_mul_backward)(RT_OPS_R *dx, RT_OPS_R *dg, const RT_OPS_R *dout, const RT_OPS_R *x,
                                     const RT_OPS_R *g, int n, int c, long hw);
/* torch's channel_shuffle: channels as [groups, C/groups] transposed, out channel k*groups + i
 * is in channel i*(C/groups) + k; backward is the inverse permutation. */
void RT_OPS_FN(channel_shuffle_forward)(RT_OPS_R *out, const RT_OPS_R *in, int n, int c, long hw, int groups);
void RT_OPS_FN(channel_shuffle_backward)(RT_OPS_R *din, const RT_OPS_R *dout, int n, int c, long hw, int groups);
/* Channels [start, start+count) of an [N,C,HW] input; backward writes every channel of din
 * (zero outside the slice). */
void RT_OPS_FN(channel_slice_forward)(RT_OPS_R *out, const RT_OPS_R *in, int n, int c, long hw, int start,
                                      int count);
void RT_OPS_FN(channel_slice_backward)(RT_OPS_R *din, const RT_OPS_R *dout, int n, int c, long hw, int start,
                                       int count);

/* ---- token ops (ViT): a sequence of T tokens of C features is [N, C, T], channel-major ---- */
/* stop_gradient: out = in (n values); no backward (its readers' gradients stop there). */
void RT_OPS_FN(stop_gradient_forward)(RT_OPS_R *out, const RT_OPS_R *in, long n);

/* A learned tensor of count values, the same for each of the n images; backward: dw = the sum
 * over images of dout. */
void RT_OPS_FN(learned_forward)(RT_OPS_R *out, const RT_OPS_R *w, int n, long count);
void RT_OPS_FN(learned_backward)(RT_OPS_R *dw, const RT_OPS_R *dout, int n, long count);
/* Multi-head self-attention as torch's nn.MultiheadAttention (batch_first, no dropout, no mask):
 * w holds in_proj_weight [3C, C] then out_proj.weight [C, C], b in_proj_bias [3C] then
 * out_proj.bias [C]; heads divides c. The forward writes `saved`, attention_saved_elems values
 * ([N, T, 3C] queries/keys/values, [N, T, C] the heads' outputs, [N, heads, T] log-sum-exp),
 * which the backward reads; it never holds the T x T weights whole, only tiles of
 * RT_ATTN_BLOCK x RT_ATTN_BLOCK (attention.c). The backward's work is scratch of
 * attention_work_elems values (its dQKV and dO; the plan's workspace). dx may be NULL. */
void RT_OPS_FN(attention_forward)(RT_OPS_R *out /*N,C,T*/, RT_OPS_R *saved, const RT_OPS_R *x /*N,C,T*/,
                                  const RT_OPS_R *w, const RT_OPS_R *b, int n, int c, int t, int heads);
void RT_OPS_FN(attention_backward)(RT_OPS_R *dx /*or NULL*/, RT_OPS_R *dw, RT_OPS_R *db, const RT_OPS_R *dout,
                                   const RT_OPS_R *x, const RT_OPS_R *w, const RT_OPS_R *saved, RT_OPS_R *work,
                                   int n, int c, int t, int heads);

/* Swin's shifted-window attention (torchvision's ShiftedWindowAttention, no padding: window
 * divides h and w; window_attention.c) over [N, C, H, W]: w holds qkv.weight [3C, C],
 * proj.weight [C, C], relative_position_bias_table [(2 window - 1)^2, heads]; b qkv.bias [3C],
 * proj.bias [C]. saved: attention_saved_elems at T = H*W; work: window_attention_work_elems. */
void RT_OPS_FN(window_attention_forward)(RT_OPS_R *out, RT_OPS_R *saved, const RT_OPS_R *x, const RT_OPS_R *w,
                                         const RT_OPS_R *b, int n, int c, int h, int wd, int heads, int window,
                                         int shift);
void RT_OPS_FN(window_attention_backward)(RT_OPS_R *dx /*or NULL*/, RT_OPS_R *dw, RT_OPS_R *db,
                                          const RT_OPS_R *dout, const RT_OPS_R *x, const RT_OPS_R *w,
                                          const RT_OPS_R *saved, RT_OPS_R *work, int n, int c, int h, int wd,
                                          int heads, int window, int shift);

/* Space-to-depth (Swin's patch merging; space_to_depth.c): [N, C, H, W] to [N, C*b*b, H/b, W/b],
 * output channel (dh + b*dw)*C + c from input channel c at offset (dh, dw) of each b x b patch
 * (torchvision's PatchMerging order); block divides h and w. The backward is the inverse. */
void RT_OPS_FN(space_to_depth_forward)(RT_OPS_R *out, const RT_OPS_R *in, int n, int c, int h, int w, int block);
void RT_OPS_FN(space_to_depth_backward)(RT_OPS_R *din, const RT_OPS_R *dout, int n, int c, int h, int w, int block);

/* ---- pooling ---- */
/* argmax is the index inside the input H*W plane; padding never wins. */
void RT_OPS_FN(maxpool2d_forward)(RT_OPS_R *out /*N,C,OH,OW*/, int32_t *argmax /*N,C,OH,OW*/,
                                  const RT_OPS_R *in /*N,C,H,W*/, const rt_pool_shape *s);
void RT_OPS_FN(maxpool2d_backward)(RT_OPS_R *din /*N,C,H,W*/, const RT_OPS_R *dout,
                                   const int32_t *argmax, const rt_pool_shape *s);
/* The same on `planes` planes (of N*C) on the calling thread alone, for a fused op's own
 * threads (conv2d_relu_maxpool); the backward's gradient passes only where the pooled output
 * `out` is > 0 (a ReLU before the pooling: there the pooled value is the input it masks). */
void RT_OPS_FN(maxpool2d_forward_planes)(RT_OPS_R *out, int32_t *argmax, const RT_OPS_R *in,
                                         long planes, const rt_pool_shape *s);
void RT_OPS_FN(maxpool2d_backward_planes_relu)(RT_OPS_R *din, const RT_OPS_R *dout,
                                               const RT_OPS_R *out, const int32_t *argmax,
                                               long planes, const rt_pool_shape *s);
/* count_include_pad = true: every window divides by kh*kw (torch default). */
void RT_OPS_FN(avgpool2d_forward)(RT_OPS_R *out /*N,C,OH,OW*/, const RT_OPS_R *in /*N,C,H,W*/,
                                  const rt_pool_shape *s);
void RT_OPS_FN(avgpool2d_backward)(RT_OPS_R *din /*N,C,H,W*/, const RT_OPS_R *dout,
                                   const rt_pool_shape *s);
void RT_OPS_FN(global_avgpool_forward)(RT_OPS_R *out /*N,C*/, const RT_OPS_R *in /*N,C,HW*/,
                                       int n, int c, int hw);
void RT_OPS_FN(global_avgpool_backward)(RT_OPS_R *din /*N,C,HW*/, const RT_OPS_R *dout /*N,C*/,
                                        int n, int c, int hw);

/* ---- stochastic regularizers (stateless masks, see CONVENTIONS); train = 0 is identity ---- */
void RT_OPS_FN(dropout_forward)(RT_OPS_R *out, const RT_OPS_R *in, long n, RT_OPS_R p,
                                uint64_t seed, long first, int train);
void RT_OPS_FN(dropout_backward)(RT_OPS_R *din, const RT_OPS_R *dout, long n, RT_OPS_R p,
                                 uint64_t seed, long first, int train);
/* Drop path: sample i of the residual branch is dropped whole, mask from (seed, first + i). */
void RT_OPS_FN(drop_path_forward)(RT_OPS_R *out /*N,per_sample*/, const RT_OPS_R *in, int n,
                                  long per_sample, RT_OPS_R p, uint64_t seed, long first, int train);
void RT_OPS_FN(drop_path_backward)(RT_OPS_R *din, const RT_OPS_R *dout, int n, long per_sample,
                                   RT_OPS_R p, uint64_t seed, long first, int train);

/* ---- local response norm across channels (torch/Caffe: alpha is divided by size) ---- */
/* scale = k + alpha/size * sum of x^2 over channels [c - size/2, c + (size-1)/2];
 * out = x * scale^-beta. */
void RT_OPS_FN(lrn_forward)(RT_OPS_R *out /*N,C,HW*/, RT_OPS_R *save_scale /*N,C,HW*/,
                            const RT_OPS_R *in /*N,C,HW*/, int n, int c, int hw, int size,
                            RT_OPS_R alpha, RT_OPS_R beta, RT_OPS_R k);
void RT_OPS_FN(lrn_backward)(RT_OPS_R *din, const RT_OPS_R *dout, const RT_OPS_R *in,
                             const RT_OPS_R *out, const RT_OPS_R *save_scale, int n, int c,
                             int hw, int size, RT_OPS_R alpha, RT_OPS_R beta);
/* region WITHIN_CHANNEL (Caffe): a size x size zero-padded spatial window per channel, alpha
 * divided by size^2; size odd; save_scale as lrn_forward's (lrn_within.c). */
void RT_OPS_FN(lrn_within_forward)(RT_OPS_R *out /*N,C,H,W*/, RT_OPS_R *save_scale /*N,C,H,W*/,
                                   const RT_OPS_R *in /*N,C,H,W*/, int n, int c, int h, int w, int size,
                                   RT_OPS_R alpha, RT_OPS_R beta, RT_OPS_R k);
void RT_OPS_FN(lrn_within_backward)(RT_OPS_R *din, const RT_OPS_R *dout, const RT_OPS_R *in,
                                    const RT_OPS_R *out, const RT_OPS_R *save_scale, int n, int c, int h,
                                    int w, int size, RT_OPS_R alpha, RT_OPS_R beta);

/* ---- structural ---- */
void RT_OPS_FN(add_forward)(RT_OPS_R *out, const RT_OPS_R *a, const RT_OPS_R *b, long n);
/* out = act(a + b) in one pass; backward: relu_backward(dout, dout, out) first. */
void RT_OPS_FN(add_act_forward)(RT_OPS_R *out, const RT_OPS_R *a, const RT_OPS_R *b, long n,
                                rt_act act);
/* Routes dout to both inputs (either may be NULL; generated code usually aliases instead). */
void RT_OPS_FN(add_backward)(RT_OPS_R *da, RT_OPS_R *db, const RT_OPS_R *dout, long n);
/* Concatenation along channels of k NCHW tensors with channels[i] each. */
void RT_OPS_FN(concat_forward)(RT_OPS_R *out /*N,sum C,HW*/, const RT_OPS_R *const *ins,
                               const int *channels, int k, int n, int hw);
/* Splits dout back into dins[i] (NULL entries are skipped). */
void RT_OPS_FN(concat_backward)(RT_OPS_R *const *dins, const RT_OPS_R *dout,
                                const int *channels, int k, int n, int hw);
/* Per-channel scale (ConvNeXt layer scale): out = in * gamma[c]. */
void RT_OPS_FN(layer_scale_forward)(RT_OPS_R *out /*N,C,HW*/, const RT_OPS_R *in,
                                    const RT_OPS_R *gamma /*C*/, int n, int c, int hw);
void RT_OPS_FN(layer_scale_backward)(RT_OPS_R *din /*or NULL*/, RT_OPS_R *dgamma /*C*/,
                                     const RT_OPS_R *dout, const RT_OPS_R *in,
                                     const RT_OPS_R *gamma, int n, int c, int hw);

/* ---- loss and metrics ---- */
/* Mean over the batch of (1-eps)*NLL + eps * mean over classes of -log softmax (torch's
 * label_smoothing). If dlogits is not NULL it receives dscale * (softmax - target), the
 * fused backward: pass dscale = loss_scale / n for the gradient of the returned mean. */
double RT_OPS_FN(softmax_xent_forward)(RT_OPS_R *dlogits /*N,K or NULL*/,
                                       const RT_OPS_R *logits /*N,K*/,
                                       const int32_t *labels /*N*/, int n, int k,
                                       RT_OPS_R smoothing, RT_OPS_R dscale);
/* The loss against dense targets (runtime/cpu/ops/target_loss.c), mean over the batch:
 * softmax cross-entropy (bce = 0) or, bce = 1, timm's sigmoid binary cross-entropy averaged
 * over classes too. The target of sample b is the label-smoothed one-hot of targets[b]; with
 * `mixed` it is w * that + (1 - w) * the one-hot of targets[n + b], w the float whose bits
 * are targets[2n + b] (the loader's mixup/cutmix layout, rt_data.h). bce_threshold > 0
 * binarizes BCE targets. dlogits as softmax_xent_forward's: dscale * d(loss)/d(logits) * n. */
double RT_OPS_FN(target_loss_forward)(RT_OPS_R *dlogits /*N,K or NULL*/, const RT_OPS_R *logits /*N,K*/,
                                      const int32_t *targets /*N, or 3N when mixed*/, int mixed, int n,
                                      int k, int bce, RT_OPS_R smoothing, RT_OPS_R bce_threshold,
                                      RT_OPS_R dscale);
/* Counts samples whose label is the top-1 / among the top-5 logits (ties go to the lower class index). */
void RT_OPS_FN(topk_correct)(int *top1, int *top5, const RT_OPS_R *logits /*N,K*/,
                             const int32_t *labels /*N*/, int n, int k);

#endif /* RT_OPS_PROTOTYPES */
