/* ShuffleNet's channel shuffle (torch: view(N, g, C/g, H, W).transpose(1, 2)): a permutation
 * of whole channel planes, and its inverse for the gradient. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

/* Plane j of dst is plane from(j) of src, from(k*groups + i) = i*(c/groups) + k. */
static void permute(real_t *dst, const real_t *src, int n, int c, long hw, int groups, int inverse) {
    int per = c / groups;
    long planes = (long)n * c;
    #pragma omp parallel for schedule(static) if (planes * hw > 16384)
    for (long q = 0; q < planes; q++) {
        long img = q / c;
        int j = (int)(q % c), i = j % groups, k = j / groups, from = i * per + k;
        if (inverse) memcpy(dst + (img * c + from) * hw, src + q * hw, sizeof(real_t) * (size_t)hw);
        else memcpy(dst + q * hw, src + (img * c + from) * hw, sizeof(real_t) * (size_t)hw);
    }
}

void RT_FN(channel_shuffle_forward)(real_t *out, const real_t *in, int n, int c, long hw, int groups) {
    permute(out, in, n, c, hw, groups, 0);
}

void RT_FN(channel_shuffle_backward)(real_t *din, const real_t *dout, int n, int c, long hw, int groups) {
    permute(din, dout, n, c, hw, groups, 1);
}
