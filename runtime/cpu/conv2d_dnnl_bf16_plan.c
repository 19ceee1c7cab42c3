/* conv2d under compute BF16 on oneDNN: the library (dlopen'ed, as for its GEMMs in
 * gemm_library.c, so that a trainer runs without it), and one plan per conv shape: its three
 * persistent single-threaded primitives, the layouts they chose, and where each tensor lies
 * in the conv workspace (see conv2d_dnnl_bf16_internal.h). */
#include <dlfcn.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "conv2d_dnnl_bf16_internal.h"
#include "rt_conv_bf16.h"
#include "rt_core.h"
#include "rt_env.h"
#include "rt_gemm.h"

#ifdef BF16_CONV_KERNELS
struct bf16conv_api bf16conv_dnnl;
/* Images per primitive call at most: larger chunks ran backward-weights faster, smaller ones
 * keep the conversions in cache; 16, 32 and 64 were within the shared host's noise (ResNet),
 * and 8, 16 and 32 on LeNet (branch lenet). */
#define CHUNK 32

dnnl_engine_t bf16conv_engine;
dnnl_stream_t bf16conv_streams[MAX_THREADS];

/* 1 once the library, an bf16conv_engine and a stream are there; 0 if not (BF16 convs keep im2col). */
int bf16conv_load_api(void) {
    static int state = -1;
    if (state >= 0) return state;
    state = 0;
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
#define DNNL_LOOKUP(f) if (!(bf16conv_dnnl.f = (__typeof__(&f))dlsym(h, #f))) return 0;
    DNNL_FUNCS(DNNL_LOOKUP)
    if (bf16conv_dnnl.dnnl_engine_create(&bf16conv_engine, dnnl_cpu, 0) != dnnl_success) return 0;
    for (int t = 0; t < MAX_THREADS; t++)
        if (bf16conv_dnnl.dnnl_stream_create(&bf16conv_streams[t], bf16conv_engine, dnnl_stream_default_flags) != dnnl_success) return 0;
    state = 1;
    return state;
}

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
    if (bf16conv_dnnl.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
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
    return bf16conv_dnnl.dnnl_primitive_desc_query_md(pd, what, 0);
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
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&src16, 4, src_d, dnnl_bf16, any);
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&src32, 4, src_d, dnnl_f32, any);
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&wei16, 4, wei_d, dnnl_bf16, any);
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&wei32, 4, wei_d, dnnl_f32, any);
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&dst32, 4, dst_d, dnnl_f32, any);
    bf16conv_dnnl.dnnl_memory_desc_init_by_tag(&dst16, 4, dst_d, dnnl_bf16, any);
    dnnl_convolution_desc_t fd, bdd, bwd;
    return bf16conv_dnnl.dnnl_convolution_forward_desc_init(&fd, dnnl_forward_training, dnnl_convolution_direct, &src16,
                                                  &wei16, NULL, &dst32, stride, pad_l, pad_r) == dnnl_success &&
           bf16conv_dnnl.dnnl_primitive_desc_create(&p->fwd_pd, &fd, attr, bf16conv_engine, NULL) == dnnl_success &&
           fast_impl(p->fwd_pd) &&
           bf16conv_dnnl.dnnl_convolution_backward_data_desc_init(&bdd, dnnl_convolution_direct, &src32, &wei16, &dst16,
                                                        stride, pad_l, pad_r) == dnnl_success &&
           bf16conv_dnnl.dnnl_primitive_desc_create(&p->bwd_data_pd, &bdd, attr, bf16conv_engine, p->fwd_pd) == dnnl_success &&
           fast_impl(p->bwd_data_pd) &&
           bf16conv_dnnl.dnnl_convolution_backward_weights_desc_init(&bwd, dnnl_convolution_direct, &src16, &wei32, NULL,
                                                           &dst16, stride, pad_l, pad_r) == dnnl_success &&
           bf16conv_dnnl.dnnl_primitive_desc_create(&p->bwd_weights_pd, &bwd, attr, bf16conv_engine, p->fwd_pd) == dnnl_success &&
           fast_impl(p->bwd_weights_pd) &&
           bf16conv_dnnl.dnnl_primitive_create(&p->fwd, p->fwd_pd) == dnnl_success &&
           bf16conv_dnnl.dnnl_primitive_create(&p->bwd_data, p->bwd_data_pd) == dnnl_success &&
           bf16conv_dnnl.dnnl_primitive_create(&p->bwd_weights, p->bwd_weights_pd) == dnnl_success;
}

/* Whether only every stride-th pixel of the input reaches the output (1x1 kernel, no
 * padding): oneDNN then gets those pixels as a stride-1 input, and the conversions move a
 * quarter of the input at stride 2 (the conversions were ~75% of these convs' time). */
static int samples_input(const rt_conv_shape *s) {
    return s->kh == 1 && s->kw == 1 && s->ph == 0 && s->pw == 0 && (s->sh > 1 || s->sw > 1);
}

