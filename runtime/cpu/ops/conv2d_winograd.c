/* 3x3 and 5x5 stride-1 "same" convolution by Winograd's minimal filtering (Lavin & Gray,
 * 2016): forward, input gradient and weight gradient each become one GEMM per transformed
 * position on transformed tiles. For 3x3, F(2x2,3x3) (16 positions per 2x2 outputs) or
 * F(4x4,3x3) (36 per 4x4, 1.8x fewer multiply-adds again), as rt_conv_shape.algo says; for
 * 5x5, F(2x2,5x5) (36 per 2x2, 2.8x fewer than im2col). The tile transforms are in
 * conv2d_winograd_f2.c and _6x6.c; this file cuts the batch into blocks and runs the GEMMs.
 *
 * Notation: d is an input patch, g a kernel, y an output tile.
 *   forward         y = A^T [ (G g G^T) . (B^T d B) ] A            (. = elementwise)
 *   input gradient  6x6 tiles: the adjoint, dV = U^T (A dy A^T), then B dV B^T summed over
 *                   the overlapping patches (the tile kind's input_adjoint);
 *                   F(2x2,3x3): the same convolution of dy with each kernel rotated by 180
 *                   degrees and in/out channels swapped (stride 1, pad 1: the output keeps
 *                   the size)
 *   weight gradient dU = sum over tiles (A dy A^T) . (B^T d B),  dg = G^T dU G
 *                   (the adjoint of the forward in the transformed domain)
 * The tiles of a block of whole images are transformed into V[xi][channel][tile] (xi the
 * transformed position), so each xi is one GEMM over channels; blocks are sized to stay
 * near the per-core cache and run on OpenMP threads, each with its own workspace slice.
 * Where channels come in sixteens on narrow planes (channel_lanes), the transforms run 16
 * channels per vector instead of 16 tiles, on and into the transposes V^T[xi][tile][channel]
 * (and M^T, dV^T), which the GEMMs take as they are (V^T U^T, dM V^T, dM^T U). */
#include <omp.h>
#include <string.h>
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"
#include "conv2d_bias_grad.h"
#include "conv2d_winograd.h"
#include "conv2d_winograd_tiles.h"

/* Transformed values per block: V and the GEMM's output for one block take
 * xi * (c + oc) * tiles values; blocks of whole images near this size stay in the per-core
 * cache (1 MiB L2 on the 2-core machine) for 32..128 channels. */
#define BLOCK_VALUES (192 * 1024)

static const wino_tiles *tiles_of(const rt_conv_shape *s) {
    if (s->kh == 5) return &RT_FN(wino_f2x2_5x5);
    return s->algo == RT_CONV_WINOGRAD_F4 ? &RT_FN(wino_f4x4) : &RT_FN(wino_f2x2);
}

static long round16(long n) { return (n + 15) / 16 * 16; }   /* keeps 16-tile rows aligned */

/* How one call cuts the batch into blocks of whole images. */
typedef struct {
    const wino_tiles *t;
    int xi;                /* transformed positions per tile */
    int th, tw, tiles;     /* tile rows, tiles per row, tiles of one image plane */
    int imgs_per_block, blocks;
    long ld;               /* leading dimension: tiles per block, rounded up to 16, + 16 */
    int cmax;
    int kk;                /* weights per kernel, r * r */
} wino_geom;

static wino_geom geom_of(const rt_conv_shape *s) {
    wino_geom g;
    g.t = tiles_of(s);
    g.xi = g.t->xi;
    g.th = (s->h + g.t->m - 1) / g.t->m;
    g.tw = (s->w + g.t->m - 1) / g.t->m;
    g.tiles = g.th * g.tw;
    int per_block = BLOCK_VALUES / (g.xi * (s->c + s->oc));
    g.imgs_per_block = per_block / g.tiles < 1 ? 1 : per_block / g.tiles;
    if (g.imgs_per_block > s->n) g.imgs_per_block = s->n;
    g.blocks = (s->n + g.imgs_per_block - 1) / g.imgs_per_block;
    /* room for the 16-tile stores that run past a plane's last tile */
    g.ld = round16((long)g.imgs_per_block * g.tiles) + 16;
    g.cmax = s->c > s->oc ? s->c : s->oc;
    g.kk = g.t->r * g.t->r;
    return g;
}

