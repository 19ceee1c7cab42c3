/* conv2d under compute BF16 on oneDNN's BF16 convolution primitives (vdpbf16ps kernels with
 * FP32 accumulation), one plan of three persistent primitives per conv shape; see
 * rt_conv_bf16.h. oneDNN is loaded with dlopen, as for its GEMMs (gemm_library.c), so that a
 * trainer runs without it; dnnl.h (libdnnl-dev) gives the types.
 *
 * oneDNN's fast kernels want its blocked layouts (nChw16c; with plain NCHW it falls back to
 * GEMM-based kernels), so each chunk of images is converted from NCHW floats to blocked BF16
 * and its blocked FP32 result back, in passes that also add the bias, apply the fused ReLU or
 * mask the gradient by it. The batch runs as chunks of up to CHUNK images on the OpenMP
 * threads, each chunk through single-threaded primitives, like conv2d.c's images: a chunk's
 * conversions stay in cache, and no oneDNN-internal barrier waits on a descheduled thread
 * (its own threading ran stride-2 backward-weights 40x slower on the shared 2-core host).
 * Each thread sums its chunks' weight gradients, and the threads' sums add up in thread
 * order, so the result does not depend on timing. */
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <oneapi/dnnl/dnnl.h>

#include "rt_conv_bf16.h"
#include "rt_core.h"
#include "rt_gemm.h"

/* The kernels below need GCC 12's AVX512-BF16 intrinsics; elsewhere no shape fits (the stubs
 * at the end), and BF16 convolutions keep im2col + BF16 GEMM. */
#if defined(__x86_64__) && defined(__GNUC__) && __GNUC__ >= 12 && !defined(__clang__)
#include <immintrin.h>

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
static struct { DNNL_FUNCS(DNNL_POINTER) } api;

#define MAX_THREADS 64
/* Images per primitive call at most: larger chunks ran backward-weights faster, smaller ones
 * keep the conversions in cache; 16, 32 and 64 were within the shared host's noise (ResNet). */
#define CHUNK 32

static dnnl_engine_t engine;
static dnnl_stream_t streams[MAX_THREADS];   /* one per OpenMP thread */

/* 1 once the library, an engine and a stream are there; 0 if not (BF16 convs keep im2col). */
static int load_api(void) {
    static int state = -1;
    if (state >= 0) return state;
    state = 0;
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
#define DNNL_LOOKUP(f) if (!(api.f = (__typeof__(&f))dlsym(h, #f))) return 0;
    DNNL_FUNCS(DNNL_LOOKUP)
    if (api.dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) return 0;
    for (int t = 0; t < MAX_THREADS; t++)
        if (api.dnnl_stream_create(&streams[t], engine, dnnl_stream_default_flags) != dnnl_success) return 0;
    state = 1;
    return state;
}

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

/* Physical offset of a logical index in a blocked descriptor (as oneDNN's off_v computes it). */
static long blocked_offset(const dnnl_memory_desc_t *md, const dnnl_dim_t *index) {
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    dnnl_dim_t pos[DNNL_MAX_NDIMS];
    for (int d = 0; d < md->ndims; d++) pos[d] = index[d];
    long off = md->offset0, block_stride = 1;
    for (int k = b->inner_nblks - 1; k >= 0; k--) {
        int d = b->inner_idxs[k];
        off += (pos[d] % b->inner_blks[k]) * block_stride;
        pos[d] /= b->inner_blks[k];
        block_stride *= b->inner_blks[k];
    }
    for (int d = 0; d < md->ndims; d++) off += pos[d] * b->strides[d];
    return off;
}

