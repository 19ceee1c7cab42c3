/* The 3x3 stride-2 pad-1 convolution as Winograd F(7x7,2x2) on the input's phase planes.
 *
 * Split the input's rows (and columns) into odd ones o[k] = x[2k-1] and even ones e[k] = x[2k]
 * (x[-1] and past the end: zero). Then along one axis y[i] = w0 o[i] + w1 e[i] + w2 o[i+1]: a
 * stride-1 "valid" 2-tap convolution of the odd plane with (w0, w2) plus one of the even plane
 * with (w1, 0). In 2-D the four phase planes (odd/even rows x odd/even columns) of every
 * channel, stacked as 4c channels on an (oh+1) x (ow+1) grid, convolve with 2x2 kernels
 * holding the 3x3 kernel's taps (and zeros): w[0][0], w[0][2], w[2][0], w[2][2] on (odd, odd);
 * w[0][1], w[2][1] on (odd, even); w[1][0], w[1][2] on (even, odd); w[1][1] on (even, even).
 * F(7x7,2x2) runs that with 64 products per 49 outputs and stacked channel, 5.2 c per output
 * against the direct 9 c, in GEMMs whose K is the 4c stacked channels (128 and 256 on the
 * ResNet example, where the polyphase path's per-tap GEMMs had K = c); and the 7x7 tiles
 * cover its 14x14 and 7x7 outputs exactly.
 *
 * Layout: the transformed input of a chunk of the batch, V[xi][tile][4c] (xi = 8u + v the
 * transformed position, the stacked channels contiguous: the tile transforms run 16 channels
 * per vector), the GEMMs' outputs M[xi][tile][oc], the transformed kernels U[xi][4c][oc].
 * Each chunk runs in three phases: transforms image by image (OpenMP over images), then one
 * GEMM per transformed position over the chunk's tiles (OpenMP over positions: the weight
 * gradient's K is the chunk's tiles, summed chunk after chunk into dU, so there are no
 * per-thread partial sums and the result depends on the thread count only through the chunk
 * size), then the transforms back, image by image. A chunk's V and M are a few MB
 * (CHUNK_VALUES): on the ResNet's 14x14 3x3/2 the whole batch's 24 MB ran 25% slower. The
 * workspace is 2 U (up to 8 MB each at 128 x 128 channels), V and M of a chunk.
 *
 *   forward          M[xi] = V[xi] U[xi],      y = A^T M A
 *   weight gradient  dM = A dy A^T,  dU[xi] = V[xi]^T dM[xi],  dg = G^T dU G
 *   input gradient   dV[xi] = dM[xi] U[xi]^T,  then B dV B^T summed over the overlapping
 *                    patches (neighbouring tiles share a row or column) and the phase planes
 *                    merged back into dx. */
#include <omp.h>
#include <string.h>
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"
#include "conv2d_bias_grad.h"
#include "conv2d_strided_winograd.h"
#include "conv2d_winograd_tiles.h"   /* wino_transpose16, VLOAD, VSTORE */

enum { XI = 64, L = WS2_LANES, TILE = 7, MAX_OC = 1024 /* conv2d_strided_winograd_fits */ };

/* V and M of one chunk of the batch: at least this many values, and twice U's, which every
 * chunk's GEMMs read again (measured on the ResNet example, one thread: 1 Mi values ran its
 * 14x14 3x3/2 25% faster than the whole batch, 24 Mi values, and 2 Mi values 20% slower than
 * 1 Mi; the 7x7 one, whose U is 2 Mi values, ran best on the whole batch, 3 Mi). */
#define CHUNK_VALUES (1024 * 1024)

typedef struct {
    int th, tw, tiles;     /* 7x7 output tiles per image: rows, per row, all */
    int rh, rw;            /* the phase grid of one image: 7 th + 1 rows of 7 tw + 1 */
    int kp, ocp;           /* stacked channels (4c) and output channels, rounded up to 16 */
    int imgs;              /* images per chunk of the batch */
    long t_chunk;          /* tiles per chunk */
} ws2_geom;

static long round16(long n) { return (n + 15) / 16 * 16; }

static long u_elems(const ws2_geom *g) { return (long)XI * g->kp * g->ocp; }

