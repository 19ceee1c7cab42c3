/* The transforms of Winograd F(7x7, 2x2) (8x8 tiles; points 0, +-1, +-2, +-1/2, infinity) for
 * the stride-2 3x3 convolution of conv2d_strided_winograd.c, 16 channels at once (one per
 * lane, the channels contiguous in memory): input tiles B^T d B and their adjoint B dV B^T,
 * output tiles A^T m A and their adjoint A dy A^T, kernels G g G^T and their adjoint
 * G^T dU G. The 1-D transforms below are written out from the matrices (derived with sympy
 * by solving the Toom-Cook identity for B^T given A^T and G on these points; B^T is the one
 * of F(6x6,3x3)), with the zero products left out and the symmetric pairs shared:
 *   A^T = [ 1  1  1  1   1   1     1     0 ]     G = [ -1      0     ]
 *         [ 0  1 -1  2  -2   1/2  -1/2   0 ]         [ -2/9   -2/9   ]
 *         [ 0  1  1  4   4   1/4   1/4   0 ]         [ -2/9    2/9   ]
 *         [ .. rows i: f^i of the points ..]         [  1/90   1/45  ]
 *         [ 0  1  1  64  64  1/64  1/64  1 ]         [  1/90  -1/45  ]
 *                                                    [ 32/45   16/45 ]
 *                                                    [ 32/45  -16/45 ]
 *                                                    [  0      1     ]
 * A^T and B^T are dyadic (exact in binary); G's fractions sit on the weights, transformed
 * once per call. */
#include "rt_real.h"
#include <string.h>
#include "conv2d_strided_winograd.h"
#include "vec16.h"

enum { F7_LANES = WS2_LANES };
_Static_assert(F7_LANES == sizeof(rvec) / sizeof(real_t), "one channel per lane of rvec");

/* Unaligned loads and stores of 16 lanes (memcpy: GCC emits one vector move). */
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(rvec))
#define VSTORE(p, v) do { rvec v_ = (v); memcpy((p), &v_, sizeof v_); } while (0)

#define F7_INLINE static inline __attribute__((always_inline))

/* in[k] = the 16-lane vector at i + k * is, k < n. */
F7_INLINE void f7_load(rvec *in, const real_t *i, long is, int n) {
    for (int k = 0; k < n; k++) VLOAD(in[k], i + k * is);
}

/* The outputs j and j + 1 of a pair of points +-f: even part e plus and minus odd part d. */
F7_INLINE void f7_store_pair(real_t *o, long os, int j, rvec e, rvec d) {
    VSTORE(o + j * os, e + d);
    VSTORE(o + (j + 1) * os, e - d);
}

/* Each 1-D transform takes 16-lane vectors: input vector k at i + k * is, output j at
 * o + j * os (so one function serves rows and columns of a tile). */
/* B^T d: 8 input values to 8 transformed ones. Rows 1-2, 3-4 and 5-6 of B^T differ only in
 * the signs of the odd taps: each pair is one even part plus or minus one odd part. */
F7_INLINE void f7_bt(real_t *o, long os, const real_t *i, long is) {
    rvec d[8];
    f7_load(d, i, is, 8);
    rvec e1 = d[2] + d[6] - d[4] * (real_t)4.25, o1 = d[1] + d[5] - d[3] * (real_t)4.25;
    rvec e3 = d[6] + d[2] * (real_t)0.25 - d[4] * (real_t)1.25;
    rvec o3 = d[1] * (real_t)0.5 - d[3] * (real_t)2.5 + d[5] * (real_t)2.0;
    rvec e5 = d[6] + (d[2] - d[4] * (real_t)1.25) * (real_t)4.0;
    rvec o5 = d[1] * (real_t)2.0 - d[3] * (real_t)2.5 + d[5] * (real_t)0.5;
    VSTORE(o, d[6] - d[0] + (d[2] - d[4]) * (real_t)5.25);
    f7_store_pair(o, os, 1, e1, o1);
    f7_store_pair(o, os, 3, e3, o3);
    f7_store_pair(o, os, 5, e5, o5);
    VSTORE(o + 7 * os, d[7] - d[1] + (d[3] - d[5]) * (real_t)5.25);
}

