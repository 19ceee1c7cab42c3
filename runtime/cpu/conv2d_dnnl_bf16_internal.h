/* What the three files of conv2d under compute BF16 on oneDNN share (conv2d_dnnl_bf16.c: the
 * forward and backward drivers; conv2d_dnnl_bf16_layout.c: oneDNN's layouts and the conversion
 * passes; conv2d_dnnl_bf16_plan.c: the library, the primitives of each shape and the
 * workspace): the library's functions, tensors and plans. Built only where BF16_CONV_KERNELS
 * is defined (GCC 12's AVX512-BF16 intrinsics); see rt_conv_bf16.h for the API. */
#ifndef CONV2D_DNNL_BF16_INTERNAL_H
#define CONV2D_DNNL_BF16_INTERNAL_H
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 12 && !defined(__clang__)
#define BF16_CONV_KERNELS 1
#include <stdint.h>
#include <oneapi/dnnl/dnnl.h>
#include "rt_ops.h"

/* ---- the part of oneDNN's C API used here, looked up in libdnnl.so.2 ---- */
#define DNNL_FUNCS(X)                                                                          \
    X(dnnl_engine_create) X(dnnl_stream_create) X(dnnl_stream_wait)                           \
    X(dnnl_memory_desc_init_by_tag) X(dnnl_memory_desc_get_size) X(dnnl_memory_desc_equal)    \
    X(dnnl_convolution_forward_desc_init) X(dnnl_convolution_backward_data_desc_init)         \
    X(dnnl_convolution_backward_weights_desc_init) X(dnnl_primitive_desc_create)              \
    X(dnnl_primitive_desc_query_md) X(dnnl_primitive_desc_query) X(dnnl_primitive_create)     \
    X(dnnl_primitive_execute) X(dnnl_memory_create) X(dnnl_memory_set_data_handle)            \
    X(dnnl_primitive_attr_create) X(dnnl_primitive_attr_set_scratchpad_mode) X(dnnl_primitive_attr_destroy)
#define DNNL_POINTER(f) __typeof__(&f) f;
struct bf16conv_api { DNNL_FUNCS(DNNL_POINTER) };
extern struct bf16conv_api bf16conv_dnnl;

#define MAX_THREADS 64

extern dnnl_engine_t bf16conv_engine;
extern dnnl_stream_t bf16conv_streams[MAX_THREADS];   /* one per OpenMP thread */

/* 1 once the library, an engine and a stream are there; 0 if not (BF16 convs keep im2col). */
int bf16conv_load_api(void);

/* ---- layouts: how a tensor in oneDNN's chosen layout maps to our NCHW / OIHW floats ---- */
typedef enum { LAYOUT_PLAIN, LAYOUT_BLOCK16, LAYOUT_TABLE } layout_kind;

/* One tensor of a plan: its oneDNN descriptor, a memory object per thread pointed at the
 * workspace on each call, and how to convert to and from the plain layout. */
typedef struct {
    dnnl_memory_desc_t md;
    dnnl_memory_t mem[MAX_THREADS];
    layout_kind kind;
    int32_t *table;      /* LAYOUT_TABLE: plain index of each element, -1 for padding */
    long elems;          /* elements of the oneDNN buffer, padding included */
    long at;             /* its offset in the shared or in each thread's part of the workspace */
    int bytes;           /* per element: 2 (BF16) or 4 */
} tensor;

/* t's descriptor, kind and per-thread memory objects for md (bytes per element: 2 or 4). */
void bf16conv_classify(tensor *t, const dnnl_memory_desc_t *md, int bytes, int threads);
/* A primitive's scratchpad: bytes of workspace it is given on each call (see the .c). */
void bf16conv_scratchpad(tensor *t, const dnnl_memory_desc_t *md, int threads);
/* src (plain floats, masked where act_out <= 0 if act_out is given) into t's BF16 layout;
 * runs on the calling thread. sums (LAYOUT_BLOCK16 only; else NULL): each channel's sum of
 * the masked floats over the images and pixels, written. */
void bf16conv_to_layout(const tensor *t, uint16_t *dst, const float *src, const float *act_out,
                        float *sums);
/* A kernel (plain OIHW floats, never masked) into t's BF16 layout, split across the OpenMP
 * threads where it is large; called outside a parallel region. */
void bf16conv_weights_to_layout(const tensor *t, uint16_t *dst, const float *src);
/* t's FP32 buffer back to plain floats: dst = (add ? dst : 0) + relu?(src + bias); runs on
 * the calling thread. */
void bf16conv_from_layout(const tensor *t, float *dst, const float *src, const float *bias,
                          int relu, int add);

/* ---- plans: the three primitives of one shape and the tensors they read and write ---- */
typedef struct {
    rt_conv_shape key;   /* the geometry (act, algo and din_add zeroed) */
    int usable;          /* 0: oneDNN has no fast kernel for it (the shape keeps im2col) */
    int threads, chunk;  /* OpenMP threads at sizing; images per primitive call */
    dnnl_primitive_desc_t fwd_pd, bwd_data_pd, bwd_weights_pd;
    dnnl_primitive_t fwd, bwd_data, bwd_weights;
    /* shared by the threads: the kernels in the forward and the backward-data layouts */
    tensor wei, wei_t;
    /* each thread's: one chunk's forward input and output (BF16, FP32), output gradient
     * (BF16; a second copy only where backward-weights wants another layout), forward input
     * for backward-weights, input gradient (FP32), the chunk's and the thread's dweight */
    tensor src, dst, ddst, ddst_w, src_w, dsrc, dwei, dwei_sum;
    tensor fwd_pad, bwd_data_pad, bwd_weights_pad;   /* the primitives' scratchpads */
    float *bias_sums;    /* each chunk's bias gradient, where the output gradient is BLOCK16 */
    /* 1 for a 1x1 strided unpadded conv: its primitives see the input's sampled pixels only
     * (oh x ow, stride 1), gathered into / scattered from each thread's plain buffer at
     * sample_at (see conv2d_dnnl_bf16.c) */
    int sampled;
    long sample_at;
    long shared_floats, thread_floats;
    int trains;          /* a backward ran: forwards keep their BF16 input (see input_copy_of) */
} plan;

/* The shape's plan, built at its first use (the trainer's sizing of the workspace); NULL
 * once MAX_PLANS are taken. */
plan *bf16conv_plan_for(const rt_conv_shape *s);
#endif
#endif
