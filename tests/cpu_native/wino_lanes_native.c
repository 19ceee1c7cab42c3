/* The Winograd tile transforms that run 16 channels per vector (input_transposed,
 * output_transposed, adjoint_transposed of conv2d_winograd_6x6.c) against the ones that run
 * 16 tiles per vector (input, output, input_adjoint), built as the trainers link them (-march=native): the same values bit for
 * bit, transposed, for F(4x4,3x3) and F(2x2,5x5) on planes of one to several tiles per row,
 * partial edge tiles, one and several images, bias and a fused ReLU. */
#include <string.h>
#include "gradcheck.h"
#include "testlib.h"
#include "../../runtime/cpu/ops/conv2d_winograd_tiles.h"

static float *rand_f32(long n) {
    double *d = gc_rand(n, -1, 1);
    float *f = gc_to_f32(d, n);
    free(d);
    return f;
}

/* The first differing value of two arrays of n, or -1. */
static long first_difference(const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) return i;
    return -1;
}

static void check_same(const char *what, const wino_tiles *t, int h, int w, int imgs,
                       const float *got, const float *want, long n) {
    long at = first_difference(got, want, n);
    if (at < 0) return;
    fprintf(stderr, "F(%d,%d) %dx%d, %d images, %s: value %ld is %.9g, %.9g by 16 tiles per "
            "vector (first values %.9g %.9g / %.9g %.9g)\n", t->m, t->r, h, w, imgs, what, at,
            got[at], want[at], got[0], got[1], want[0], want[1]);
    test_failures++;
}

static void test_shape(const wino_tiles *t, int h, int w, int imgs, rt_act act) {
    enum { CH = 16 };
    int th = (h + t->m - 1) / t->m, tw = (w + t->m - 1) / t->m;
    long hw = (long)h * w, tiles = (long)imgs * th * tw;
    long ld = (tiles + 15) / 16 * 16 + 16;   /* as the driver's: room past the last tile */
    long xs = CH * ld + 16, vn = (long)t->xi * xs;
    float *planes = rand_f32(imgs * CH * hw), *bias = rand_f32(CH);
    float *scratch = malloc(sizeof(float) * (t->scratch_elems(imgs, th, tw) + 16));
    float *v = calloc(vn, sizeof(float)), *vt = calloc(vn, sizeof(float));
    float *want = calloc(tiles * CH, sizeof(float)), *got = calloc(tiles * CH, sizeof(float));
    /* input: v[xi][channel][tile] one channel at a time, vt[xi][tile][channel] 16 at once */
    for (int c = 0; c < CH; c++)
        t->input(v + c * ld, xs, planes + c * hw, NULL, CH * hw, imgs, h, w, th, tw, scratch);
    t->input_transposed(vt, xs, CH, planes, hw, CH * hw, imgs, h, w, th, tw);
    for (int xi = 0; xi < t->xi; xi++) {
        for (long tile = 0; tile < tiles; tile++)
            for (int c = 0; c < CH; c++) {
                want[tile * CH + c] = v[xi * xs + c * ld + tile];
                got[tile * CH + c] = vt[xi * xs + tile * CH + c];
            }
        check_same("input transform", t, h, w, imgs, got, want, tiles * CH);
    }
    /* output: from m[xi][channel][tile] and its transpose mt[xi][tile][channel] */
    float *m = rand_f32(vn), *mt = calloc(vn, sizeof(float));
    for (int xi = 0; xi < t->xi; xi++)
        for (long tile = 0; tile < tiles; tile++)
            for (int c = 0; c < CH; c++) mt[xi * xs + tile * CH + c] = m[xi * xs + c * ld + tile];
    float *out_want = malloc(sizeof(float) * imgs * CH * hw);
    float *out_got = malloc(sizeof(float) * imgs * CH * hw);
    for (int c = 0; c < CH; c++)
        t->output(out_want + c * hw, m + c * ld, xs, CH * hw, imgs, h, w, th, tw, bias[c], act,
                  scratch);
    t->output_transposed(out_got, hw, CH * hw, mt, xs, CH, imgs, h, w, th, tw, bias, act);
    check_same("output transform", t, h, w, imgs, out_got, out_want, imgs * CH * hw);
    /* input adjoint from the same m: written, then added onto what the planes held */
    for (int add = 0; add < 2; add++) {
        for (long i = 0; i < imgs * CH * hw; i++) out_want[i] = out_got[i] = planes[i];
        for (int c = 0; c < CH; c++)
            t->input_adjoint(out_want + c * hw, m + c * ld, xs, CH * hw, imgs, h, w, th, tw, add,
                             scratch);
        t->adjoint_transposed(out_got, hw, CH * hw, mt, xs, CH, imgs, h, w, th, tw, add);
        check_same(add ? "input adjoint, added" : "input adjoint", t, h, w, imgs, out_got,
                   out_want, imgs * CH * hw);
    }
    free(planes), free(bias), free(scratch), free(v), free(vt), free(want), free(got);
    free(m), free(mt), free(out_want), free(out_got);
}

int main(void) {
    const wino_tiles *kinds[2] = { &wino_f4x4, &wino_f2x2_5x5 };
    /* the example nets' planes (28, 14, 7), partial edge tiles, a plane of one tile */
    static const int sides[][2] = { { 28, 28 }, { 14, 14 }, { 7, 7 }, { 9, 13 }, { 6, 5 },
                                    { 3, 2 }, { 17, 11 } };
    for (int k = 0; k < 2; k++)
        for (size_t s = 0; s < sizeof sides / sizeof sides[0]; s++)
            for (int imgs = 1; imgs <= 3; imgs += 2) {
                test_shape(kinds[k], sides[s][0], sides[s][1], imgs, RT_ACT_NONE);
                test_shape(kinds[k], sides[s][0], sides[s][1], imgs, RT_ACT_RELU);
            }
    return test_finish("wino_lanes_native");
}