static ws2_geom geom_of(const rt_conv_shape *s) {
    ws2_geom g;
    g.th = (s->oh + TILE - 1) / TILE;
    g.tw = (s->ow + TILE - 1) / TILE;
    g.tiles = g.th * g.tw;
    g.rh = TILE * g.th + 1;
    g.rw = TILE * g.tw + 1;
    g.kp = (int)round16(4L * s->c);
    g.ocp = (int)round16(s->oc);
    long per_image = (long)XI * g.tiles * (g.kp + g.ocp);   /* of V and M */
    long chunk = 2 * u_elems(&g) > CHUNK_VALUES ? 2 * u_elems(&g) : CHUNK_VALUES;
    /* a multiple of the reduction slots (rt_slots.h), so that the images of a chunk share
     * out evenly over as many threads; not of the thread count, which would cut the batch
     * into other chunks, and dU's sum over them into another order, for another count */
    int slots = rt_slots(), imgs = (int)(chunk / per_image);
    g.imgs = imgs < slots ? slots : imgs / slots * slots;
    if (g.imgs > s->n) g.imgs = s->n;
    g.t_chunk = (long)g.imgs * g.tiles;
    return g;
}

/* Workspace: U, dU, V, M, then per thread one image's phase grid (channels last) and a
 * tile's values. */
static long v_elems(const ws2_geom *g) { return (long)XI * g->t_chunk * g->kp; }
static long m_elems(const ws2_geom *g) { return (long)XI * g->t_chunk * g->ocp; }
static long grid_elems(const ws2_geom *g) { return (long)g->rh * g->rw * g->kp; }
static long slice_elems(const ws2_geom *g) { return grid_elems(g) + XI * L; }

typedef struct { real_t *u, *du, *v, *m; } ws2_bufs;

static ws2_bufs bufs_of(real_t *work, const ws2_geom *g) {
    real_t *v = work + 2 * u_elems(g);
    ws2_bufs b = { work, work + u_elems(g), v, v + v_elems(g) };
    return b;
}
/* Thread t's phase grid and tile buffer (XI * L values right after the grid). */
static real_t *slice_of(real_t *work, int t, const ws2_geom *g) {
    return work + 2 * u_elems(g) + v_elems(g) + m_elems(g) + (long)t * slice_elems(g);
}

long RT_FN(conv2d_strided_winograd_workspace_elems)(const rt_conv_shape *s) {
    ws2_geom g = geom_of(s);
    return 2 * u_elems(&g) + v_elems(&g) + m_elems(&g) +
           (long)rt_slot_slices() * slice_elems(&g);
}

/* The 3x3 tap (kernel row or column) that 2x2 tap a of a phase reads: odd phase (p = 0)
 * a = 0, 1 -> 0, 2; even phase (p = 1) a = 0 -> 1, a = 1 -> none (-1). */
static int tap_of(int p, int a) { return p ? (a ? -1 : 1) : 2 * a; }

/* Where 2x2 tap (a, b) of stacked channel k = (2 py + px) c + ci's kernels lies in the 3x3
 * weights (oc, c, 3, 3) of output channel 0 (each further one 9c on), or -1: a zero tap. */
static long weight_of(int k, int a, int b, const rt_conv_shape *s) {
    int ph = k / s->c, ci = k % s->c, ki = tap_of(ph >> 1, a), kj = tap_of(ph & 1, b);
    return ki < 0 || kj < 0 ? -1 : ((long)ci * 3 + ki) * 3 + kj;
}

/* U[xi][k][oc] = G g G^T of stacked channel k = (2 py + px) c + ci's 2x2 kernels. */
static void transform_kernels(real_t *u, const real_t *w, const rt_conv_shape *s,
                              const ws2_geom *g) {
    long us = (long)g->kp * g->ocp;
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < g->kp; k++) {
        real_t gk[4 * MAX_OC];   /* gk[(2a + b) * ocp + oc] */
        memset(gk, 0, sizeof(real_t) * 4 * g->ocp);
        for (int a = 0; a < 2 && k < 4 * s->c; a++)
            for (int b = 0; b < 2; b++) {
                long at = weight_of(k, a, b, s);
                if (at < 0) continue;
                for (int oc = 0; oc < s->oc; oc++)
                    gk[(2 * a + b) * g->ocp + oc] = w[oc * 9L * s->c + at];
            }
        RT_FN(ws2_kernel)(u + (long)k * g->ocp, us, gk, g->ocp, g->ocp);
    }
}

