/* Global average pooling: [N,C,H,W] -> [N,C], the mean of each plane. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(global_avgpool_forward)(real_t *out /*N,C*/, const real_t *in /*N,C,HW*/,
                                   int n, int c, int hw) {
    long planes = (long)n * c;
    #pragma omp parallel for schedule(static) if (planes * hw > 65536)
    for (long pl = 0; pl < planes; pl++) {
        const real_t *x = in + pl * hw;
        real_t acc = 0;
        for (int i = 0; i < hw; i++) acc += x[i];
        out[pl] = acc / hw;
    }
}

void RT_FN(global_avgpool_backward)(real_t *din /*N,C,HW*/, const real_t *dout /*N,C*/,
                                    int n, int c, int hw) {
    long planes = (long)n * c;
    #pragma omp parallel for schedule(static) if (planes * hw > 65536)
    for (long pl = 0; pl < planes; pl++) {
        real_t g = dout[pl] / hw;
        for (int i = 0; i < hw; i++) din[pl * hw + i] = g;
    }
}