/* Whether the tiles go through the transforms 16 channels per vector (the tile kind's
 * *_transposed transforms) rather than 16 tiles per vector: where the channels come in
 * sixteens and the planes are narrow (where tiles per row leave most lanes idle). */
static int channel_lanes(const rt_conv_shape *s, const wino_geom *g) {
    return g->t->input_transposed && g->t->output_transposed && g->t->adjoint_transposed &&
           s->c % 16 == 0 &&
           s->oc % 16 == 0 && s->w <= WINO_TRANSPOSED_MAX_W;
}

/* Workspace: the transformed kernels (shared), then per thread two block buffers, a partial
 * transformed weight gradient, the tile transforms' scratch, one transformed position's
 * input tiles transposed and, with din_add and no input adjoint, a block's input gradient. */
static long kernels_elems(const rt_conv_shape *s, const wino_geom *g) {
    return round16((long)g->xi * s->oc * s->c);
}
/* Values from one transformed position's matrix (channels x ld) to the next, one cache line
 * more than the matrix: channels * ld is often a multiple of 4 KiB (64 x 48, 128 x 48 values),
 * which put the 36 rows the tile transforms store to (and load from) at once in the same L1
 * cache set. */
static long xi_stride(const wino_geom *g, int channels) { return (long)channels * g->ld + 16; }
static long buf_elems(const wino_geom *g) { return (long)g->xi * xi_stride(g, g->cmax); }
/* A block's input gradient, when backward adds it into din (din_add) rather than writing and
 * the tiles have no input_adjoint (which adds in place). */
static long din_block_elems(const rt_conv_shape *s, const wino_geom *g) {
    int buffered = s->din_add && !g->t->input_adjoint;
    return buffered ? round16((long)g->imgs_per_block * s->c * s->h * s->w) : 0;
}
static long scratch_at(const rt_conv_shape *s, const wino_geom *g) {
    return 2 * buf_elems(g) + kernels_elems(s, g);
}
static long transposed_elems(const rt_conv_shape *s, const wino_geom *g) {
    return round16(g->ld * s->c);
}
static long slice_elems(const rt_conv_shape *s, const wino_geom *g) {
    return scratch_at(s, g) + round16(g->t->scratch_elems(g->imgs_per_block, g->th, g->tw)) +
           transposed_elems(s, g) + din_block_elems(s, g);
}

typedef struct { real_t *a, *b, *du, *scratch, *vt, *din; } wino_slice;

static wino_slice slice_of(real_t *work, int t, const rt_conv_shape *s, const wino_geom *g) {
    real_t *base = work + kernels_elems(s, g) + (long)t * slice_elems(s, g);
    real_t *scratch = base + scratch_at(s, g);
    real_t *vt = scratch + round16(g->t->scratch_elems(g->imgs_per_block, g->th, g->tw));
    wino_slice sl = { base, base + buf_elems(g), base + 2 * buf_elems(g), scratch, vt,
                      vt + transposed_elems(s, g) };
    return sl;
}

/* After the slices: the bias gradient's sum of each output-gradient plane, [image][oc]. */
static long plane_sums_at(const rt_conv_shape *s, const wino_geom *g) {
    return kernels_elems(s, g) + (long)rt_slot_slices() * slice_elems(s, g);
}

long RT_FN(conv2d_winograd_workspace_elems)(const rt_conv_shape *s) {
    wino_geom g = geom_of(s);
    return plane_sums_at(s, &g) + round16((long)s->n * s->oc);
}

/* The rows here are 7..35 values, and GCC would turn copy and zeroing loops into memcpy/memset
 * calls that cost more than the copies themselves (measured: memmove was 7-11% of a ResNet
 * step), hence the attribute. */
#define SHORT_ROWS __attribute__((optimize("no-tree-loop-distribute-patterns")))

/* Padded rows are built 16 lanes at a time: lane p of a chunk is plane value p - off of the
 * row where off <= p < off + w, else zero. A chunk's values are one unaligned load from the
 * plane when all 16 lie inside it (the lanes outside the row are then masked off), else
 * lane by lane, so nothing past the plane is ever read. len is a multiple of 16. */