/* dweight from dU[xi][k][oc]: G^T dU G, each 3x3 tap from the one 2x2 tap that holds it. */
static void kernel_grads(real_t *dweight, const real_t *du, const rt_conv_shape *s,
                         const ws2_geom *g) {
    long us = (long)g->kp * g->ocp;
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < 4 * s->c; k++) {
        real_t dg[4 * MAX_OC];
        RT_FN(ws2_kernel_grad)(dg, g->ocp, du + (long)k * g->ocp, us, g->ocp);
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                long at = weight_of(k, a, b, s);
                if (at < 0) continue;
                for (int oc = 0; oc < s->oc; oc++)
                    dweight[oc * 9L * s->c + at] = dg[(2 * a + b) * g->ocp + oc];
            }
    }
}

/* Where input value (iy, ix) of channel 0 lies in the phase grid: row r = (iy + 1) / 2 (odd
 * rows iy = 2r - 1, even ones iy = 2r), phase 2 py + px with py, px = 1 for even. */
static long grid_at(int iy, int ix, const rt_conv_shape *s, const ws2_geom *g) {
    int r = (iy + 1) >> 1, q = (ix + 1) >> 1, ph = 2 * !(iy & 1) + !(ix & 1);
    return ((long)r * g->rw + q) * g->kp + (long)ph * s->c;
}

/* Sixteen channels' runs of n <= 16 values of one row (16 rows src + l * hw) as 16 vectors
 * of one value from each channel: v[j] = the channels' column j, j < n (v[j] for j >= n holds
 * what lies past the runs, when `room`: the tensor goes on for 16 values past every run). */
static void load_transposed(rvec v[16], const real_t *src, long hw, int n, int room) {
    for (int l = 0; l < 16; l++) {
        if (n == 16 || room) {
            VLOAD(v[l], src + l * hw);
        } else {
            v[l] = (rvec){ 0 };
            memcpy(&v[l], src + l * hw, sizeof(real_t) * n);
        }
    }
    wino_transpose16(v);
}

/* The inverse: v[j] (16 channels' values at column j, j < n) into the 16 runs, written or
 * added. */
static void store_transposed(real_t *dst, long hw, rvec v[16], int n, int add) {
    wino_transpose16(v);
    for (int l = 0; l < 16; l++) {
        real_t *d = dst + l * hw;
        if (n == 16) {
            rvec old;
            if (add) { VLOAD(old, d); v[l] += old; }
            VSTORE(d, v[l]);
        } else {
            real_t run[16];
            memcpy(run, &v[l], sizeof run);
            for (int j = 0; j < n; j++) d[j] = add ? d[j] + run[j] : run[j];
        }
    }
}

/* One image's phase grid, channels last: grid[r][q][(2 py + px) c + ci] = x[ci][2r-1+py][2q-1+px]
 * (py, px = 1: the even rows, columns); the grid cells outside the image (and past 4c) are
 * left as they are: zeroed once per call by clear_grid. Channels in sixteens go through
 * 16x16 transposes (the element by element copy gathered with a stride: 9% of the call). */