static void classify(tensor *t, const dnnl_memory_desc_t *md, int bytes, int threads) {
    t->md = *md;
    t->bytes = bytes;
    t->elems = (long)(api.dnnl_memory_desc_get_size(md) / bytes);
    const dnnl_dim_t *dims = md->dims;
    long n = dims[0], c = dims[1], hw = dims[2] * dims[3];
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    int exact = md->format_kind == dnnl_blocked && md->offset0 == 0 && t->elems == n * c * hw;
    if (exact && b->inner_nblks == 0 && b->strides[0] == c * hw && b->strides[1] == hw &&
        b->strides[2] == dims[3] && b->strides[3] == 1)
        t->kind = LAYOUT_PLAIN;
    else if (exact && c % 16 == 0 && b->inner_nblks == 1 && b->inner_idxs[0] == 1 &&
             b->inner_blks[0] == 16 && b->strides[0] == c * hw && b->strides[1] == 16 * hw &&
             b->strides[2] == 16 * dims[3] && b->strides[3] == 16)
        t->kind = LAYOUT_BLOCK16;
    else {   /* anything else (weights, padded channels): a gather table built once */
        if (md->format_kind != dnnl_blocked) rt_die("conv2d BF16: oneDNN chose a non-blocked layout");
        t->kind = LAYOUT_TABLE;
        t->table = malloc(sizeof(int32_t) * t->elems);
        if (!t->table) rt_die("out of memory for a conv2d BF16 layout table (%ld entries)", t->elems);
        for (long i = 0; i < t->elems; i++) t->table[i] = -1;
        dnnl_dim_t idx[4];
        long plain = 0;
        for (idx[0] = 0; idx[0] < dims[0]; idx[0]++)
            for (idx[1] = 0; idx[1] < dims[1]; idx[1]++)
                for (idx[2] = 0; idx[2] < dims[2]; idx[2]++)
                    for (idx[3] = 0; idx[3] < dims[3]; idx[3]++) t->table[blocked_offset(&t->md, idx)] = (int32_t)plain++;
    }
    for (int th = 0; th < threads; th++)
        if (api.dnnl_memory_create(&t->mem[th], &t->md, engine, DNNL_MEMORY_NONE) != dnnl_success)
            rt_die("conv2d BF16: oneDNN could not create a memory object");
}

/* A primitive's scratchpad: bytes of workspace it is given on each call. Each thread's own,
 * since a library-managed one would be shared by the threads running the same primitive
 * (that raced: backward-weights' results changed from run to run). */
static void scratchpad(tensor *t, const dnnl_memory_desc_t *md, int threads) {
    t->md = *md;
    t->bytes = 1;
    t->elems = (long)api.dnnl_memory_desc_get_size(md);
    t->kind = LAYOUT_PLAIN;
    for (int th = 0; th < threads; th++)
        if (api.dnnl_memory_create(&t->mem[th], &t->md, engine, DNNL_MEMORY_NONE) != dnnl_success)
            rt_die("conv2d BF16: oneDNN could not create a scratchpad");
}

/* Plain float index -> channel, for the bias and the bias-free ReLU. */
static inline long channel_of(long plain, long c, long hw) { return plain / hw % c; }

/* 16 x 16 floats transposed in registers: r[k] holds column k afterwards. */
__attribute__((target("avx512f")))
static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
        __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
        r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            t[8 * i + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_f32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
        }
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
    }
}

/* One image's 16 channels x hw of plain floats -> hw x 16 BF16 (nChw16c), masked where
 * act_out <= 0 if act_out is given: 16 x 16 tiles transposed in registers. If sums is given,
 * adds each channel's sum of the (masked) floats into it: the bias gradient, while the values
 * are in registers (a pass of its own over dout was 2-6% of a BF16 LeNet step). */