SHORT_ROWS void RT_FN(wino_pad_plane)(real_t *restrict pad, long len, long rows, int off,
                                      const real_t *plane, const real_t *mask, int h, int w) {
    static const rsel IOTA = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    const rvec zero = { 0 };
    long hw = (long)h * w;
    for (long p = 0; p < len * off; p += 16) VSTORE(pad + p, zero);
    for (int y = 0; y < h; y++) {
        real_t *restrict row = pad + (y + off) * len;
        for (long q = 0; q < len; q += 16) {
            rsel lane = IOTA + (int)q;     /* the chunk's column in the padded row */
            rsel keep = (lane >= off) & (lane < off + w);
            long start = (long)y * w + q - off;   /* plane index of lane 0 */
            rvec v = zero;
            if (q >= off + w) {
                /* past the row: zeros */
            } else if (start >= 0 && start + 16 <= hw) {
                VLOAD(v, plane + start);
                if (mask) {
                    rvec m;
                    VLOAD(m, mask + start);
                    keep &= m > zero;
                }
                v = (rvec)((rsel)v & keep);
            } else {
                for (int l = 0; l < 16; l++)
                    if (keep[l] && (!mask || mask[start + l] > 0)) v[l] = plane[start + l];
            }
            VSTORE(row + q, v);
        }
    }
    for (long p = (h + off) * len; p < rows * len; p += 16) VSTORE(pad + p, zero);
}

SHORT_ROWS void RT_FN(wino_copy_row)(real_t *restrict dst, const real_t *restrict src, int n,
                                     int add) {
    if (add)
        for (int p = 0; p < n; p++) dst[p] += src[p];
    else
        for (int p = 0; p < n; p++) dst[p] = src[p];
}

void RT_FN(wino_bias_act_row)(real_t *restrict out, const real_t *restrict o, int w, real_t bias,
                              rt_act act) {
    if (act == RT_ACT_RELU)
        for (int x = 0; x < w; x++) { real_t val = o[x] + bias; out[x] = val > 0 ? val : 0; }
    else
        for (int x = 0; x < w; x++) out[x] = o[x] + bias;
}

/* Transformed kernels U[xi][oc][c] for the forward or, transposed, U[xi][c][oc] for the
 * input gradient (rotated by 180 degrees too when `flip`); one thread per row of U. The
 * kernels of 16 neighbouring columns go through the transform together, one per lane, so U
 * is written 16 values at a time (one store per kernel and xi straight into U lands each on
 * its own page of the xi-strided planes: that was 3% of a ResNet step). */
static void transform_kernels(real_t *u, const real_t *weight, const rt_conv_shape *s,
                              const wino_geom *g, int transposed, int flip) {
    enum { COLS = 16 };
    long plane = (long)s->oc * s->c;
    int rows = transposed ? s->c : s->oc, cols = transposed ? s->oc : s->c;
    #pragma omp for schedule(static)
    for (int r = 0; r < rows; r++)
        for (int c0 = 0; c0 < cols; c0 += COLS) {
            rvec k[WINO_MAX_KK] = { { 0 } }, uu[WINO_MAX_XI];
            int n = cols - c0 < COLS ? cols - c0 : COLS;
            for (int j = 0; j < n; j++) {
                int o = transposed ? c0 + j : r, c = transposed ? r : c0 + j;
                const real_t *kernel = weight + ((long)o * s->c + c) * g->kk;
                for (int e = 0; e < g->kk; e++) k[e][j] = kernel[flip ? g->kk - 1 - e : e];
            }
            g->t->kernel(uu, k);
            real_t *dst = u + (long)r * cols + c0;
            for (int xi = 0; xi < g->xi; xi++) {
                if (n == COLS) VSTORE(dst + xi * plane, uu[xi]);
                else for (int j = 0; j < n; j++) dst[xi * plane + j] = uu[xi][j];
            }
        }
}

