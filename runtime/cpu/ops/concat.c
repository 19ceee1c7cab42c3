/* Concatenation of NCHW tensors along channels, and its backward (a split of dout). */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(concat_forward)(real_t *out /*N,sum C,HW*/, const real_t *const *ins,
                           const int *channels, int k, int n, int hw) {
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    for (int b = 0; b < n; b++) {
        real_t *dst = out + b * total * hw;
        for (int i = 0; i < k; i++) {
            long len = (long)channels[i] * hw;   /* one sample of input i is contiguous */
            memcpy(dst, ins[i] + b * len, sizeof(real_t) * len);
            dst += len;
        }
    }
}

void RT_FN(concat_backward)(real_t *const *dins, const real_t *dout, const int *channels,
                            int k, int n, int hw) {
    long total = 0;
    for (int i = 0; i < k; i++) total += channels[i];
    for (int b = 0; b < n; b++) {
        const real_t *src = dout + b * total * hw;
        for (int i = 0; i < k; i++) {
            long len = (long)channels[i] * hw;
            if (dins[i]) memcpy(dins[i] + b * len, src, sizeof(real_t) * len);
            src += len;
        }
    }
}