static void split_image(real_t *grid, const real_t *x, int last_image, const rt_conv_shape *s,
                        const ws2_geom *g) {
    long hw = (long)s->h * s->w;
    int c = s->c;
    if (c % 16 == 0) {
        for (int c0 = 0; c0 < c; c0 += 16)
            for (int iy = 0; iy < s->h; iy++)
                for (int ix0 = 0; ix0 < s->w; ix0 += 16) {
                    int n = s->w - ix0 < 16 ? s->w - ix0 : 16;
                    /* 16 values from the last run's start lie in the batch's input (the
                     * next image follows all but the last) */
                    long run_end = (long)(c0 + 15) * hw + (long)iy * s->w + ix0 + 16;
                    int room = !last_image || run_end <= (long)c * hw;
                    rvec v[16];
                    load_transposed(v, x + (long)c0 * hw + (long)iy * s->w + ix0, hw, n, room);
                    for (int j = 0; j < n; j++)
                        VSTORE(grid + grid_at(iy, ix0 + j, s, g) + c0, v[j]);
                }
        return;
    }
    for (int r = 0; r < g->rh; r++)
        for (int q = 0; q < g->rw; q++) {
            real_t *dst = grid + ((long)r * g->rw + q) * g->kp;
            for (int ph = 0; ph < 4; ph++, dst += c) {
                int iy = 2 * r - 1 + (ph >> 1), ix = 2 * q - 1 + (ph & 1);
                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w) {
                    memset(dst, 0, sizeof(real_t) * c);
                    continue;
                }
                const real_t *src = x + (long)iy * s->w + ix;
                for (int ci = 0; ci < c; ci++) dst[ci] = src[ci * hw];
            }
            memset(dst, 0, sizeof(real_t) * (g->kp - 4 * c));
        }
}

/* The adjoint of split_image: dx (c,h,w) gets (or with din_add, adds) its phase values. */
static void merge_image(real_t *dx, const real_t *grid, const rt_conv_shape *s,
                        const ws2_geom *g) {
    long hw = (long)s->h * s->w;
    if (s->c % 16 == 0) {
        for (int c0 = 0; c0 < s->c; c0 += 16)
            for (int iy = 0; iy < s->h; iy++)
                for (int ix0 = 0; ix0 < s->w; ix0 += 16) {
                    int n = s->w - ix0 < 16 ? s->w - ix0 : 16;
                    rvec v[16];
                    for (int j = 0; j < n; j++) VLOAD(v[j], grid + grid_at(iy, ix0 + j, s, g) + c0);
                    for (int j = n; j < 16; j++) v[j] = (rvec){ 0 };
                    store_transposed(dx + (long)c0 * hw + (long)iy * s->w + ix0, hw, v, n,
                                     s->din_add);
                }
        return;
    }
    for (int ci = 0; ci < s->c; ci++)
        for (int iy = 0; iy < s->h; iy++) {
            real_t *row = dx + ((long)ci * s->h + iy) * s->w;
            int r = (iy + 1) >> 1, py = !(iy & 1);
            const real_t *src = grid + (long)r * g->rw * g->kp + (2 * py) * s->c + ci;
            for (int ix = 0; ix < s->w; ix++) {
                int q = (ix + 1) >> 1, px = !(ix & 1);
                real_t v = src[(long)q * g->kp + px * s->c];
                row[ix] = s->din_add ? row[ix] + v : v;
            }
        }
}

/* V's tiles of image b: V[xi][b * tiles + t][k], from its phase grid. */
static void transform_image(real_t *v, real_t *grid, const real_t *x, int b,
                            const rt_conv_shape *s, const ws2_geom *g) {
    long vs = g->t_chunk * g->kp;
    split_image(grid, x, b == s->n - 1, s, g);
    for (int ti = 0; ti < g->th; ti++)
        for (int tj = 0; tj < g->tw; tj++) {
            long t = (long)(b % g->imgs) * g->tiles + ti * g->tw + tj;
            const real_t *src = grid + ((long)TILE * ti * g->rw + TILE * tj) * g->kp;
            for (int k0 = 0; k0 < g->kp; k0 += L)
                RT_FN(ws2_input_tile)(v + t * g->kp + k0, vs, src + k0, (long)g->rw * g->kp, g->kp);
        }
}