__attribute__((target("avx512f,avx512bf16")))
static void block16_to_bf16(uint16_t *d, const float *s, const float *a, float *sums, long hw) {
    long p = 0;
    __m512 total = _mm512_setzero_ps();   /* lane k: channel k */
    for (; p + 16 <= hw; p += 16) {
        __m512 r[16];
        for (int k = 0; k < 16; k++) {
            r[k] = _mm512_loadu_ps(s + k * hw + p);
            if (a) r[k] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_loadu_ps(a + k * hw + p),
                                                                 _mm512_setzero_ps(), _CMP_GT_OQ), r[k]);
        }
        transpose16(r);
        for (int j = 0; j < 16; j++) {
            _mm256_storeu_si256((__m256i *)(d + (p + j) * 16), (__m256i)_mm512_cvtneps_pbh(r[j]));
            if (sums) total = _mm512_add_ps(total, r[j]);
        }
    }
    float tail[16] = { 0 };
    for (; p < hw; p++)
        for (int k = 0; k < 16; k++) {
            float v = a && !(a[k * hw + p] > 0) ? 0.0f : s[k * hw + p];
            d[p * 16 + k] = rt_float_to_bf16(v);
            tail[k] += v;
        }
    if (sums)
        _mm512_storeu_ps(sums, _mm512_add_ps(_mm512_loadu_ps(sums), _mm512_add_ps(total, _mm512_loadu_ps(tail))));
}

/* hw x 16 FP32 (nChw16c) -> one image's 16 channels x hw: d = (add ? d : 0) + relu?(s + bias). */
__attribute__((target("avx512f")))
static void block16_from_f32(float *d, const float *s, const float *bias, int relu, int add, long hw) {
    long p = 0;
    for (; p + 16 <= hw; p += 16) {
        __m512 r[16];
        for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(s + (p + j) * 16);
        transpose16(r);
        for (int k = 0; k < 16; k++) {
            __m512 v = r[k];
            if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[k]));
            if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
            if (add) v = _mm512_add_ps(v, _mm512_loadu_ps(d + k * hw + p));
            _mm512_storeu_ps(d + k * hw + p, v);
        }
    }
    for (; p < hw; p++)
        for (int k = 0; k < 16; k++) {
            float v = s[p * 16 + k] + (bias ? bias[k] : 0);
            if (relu) v = v > 0 ? v : 0;
            d[k * hw + p] = add ? d[k * hw + p] + v : v;
        }
}

/* src (plain floats, masked where act_out <= 0 if act_out is given) into t's BF16 layout;
 * runs on the calling thread. sums (LAYOUT_BLOCK16 only; else NULL): each channel's sum of
 * the masked floats over the images and pixels, written. */
static void to_layout_bf16(const tensor *t, uint16_t *dst, const float *src, const float *act_out,
                           float *sums) {
    const dnnl_dim_t *dims = t->md.dims;
    long n = dims[0], c = dims[1], hw = dims[2] * dims[3];
    if (t->kind == LAYOUT_BLOCK16) {   /* block q: 16 channels of one image, at q * 16 * hw */
        if (sums) memset(sums, 0, sizeof(float) * c);
        for (long q = 0, base = 0; q < n * c / 16; q++, base += 16 * hw)
            block16_to_bf16(dst + base, src + base, act_out ? act_out + base : NULL,
                            sums ? sums + q % (c / 16) * 16 : NULL, hw);
        return;
    }
    const int32_t *tab = t->kind == LAYOUT_TABLE ? t->table : NULL;
    for (long i = 0; i < t->elems; i++) {
        long j = tab ? tab[i] : i;
        float v = j < 0 || (act_out && !(act_out[j] > 0)) ? 0.0f : src[j];
        dst[i] = rt_float_to_bf16(v);
    }
}

/* t's FP32 buffer back to plain floats: dst = (add ? dst : 0) + relu?(src + bias); runs on
 * the calling thread. */