/* dst[k * ldd + l] = src[l * lds + k] for a 16 x 16 square, through registers. */
static inline __attribute__((always_inline)) void transpose16(real_t *restrict dst, long ldd,
                                                              const real_t *restrict src,
                                                              long lds) {
    rvec v[16];
    /* fully unrolled with constant indices only, so the 16 rows stay in registers (a bound
     * known only at run time kept them in memory: the transposes took twice as long) */
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) VLOAD(v[k], src + k * lds);
    wino_transpose16(v);
    #pragma GCC unroll 16
    for (int k = 0; k < 16; k++) VSTORE(dst + k * ldd, v[k]);
}

/* dst[t * rows + r] = src[r * lds + t] for r < rows, t < cols, 16 x 16 at a time. Rows of
 * src hold at least cols rounded up to 16 values (ld leaves room), so a square cut by the
 * last column is transposed whole and only its first rows stored; one cut by the last row
 * (channels not a multiple of 16) goes through a zero-padded copy. */
static void transpose_tiles(real_t *restrict dst, const real_t *restrict src, long lds, int rows,
                            int cols) {
    for (int r0 = 0; r0 < rows; r0 += 16)
        for (int t0 = 0; t0 < cols; t0 += 16) {
            int nr = rows - r0 < 16 ? rows - r0 : 16, nt = cols - t0 < 16 ? cols - t0 : 16;
            if (nr == 16 && nt == 16) {
                transpose16(dst + (long)t0 * rows + r0, rows, src + r0 * lds + t0, lds);
                continue;
            }
            real_t out[16 * 16];
            if (nr == 16) {
                transpose16(out, 16, src + r0 * lds + t0, lds);
                for (int k = 0; k < nt; k++)
                    memcpy(dst + (long)(t0 + k) * rows + r0, out + k * 16, 16 * sizeof(real_t));
                continue;
            }
            real_t in[16 * 16] = { 0 };
            for (int k = 0; k < nr; k++)
                for (int l = 0; l < nt; l++) in[k * 16 + l] = src[(r0 + k) * lds + t0 + l];
            transpose16(out, 16, in, 16);
            for (int k = 0; k < nt; k++)
                for (int l = 0; l < nr; l++) dst[(long)(t0 + k) * rows + r0 + l] = out[k * 16 + l];
        }
}

/* ---- one block of whole images ---- */

typedef struct { int first_img, imgs, tiles; } wino_block;

static wino_block block_at(const wino_geom *g, int n, int b) {
    wino_block k;
    k.first_img = b * g->imgs_per_block;
    k.imgs = n - k.first_img < g->imgs_per_block ? n - k.first_img : g->imgs_per_block;
    k.tiles = k.imgs * g->tiles;
    return k;
}

/* The planes of `imgs` images, img_stride apart, on their way into the cache: the planes
 * of one channel across a block's images are far apart, which the hardware prefetchers do
 * not follow (loading them was half of wino_pad_plane's time, 4% of a ResNet step). */
static void prefetch_planes(const real_t *plane, long img_stride, int imgs, long hw) {
    for (int im = 0; im < imgs; im++)
        for (long e = 0; e < hw; e += 64 / sizeof(real_t)) __builtin_prefetch(plane + im * img_stride + e);
}

/* Transforms the `channels` planes of a block's images of `src` (input, or output gradient
 * when `grad_form`): dst[xi][channel][tile]. */
static void transform_block(real_t *dst, const real_t *src, const real_t *mask, int channels,
                            int h, int w, const wino_geom *g, const wino_block *k,
                            int grad_form, real_t *scratch) {
    long xs = xi_stride(g, channels), hw = (long)h * w;
    for (int c = 0; c < channels; c++) {
        long at = ((long)k->first_img * channels + c) * hw;
        if (c + 1 < channels) {   /* the next channel's planes, while this one is transformed */
            prefetch_planes(src + at + hw, channels * hw, k->imgs, hw);
            if (mask) prefetch_planes(mask + at + hw, channels * hw, k->imgs, hw);
        }
        (grad_form ? g->t->output_grad : g->t->input)(dst + (long)c * g->ld, xs, src + at,
                                                      mask ? mask + at : NULL, channels * hw,
                                                      k->imgs, h, w, g->th, g->tw, scratch);
    }
}

/* The input transform of a block's `channels` planes of `src`, 16 channels at a time, into
 * the transposed layout dst[xi][tile][channel]. */
