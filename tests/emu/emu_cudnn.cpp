/* Reference cuDNN for the CUDA emulator: exactly the legacy convolution calls the runtime
 * makes (runtime/cuda/ops/conv2d.cu), and the legacy search it made before, written from
 * cuDNN's documentation, not from our CPU ops. Tensors 4-D NCHW or NHWC; filters KCRS
 * (format NCHW) or KRSC (format NHWC); groups, padding, stride, dilation,
 * cross-correlation or convolution; FLOAT / HALF / BFLOAT16 data
 * accumulated in double; y = alpha * op + beta * y (y not read when beta is 0). FP32 data
 * under a math type other than CUDNN_FMA_MATH is computed from TF32-rounded inputs, as
 * Ampere and later do. Each algorithm has a workspace size; a call with less workspace
 * fails, and the workspace it uses is overwritten with NaN (so a buffer that overlaps it
 * shows). The Find calls report what other projects saw the legacy search report: results
 * tagged CUDNN_DEFAULT_MATH or CUDNN_TENSOR_OP_MATH whatever math type the descriptor asks.
 * The legacy Find calls allocate their own device memory (cuDNN's documentation: run them
 * before allocating layer data), which the emulator refuses (emu::library_alloc); the Ex
 * calls search on the caller's buffers and workspace and leave arbitrary values in the
 * output and the workspace, as documented. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>
#include <cudnn.h>
#include "emu_internal.h"

struct cudnnContext {
    cudaStream_t stream = 0;
};
struct cudnnTensorStruct {
    bool set = false;
    cudnnDataType_t dt;
    int n, c, h, w;
    long sn, sc, sh, sw;   /* element strides */
};
struct cudnnFilterStruct {
    bool set = false;
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int k, c, r, s;
};
struct cudnnConvolutionStruct {
    bool set = false;
    int ph, pw, sh, sw, dh, dw, groups = 1;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

using emu::fail;

static size_t elem_bytes(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT ? 4 : t == CUDNN_DATA_DOUBLE ? 8 : 2; }

static double load(const void *p, cudnnDataType_t t, long i) {
    switch (t) {
    case CUDNN_DATA_FLOAT: return ((const float *)p)[i];
    case CUDNN_DATA_HALF: return __half2float(((const __half *)p)[i]);
    case CUDNN_DATA_BFLOAT16: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: fail("cuDNN: data type %d is not emulated", (int)t);
    }
}
static void store(void *p, cudnnDataType_t t, long i, double v) {
    switch (t) {
    case CUDNN_DATA_FLOAT: ((float *)p)[i] = (float)v; break;
    case CUDNN_DATA_HALF: ((__half *)p)[i] = __float2half((float)v); break;
    case CUDNN_DATA_BFLOAT16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16((float)v); break;
    default: fail("cuDNN: data type %d is not emulated", (int)t);
    }
}

static inline long t_index(const cudnnTensorStruct *t, int n, int c, int h, int w) {
    return n * t->sn + c * t->sc + h * t->sh + w * t->sw;
}
static long t_span(const cudnnTensorStruct *t) { return t_index(t, t->n - 1, t->c - 1, t->h - 1, t->w - 1) + 1; }
static inline long f_index(const cudnnFilterStruct *f, int k, int c, int r, int s) {
    if (f->fmt == CUDNN_TENSOR_NHWC) return (((long)k * f->r + r) * f->s + s) * f->c + c;   /* KRSC */
    return (((long)k * f->c + c) * f->r + r) * f->s + s;                                    /* KCRS */
}

/* The descriptors of one convolution, checked against each other as cuDNN does. */
struct conv_geom {   /* copies: cuDNN reads the descriptors at the call, not when the work runs */
    cudnnTensorStruct x, y;
    cudnnFilterStruct f;
    cudnnConvolutionStruct cv;
    bool tf32;
};
static cudnnStatus_t check(const cudnnTensorStruct *x, const cudnnFilterStruct *f, const cudnnConvolutionStruct *cv,
                           const cudnnTensorStruct *y, conv_geom *g) {
    if (!x->set || !f->set || !cv->set || !y->set) return CUDNN_STATUS_BAD_PARAM;
    if (x->dt != f->dt || x->dt != y->dt) return CUDNN_STATUS_BAD_PARAM;
    if (x->c != f->c * cv->groups || f->k % cv->groups || y->c != f->k || y->n != x->n) return CUDNN_STATUS_BAD_PARAM;
    int oh = 1 + (x->h + 2 * cv->ph - ((f->r - 1) * cv->dh + 1)) / cv->sh;
    int ow = 1 + (x->w + 2 * cv->pw - ((f->s - 1) * cv->dw + 1)) / cv->sw;
    if (y->h != oh || y->w != ow) return CUDNN_STATUS_BAD_PARAM;
    *g = conv_geom{ *x, *y, *f, *cv, x->dt == CUDNN_DATA_FLOAT && cv->math != CUDNN_FMA_MATH };
    return CUDNN_STATUS_SUCCESS;
}

/* Calls fn(x index, filter index, y index) for every product term of the convolution. */
template <typename F> static void each_term(const conv_geom &g, F fn) {
    const cudnnFilterStruct *f = &g.f;
    const cudnnTensorStruct *X = &g.x, *Y = &g.y;
    int kg = f->k / g.cv.groups;
    bool flip = g.cv.mode == CUDNN_CONVOLUTION;
    for (int n = 0; n < X->n; n++)
        for (int k = 0; k < f->k; k++)
            for (int oh = 0; oh < Y->h; oh++)
                for (int ow = 0; ow < Y->w; ow++) {
                    long yi = t_index(Y, n, k, oh, ow);
                    for (int c = 0; c < f->c; c++) {
                        int ci = k / kg * f->c + c;
                        for (int r = 0; r < f->r; r++) {
                            int ih = oh * g.cv.sh - g.cv.ph + r * g.cv.dh;
                            if (ih < 0 || ih >= X->h) continue;
                            for (int s = 0; s < f->s; s++) {
                                int iw = ow * g.cv.sw - g.cv.pw + s * g.cv.dw;
                                if (iw < 0 || iw >= X->w) continue;
                                long fi = f_index(f, k, c, flip ? f->r - 1 - r : r, flip ? f->s - 1 - s : s);
                                fn(t_index(X, n, ci, ih, iw), fi, yi);
                            }
                        }
                    }
                }
}

enum { FWD, BWD_DATA, BWD_FILTER };
/* Workspace per algorithm: 0 for algorithm 0, an im2col-sized buffer for algorithm 1 (the
 * one the search reports fastest, so the workspace path is the one exercised). */
static size_t ws_need(const conv_geom &g, int which, int algo) {
    if (algo == 0) return 0;
    size_t cols = (size_t)g.f.c * g.f.r * g.f.s * g.y.h * g.y.w;
    return which == BWD_FILTER ? cols * 4 + 256 : cols * elem_bytes(g.x.dt) + 512;
}

/* The workspace queries: the descriptors checked, then the algorithm's need. */
static cudnnStatus_t ws_query(const cudnnTensorStruct *x, const cudnnFilterStruct *f, const cudnnConvolutionStruct *cv,
                              const cudnnTensorStruct *y, int which, int algo, size_t *bytes) {
    conv_geom g;
    if (cudnnStatus_t st = check(x, f, cv, y, &g)) return st;
    if (algo < 0 || algo > 1) return CUDNN_STATUS_NOT_SUPPORTED;
    *bytes = ws_need(g, which, algo);
    return CUDNN_STATUS_SUCCESS;
}

static double scalar(const void *p) { return *(const float *)p; }   /* FLOAT/HALF/BF16 data: float scalars */

static cudnnStatus_t run(cudnnHandle_t h, int which, int algo, const void *alpha, const void *beta, const conv_geom &g,
                         const void *x, const void *w, void *y_or_dx_or_dw, const void *dy, void *ws, size_t ws_bytes,
                         const char *what) {
    if (algo < 0 || algo > 1) return CUDNN_STATUS_NOT_SUPPORTED;
    size_t need = ws_need(g, which, algo);
    if (ws_bytes < need || (need && !ws)) return CUDNN_STATUS_BAD_PARAM;
    size_t eb = elem_bytes(g.x.dt);
    long wspan = (long)g.f.k * g.f.c * g.f.r * g.f.s;
    emu::check_device(which == BWD_DATA ? y_or_dx_or_dw : x, t_span(&g.x) * eb, what);
    emu::check_device(which == BWD_FILTER ? y_or_dx_or_dw : w, wspan * eb, what);
    emu::check_device(which == FWD ? y_or_dx_or_dw : dy, t_span(&g.y) * eb, what);
    if (need) emu::check_device(ws, need, what);
    double a = scalar(alpha), b = scalar(beta);
    conv_geom gg = g;
    emu::enqueue(h->stream, what, [=]() {
        emu::cudnn_digest += ((uint64_t)which * 4 + (uint64_t)algo * 2 + (gg.tf32 ? 1 : 0) + 1) * 0x9e3779b97f4a7c15ull;
        {   /* the operands' traffic (EMU_TRAFFIC); the emulated workspace is not the real algorithm's */
            long xs = t_span(&gg.x) * (long)eb, ys = t_span(&gg.y) * (long)eb, ws_ = wspan * (long)eb;
            if (which != BWD_DATA) emu::traffic_touch(x, (size_t)xs, false);
            if (which != BWD_FILTER) emu::traffic_touch(w, (size_t)ws_, false);
            if (which != FWD) emu::traffic_touch(dy, (size_t)ys, false);
            size_t os = (size_t)(which == FWD ? ys : which == BWD_DATA ? xs : ws_);
            if (b != 0) emu::traffic_touch(y_or_dx_or_dw, os, false);
            emu::traffic_touch(y_or_dx_or_dw, os, true);
        }
        if (need) {   /* the algorithm's scratch: whatever was there is gone */
            float nan = NAN;
            for (size_t i = 0; i + 4 <= need; i += 4) memcpy((char *)ws + i, &nan, 4);
        }
        /* Operands widened to double once (TF32-rounded when the math type allows it). */
        auto widen = [&](const void *p, long n) {
            std::vector<double> v((size_t)(p ? n : 0));
            for (long i = 0; p && i < n; i++) v[(size_t)i] = gg.tf32 ? emu::tf32(load(p, gg.x.dt, i)) : load(p, gg.x.dt, i);
            return v;
        };
        const cudnnTensorStruct *X = &gg.x, *Y = &gg.y;
        std::vector<double> xv = widen(x, t_span(X)), wv = widen(w, wspan), dyv = widen(dy, t_span(Y));
        long out_n = which == FWD ? t_span(Y) : which == BWD_DATA ? t_span(X) : wspan;
        std::vector<double> acc((size_t)out_n, 0.0);
        if (which == FWD)
            each_term(gg, [&](long xi, long fi, long yi) { acc[(size_t)yi] += xv[(size_t)xi] * wv[(size_t)fi]; });
        else if (which == BWD_DATA)
            each_term(gg, [&](long xi, long fi, long yi) { acc[(size_t)xi] += dyv[(size_t)yi] * wv[(size_t)fi]; });
        else
            each_term(gg, [&](long xi, long fi, long yi) { acc[(size_t)fi] += xv[(size_t)xi] * dyv[(size_t)yi]; });
        /* Only the elements the descriptor addresses are written (a strided tensor's gaps stay). */
        auto put = [&](long o) {
            store(y_or_dx_or_dw, gg.x.dt, o, a * acc[(size_t)o] + (b != 0 ? b * load(y_or_dx_or_dw, gg.x.dt, o) : 0));
        };
        if (which == BWD_FILTER) {
            for (long i = 0; i < wspan; i++) put(i);
        } else {
            const cudnnTensorStruct *T = which == FWD ? Y : X;
            for (int n = 0; n < T->n; n++) for (int c = 0; c < T->c; c++) for (int i = 0; i < T->h; i++)
                for (int j = 0; j < T->w; j++) put(t_index(T, n, c, i, j));
        }
    });
    return CUDNN_STATUS_SUCCESS;
}

uint64_t emu::cudnn_digest;
cudaStream_t emu::cudnn_stream(cudnnContext *h) { return h->stream; }

/* What a search reports: every algorithm under both math types, the workspace one first on
 * even MPI ranks and last on odd ones (two GPUs whose timings rank the algorithms
 * differently), tagged CUDNN_TENSOR_OP_MATH or CUDNN_DEFAULT_MATH whatever was asked. An
 * algorithm that needs more than ws_bytes of workspace reports CUDNN_STATUS_ALLOC_FAILED
 * ("the provided workspace is insufficient", cudnnConvolution*AlgoPerf_t); returns the
 * largest workspace an algorithm that ran used. */
template <typename Perf, typename Algo>
static size_t report(const conv_geom &g, int which, int requested, int *returned, Perf *out, size_t ws_bytes) {
    int k = 0, odd = emu::launcher_rank() % 2;
    size_t used = 0;
    static const cudnnMathType_t tags[] = { CUDNN_TENSOR_OP_MATH, CUDNN_DEFAULT_MATH };
    for (int i = 0; i < 2; i++)
        for (int m = 0; m < 2 && k < requested; m++) {
            int algo = odd ? i : 1 - i;
            Perf p;
            memset(&p, 0, sizeof p);
            p.algo = (Algo)algo;
            p.memory = ws_need(g, which, algo);
            p.status = p.memory <= ws_bytes ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
            p.time = p.status == CUDNN_STATUS_SUCCESS ? 0.1f * (float)(k + 1) : -1.0f;
            p.determinism = CUDNN_DETERMINISTIC;
            p.mathType = tags[m];
            if (p.status == CUDNN_STATUS_SUCCESS && p.memory > used) used = p.memory;
            out[k++] = p;
        }
    *returned = k;
    return used;
}

static long out_span(const conv_geom &g, int which) {
    return which == FWD ? t_span(&g.y) : which == BWD_DATA ? t_span(&g.x) : (long)g.f.k * g.f.c * g.f.r * g.f.s;
}

/* The legacy search (cudnnFind*Algorithm): cuDNN allocates the operands it times and the
 * largest workspace itself (cudaMalloc), memory no start-up check of ours counts: refused,
 * naming the call. */
[[noreturn]] static void legacy_find(const conv_geom &g, int which, const char *what) {
    cudaDeviceSynchronize();   /* the search runs the candidates: it synchronizes the device */
    size_t ws0 = ws_need(g, which, 0), ws1 = ws_need(g, which, 1);
    size_t operands = (size_t)(t_span(&g.x) + t_span(&g.y) + out_span(g, BWD_FILTER)) * elem_bytes(g.x.dt);
    emu::library_alloc(what, operands + (ws0 > ws1 ? ws0 : ws1));
}

/* The search on the caller's memory (cudnnFind*AlgorithmEx): the operands and the workspace
 * are checked to lie in device allocations; the search blocks the host until the candidates
 * have run, and leaves arbitrary values (NaN here) in the output tensor and in the workspace
 * the candidates used. The inputs are only read. */
template <typename Perf, typename Algo>
static cudnnStatus_t find_ex(cudnnHandle_t h, const conv_geom &g, int which, const void *in_a, const void *in_b,
                             void *result, int requested, int *returned, Perf *out, void *ws, size_t ws_bytes,
                             const char *what) {
    size_t eb = elem_bytes(g.x.dt);
    long wspan = out_span(g, BWD_FILTER);
    /* in_a, in_b: (x, w) forward, (w, dy) backward data, (x, dy) backward filter */
    emu::check_device(in_a, (which == BWD_DATA ? wspan : t_span(&g.x)) * eb, what);
    emu::check_device(in_b, (which == FWD ? wspan : t_span(&g.y)) * eb, what);
    emu::check_device(result, out_span(g, which) * eb, what);
    if (ws_bytes) emu::check_device(ws, ws_bytes, what);
    if (cudaDeviceSynchronize() != cudaSuccess) return CUDNN_STATUS_EXECUTION_FAILED;   /* host blocking */
    size_t used = report<Perf, Algo>(g, which, requested, returned, out, ws_bytes);
    float nan = NAN;
    for (size_t i = 0; i + 4 <= used; i += 4) memcpy((char *)ws + i, &nan, 4);
    const cudnnTensorStruct *T = which == FWD ? &g.y : &g.x;
    if (which == BWD_FILTER) {
        for (long i = 0; i < wspan; i++) store(result, g.x.dt, i, NAN);
    } else {
        for (int n = 0; n < T->n; n++) for (int c = 0; c < T->c; c++) for (int i = 0; i < T->h; i++)
            for (int j = 0; j < T->w; j++) store(result, g.x.dt, t_index(T, n, c, i, j), NAN);
    }
    return CUDNN_STATUS_SUCCESS;
}

extern "C" {

/* The library's version: the headers' (the emulator implements what they declare). */
size_t cudnnGetVersion(void) { return CUDNN_VERSION; }
const char *cudnnGetErrorString(cudnnStatus_t st) {
    switch (st) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM (emulated cuDNN: descriptors disagree, or too little workspace)";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED (emulated cuDNN)";
    default: return "CUDNN_STATUS (emulated cuDNN: other)";
    }
}
cudnnStatus_t cudnnCreate(cudnnHandle_t *h) {
    *h = new cudnnContext;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s) {
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) {
    *d = new cudnnTensorStruct;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t fmt, cudnnDataType_t dt, int n,
                                         int c, int h, int w) {
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (fmt == CUDNN_TENSOR_NCHW) *d = cudnnTensorStruct{ true, dt, n, c, h, w, (long)c * h * w, (long)h * w, w, 1 };
    else if (fmt == CUDNN_TENSOR_NHWC) *d = cudnnTensorStruct{ true, dt, n, c, h, w, (long)h * w * c, 1, (long)w * c, c };
    else return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) {
    *d = new cudnnFilterStruct;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dt, cudnnTensorFormat_t fmt, int k,
                                         int c, int h, int w) {
    if (k <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (fmt != CUDNN_TENSOR_NCHW && fmt != CUDNN_TENSOR_NHWC) return CUDNN_STATUS_NOT_SUPPORTED;
    *d = cudnnFilterStruct{ true, dt, fmt, k, c, h, w };
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
    *d = new cudnnConvolutionStruct;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh,
                                              int dw, cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
    if (ph < 0 || pw < 0 || u <= 0 || v <= 0 || dh <= 0 || dw <= 0) return CUDNN_STATUS_BAD_PARAM;
    d->set = true, d->ph = ph, d->pw = pw, d->sh = u, d->sw = v, d->dh = dh, d->dw = dw, d->mode = mode, d->compute = compute;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
    if (groups < 1) return CUDNN_STATUS_BAD_PARAM;
    d->groups = groups;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m) {
    d->math = m;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t x,
                                                    const cudnnFilterDescriptor_t f, int *n, int *c, int *h, int *w) {
    if (!cv->set || !x->set || !f->set || x->c != f->c * cv->groups) return CUDNN_STATUS_BAD_PARAM;
    *n = x->n, *c = f->k;
    *h = 1 + (x->h + 2 * cv->ph - ((f->r - 1) * cv->dh + 1)) / cv->sh;
    *w = 1 + (x->w + 2 * cv->pw - ((f->s - 1) * cv->dw + 1)) / cv->sw;
    return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                                                      const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y,
                                                      cudnnConvolutionFwdAlgo_t algo, size_t *bytes) {
    return ws_query(x, w, cv, y, FWD, (int)algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(cudnnHandle_t, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
                                                           const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t dx,
                                                           cudnnConvolutionBwdDataAlgo_t algo, size_t *bytes) {
    return ws_query(dx, w, cv, dy, BWD_DATA, (int)algo, bytes);
}
cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(cudnnHandle_t, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
                                                             const cudnnConvolutionDescriptor_t cv, const cudnnFilterDescriptor_t dw,
                                                             cudnnConvolutionBwdFilterAlgo_t algo, size_t *bytes) {
    return ws_query(x, dw, cv, dy, BWD_FILTER, (int)algo, bytes);
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                                                   const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y,
                                                   const int requested, int *returned, cudnnConvolutionFwdAlgoPerf_t *out) {
    conv_geom g;
    if (cudnnStatus_t st = check(x, w, cv, y, &g)) return st;
    legacy_find(g, FWD, "cudnnFindConvolutionForwardAlgorithm");
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t h, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
                                                        const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t dx,
                                                        const int requested, int *returned, cudnnConvolutionBwdDataAlgoPerf_t *out) {
    conv_geom g;
    if (cudnnStatus_t st = check(dx, w, cv, dy, &g)) return st;
    legacy_find(g, BWD_DATA, "cudnnFindConvolutionBackwardDataAlgorithm");
}
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t h, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
                                                          const cudnnConvolutionDescriptor_t cv, const cudnnFilterDescriptor_t dw,
                                                          const int requested, int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *out) {
    conv_geom g;
    if (cudnnStatus_t st = check(x, dw, cv, dy, &g)) return st;
    legacy_find(g, BWD_FILTER, "cudnnFindConvolutionBackwardFilterAlgorithm");
}
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
                                                     const cudnnFilterDescriptor_t wd, const void *w,
                                                     const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t yd,
                                                     void *y, const int requested, int *returned,
                                                     cudnnConvolutionFwdAlgoPerf_t *out, void *ws, size_t ws_bytes) {
    conv_geom g;
    if (cudnnStatus_t st = check(xd, wd, cv, yd, &g)) return st;
    return find_ex<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
        h, g, FWD, x, w, y, requested, returned, out, ws, ws_bytes, "cudnnFindConvolutionForwardAlgorithmEx");
}
cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t h, const cudnnFilterDescriptor_t wd, const void *w,
                                                          const cudnnTensorDescriptor_t dyd, const void *dy,
                                                          const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t dxd,
                                                          void *dx, const int requested, int *returned,
                                                          cudnnConvolutionBwdDataAlgoPerf_t *out, void *ws, size_t ws_bytes) {
    conv_geom g;
    if (cudnnStatus_t st = check(dxd, wd, cv, dyd, &g)) return st;
    return find_ex<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
        h, g, BWD_DATA, w, dy, dx, requested, returned, out, ws, ws_bytes, "cudnnFindConvolutionBackwardDataAlgorithmEx");
}
cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t h, const cudnnTensorDescriptor_t xd, const void *x,
                                                            const cudnnTensorDescriptor_t dyd, const void *dy,
                                                            const cudnnConvolutionDescriptor_t cv, const cudnnFilterDescriptor_t dwd,
                                                            void *dw, const int requested, int *returned,
                                                            cudnnConvolutionBwdFilterAlgoPerf_t *out, void *ws, size_t ws_bytes) {
    conv_geom g;
    if (cudnnStatus_t st = check(xd, dwd, cv, dyd, &g)) return st;
    return find_ex<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
        h, g, BWD_FILTER, x, dy, dw, requested, returned, out, ws, ws_bytes,
        "cudnnFindConvolutionBackwardFilterAlgorithmEx");
}
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
                                      const cudnnFilterDescriptor_t wd, const void *w, const cudnnConvolutionDescriptor_t cv,
                                      cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes, const void *beta,
                                      const cudnnTensorDescriptor_t yd, void *y) {
    conv_geom g;
    if (cudnnStatus_t st = check(xd, wd, cv, yd, &g)) return st;
    return run(h, FWD, algo, alpha, beta, g, x, w, y, nullptr, ws, ws_bytes, "cudnnConvolutionForward");
}
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *alpha, const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t cv,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t ws_bytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx) {
    conv_geom g;
    if (cudnnStatus_t st = check(dxd, wd, cv, dyd, &g)) return st;
    return run(h, BWD_DATA, algo, alpha, beta, g, nullptr, w, dx, dy, ws, ws_bytes, "cudnnConvolutionBackwardData");
}
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *alpha, const cudnnTensorDescriptor_t xd, const void *x,
                                             const cudnnTensorDescriptor_t dyd, const void *dy, const cudnnConvolutionDescriptor_t cv,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t ws_bytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwd, void *dw) {
    conv_geom g;
    if (cudnnStatus_t st = check(xd, dwd, cv, dyd, &g)) return st;
    return run(h, BWD_FILTER, algo, alpha, beta, g, x, nullptr, dw, dy, ws, ws_bytes, "cudnnConvolutionBackwardFilter");
}

}   // extern "C"