static void from_layout_f32(const tensor *t, float *dst, const float *src, const float *bias,
                            int relu, int add) {
    const dnnl_dim_t *dims = t->md.dims;
    long n = dims[0], c = dims[1], hw = dims[2] * dims[3];
    if (t->kind == LAYOUT_BLOCK16) {
        for (long q = 0, base = 0; q < n * c / 16; q++, base += 16 * hw)
            block16_from_f32(dst + base, src + base, bias ? bias + q % (c / 16) * 16 : NULL, relu, add, hw);
        return;
    }
    const int32_t *tab = t->kind == LAYOUT_TABLE ? t->table : NULL;
    for (long i = 0; i < t->elems; i++) {
        long j = tab ? tab[i] : i;
        if (j < 0) continue;
        float v = src[i] + (bias ? bias[channel_of(j, c, hw)] : 0);
        if (relu) v = v > 0 ? v : 0;
        dst[j] = add ? dst[j] + v : v;
    }
}

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
    long shared_floats, thread_floats;
    int trains;          /* a backward ran: forwards keep their BF16 input (see input_copy_of) */
} plan;

#define MAX_PLANS 64
static plan plans[MAX_PLANS];
static int plan_count;

static rt_conv_shape key_of(const rt_conv_shape *s) {
    rt_conv_shape k;
    memset(&k, 0, sizeof k);
    k.n = s->n; k.c = s->c; k.h = s->h; k.w = s->w; k.oc = s->oc; k.kh = s->kh; k.kw = s->kw;
    k.sh = s->sh; k.sw = s->sw; k.ph = s->ph; k.pw = s->pw; k.dh = s->dh; k.dw = s->dw;
    k.groups = s->groups; k.oh = s->oh; k.ow = s->ow;
    return k;
}

/* Whether oneDNN picked one of its JIT kernels (a reference or GEMM fallback would be slower
 * than im2col + BF16 GEMM). */
static int fast_impl(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (api.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        return 0;
    return strncmp(impl, "jit", 3) == 0 || strncmp(impl, "brg", 3) == 0;
}

/* Lays tensors out one after another from *at (floats, 64-byte aligned starts). */
static void place(tensor *t, long *at) {
    t->at = *at;
    long floats = (t->elems * t->bytes + 3) / 4;
    *at += (floats + 15) / 16 * 16;
}

static const dnnl_memory_desc_t *query(const_dnnl_primitive_desc_t pd, dnnl_query_t what) {
    return api.dnnl_primitive_desc_query_md(pd, what, 0);
}

/* The largest divisor of n that is at most CHUNK and leaves every thread a chunk. */
static int chunk_of(int n, int threads) {
    int most = n / threads < CHUNK ? n / threads : CHUNK;
    for (int c = most; c > 1; c--)
        if (n % c == 0) return c;
    return 1;
}

static int build_primitives(plan *p, const rt_conv_shape *s, const_dnnl_primitive_attr_t attr) {
    dnnl_dims_t src_d = { p->chunk, s->c, s->h, s->w }, wei_d = { s->oc, s->c, s->kh, s->kw },
                dst_d = { p->chunk, s->oc, s->oh, s->ow }, stride = { s->sh, s->sw },
                pad_l = { s->ph, s->pw }, pad_r;
    /* right padding that reproduces oh, ow (no less than 0: floor mode drops the rest) */
    long rh = (long)(s->oh - 1) * s->sh + s->kh - s->h - s->ph, rw = (long)(s->ow - 1) * s->sw + s->kw - s->w - s->pw;
    pad_r[0] = rh > 0 ? rh : 0;
    pad_r[1] = rw > 0 ? rw : 0;
    dnnl_memory_desc_t src16, wei16, dst32, src32, dst16, wei32;
    dnnl_format_tag_t any = dnnl_format_tag_any;
    api.dnnl_memory_desc_init_by_tag(&src16, 4, src_d, dnnl_bf16, any);
    api.dnnl_memory_desc_init_by_tag(&src32, 4, src_d, dnnl_f32, any);
    api.dnnl_memory_desc_init_by_tag(&wei16, 4, wei_d, dnnl_bf16, any);
    api.dnnl_memory_desc_init_by_tag(&wei32, 4, wei_d, dnnl_f32, any);
    api.dnnl_memory_desc_init_by_tag(&dst32, 4, dst_d, dnnl_f32, any);
    api.dnnl_memory_desc_init_by_tag(&dst16, 4, dst_d, dnnl_bf16, any);
    dnnl_convolution_desc_t fd, bdd, bwd;
    return api.dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &src16,
                                                  &wei16, NULL, &dst32, stride, pad_l, pad_r) == dnnl_success &&
           api.dnnl_primitive_desc_create(&p->fwd_pd, &fd, attr, engine, NULL) == dnnl_success &&
           fast_impl(p->fwd_pd) &&
           api.dnnl_convolution_backward_data_desc_init(&bdd, dnnl_convolution_direct, &src32, &wei16, &dst16,
                                                        stride, pad_l, pad_r) == dnnl_success &&
           api.dnnl_primitive_desc_create(&p->bwd_data_pd, &bdd, attr, engine, p->fwd_pd) == dnnl_success &&
           fast_impl(p->bwd_data_pd) &&
           api.dnnl_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct, &src16, &wei32, NULL,
                                                           &dst16, stride, pad_l, pad_r) == dnnl_success &&
           api.dnnl_primitive_desc_create(&p->bwd_weights_pd, &bwd, attr, engine, p->fwd_pd) == dnnl_success &&
           fast_impl(p->bwd_weights_pd) &&
           api.dnnl_primitive_create(&p->fwd, p->fwd_pd) == dnnl_success &&
           api.dnnl_primitive_create(&p->bwd_data, p->bwd_data_pd) == dnnl_success &&
           api.dnnl_primitive_create(&p->bwd_weights, p->bwd_weights_pd) == dnnl_success;
}