static int build_plan(plan *p, const rt_conv_shape *shape) {
    rt_conv_shape sampled = *shape;
    p->sampled = samples_input(shape);
    if (p->sampled) {
        sampled.h = shape->oh; sampled.w = shape->ow;
        sampled.sh = sampled.sw = 1;
    }
    const rt_conv_shape *s = &sampled;   /* the shape the primitives see */
    p->threads = omp_get_max_threads();
    if (p->threads > MAX_THREADS) return 0;
    p->chunk = chunk_of(s->n, p->threads);
    /* created for one thread: they run inside our parallel loop over chunks */
    omp_set_num_threads(1);
    dnnl_primitive_attr_t attr;   /* scratchpads given by us (see bf16conv_scratchpad()) */
    int built = bf16conv_dnnl.dnnl_primitive_attr_create(&attr) == dnnl_success;
    if (built) {
        built = bf16conv_dnnl.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) == dnnl_success &&
                build_primitives(p, s, attr);
        bf16conv_dnnl.dnnl_primitive_attr_destroy(attr);
    }
    omp_set_num_threads(p->threads);
    if (!built) return 0;
    int th = p->threads;
    bf16conv_classify(&p->wei, query(p->fwd_pd, dnnl_query_weights_md), 2, th);
    bf16conv_classify(&p->wei_t, query(p->bwd_data_pd, dnnl_query_weights_md), 2, th);
    bf16conv_classify(&p->src, query(p->fwd_pd, dnnl_query_src_md), 2, th);
    bf16conv_classify(&p->dst, query(p->fwd_pd, dnnl_query_dst_md), 4, th);
    bf16conv_classify(&p->ddst, query(p->bwd_data_pd, dnnl_query_diff_dst_md), 2, th);
    bf16conv_classify(&p->dsrc, query(p->bwd_data_pd, dnnl_query_diff_src_md), 4, th);
    bf16conv_classify(&p->src_w, query(p->bwd_weights_pd, dnnl_query_src_md), 2, th);
    bf16conv_classify(&p->ddst_w, query(p->bwd_weights_pd, dnnl_query_diff_dst_md), 2, th);
    bf16conv_classify(&p->dwei, query(p->bwd_weights_pd, dnnl_query_diff_weights_md), 4, th);
    bf16conv_classify(&p->dwei_sum, query(p->bwd_weights_pd, dnnl_query_diff_weights_md), 4, th);
    bf16conv_scratchpad(&p->fwd_pad, query(p->fwd_pd, dnnl_query_scratchpad_md), th);
    bf16conv_scratchpad(&p->bwd_data_pad, query(p->bwd_data_pd, dnnl_query_scratchpad_md), th);
    bf16conv_scratchpad(&p->bwd_weights_pad, query(p->bwd_weights_pd, dnnl_query_scratchpad_md), th);
    long at = 0;
    place(&p->wei, &at); place(&p->wei_t, &at);
    p->shared_floats = at;
    at = 0;
    place(&p->src, &at); place(&p->dst, &at); place(&p->fwd_pad, &at);
    long fwd_floats = at;
    long sample_floats = p->sampled ? ((long)p->chunk * s->c * s->h * s->w + 15) / 16 * 16 : 0;
    at = 0;   /* backward reuses the thread's part of the workspace */
    place(&p->ddst, &at); place(&p->dsrc, &at); place(&p->src_w, &at);
    if (bf16conv_dnnl.dnnl_memory_desc_equal(&p->ddst.md, &p->ddst_w.md)) p->ddst_w.at = p->ddst.at;
    else place(&p->ddst_w, &at);
    place(&p->dwei, &at); place(&p->dwei_sum, &at);
    place(&p->bwd_data_pad, &at); place(&p->bwd_weights_pad, &at);
    p->thread_floats = at > fwd_floats ? at : fwd_floats;
    p->sample_at = p->thread_floats;   /* after both passes' tensors: used by either */
    p->thread_floats += sample_floats;
    if (p->ddst.kind == LAYOUT_BLOCK16) {
        p->bias_sums = malloc(sizeof(float) * (s->n / p->chunk) * s->oc);
        if (!p->bias_sums) rt_die("out of memory for a conv2d BF16 plan's bias sums");
    }
    return 1;
}

/* The shape's plan, built at its first use (the trainer's sizing of the workspace). */
plan *bf16conv_plan_for(const rt_conv_shape *s) {
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
        !rt_cpu_has_avx512_bf16() || omp_in_parallel() || !bf16conv_load_api())
        return 0;
    if (rt_env_is(RT_ENV_TRAINC_CONV_BF16, "gemm")) return 0;   /* im2col + BF16 GEMM (A/B runs) */
    plan *p = bf16conv_plan_for(s);
    return p && p->usable;   /* it runs on p->threads, the count its workspace was sized for */
}

long conv2d_dnnl_bf16_workspace_elems(const rt_conv_shape *s) {
    plan *p = bf16conv_plan_for(s);
    return p->shared_floats + p->threads * p->thread_floats;
}

#else
int conv2d_dnnl_bf16_fits(const rt_conv_shape *s) { (void)s; return 0; }
long conv2d_dnnl_bf16_workspace_elems(const rt_conv_shape *s) { (void)s; return 0; }
#endif