/* B v: the adjoint of f7_bt (the columns of B^T), on the sums and differences of the pairs. */
F7_INLINE void f7_b(real_t *o, long os, const real_t *i, long is) {
    rvec v[8];
    f7_load(v, i, is, 8);
    rvec p12 = v[1] + v[2], m12 = v[1] - v[2], p34 = v[3] + v[4], m34 = v[3] - v[4];
    rvec p56 = v[5] + v[6], m56 = v[5] - v[6];
    VSTORE(o, -v[0]);
    VSTORE(o + 1 * os, m12 + m34 * (real_t)0.5 + m56 * (real_t)2.0 - v[7]);
    VSTORE(o + 2 * os, v[0] * (real_t)5.25 + p12 + p34 * (real_t)0.25 + p56 * (real_t)4.0);
    VSTORE(o + 3 * os, v[7] * (real_t)5.25 - m12 * (real_t)4.25 - (m34 + m56) * (real_t)2.5);
    VSTORE(o + 4 * os,
           -(v[0] * (real_t)5.25 + p12 * (real_t)4.25 + p34 * (real_t)1.25 + p56 * (real_t)5.0));
    VSTORE(o + 5 * os, m12 + m34 * (real_t)2.0 + m56 * (real_t)0.5 - v[7] * (real_t)5.25);
    VSTORE(o + 6 * os, v[0] + p12 + p34 + p56);
    VSTORE(o + 7 * os, v[7]);
}

/* A^T m: 8 transformed values to the 7 outputs; row i weighs the pairs of points +-f by f^i,
 * so even rows take the pairs' sums and odd rows their differences. */
F7_INLINE void f7_at(real_t *o, long os, const real_t *i, long is) {
    rvec m[8];
    f7_load(m, i, is, 8);
    rvec p12 = m[1] + m[2], m12 = m[1] - m[2], p34 = m[3] + m[4], m34 = m[3] - m[4];
    rvec p56 = m[5] + m[6], m56 = m[5] - m[6];
    VSTORE(o, m[0] + p12 + p34 + p56);
    VSTORE(o + 1 * os, m12 + m34 * (real_t)2.0 + m56 * (real_t)0.5);
    VSTORE(o + 2 * os, p12 + p34 * (real_t)4.0 + p56 * (real_t)0.25);
    VSTORE(o + 3 * os, m12 + m34 * (real_t)8.0 + m56 * (real_t)0.125);
    VSTORE(o + 4 * os, p12 + p34 * (real_t)16.0 + p56 * (real_t)0.0625);
    VSTORE(o + 5 * os, m12 + m34 * (real_t)32.0 + m56 * (real_t)0.03125);
    VSTORE(o + 6 * os, p12 + p34 * (real_t)64.0 + p56 * (real_t)0.015625 + m[7]);
}

/* A y: the adjoint of f7_at, 7 output gradients to 8 transformed values: the point pairs +-f
 * get the even powers' sum plus or minus the odd powers' sum. */
F7_INLINE void f7_a(real_t *o, long os, const real_t *i, long is) {
    rvec y[7];
    f7_load(y, i, is, 7);
    rvec e1 = y[0] + y[2] + y[4] + y[6], o1 = y[1] + y[3] + y[5];
    rvec e2 = y[0] + y[2] * (real_t)4.0 + y[4] * (real_t)16.0 + y[6] * (real_t)64.0;
    rvec o2 = y[1] * (real_t)2.0 + y[3] * (real_t)8.0 + y[5] * (real_t)32.0;
    rvec eh = y[0] + y[2] * (real_t)0.25 + y[4] * (real_t)0.0625 + y[6] * (real_t)0.015625;
    rvec oh = y[1] * (real_t)0.5 + y[3] * (real_t)0.125 + y[5] * (real_t)0.03125;
    VSTORE(o, y[0]);
    f7_store_pair(o, os, 1, e1, o1);
    f7_store_pair(o, os, 3, e2, o2);
    f7_store_pair(o, os, 5, eh, oh);
    VSTORE(o + 7 * os, y[6]);
}

static const double F7_G[8][2] = {
    { -1, 0 },
    { -0.22222222222222221, -0.22222222222222221 },
    { -0.22222222222222221, 0.22222222222222221 },
    { 0.011111111111111112, 0.022222222222222223 },
    { 0.011111111111111112, -0.022222222222222223 },
    { 0.71111111111111114, 0.35555555555555557 },
    { 0.71111111111111114, -0.35555555555555557 },
    { 0, 1 },
};