static int build_plan(plan *p, const rt_conv_shape *s) {
    p->threads = omp_get_max_threads();
    if (p->threads > MAX_THREADS) return 0;
    p->chunk = chunk_of(s->n, p->threads);
    /* created for one thread: they run inside our parallel loop over chunks */
    omp_set_num_threads(1);
    dnnl_primitive_attr_t attr;   /* scratchpads given by us (see scratchpad()) */
    int built = api.dnnl_primitive_attr_create(&attr) == dnnl_success;
    if (built) {
        built = api.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
                build_primitives(p, s, attr);
        api.dnnl_primitive_attr_destroy(attr);
    }
    omp_set_num_threads(p->threads);
    if (!built) return 0;
    int th = p->threads;
    classify(&p->wei, query(p->fwd_pd, dnnl_query_weights_md), 2, th);
    classify(&p->wei_t, query(p->bwd_data_pd, dnnl_query_weights_md), 2, th);
    classify(&p->src, query(p->fwd_pd, dnnl_query_src_md), 2, th);
    classify(&p->dst, query(p->fwd_pd, dnnl_query_dst_md), 4, th);
    classify(&p->ddst, query(p->bwd_data_pd, dnnl_query_diff_dst_md), 2, th);
    classify(&p->dsrc, query(p->bwd_data_pd, dnnl_query_diff_src_md), 4, th);
    classify(&p->src_w, query(p->bwd_weights_pd, dnnl_query_src_md), 2, th);
    classify(&p->ddst_w, query(p->bwd_weights_pd, dnnl_query_diff_dst_md), 2, th);
    classify(&p->dwei, query(p->bwd_weights_pd, dnnl_query_diff_weights_md), 4, th);
    classify(&p->dwei_sum, query(p->bwd_weights_pd, dnnl_query_diff_weights_md), 4, th);
    scratchpad(&p->fwd_pad, query(p->fwd_pd, dnnl_query_scratchpad_md), th);
    scratchpad(&p->bwd_data_pad, query(p->bwd_data_pd, dnnl_query_scratchpad_md), th);
    scratchpad(&p->bwd_weights_pad, query(p->bwd_weights_pd, dnnl_query_scratchpad_md), th);
    long at = 0;
    place(&p->wei, &at); place(&p->wei_t, &at);
    p->shared_floats = at;
    at = 0;
    place(&p->src, &at); place(&p->dst, &at); place(&p->fwd_pad, &at);
    long fwd_floats = at;
    at = 0;   /* backward reuses the thread's part of the workspace */
    place(&p->ddst, &at); place(&p->dsrc, &at); place(&p->src_w, &at);
    if (api.dnnl_memory_desc_equal(&p->ddst.md, &p->ddst_w.md)) p->ddst_w.at = p->ddst.at;
    else place(&p->ddst_w, &at);
    place(&p->dwei, &at); place(&p->dwei_sum, &at);
    place(&p->bwd_data_pad, &at); place(&p->bwd_weights_pad, &at);
    p->thread_floats = at > fwd_floats ? at : fwd_floats;
    if (p->ddst.kind == LAYOUT_BLOCK16) {
        p->bias_sums = malloc(sizeof(float) * (s->n / p->chunk) * s->oc);
        if (!p->bias_sums) rt_die("out of memory for a conv2d BF16 plan's bias sums");
    }
    return 1;
}

