/* The float linear layer at the example nets' sizes, where linear.c sends its gradient
 * products to oneDNN's sgemm (dW split by rows) when it is there, on all OpenMP threads:
 * against the double build (test_grad_linear_norm checks that one against direct sums and
 * central differences). */
#include <string.h>
#include "gradcheck.h"
#include "rt_ops.h"

/* LeakSanitizer's exit-time tracer sometimes crashes (signal 11, exit status 1) once oneDNN
 * has run on an OpenMP worker thread; every buffer below is freed, so only that check is off. */
const char *__lsan_default_options(void) { return "detect_leaks=0"; }

static void test_linear_float_sizes(int n, int in_f, int out_f) {
    long on = (long)n * out_f, inn = (long)n * in_f, wn = (long)out_f * in_f;
    double *in = gc_rand(inn, -1, 1), *w = gc_rand(wn, -0.1, 0.1), *b = gc_rand(out_f, -1, 1);
    double *r = gc_rand(on, -1, 1), *out = gc_alloc(on), *din = gc_alloc(inn), *dw = gc_alloc(wn);
    double *db = gc_alloc(out_f);
    linear_forward_f64(out, in, w, b, n, in_f, out_f);
    linear_backward_f64(din, dw, db, r, in, w, n, in_f, out_f);
    float *fi = gc_to_f32(in, inn), *fw = gc_to_f32(w, wn), *fb = gc_to_f32(b, out_f), *fr = gc_to_f32(r, on);
    float *fo = malloc(sizeof(float) * on), *fdi = malloc(sizeof(float) * inn);
    float *fdw = malloc(sizeof(float) * wn), *fdb = malloc(sizeof(float) * out_f);
    linear_forward(fo, fi, fw, fb, n, in_f, out_f);
    linear_backward(fdi, fdw, fdb, fr, fi, fw, n, in_f, out_f);
    gc_compare_f32("linear float forward, example size", fo, out, on);
    gc_compare_f32("linear float dinput, example size", fdi, din, inn);
    gc_compare_f32("linear float dweight, example size", fdw, dw, wn);
    gc_compare_f32("linear float dbias, example size", fdb, db, out_f);
    float *again = malloc(sizeof(float) * (wn > on ? wn : on));   /* a rerun gives the same bits */
    linear_forward(again, fi, fw, fb, n, in_f, out_f);
    CHECK(memcmp(again, fo, sizeof(float) * on) == 0);
    linear_backward(fdi, again, fdb, fr, fi, fw, n, in_f, out_f);
    CHECK(memcmp(again, fdw, sizeof(float) * wn) == 0);
    free(again);
    free(fi); free(fw); free(fb); free(fr); free(fo); free(fdi); free(fdw); free(fdb);
    free(in); free(w); free(b); free(r); free(out); free(din); free(dw); free(db);
}

int main(void) {
    gc_seed(3);
    test_linear_float_sizes(64, 784, 128);     /* the MLP's fc1 */
    test_linear_float_sizes(64, 128, 10);      /* the MLP's fc2 (OpenBLAS) */
    test_linear_float_sizes(128, 1568, 256);   /* LeNet's fc1 at a quarter of its weights */
    return test_finish("test_linear_sizes");
}
