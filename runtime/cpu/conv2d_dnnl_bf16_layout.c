/* oneDNN's layouts for conv2d under compute BF16 (see conv2d_dnnl_bf16_internal.h): how a
 * tensor in the layout oneDNN chose maps to our NCHW / OIHW floats, and the conversion passes
 * between them, which also add the bias, apply the fused ReLU, mask the gradient by it and
 * sum the bias gradient; nChw16c, the fast kernels' layout, by 16 x 16 tiles transposed in
 * registers, any other by a gather table built once. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "conv2d_dnnl_bf16_internal.h"
#include "rt_core.h"
#include "rt_gemm.h"

#ifdef BF16_CONV_KERNELS
#include <immintrin.h>

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

void bf16conv_classify(tensor *t, const dnnl_memory_desc_t *md, int bytes, int threads) {
    t->md = *md;
    t->bytes = bytes;
    t->elems = (long)(bf16conv_dnnl.dnnl_memory_desc_get_size(md) / bytes);
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
        if (bf16conv_dnnl.dnnl_memory_create(&t->mem[th], &t->md, bf16conv_engine, DNNL_MEMORY_NONE) != dnnl_success)
            rt_die("conv2d BF16: oneDNN could not create a memory object");
}

/* A primitive's scratchpad: bytes of workspace it is given on each call. Each thread's own,
 * since a library-managed one would be shared by the threads running the same primitive
 * (that raced: backward-weights' results changed from run to run). */
void bf16conv_scratchpad(tensor *t, const dnnl_memory_desc_t *md, int threads) {
    t->md = *md;
    t->bytes = 1;
    t->elems = (long)bf16conv_dnnl.dnnl_memory_desc_get_size(md);
    t->kind = LAYOUT_PLAIN;
    for (int th = 0; th < threads; th++)
        if (bf16conv_dnnl.dnnl_memory_create(&t->mem[th], &t->md, bf16conv_engine, DNNL_MEMORY_NONE) != dnnl_success)
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

/* One 16 x 16 tile of block16_to_bf16: px (1..16) pixels from p of 16 channel rows, masked
 * by a if given, into rows p.. of d; adds the channels' sums into *total. */
__attribute__((target("avx512f,avx512bf16"), always_inline))
static inline void tile_to_bf16(uint16_t *d, const float *s, const float *a, __m512 *total, long hw,
                                long p, int px) {
    __mmask16 in = (__mmask16)((1u << px) - 1);
    __m512 r[16];
    for (int k = 0; k < 16; k++) {
        r[k] = px == 16 ? _mm512_loadu_ps(s + k * hw + p) : _mm512_maskz_loadu_ps(in, s + k * hw + p);
        if (a) {
            __m512 act = px == 16 ? _mm512_loadu_ps(a + k * hw + p) : _mm512_maskz_loadu_ps(in, a + k * hw + p);
            r[k] = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(act, _mm512_setzero_ps(), _CMP_GT_OQ), r[k]);
        }
    }
    transpose16(r);   /* r[j]: pixel p + j's 16 channels (zeros past px) */
    if (total)
        for (int j = 0; j < 16; j++) *total = _mm512_add_ps(*total, r[j]);
    if (px == 16) {
        for (int j = 0; j < 16; j += 2)   /* two pixels: one 64-byte store */
            _mm512_storeu_si512((void *)(d + (p + j) * 16), (__m512i)_mm512_cvtne2ps_pbh(r[j + 1], r[j]));
        return;
    }
    uint16_t rows[16 * 16] __attribute__((aligned(64)));
    for (int j = 0; j < 16; j += 2)
        _mm512_store_si512((void *)(rows + j * 16), (__m512i)_mm512_cvtne2ps_pbh(r[j + 1], r[j]));
    memcpy(d + p * 16, rows, sizeof(uint16_t) * 16 * px);
}

/* One image's 16 channels x hw of plain floats -> hw x 16 BF16 (nChw16c), masked where
 * act_out <= 0 if act_out is given: 16 x 16 tiles transposed in registers, the last one
 * partial (masked loads: a scalar tail was a third of the pass at 14 x 14). If sums is given,
 * adds each channel's sum of the (masked) floats into it: the bias gradient, while the values
 * are in registers (a pass of its own over dout was 2-6% of a BF16 LeNet step). */
__attribute__((target("avx512f,avx512bf16")))
static void block16_to_bf16(uint16_t *d, const float *s, const float *a, float *sums, long hw) {
    __m512 total = _mm512_setzero_ps();   /* lane k: channel k */
    __m512 *t = sums ? &total : NULL;
    long p = 0;
    if (a) for (; p + 16 <= hw; p += 16) tile_to_bf16(d, s, a, t, hw, p, 16);
    else for (; p + 16 <= hw; p += 16) tile_to_bf16(d, s, NULL, t, hw, p, 16);
    if (p < hw) tile_to_bf16(d, s, a, t, hw, p, (int)(hw - p));
    if (sums) _mm512_storeu_ps(sums, _mm512_add_ps(_mm512_loadu_ps(sums), total));
}