/* The shape's plan, built at its first use (the trainer's sizing of the workspace). */
static plan *plan_for(const rt_conv_shape *s) {
    rt_conv_shape k = key_of(s);
    for (int i = 0; i < plan_count; i++)
        if (memcmp(&plans[i].key, &k, sizeof k) == 0) return &plans[i];
    if (plan_count == MAX_PLANS) return NULL;
    plan *p = &plans[plan_count++];
    memset(p, 0, sizeof *p);
    p->key = k;
    p->usable = build_plan(p, s);
    return p;
}

int conv2d_dnnl_bf16_fits(const rt_conv_shape *s) {
    if (rt_gemm_compute() != RT_COMPUTE_BF16 || s->groups != 1 || s->dh != 1 || s->dw != 1 ||
        !rt_cpu_has_avx512_bf16() || omp_in_parallel() || !load_api())
        return 0;
    const char *force = getenv("TRAINC_CONV_BF16");   /* "gemm": im2col + BF16 GEMM (A/B runs) */
    if (force && strcmp(force, "gemm") == 0) return 0;
    plan *p = plan_for(s);
    return p && p->usable;   /* it runs on p->threads, the count its workspace was sized for */
}

long conv2d_dnnl_bf16_workspace_elems(const rt_conv_shape *s) {
    plan *p = plan_for(s);
    return p->shared_floats + p->threads * p->thread_floats;
}

/* Thread th's view of tensor t in the workspace (shared tensors: the same for all). */
static void *bind(const plan *p, float *work, const tensor *t, int th, int shared) {
    void *ptr = work + (shared ? 0 : p->shared_floats + th * p->thread_floats) + t->at;
    api.dnnl_memory_set_data_handle(t->mem[th], ptr);
    return ptr;
}

static void execute(dnnl_primitive_t prim, int th, const tensor *pad, int a0, const tensor *t0, int a1,
                    const tensor *t1, int a2, const tensor *t2) {
    dnnl_exec_arg_t args[4] = { { a0, t0->mem[th] }, { a1, t1->mem[th] }, { a2, t2->mem[th] },
                                { DNNL_ARG_SCRATCHPAD, pad->mem[th] } };
    if (api.dnnl_primitive_execute(prim, streams[th], pad->elems ? 4 : 3, args) != dnnl_success)
        rt_die("conv2d BF16: a oneDNN convolution failed to run");
    api.dnnl_stream_wait(streams[th]);
}

/* The forward's BF16 copy of its input, kept for backward-weights, which would otherwise
 * convert the same input again: one per plan and input tensor (the input of a layer holds
 * the same values from its forward to its backward, which reads it too). Full-batch, in
 * chunks of p->src's layout; only for plans that have run a backward (not for evaluation's
 * batches). NULL once MAX_COPIES are taken (the backward then converts). */
#define MAX_COPIES 128
typedef struct { const plan *p; const float *in; uint16_t *bf16; } input_copy;
static input_copy copies[MAX_COPIES];
static int copy_count;

