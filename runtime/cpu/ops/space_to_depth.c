/* Space-to-depth (Swin's patch merging): each b x b patch of positions becomes b*b groups of
 * channels, in torchvision's PatchMerging order (x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2],
 * x[1::2, 1::2] concatenated): output channel (dh + b*dw)*C + c is input channel c at offset
 * (dh, dw). A permutation: the backward is its inverse. */
#include "rt_ops.h"
#include "rt_real.h"

/* backward = 0: out[n, (dh + b*dw)*c + ch, i, j] = in[n, ch, b*i + dh, b*j + dw]; 1: the inverse. */
static void permute(real_t *dst, const real_t *src, int n, int c, int h, int w, int b, int backward) {
    int oh = h / b, ow = w / b;
    #pragma omp parallel for schedule(static) if ((long)n * c * h * w > 65536)
    for (int i = 0; i < n; i++)
        for (int k = 0; k < b * b; k++) {
            int dh = k % b, dw = k / b;
            for (int ch = 0; ch < c; ch++)
                for (int y = 0; y < oh; y++)
                    for (int x = 0; x < ow; x++) {
                        long o = (((long)i * b * b * c + (long)k * c + ch) * oh + y) * ow + x;
                        long s = (((long)i * c + ch) * h + b * y + dh) * w + b * x + dw;
                        if (backward) dst[s] = src[o];
                        else dst[o] = src[s];
                    }
        }
}

void RT_FN(space_to_depth_forward)(real_t *out, const real_t *in, int n, int c, int h, int w, int block) {
    permute(out, in, n, c, h, w, block, 0);
}

void RT_FN(space_to_depth_backward)(real_t *din, const real_t *dout, int n, int c, int h, int w, int block) {
    permute(din, dout, n, c, h, w, block, 1);
}
