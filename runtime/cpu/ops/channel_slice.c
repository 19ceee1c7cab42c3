/* Channels [start, start+count) of a tensor (ShuffleNetV2's split: one slice per half). */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(channel_slice_forward)(real_t *out, const real_t *in, int n, int c, long hw, int start, int count) {
    #pragma omp parallel for schedule(static) if ((long)n * count * hw > 16384)
    for (int i = 0; i < n; i++)
        memcpy(out + (long)i * count * hw, in + ((long)i * c + start) * hw, sizeof(real_t) * (size_t)(count * hw));
}

/* The other channels' gradient is zero: this op is their only reader here, and a second
 * reader (the other half of a split) adds its part through the plan's accumulate. */
void RT_FN(channel_slice_backward)(real_t *din, const real_t *dout, int n, int c, long hw, int start, int count) {
    #pragma omp parallel for schedule(static) if ((long)n * c * hw > 16384)
    for (int i = 0; i < n; i++) {
        real_t *d = din + (long)i * c * hw;
        memset(d, 0, sizeof(real_t) * (size_t)(start * hw));
        memcpy(d + start * hw, dout + (long)i * count * hw, sizeof(real_t) * (size_t)(count * hw));
        memset(d + (start + count) * hw, 0, sizeof(real_t) * (size_t)((c - start - count) * hw));
    }
}