static uint16_t *input_copy_of(const plan *p, const float *in, int create) {
    for (int i = 0; i < copy_count; i++)
        if (copies[i].p == p && copies[i].in == in) return copies[i].bf16;
    if (!create || copy_count == MAX_COPIES) return NULL;
    uint16_t *bf16 = malloc(sizeof(uint16_t) * p->src.elems * (p->key.n / p->chunk));
    if (!bf16) return NULL;
    copies[copy_count++] = (input_copy){ p, in, bf16 };
    return bf16;
}

void conv2d_dnnl_bf16_forward(float *out, const float *in, const float *weight, const float *bias,
                              float *work, const rt_conv_shape *s) {
    plan *p = plan_for(s);
    uint16_t *copy = p->trains ? input_copy_of(p, in, 1) : NULL;
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    to_layout_bf16(&p->wei, (uint16_t *)(work + p->wei.at), weight, NULL, NULL);
    #pragma omp parallel num_threads(p->threads)
    {
        int th = omp_get_thread_num();
        omp_set_num_threads(1);   /* this thread's nested regions, oneDNN's included */
        bind(p, work, &p->wei, th, 1);
        uint16_t *src = bind(p, work, &p->src, th, 0);
        float *dst = bind(p, work, &p->dst, th, 0);
        bind(p, work, &p->fwd_pad, th, 0);
        #pragma omp for schedule(static)
        for (int b = 0; b < s->n; b += p->chunk) {
            if (copy) {
                src = copy + b / p->chunk * p->src.elems;
                api.dnnl_memory_set_data_handle(p->src.mem[th], src);
            }
            to_layout_bf16(&p->src, src, in + b * in_img, NULL, NULL);
            execute(p->fwd, th, &p->fwd_pad, DNNL_ARG_SRC, &p->src, DNNL_ARG_WEIGHTS, &p->wei, DNNL_ARG_DST, &p->dst);
            from_layout_f32(&p->dst, out + b * out_img, dst, bias, s->act == RT_ACT_RELU, 0);
        }
    }
}

/* dbias[oc] = sum over images and pixels of dout, where the ReLU passed it (where the output
 * gradient's layout is not BLOCK16; else the conversion sums it, see block16_to_bf16). */
static void bias_gradient(float *dbias, const float *dout, const float *act_out, const rt_conv_shape *s) {
    long hw = (long)s->oh * s->ow;
    #pragma omp parallel for schedule(static)
    for (int oc = 0; oc < s->oc; oc++) {
        float acc = 0;   /* one thread per channel: the sum order is fixed */
        for (int b = 0; b < s->n; b++) {
            long base = ((long)b * s->oc + oc) * hw;
            for (long i = 0; i < hw; i++)
                acc += act_out && !(act_out[base + i] > 0) ? 0 : dout[base + i];
        }
        dbias[oc] = acc;
    }
}

/* dweight (OIHW) = the threads' blocked sums, added in thread order. */
static void sum_weight_gradients(float *dweight, const plan *p, const float *work) {
    const tensor *t = &p->dwei_sum;
    const float *first = work + p->shared_floats + t->at;
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < t->elems; i++) {
        long j = t->kind == LAYOUT_TABLE ? t->table[i] : i;
        if (j < 0) continue;
        float acc = 0;
        for (int th = 0; th < p->threads; th++) acc += first[th * p->thread_floats + i];
        dweight[j] = acc;
    }
}

