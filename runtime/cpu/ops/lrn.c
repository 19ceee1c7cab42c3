/* Local response normalization across channels (AlexNet; torch/Caffe semantics, alpha is
 * divided by size): out = x * (k + alpha/size * sum_window x^2)^-beta. */
#include "rt_ops.h"
#include "rt_real.h"

/* Channel window of c: [c - size/2, c + (size-1)/2], clipped (torch pads with zeros). */
void RT_FN(lrn_forward)(real_t *out /*N,C,HW*/, real_t *save_scale /*N,C,HW*/,
                        const real_t *in /*N,C,HW*/, int n, int c, int hw, int size,
                        real_t alpha, real_t beta, real_t k) {
    real_t a = alpha / size;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            int lo = ch - size / 2, hi = ch + (size - 1) / 2;
            if (lo < 0) lo = 0;
            if (hi > c - 1) hi = c - 1;
            const real_t *x = in + (long)b * c * hw;
            real_t *sc = save_scale + ((long)b * c + ch) * hw;
            real_t *y = out + ((long)b * c + ch) * hw;
            for (int p = 0; p < hw; p++) {
                real_t sq = 0;
                for (int j = lo; j <= hi; j++) sq += x[(long)j * hw + p] * x[(long)j * hw + p];
                sc[p] = k + a * sq;
                y[p] = x[(long)ch * hw + p] * rt_pow(sc[p], -beta);
            }
        }
}

/* din_i = dout_i * scale_i^-beta
 *         - 2*alpha*beta/size * x_i * sum over j whose window holds i of dout_j*out_j/scale_j;
 * the windows holding channel i are those of j in [i - (size-1)/2, i + size/2]. */
void RT_FN(lrn_backward)(real_t *din, const real_t *dout, const real_t *in, const real_t *out,
                         const real_t *save_scale, int n, int c, int hw, int size,
                         real_t alpha, real_t beta) {
    real_t coef = 2 * alpha * beta / size;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < n; b++)
        for (int ch = 0; ch < c; ch++) {
            int lo = ch - (size - 1) / 2, hi = ch + size / 2;
            if (lo < 0) lo = 0;
            if (hi > c - 1) hi = c - 1;
            long base = (long)b * c * hw;
            for (int p = 0; p < hw; p++) {
                real_t acc = 0;
                for (int j = lo; j <= hi; j++) {
                    long q = base + (long)j * hw + p;
                    acc += dout[q] * out[q] / save_scale[q];
                }
                long q = base + (long)ch * hw + p;
                din[q] = dout[q] * rt_pow(save_scale[q], -beta) - coef * in[q] * acc;
            }
        }
}