void RT_FN(conv2d_strided_winograd_forward)(real_t *out, const real_t *in, const real_t *weight,
                                            const real_t *bias, real_t *work,
                                            const rt_conv_shape *s) {
    ws2_geom g = geom_of(s);
    ws2_bufs w = bufs_of(work, &g);
    long in_img = (long)s->c * s->h * s->w, ohw = (long)s->oh * s->ow;
    long us = (long)g.kp * g.ocp, vs = g.t_chunk * g.kp, ms = g.t_chunk * g.ocp;
    int relu = s->act == RT_ACT_RELU;
    transform_kernels(w.u, weight, s, &g);
    #pragma omp parallel
    {
        real_t *grid = slice_of(work, omp_get_thread_num(), &g), *tile = grid + grid_elems(&g);
        memset(grid, 0, sizeof(real_t) * grid_elems(&g));   /* split_image keeps the zeros */
        for (int b0 = 0; b0 < s->n; b0 += g.imgs) {
        int b1 = b0 + g.imgs < s->n ? b0 + g.imgs : s->n, tiles = (b1 - b0) * g.tiles;
        #pragma omp for schedule(static)
        for (int b = b0; b < b1; b++) transform_image(w.v, grid, in + b * in_img, b, s, &g);
        #pragma omp for schedule(static)
        for (int xi = 0; xi < XI; xi++)
            RT_FN(rt_gemm)(0, 0, tiles, g.ocp, g.kp, 1, w.v + xi * vs, g.kp, w.u + xi * us,
                           g.ocp, 0, w.m + xi * ms, g.ocp);
        #pragma omp for schedule(static)
        for (int b = b0; b < b1; b++)
            for (int ti = 0; ti < g.th; ti++)
                for (int tj = 0; tj < g.tw; tj++) {
                    long t = (long)(b % g.imgs) * g.tiles + ti * g.tw + tj;
                    int rows = s->oh - TILE * ti < TILE ? s->oh - TILE * ti : TILE;
                    int cols = s->ow - TILE * tj < TILE ? s->ow - TILE * tj : TILE;
                    for (int oc0 = 0; oc0 < s->oc; oc0 += L) {
                        RT_FN(ws2_output_tile)(tile, w.m + t * g.ocp + oc0, ms);
                        for (int l = 0; l < L && oc0 + l < s->oc; l++) {
                            real_t add = bias ? bias[oc0 + l] : 0;
                            real_t *o = out + ((long)b * s->oc + oc0 + l) * ohw +
                                        (long)TILE * ti * s->ow + TILE * tj;
                            for (int i = 0; i < rows; i++)
                                for (int j = 0; j < cols; j++) {
                                    real_t v = tile[(TILE * i + j) * L + l] + add;
                                    o[(long)i * s->ow + j] = relu && !(v > 0) ? 0 : v;
                                }
                        }
                    }
                }
        }
    }
}

/* dM's tiles of image b: A dy A^T of its output gradient (masked by a fused ReLU). */
static void transform_dout(real_t *m, real_t *tile, const real_t *dy, const real_t *y, int b,
                           const rt_conv_shape *s, const ws2_geom *g) {
    long ohw = (long)s->oh * s->ow, ms = g->t_chunk * g->ocp;
    for (int ti = 0; ti < g->th; ti++)
        for (int tj = 0; tj < g->tw; tj++) {
            long t = (long)(b % g->imgs) * g->tiles + ti * g->tw + tj;
            for (int oc0 = 0; oc0 < g->ocp; oc0 += L) {
                for (int i = 0; i < TILE; i++)
                    for (int j = 0; j < TILE; j++) {
                        int oy = TILE * ti + i, ox = TILE * tj + j, in = oy < s->oh && ox < s->ow;
                        for (int l = 0; l < L; l++) {
                            long at = ((long)b * s->oc + oc0 + l) * ohw + (long)oy * s->ow + ox;
                            int keep = in && oc0 + l < s->oc && (!y || y[at] > 0);
                            tile[(TILE * i + j) * L + l] = keep ? dy[at] : 0;
                        }
                    }
                RT_FN(ws2_output_grad_tile)(m + t * g->ocp + oc0, ms, tile);
            }
        }
}

/* Image b's input gradient from dV: the tiles' B dV B^T added up on its phase grid, merged. */
static void untransform_image(real_t *dx, real_t *grid, real_t *tile, const real_t *dv, int b,
                              const rt_conv_shape *s, const ws2_geom *g) {
    long vs = g->t_chunk * g->kp;
    memset(grid, 0, sizeof(real_t) * grid_elems(g));
    for (int ti = 0; ti < g->th; ti++)
        for (int tj = 0; tj < g->tw; tj++) {
            long t = (long)(b % g->imgs) * g->tiles + ti * g->tw + tj;
            real_t *dst = grid + ((long)TILE * ti * g->rw + TILE * tj) * g->kp;
            for (int k0 = 0; k0 < g->kp; k0 += L) {
                RT_FN(ws2_input_adjoint_tile)(tile, dv + t * g->kp + k0, vs);
                for (int u = 0; u < 8; u++)
                    for (int v = 0; v < 8; v++) {
                        real_t *d = dst + ((long)u * g->rw + v) * g->kp + k0;
                        const real_t *e = tile + (8 * u + v) * L;
                        for (int l = 0; l < L; l++) d[l] += e[l];
                    }
            }
        }
    merge_image(dx, grid, s, g);
}