static void transform_block_transposed(real_t *dst, const real_t *src, int channels, int h,
                                       int w, const wino_geom *g, const wino_block *k) {
    long hw = (long)h * w;
    for (int c0 = 0; c0 < channels; c0 += 16)
        g->t->input_transposed(dst + c0, xi_stride(g, channels), channels,
                               src + ((long)k->first_img * channels + c0) * hw, hw,
                               channels * hw, k->imgs, h, w, g->th, g->tw);
}

/* Inverse transform of a block's GEMM output m[xi][channel][tile] into `channels` planes. */
static void untransform_block(real_t *dst, const real_t *m, const real_t *bias, rt_act act,
                              int channels, int h, int w, const wino_geom *g,
                              const wino_block *k, real_t *scratch) {
    long xs = xi_stride(g, channels), hw = (long)h * w;
    for (int c = 0; c < channels; c++)
        g->t->output(dst + ((long)k->first_img * channels + c) * hw, m + (long)c * g->ld,
                     xs, channels * hw, k->imgs, h, w, g->th, g->tw, bias ? bias[c] : 0,
                     act, scratch);
}

/* The input gradient of a block from dV[xi][channel][tile] by the adjoint of the input
 * transform, into `channels` planes (added to them when `add`). */
static void adjoint_block(real_t *dst, const real_t *dv, int channels, int h, int w,
                          const wino_geom *g, const wino_block *k, int add, real_t *scratch) {
    long xs = xi_stride(g, channels), hw = (long)h * w;
    for (int c = 0; c < channels; c++)
        g->t->input_adjoint(dst + ((long)k->first_img * channels + c) * hw, dv + (long)c * g->ld,
                            xs, channels * hw, k->imgs, h, w, g->th, g->tw, add, scratch);
}

/* out[xi] (rows x tiles) = u[xi] (rows x inner) . v[xi] (inner x tiles), for every xi. */
static void transformed_gemms(real_t *out, const real_t *u, const real_t *v, int rows, int inner,
                              const wino_geom *g, const wino_block *k) {
    for (int xi = 0; xi < g->xi; xi++)
        RT_FN(rt_gemm)(0, 0, rows, k->tiles, inner, 1, u + (long)xi * rows * inner, inner,
                       v + xi * xi_stride(g, inner), (int)g->ld, 0,
                       out + xi * xi_stride(g, rows), (int)g->ld);
}

void RT_FN(conv2d_winograd_forward)(real_t *out, const real_t *in, const real_t *weight,
                                    const real_t *bias, real_t *work, const rt_conv_shape *s) {
    wino_geom g = geom_of(s);
    real_t *u = work;
    int transposed = channel_lanes(s, &g);
    #pragma omp parallel
    {
        transform_kernels(u, weight, s, &g, transposed, 0);   /* ends in a barrier */
        wino_slice sl = slice_of(work, omp_get_thread_num(), s, &g);
        #pragma omp for schedule(static)
        for (int b = 0; b < g.blocks; b++) {
            wino_block k = block_at(&g, s->n, b);
            if (!transposed) {
                transform_block(sl.a, in, NULL, s->c, s->h, s->w, &g, &k, 0, sl.scratch);
                transformed_gemms(sl.b, u, sl.a, s->oc, s->c, &g, &k);
                untransform_block(out, sl.b, bias, s->act, s->oc, s->h, s->w, &g, &k, sl.scratch);
                continue;
            }
            /* the transposes of all: M^T[xi] (tiles x oc) = V^T[xi] (tiles x c) U^T[xi] */
            long hw = (long)s->h * s->w;
            transform_block_transposed(sl.a, in, s->c, s->h, s->w, &g, &k);
            for (int xi = 0; xi < g.xi; xi++)
                RT_FN(rt_gemm)(0, 0, k.tiles, s->oc, s->c, 1, sl.a + xi * xi_stride(&g, s->c),
                               s->c, u + (long)xi * s->c * s->oc, s->oc, 0,
                               sl.b + xi * xi_stride(&g, s->oc), s->oc);
            for (int o0 = 0; o0 < s->oc; o0 += 16)
                g.t->output_transposed(out + ((long)k.first_img * s->oc + o0) * hw, hw,
                                       (long)s->oc * hw, sl.b + o0, xi_stride(&g, s->oc), s->oc,
                                       k.imgs, s->h, s->w, g.th, g.tw, bias ? bias + o0 : NULL,
                                       s->act);
        }
    }
}

