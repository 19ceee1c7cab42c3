/* 2-D max pooling with padding; the forward saves the winning input index per output so
 * the backward is a scatter, with no second search. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

/* The common 2x2 stride-2 unpadded window, without bounds tests and without branches
 * (selects, so random data costs no mispredictions); same tie rule as the general loop: the
 * first maximum in row-major window order wins, and a NaN in front stays. */
static void pool2x2_plane(real_t *y, int32_t *am, const real_t *x, const rt_pool_shape *s) {
    for (int oy = 0; oy < s->oh; oy++) {
        const real_t *r0 = x + (long)(2 * oy) * s->w, *r1 = r0 + s->w;
        real_t *yo = y + (long)oy * s->ow;
        int32_t *ao = am + (long)oy * s->ow, top = 2 * oy * s->w, bottom = top + s->w;
        for (int ox = 0; ox < s->ow; ox++) {
            real_t a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
            int right0 = b > a, right1 = d > c;
            real_t m0 = right0 ? b : a, m1 = right1 ? d : c;
            int lower = m1 > m0;
            yo[ox] = lower ? m1 : m0;
            ao[ox] = lower ? bottom + 2 * ox + right1 : top + 2 * ox + right0;
        }
    }
}

void RT_FN(maxpool2d_forward)(real_t *out /*N,C,OH,OW*/, int32_t *argmax /*N,C,OH,OW*/,
                              const real_t *in /*N,C,H,W*/, const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    /* (ceil mode can add a last window that runs past the input: the general loop clips it) */
    if (s->kh == 2 && s->kw == 2 && s->sh == 2 && s->sw == 2 && s->ph == 0 && s->pw == 0 &&
        2 * s->oh <= s->h && 2 * s->ow <= s->w) {
        #pragma omp parallel for schedule(static)
        for (long pl = 0; pl < planes; pl++)
            pool2x2_plane(out + pl * s->oh * s->ow, argmax + pl * s->oh * s->ow,
                          in + pl * s->h * s->w, s);
        return;
    }
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        const real_t *x = in + pl * s->h * s->w;
        real_t *y = out + pl * s->oh * s->ow;
        int32_t *am = argmax + pl * s->oh * s->ow;
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                int best = -1;
                real_t bv = 0;
                for (int ki = 0; ki < s->kh; ki++) {
                    int iy = oy * s->sh - s->ph + ki;
                    if (iy < 0 || iy >= s->h) continue;
                    for (int kj = 0; kj < s->kw; kj++) {
                        int ix = ox * s->sw - s->pw + kj;
                        if (ix < 0 || ix >= s->w) continue;
                        real_t v = x[iy * s->w + ix];
                        if (best < 0 || v > bv) { bv = v; best = iy * s->w + ix; }
                    }
                }
                /* torch requires pad <= kernel/2, so every window sees an input */
                y[oy * s->ow + ox] = bv;
                am[oy * s->ow + ox] = best;
            }
    }
}

void RT_FN(maxpool2d_backward)(real_t *din /*N,C,H,W*/, const real_t *dout,
                               const int32_t *argmax, const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        real_t *dx = din + pl * s->h * s->w;
        const real_t *dy = dout + pl * s->oh * s->ow;
        const int32_t *am = argmax + pl * s->oh * s->ow;
        memset(dx, 0, sizeof(real_t) * s->h * s->w);
        for (int o = 0; o < s->oh * s->ow; o++)
            if (am[o] >= 0) dx[am[o]] += dy[o];   /* windows overlap when stride < kernel */
    }
}