int RT_FN(conv2d_strided_winograd_backward)(real_t *din, real_t *dweight, real_t *dbias,
                                            const real_t *dout, const real_t *act_out,
                                            const real_t *in, const real_t *weight, real_t *work,
                                            const rt_conv_shape *s, int timing, double *data_s) {
    ws2_geom g = geom_of(s);
    ws2_bufs w = bufs_of(work, &g);
    long in_img = (long)s->c * s->h * s->w, ohw = (long)s->oh * s->ow;
    long us = (long)g.kp * g.ocp, vs = g.t_chunk * g.kp, ms = g.t_chunk * g.ocp;
    const real_t *y = s->act != RT_ACT_NONE ? act_out : NULL;
    if (dbias) {
        #pragma omp parallel for schedule(static)
        for (int oc = 0; oc < s->oc; oc++) {
            real_t acc = 0;   /* one thread per channel: the sum order is fixed */
            for (int b = 0; b < s->n; b++) {
                long at = ((long)b * s->oc + oc) * ohw;
                acc += masked_plane_sum(dout + at, y ? y + at : NULL, ohw);
            }
            dbias[oc] = acc;
        }
    }
    if (din) transform_kernels(w.u, weight, s, &g);
    int threads = 1;
    #pragma omp parallel
    {
        real_t *grid = slice_of(work, omp_get_thread_num(), &g), *tile = grid + grid_elems(&g);
        memset(grid, 0, sizeof(real_t) * grid_elems(&g));   /* split_image keeps the zeros */
        #pragma omp single
        threads = omp_get_num_threads();
        double spent = 0;
        for (int b0 = 0; b0 < s->n; b0 += g.imgs) {
            int b1 = b0 + g.imgs < s->n ? b0 + g.imgs : s->n, tiles = (b1 - b0) * g.tiles;
            #pragma omp for schedule(static)
            for (int b = b0; b < b1; b++) {
                transform_dout(w.m, tile, dout, y, b, s, &g);
                transform_image(w.v, grid, in + b * in_img, b, s, &g);
            }
            /* dU[xi] (+)= V[xi]^T dM[xi] (the chunks in order: results do not depend on the
             * threads); then dV[xi] = dM[xi] U[xi]^T into V[xi]'s place */
            #pragma omp for schedule(static)
            for (int xi = 0; xi < XI; xi++) {
                real_t *v = w.v + xi * vs, *m = w.m + xi * ms;
                RT_FN(rt_gemm)(1, 0, g.kp, g.ocp, tiles, 1, v, g.kp, m, g.ocp, b0 ? 1 : 0,
                               w.du + xi * us, g.ocp);
                if (!din) continue;
                double td = timing ? omp_get_wtime() : 0;
                RT_FN(rt_gemm)(0, 1, tiles, g.kp, g.ocp, 1, m, g.ocp, w.u + xi * us, g.ocp, 0, v,
                               g.kp);
                if (timing) spent += omp_get_wtime() - td;
            }
            if (din) {
                double td = timing ? omp_get_wtime() : 0;
                #pragma omp for schedule(static)
                for (int b = b0; b < b1; b++)
                    untransform_image(din + b * in_img, grid, tile, w.v, b, s, &g);
                /* the next chunk's split_image counts on zeros outside the image again */
                memset(grid, 0, sizeof(real_t) * grid_elems(&g));
                if (timing) spent += omp_get_wtime() - td;
            }
        }
        if (timing) {
            #pragma omp atomic
            *data_s += spent;
        }
    }
    kernel_grads(dweight, w.du, s, &g);
    return threads;
}