/* One tile of block16_from_f32: px (1..16) pixel rows from p of s into 16 channel rows of d. */
__attribute__((target("avx512f"), always_inline))
static inline void tile_from_f32(float *d, const float *s, const float *bias, int relu, int add, long hw,
                                 long p, int px) {
    __mmask16 out = (__mmask16)((1u << px) - 1);
    __m512 r[16];
    if (px == 16)
        for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(s + (p + j) * 16);
    else {
        float rows[16 * 16] __attribute__((aligned(64))) = { 0 };
        memcpy(rows, s + p * 16, sizeof(float) * 16 * px);
        for (int j = 0; j < 16; j++) r[j] = _mm512_load_ps(rows + j * 16);
    }
    transpose16(r);   /* r[k]: channel k at pixels p.. */
    for (int k = 0; k < 16; k++) {
        __m512 v = r[k];
        if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[k]));
        if (relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
        if (px == 16) {
            if (add) v = _mm512_add_ps(v, _mm512_loadu_ps(d + k * hw + p));
            _mm512_storeu_ps(d + k * hw + p, v);
        } else {
            if (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(out, d + k * hw + p));
            _mm512_mask_storeu_ps(d + k * hw + p, out, v);
        }
    }
}

/* hw x 16 FP32 (nChw16c) -> one image's 16 channels x hw: d = (add ? d : 0) + relu?(s + bias);
 * the last tile partial, as in block16_to_bf16. */
__attribute__((target("avx512f")))
static void block16_from_f32(float *d, const float *s, const float *bias, int relu, int add, long hw) {
    long p = 0;
    for (; p + 16 <= hw; p += 16) tile_from_f32(d, s, bias, relu, add, hw, p, 16);
    if (p < hw) tile_from_f32(d, s, bias, relu, add, hw, p, (int)(hw - p));
}

/* dst[i] = bf16(src[table[i]]) (0 where table[i] < 0) for i in [lo, hi): 16 gathered at a
 * time (one at a time, this was ~1% of a BF16 ResNet step, run serially while the other
 * thread waited). */
__attribute__((target("avx512f,avx512bf16")))
static void table_to_bf16(uint16_t *dst, const float *src, const int32_t *table, long lo, long hi) {
    long i = lo;
    for (; i + 16 <= hi; i += 16) {
        __m512i idx = _mm512_loadu_si512((const void *)(table + i));
        __mmask16 real = _mm512_cmpge_epi32_mask(idx, _mm512_setzero_si512());
        __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), real, idx, src, 4);
        _mm256_storeu_si256((__m256i *)(dst + i), (__m256i)_mm512_cvtneps_pbh(v));
    }
    for (; i < hi; i++) dst[i] = table[i] < 0 ? 0 : rt_float_to_bf16(src[table[i]]);
}

/* src (plain floats, masked where act_out <= 0 if act_out is given) into t's BF16 layout;
 * runs on the calling thread. sums (LAYOUT_BLOCK16 only; else NULL): each channel's sum of
 * the masked floats over the images and pixels, written. */
void bf16conv_to_layout(const tensor *t, uint16_t *dst, const float *src, const float *act_out,
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
    if (t->kind == LAYOUT_TABLE && !act_out) {
        table_to_bf16(dst, src, t->table, 0, t->elems);
        return;
    }
    const int32_t *tab = t->kind == LAYOUT_TABLE ? t->table : NULL;
    for (long i = 0; i < t->elems; i++) {
        long j = tab ? tab[i] : i;
        float v = j < 0 || (act_out && !(act_out[j] > 0)) ? 0.0f : src[j];
        dst[i] = rt_float_to_bf16(v);
    }
}

void bf16conv_weights_to_layout(const tensor *t, uint16_t *dst, const float *src) {
    if (t->kind != LAYOUT_TABLE) {
        bf16conv_to_layout(t, dst, src, NULL, NULL);
        return;
    }
    /* parts of whole 32-element pieces: the vector loop converts the same elements whatever
     * the thread count (the scalar tail only differs for denormals) */
    long pieces = (t->elems + 31) / 32;
    #pragma omp parallel num_threads(pieces >= 2048 ? omp_get_max_threads() : 1)
    {
        int th = omp_get_thread_num(), n = omp_get_num_threads();
        long lo = pieces * th / n * 32, hi = pieces * (th + 1) / n * 32;
        table_to_bf16(dst, src, t->table, lo, hi < t->elems ? hi : t->elems);
    }
}

/* t's FP32 buffer back to plain floats: dst = (add ? dst : 0) + relu?(src + bias); runs on
 * the calling thread. */
void bf16conv_from_layout(const tensor *t, float *dst, const float *src, const float *bias,
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
#endif
