/* 2x2 stride-2 max pooling of the runtime as the trainers link it (-march=native: AVX-512
 * masked loads and stores for a row's last chunk) against a direct loop: every output value
 * bit for bit, every argmax exactly (the first maximum in row-major window order wins, a NaN
 * in front stays), and the backward's input gradient. The unit tests check the portable build. */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

static void test_case(int n, int c, int h, int w) {
    rt_pool_shape s = { .n = n, .c = c, .h = h, .w = w, .kh = 2, .kw = 2, .sh = 2, .sw = 2,
                        .oh = h / 2, .ow = w / 2 };
    long in_n = (long)n * c * h * w, planes = (long)n * c, out_n = planes * s.oh * s.ow;
    double *x = gc_rand(in_n, -1, 1), *dy = gc_rand(out_n, -1, 1);
    float *fx = gc_to_f32(x, in_n), *fdy = gc_to_f32(dy, out_n);
    for (long i = 0; i + 7 < in_n; i += 7) fx[i + 1] = fx[i];   /* ties: the first one wins */
    fx[in_n / 2] = NAN;
    float *y = malloc(sizeof(float) * out_n), *dx = malloc(sizeof(float) * in_n);
    int32_t *am = malloc(sizeof(int32_t) * out_n);
    maxpool2d_forward(y, am, fx, &s);
    maxpool2d_backward(dx, fdy, am, &s);

    long bad = 0, first = -1;
    double *want_dx = gc_alloc(in_n);
    for (long pl = 0; pl < planes; pl++)
        for (int oy = 0; oy < s.oh; oy++)
            for (int ox = 0; ox < s.ow; ox++) {
                const float *p = fx + pl * h * w;
                int best = 2 * oy * w + 2 * ox;
                for (int k = 1; k < 4; k++) {
                    int at = (2 * oy + k / 2) * w + 2 * ox + k % 2;
                    if (p[at] > p[best]) best = at;
                }
                long o = (pl * s.oh + oy) * s.ow + ox;
                if (memcmp(&y[o], &p[best], sizeof(float)) != 0 || am[o] != best) {
                    if (first < 0) first = o;
                    bad++;
                }
                want_dx[pl * h * w + best] += fdy[o];
            }
    if (bad) {
        fprintf(stderr, "FAIL maxpool %dx%dx%dx%d forward: %ld outputs differ, the first at %ld: "
                "%g (argmax %d)\n", n, c, h, w, bad, first, y[first], am[first]);
        test_failures++;
    }
    char what[96];
    snprintf(what, sizeof what, "maxpool %dx%dx%dx%d dinput", n, c, h, w);
    gc_compare_f32(what, dx, want_dx, in_n);
    free(x); free(dy); free(fx); free(fdy); free(y); free(dx); free(am); free(want_dx);
}

int main(void) {
    gc_seed(21);
    test_case(4, 8, 28, 28);   /* LeNet's first pooling: a chunk of 14 per row */
    test_case(4, 8, 14, 14);   /* LeNet's second: 7 per row */
    test_case(2, 3, 15, 13);   /* odd sizes: a row and a column in no window */
    test_case(1, 2, 6, 70);    /* 35 per row: two whole chunks and 3 */
    test_case(1, 3, 4, 32);    /* one whole chunk per row */
    test_case(3, 1, 3, 3);     /* one window per plane */
    return test_finish("maxpool_native");
}