/* The 2-D transforms of one tile, for 16 lanes. Scratch is on the stack (8 x 8 x 16 values). */

void RT_FN(ws2_input_tile)(real_t *v, long vs, const real_t *src, long rs, long cs) {
    real_t t[64 * F7_LANES];   /* t[j][c] = (B^T d)[j][c]: the columns first */
    for (int c = 0; c < 8; c++) f7_bt(t + c * F7_LANES, 8 * F7_LANES, src + c * cs, rs);
    for (int j = 0; j < 8; j++) f7_bt(v + j * 8 * vs, vs, t + j * 8 * F7_LANES, F7_LANES);
}

void RT_FN(ws2_input_adjoint_tile)(real_t *dd, const real_t *dv, long vs) {
    real_t t[64 * F7_LANES];   /* t[u][k] = (B dV)[u][k] */
    for (int k = 0; k < 8; k++) f7_b(t + k * F7_LANES, 8 * F7_LANES, dv + k * vs, 8 * vs);
    for (int u = 0; u < 8; u++)
        f7_b(dd + u * 8 * F7_LANES, F7_LANES, t + u * 8 * F7_LANES, F7_LANES);
}

void RT_FN(ws2_output_tile)(real_t *out, const real_t *m, long ms) {
    real_t t[56 * F7_LANES];   /* t[i][c] = (A^T m)[i][c] */
    for (int c = 0; c < 8; c++) f7_at(t + c * F7_LANES, 8 * F7_LANES, m + c * ms, 8 * ms);
    for (int i = 0; i < 7; i++)
        f7_at(out + i * 7 * F7_LANES, F7_LANES, t + i * 8 * F7_LANES, F7_LANES);
}

void RT_FN(ws2_output_grad_tile)(real_t *m, long ms, const real_t *dy) {
    real_t t[56 * F7_LANES];   /* t[u][j] = (A dy)[u][j] */
    for (int j = 0; j < 7; j++)
        f7_a(t + j * F7_LANES, 7 * F7_LANES, dy + j * F7_LANES, 7 * F7_LANES);
    for (int u = 0; u < 8; u++) f7_a(m + u * 8 * ms, ms, t + u * 7 * F7_LANES, F7_LANES);
}

/* The kernels, 16 output channels per vector (n a multiple of 16). */
void RT_FN(ws2_kernel)(real_t *u, long us, const real_t *g, long gs, int n) {
    for (int l = 0; l < n; l += F7_LANES) {
        rvec k[2][2], t[8][2];   /* t = G k */
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) VLOAD(k[a][b], g + (2 * a + b) * gs + l);
        for (int a = 0; a < 8; a++)
            for (int b = 0; b < 2; b++)
                t[a][b] = k[0][b] * (real_t)F7_G[a][0] + k[1][b] * (real_t)F7_G[a][1];
        for (int a = 0; a < 8; a++)
            for (int c = 0; c < 8; c++)
                VSTORE(u + (a * 8 + c) * us + l,
                       t[a][0] * (real_t)F7_G[c][0] + t[a][1] * (real_t)F7_G[c][1]);
    }
}

void RT_FN(ws2_kernel_grad)(real_t *dg, long gs, const real_t *du, long us, int n) {
    for (int l = 0; l < n; l += F7_LANES) {
        rvec t[8][2];   /* t = dU G */
        for (int a = 0; a < 8; a++) {
            t[a][0] = t[a][1] = (rvec){ 0 };
            for (int c = 0; c < 8; c++) {
                rvec d;
                VLOAD(d, du + (a * 8 + c) * us + l);
                t[a][0] += d * (real_t)F7_G[c][0];
                t[a][1] += d * (real_t)F7_G[c][1];
            }
        }
        for (int i = 0; i < 2; i++)
            for (int b = 0; b < 2; b++) {
                rvec acc = { 0 };
                for (int a = 0; a < 8; a++) acc += t[a][b] * (real_t)F7_G[a][i];
                VSTORE(dg + (2 * i + b) * gs + l, acc);
            }
    }
}
