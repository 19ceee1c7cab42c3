/* Local response normalization within each channel (Caffe's region: WITHIN_CHANNEL):
 * out = x * (k + alpha/size^2 * sum over the size x size window of x^2)^-beta, the window
 * centred on the pixel and zero-padded (Caffe: an average pool of x^2 with pad (size-1)/2 that
 * counts the padding, then a power layer with shift 1, so k = 1 there). size is odd. */
#include "rt_ops.h"
#include "rt_real.h"

/* Sum of v over the window of (y, x) in one plane: rows and columns [c - r, c + r], clipped. */
static real_t window_sum(const real_t *v, int h, int w, int r, int y, int x) {
    int y0 = y - r < 0 ? 0 : y - r, y1 = y + r > h - 1 ? h - 1 : y + r;
    int x0 = x - r < 0 ? 0 : x - r, x1 = x + r > w - 1 ? w - 1 : x + r;
    real_t acc = 0;
    for (int i = y0; i <= y1; i++)
        for (int j = x0; j <= x1; j++) acc += v[(long)i * w + j];
    return acc;
}

void RT_FN(lrn_within_forward)(real_t *out /*N,C,H,W*/, real_t *save_scale /*N,C,H,W*/,
                               const real_t *in /*N,C,H,W*/, int n, int c, int h, int w, int size,
                               real_t alpha, real_t beta, real_t k) {
    real_t a = alpha / ((real_t)size * size);
    int r = (size - 1) / 2;
    long planes = (long)n * c, hw = (long)h * w;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        const real_t *x = in + pl * hw;
        real_t *sc = save_scale + pl * hw, *y = out + pl * hw;
        /* the squares in save_scale, their window sums in out, then both become final */
        for (long p = 0; p < hw; p++) sc[p] = x[p] * x[p];
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) y[(long)i * w + j] = window_sum(sc, h, w, r, i, j);
        for (long p = 0; p < hw; p++) {
            sc[p] = k + a * y[p];
            y[p] = x[p] * rt_pow(sc[p], -beta);
        }
    }
}

/* din_i = dout_i * scale_i^-beta - 2*alpha*beta/size^2 * x_i * sum over the window of i of
 * dout_j*out_j/scale_j (the window is symmetric, so the pixels whose window holds i are
 * those of i's window). The ratios are recomputed per window: no scratch plane. */
void RT_FN(lrn_within_backward)(real_t *din, const real_t *dout, const real_t *in, const real_t *out,
                                const real_t *save_scale, int n, int c, int h, int w, int size,
                                real_t alpha, real_t beta) {
    real_t coef = 2 * alpha * beta / ((real_t)size * size);
    int r = (size - 1) / 2;
    long planes = (long)n * c, hw = (long)h * w;
    #pragma omp parallel for schedule(static)
    for (long pl = 0; pl < planes; pl++) {
        const real_t *dy = dout + pl * hw, *y = out + pl * hw, *sc = save_scale + pl * hw, *x = in + pl * hw;
        real_t *dx = din + pl * hw;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                int y0 = i - r < 0 ? 0 : i - r, y1 = i + r > h - 1 ? h - 1 : i + r;
                int x0 = j - r < 0 ? 0 : j - r, x1 = j + r > w - 1 ? w - 1 : j + r;
                real_t acc = 0;
                for (int a = y0; a <= y1; a++)
                    for (int b = x0; b <= x1; b++) {
                        long q = (long)a * w + b;
                        acc += dy[q] * y[q] / sc[q];
                    }
                long p = (long)i * w + j;
                dx[p] = dy[p] * rt_pow(sc[p], -beta) - coef * x[p] * acc;
            }
    }
}
