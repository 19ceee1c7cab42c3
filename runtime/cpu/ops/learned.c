/* A learned tensor (ViT's class token and position embedding): the same values for every
 * image of the batch, whose gradient is the sum of the images' gradients. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(learned_forward)(real_t *out, const real_t *w, int n, long count) {
    for (int i = 0; i < n; i++) memcpy(out + (long)i * count, w, sizeof(real_t) * (size_t)count);
}

void RT_FN(learned_backward)(real_t *dw, const real_t *dout, int n, long count) {
    memcpy(dw, dout, sizeof(real_t) * (size_t)count);
    for (int i = 1; i < n; i++)
        for (long k = 0; k < count; k++) dw[k] += dout[(long)i * count + k];
}