void RT_FN(conv2d_winograd_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                     const real_t *dout, const real_t *act_out, const real_t *in,
                                     const real_t *weight, real_t *work, const rt_conv_shape *s,
                                     int timing, double *data_s) {
    wino_geom g = geom_of(s);
    real_t *u = work;   /* kernels for the input gradient, transposed (see `adjoint`) */
    const real_t *mask = s->act ? act_out : NULL;
    long ohw = (long)s->h * s->w, kc = (long)s->oc * s->c;
    long xs_in = xi_stride(&g, s->c), xs_out = xi_stride(&g, s->oc);
    real_t *plane_sums = work + plane_sums_at(s, &g);
    /* the weight gradient's transformed input 16 channels at a time, already transposed */
    int transposed_input = channel_lanes(s, &g);
    /* and the input gradient's adjoint where rows have two tiles or fewer (7x7 planes): on
     * wider rows the tile lanes' adjoint measured faster (4% on 28x28, 2% on 14x14; the
     * transposes back cost more than the idle lanes), on 7x7 planes 12% slower */
    int transposed_adjoint = transposed_input && g.tw <= 2;
    #pragma omp parallel
    {
        /* the input gradient needs the forward's kernels for the adjoint, else flipped ones */
        int adjoint = g.t->input_adjoint != NULL;
        if (din)   /* [xi][oc][c] for the channel lanes' dV^T = dM^T U, else [xi][c][oc] */
            transform_kernels(u, weight, s, &g, !transposed_adjoint, !adjoint);
        /* a partial dU per reduction slot, each over its run of blocks (rt_slots.h) */
        int slots = rt_slots();
        #pragma omp for schedule(static)
        for (int slot = 0; slot < slots; slot++) {
            wino_slice sl = slice_of(work, slot, s, &g);
            int summed = 0;   /* this slot's partial dU holds a block's terms */
            for (int b = rt_slot_begin(g.blocks, slot, slots); b < rt_slot_begin(g.blocks, slot + 1, slots); b++) {
                wino_block k = block_at(&g, s->n, b);
                /* where the block's input gradient goes: din (the adjoint adds in place under
                 * din_add), or (din_add, no adjoint) a buffer added to it */
                wino_block kd = k;
                real_t *dst = din;
                int buffered = s->din_add && !adjoint;
                if (buffered) kd.first_img = 0, dst = sl.din;
                /* weight gradient: dU[xi] += (A dy A^T)[xi] . (B^T d B)[xi]^T over this block
                 * (the first block's GEMMs write it: no pass to zero it first). Both factors run
                 * along tiles; with the second transposed first the GEMM is a plain one (NN),
                 * which OpenBLAS runs up to twice as fast on these shapes (measured). */
                if (transposed_input)   /* straight into the GEMMs' layout: a[xi][tile][c] */
                    transform_block_transposed(sl.a, in, s->c, s->h, s->w, &g, &k);
                else
                    transform_block(sl.a, in, NULL, s->c, s->h, s->w, &g, &k, 0, sl.scratch);
                transform_block(sl.b, dout, mask, s->oc, s->h, s->w, &g, &k, 1, sl.scratch);
                if (dbias)   /* the bias gradient's plane sums, while the planes are in cache */
                    for (long p = (long)k.first_img * s->oc; p < (long)(k.first_img + k.imgs) * s->oc; p++)
                        plane_sums[p] = masked_plane_sum(dout + p * ohw, mask ? mask + p * ohw : NULL, ohw);
                for (int xi = 0; xi < g.xi; xi++) {
                    const real_t *vt = sl.a + xi * xs_in;
                    if (!transposed_input) {
                        transpose_tiles(sl.vt, vt, g.ld, s->c, k.tiles);
                        vt = sl.vt;
                    }
                    RT_FN(rt_gemm)(0, 0, s->oc, s->c, k.tiles, 1, sl.b + xi * xs_out, (int)g.ld,
                                   vt, s->c, summed, sl.du + xi * kc, s->c);
                }
                summed = 1;
                if (!din) continue;
                double td = timing ? omp_get_wtime() : 0;   /* the input-gradient part (op stats) */
                if (transposed_adjoint) {   /* dV^T[xi] = dM[xi]^T U[xi], then its adjoint */
                    for (int xi = 0; xi < g.xi; xi++)
                        RT_FN(rt_gemm)(1, 0, k.tiles, s->c, s->oc, 1, sl.b + xi * xs_out, (int)g.ld,
                                       u + xi * kc, s->c, 0, sl.a + xi * xs_in, s->c);
                    for (int c0 = 0; c0 < s->c; c0 += 16)
                        g.t->adjoint_transposed(din + ((long)k.first_img * s->c + c0) * ohw, ohw,
                                                (long)s->c * ohw, sl.a + c0, xs_in, s->c, k.imgs,
                                                s->h, s->w, g.th, g.tw, s->din_add);
                } else if (adjoint) {   /* input gradient: dV[xi] = U[xi]^T dM[xi], then its adjoint */
                    for (int xi = 0; xi < g.xi; xi++)
                        RT_FN(rt_gemm)(0, 0, s->c, k.tiles, s->oc, 1, u + xi * kc, s->oc,
                                       sl.b + xi * xs_out, (int)g.ld, 0, sl.a + xi * xs_in, (int)g.ld);
                    adjoint_block(dst, sl.a, s->c, s->h, s->w, &g, &kd, s->din_add, sl.scratch);
                } else {
                    /* input gradient: the forward convolution of dy with the flipped kernels */
                    transform_block(sl.b, dout, mask, s->oc, s->h, s->w, &g, &k, 0, sl.scratch);
                    transformed_gemms(sl.a, u, sl.b, s->c, s->oc, &g, &k);
                    untransform_block(dst, sl.a, NULL, RT_ACT_NONE, s->c, s->h, s->w, &g, &kd, sl.scratch);
                }
                if (buffered) {   /* the block's images lie contiguously in din */
                    real_t *to = din + (long)k.first_img * s->c * s->h * s->w;
                    long count = (long)k.imgs * s->c * s->h * s->w;
                    for (long i = 0; i < count; i++) to[i] += sl.din[i];
                }
                if (timing) {
                    double spent = omp_get_wtime() - td;
                    #pragma omp atomic
                    *data_s += spent;
                }
            }
            if (!summed) memset(sl.du, 0, sizeof(real_t) * g.xi * kc);   /* a slot without blocks */
        }   /* the loop's barrier: every partial is complete */
        if (dbias) {
            #pragma omp for schedule(static) nowait
            for (int o = 0; o < s->oc; o++) {   /* the images in order: a fixed sum order */
                real_t acc = 0;
                for (int b = 0; b < s->n; b++) acc += plane_sums[(long)b * s->oc + o];
                dbias[o] = acc;
            }
        }
        /* sum the partials in slot order */
        long per_slot = slice_elems(s, &g);
        real_t *du0 = work + kernels_elems(s, &g) + 2 * buf_elems(&g);
        /* 16 kernels at a time, so the sums run along rows of the partials (vectors)
         * rather than down their columns */
        enum { KERNELS = 16 };
        #pragma omp for schedule(static)
        for (long e0 = 0; e0 < kc; e0 += KERNELS) {
            rvec du[WINO_MAX_XI], dg[WINO_MAX_KK];   /* one kernel per lane */
            int n = kc - e0 < KERNELS ? (int)(kc - e0) : KERNELS;
            for (int xi = 0; xi < g.xi; xi++) {
                rvec acc = { 0 };
                for (int v = 0; v < slots; v++) {
                    const real_t *part = du0 + v * per_slot + xi * kc + e0;
                    rvec p = { 0 };
                    if (n == KERNELS) VLOAD(p, part);
                    else for (int j = 0; j < n; j++) p[j] = part[j];
                    acc += p;
                }
                du[xi] = acc;
            }
            g.t->kernel_grad(dg, du);
            for (int j = 0; j < n; j++)
                for (int e = 0; e < g.kk; e++) dweight[(e0 + j) * g.kk + e] = dg[e][j];
        }
    }
}