void conv2d_dnnl_bf16_backward(float *din, float *dweight, float *dbias, const float *dout,
                               const float *act_out, const float *in, const float *weight,
                               float *work, const rt_conv_shape *s, double *data_s) {
    plan *p = plan_for(s);
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    const float *mask = s->act == RT_ACT_RELU ? act_out : NULL;
    float *chunk_sums = dbias ? p->bias_sums : NULL;   /* NULL: not BLOCK16 */
    if (dbias && !chunk_sums) bias_gradient(dbias, dout, mask, s);
    if (din) to_layout_bf16(&p->wei_t, (uint16_t *)(work + p->wei_t.at), weight, NULL, NULL);
    const uint16_t *copy = api.dnnl_memory_desc_equal(&p->src.md, &p->src_w.md) ? input_copy_of(p, in, 0) : NULL;
    double data_sum = 0;
    #pragma omp parallel num_threads(p->threads) reduction(+ : data_sum)
    {
        int th = omp_get_thread_num();
        omp_set_num_threads(1);
        bind(p, work, &p->wei_t, th, 1);
        uint16_t *ddst = bind(p, work, &p->ddst, th, 0), *ddst_w = bind(p, work, &p->ddst_w, th, 0);
        uint16_t *src_w = bind(p, work, &p->src_w, th, 0);
        float *dsrc = bind(p, work, &p->dsrc, th, 0), *dwei = bind(p, work, &p->dwei, th, 0);
        float *sum = bind(p, work, &p->dwei_sum, th, 0);
        bind(p, work, &p->bwd_data_pad, th, 0);
        bind(p, work, &p->bwd_weights_pad, th, 0);
        memset(sum, 0, sizeof(float) * p->dwei_sum.elems);
        #pragma omp for schedule(static)
        for (int b = 0; b < s->n; b += p->chunk) {
            const float *dy = dout + b * out_img, *m = mask ? mask + b * out_img : NULL;
            to_layout_bf16(&p->ddst, ddst, dy, m, chunk_sums ? chunk_sums + b / p->chunk * s->oc : NULL);
            if (ddst_w != ddst) to_layout_bf16(&p->ddst_w, ddst_w, dy, m, NULL);
            if (copy) api.dnnl_memory_set_data_handle(p->src_w.mem[th], (void *)(copy + b / p->chunk * p->src_w.elems));
            else to_layout_bf16(&p->src_w, src_w, in + b * in_img, NULL, NULL);
            execute(p->bwd_weights, th, &p->bwd_weights_pad, DNNL_ARG_SRC, &p->src_w, DNNL_ARG_DIFF_DST, &p->ddst_w,
                    DNNL_ARG_DIFF_WEIGHTS, &p->dwei);
            for (long i = 0; i < p->dwei.elems; i++) sum[i] += dwei[i];
            if (!din) continue;
            double t0 = omp_get_wtime();
            execute(p->bwd_data, th, &p->bwd_data_pad, DNNL_ARG_DIFF_DST, &p->ddst, DNNL_ARG_WEIGHTS, &p->wei_t,
                    DNNL_ARG_DIFF_SRC, &p->dsrc);
            from_layout_f32(&p->dsrc, din + b * in_img, dsrc, NULL, 0, s->din_add);
            data_sum += omp_get_wtime() - t0;
        }
    }
    sum_weight_gradients(dweight, p, work);
    if (chunk_sums)   /* the chunks' sums in chunk order: the same for any thread count */
        for (int oc = 0; oc < s->oc; oc++) {
            float acc = 0;
            for (int q = 0; q < s->n / p->chunk; q++) acc += chunk_sums[(long)q * s->oc + oc];
            dbias[oc] = acc;
        }
    *data_s = data_sum / p->threads;
    p->trains = 1;
}

#else
int conv2d_dnnl_bf16_fits(const rt_conv_shape *s) { (void)s; return 0; }
long conv2d_dnnl_bf16_workspace_elems(const rt_conv_shape *s) { (void)s; return 0; }
void conv2d_dnnl_bf16_forward(float *out, const float *in, const float *weight, const float *bias,
                              float *work, const rt_conv_shape *s) {
    rt_die("conv2d BF16 on oneDNN is not built into this runtime");
}
void conv2d_dnnl_bf16_backward(float *din, float *dweight, float *dbias, const float *dout,
                               const float *act_out, const float *in, const float *weight,
                               float *work, const rt_conv_shape *s, double *data_s) {
    rt_die("conv2d BF16 on oneDNN is not built into this runtime");
}
#endif
