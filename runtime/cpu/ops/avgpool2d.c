/* 2-D average pooling with count_include_pad = true (torch default): every window divides
 * by its area inside the padded input, padded zeros included: kh*kw in floor mode; a ceil-mode
 * window that runs past the padding divides by less (Caffe's and torch's rule). */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

/* 1 / the window's area clipped to the padded input [-p, size + p). */
static real_t window_inv(const rt_pool_shape *s, int oy, int ox) {
    int y0 = oy * s->sh - s->ph, x0 = ox * s->sw - s->pw;
    int y1 = y0 + s->kh < s->h + s->ph ? y0 + s->kh : s->h + s->ph;
    int x1 = x0 + s->kw < s->w + s->pw ? x0 + s->kw : s->w + s->pw;
    return (real_t)1 / ((y1 - y0) * (x1 - x0));
}

void RT_FN(avgpool2d_forward)(real_t *out /*N,C,OH,OW*/, const real_t *in /*N,C,H,W*/,
                              const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        const real_t *x = in + pl * s->h * s->w;
        real_t *y = out + pl * s->oh * s->ow;
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                real_t acc = 0;
                for (int ki = 0; ki < s->kh; ki++) {
                    int iy = oy * s->sh - s->ph + ki;
                    if (iy < 0 || iy >= s->h) continue;
                    for (int kj = 0; kj < s->kw; kj++) {
                        int ix = ox * s->sw - s->pw + kj;
                        if (ix >= 0 && ix < s->w) acc += x[iy * s->w + ix];
                    }
                }
                y[oy * s->ow + ox] = acc * window_inv(s, oy, ox);
            }
    }
}

void RT_FN(avgpool2d_backward)(real_t *din /*N,C,H,W*/, const real_t *dout,
                               const rt_pool_shape *s) {
    long planes = (long)s->n * s->c;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        real_t *dx = din + pl * s->h * s->w;
        const real_t *dy = dout + pl * s->oh * s->ow;
        memset(dx, 0, sizeof(real_t) * s->h * s->w);
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                real_t g = dy[oy * s->ow + ox] * window_inv(s, oy, ox);
                for (int ki = 0; ki < s->kh; ki++) {
                    int iy = oy * s->sh - s->ph + ki;
                    if (iy < 0 || iy >= s->h) continue;
                    for (int kj = 0; kj < s->kw; kj++) {
                        int ix = ox * s->sw - s->pw + kj;
                        if (ix >= 0 && ix < s->w) dx[iy * s->w + ix] += g;
                    }
                }
            }
    }
}
