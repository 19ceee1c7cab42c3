/* 2-D convolution (stride, padding, dilation, groups), forward and backward: the algorithm the
 * compiler recorded in the shape (rt_conv_choice.h), and the generic one, im2col + GEMM
 * per image and group, with an optional fused ReLU. Images run in parallel on OpenMP threads,
 * each with its own slice of the workspace and a single-threaded GEMM (see rt_gemm.h for why). */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "rt_core.h"
#include "rt_env.h"
#include "rt_gemm.h"
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"
#include "conv2d_bias_grad.h"
#include "conv2d_im2col.h"
#include "conv2d_strided.h"
#include "conv2d_strided_winograd.h"
#include "conv2d_winograd.h"
#include "rt_conv_bf16.h"   /* compute BF16 (float build): oneDNN's BF16 convolutions */
#include "rt_conv_c1.h"     /* 1-channel inputs (float build): a direct AVX-512 kernel */
#include "rt_conv_choice.h"

static long col_elems(const rt_conv_shape *s) {   /* im2col matrix of one image and group */
    return is_pointwise(s) ? 0 : (long)(s->c / s->groups) * s->kh * s->kw * s->oh * s->ow;
}
static long weight_elems(const rt_conv_shape *s) {
    return (long)s->oc * (s->c / s->groups) * s->kh * s->kw;
}

/* Images go to threads, each image's GEMMs whole on its thread: a GEMM split over the
 * threads would sum in an order that depends on their count (rt_slots.h). */
static int image_threads(const rt_conv_shape *s) {
    int t = omp_get_max_threads();
    return s->n >= t ? t : s->n > 0 ? s->n : 1;
}

/* With a fused activation, backward masks one image's dout into a private buffer and sums
 * dbias per thread, while that image is in cache. */
static long act_elems(const rt_conv_shape *s) {
    return s->act ? (long)s->oc * s->oh * s->ow + s->oc : 0;
}

/* One thread's (forward) or one reduction slot's (backward) slice of the workspace: the
 * im2col matrix, the shifted plane, a private dweight (backward sums them in slot order, so
 * the result depends neither on timing nor on the thread count, rt_slots.h), and the masked
 * dout and dbias partial of a fused activation. */
typedef struct { real_t *col, *shift, *dw, *dy, *db; } conv_slice;

static long slice_elems(const rt_conv_shape *s) {
    return col_elems(s) + shift_elems(s) + weight_elems(s) + act_elems(s);
}
static long slice_dw_at(const rt_conv_shape *s) { return col_elems(s) + shift_elems(s); }
static long slice_db_at(const rt_conv_shape *s) {
    return slice_dw_at(s) + weight_elems(s) + (long)s->oc * s->oh * s->ow;
}
static conv_slice slice_of(real_t *work, int t, const rt_conv_shape *s) {
    real_t *base = work + (long)t * slice_elems(s);
    conv_slice sl = { base, base + col_elems(s), base + slice_dw_at(s),
                      base + slice_dw_at(s) + weight_elems(s), base + slice_db_at(s) };
    return sl;
}

/* The algorithm that runs: the compiler's record (rt_conv_choice.h), the first of algo, alt
 * and fallback whose host rule this CPU and this call meet. Nothing is chosen here by shape or
 * precision. din: the call computes an input gradient (RT_CONV_C1 computes none). */
static int host_takes(rt_conv_algo a, const rt_conv_shape *s, int din) {
    switch (a) {
#ifndef RT_REAL_DOUBLE
    case RT_CONV_C1: return !din && conv2d_c1_fits(s);
    case RT_CONV_DNNL_BF16: return conv2d_dnnl_bf16_fits(s);
#else
    case RT_CONV_C1: case RT_CONV_DNNL_BF16: return 0;   /* float kernels */
#endif
    case RT_CONV_STRIDED_WINOGRAD: return !rt_env_is(RT_ENV_TRAINC_CONV_STRIDED_WINOGRAD, "off");
    default: return 1;
    }
}
static rt_conv_shape running(const rt_conv_shape *s, int din) {
    rt_conv_shape e = *s;
    e.algo = host_takes(s->algo, s, din) ? s->algo : host_takes(s->alt, s, din) ? s->alt : s->fallback;
    return e;
}

static long workspace_of(const rt_conv_shape *s) {
    switch (s->algo) {
#ifndef RT_REAL_DOUBLE
    case RT_CONV_C1: return conv2d_c1_workspace_elems(s);
    case RT_CONV_DNNL_BF16: return conv2d_dnnl_bf16_workspace_elems(s);
#endif
    case RT_CONV_WINOGRAD: case RT_CONV_WINOGRAD_F4: return RT_FN(conv2d_winograd_workspace_elems)(s);
    case RT_CONV_STRIDED_WINOGRAD: return RT_FN(conv2d_strided_winograd_workspace_elems)(s);
    case RT_CONV_STRIDED: return RT_FN(conv2d_strided_workspace_elems)(s);
    default: return (long)rt_slot_slices() * slice_elems(s);
    }
}

/* Sized for the thread count at the first call (the trainer fixes it at start-up): room for
 * what the forward and a backward with an input gradient run (RT_CONV_C1 takes only the
 * first; the second then runs the next algorithm of the record). */
long RT_FN(conv2d_workspace_elems)(const rt_conv_shape *shape) {
    rt_conv_shape f = running(shape, 0), b = running(shape, 1);
    long wf = workspace_of(&f), wb = workspace_of(&b);
    return wf > wb ? wf : wb;
}

static void forward_im2col(real_t *out, const real_t *in, const real_t *weight, const real_t *bias,
                           real_t *work, const rt_conv_shape *s) {
    int cg = s->c / s->groups, ocg = s->oc / s->groups;
    int kdim = cg * s->kh * s->kw, ohw = s->oh * s->ow;
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * ohw;
    #pragma omp parallel for schedule(static) num_threads(image_threads(s))
    for (int b = 0; b < s->n; b++) {
        conv_slice sl = slice_of(work, omp_get_thread_num(), s);
        for (int g = 0; g < s->groups; g++) {
            const real_t *x = in + b * in_img + (long)g * cg * s->h * s->w;
            const real_t *col = x;
            if (!is_pointwise(s)) { RT_FN(conv2d_im2col)(sl.col, sl.shift, x, cg, s); col = sl.col; }
            RT_FN(rt_gemm)(0, 0, ocg, ohw, kdim, 1, weight + (long)g * ocg * kdim, kdim,
                           col, ohw, 0, out + b * out_img + (long)g * ocg * ohw, ohw);
        }
        real_t *o = out + b * out_img;
        if (bias)
            for (int oc = 0; oc < s->oc; oc++)
                for (int i = 0; i < ohw; i++) o[(long)oc * ohw + i] += bias[oc];
        if (s->act == RT_ACT_RELU)   /* while the image is still in cache */
            for (long i = 0; i < out_img; i++) o[i] = o[i] > 0 ? o[i] : 0;
    }
}

/* timing: count each thread's seconds in the input-gradient part into *data_s (summed). */
static void backward_im2col(real_t *din, real_t *dweight, real_t *dbias, const real_t *dout,
                            const real_t *act_out, const real_t *in, const real_t *weight,
                            real_t *work, const rt_conv_shape *s, int timing, double *data_s) {
    int cg = s->c / s->groups, ocg = s->oc / s->groups;
    int kdim = cg * s->kh * s->kw, ohw = s->oh * s->ow;
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * ohw;
    long wn = weight_elems(s), per_slot = slice_elems(s);
    int slots = rt_slots(), pointwise = is_pointwise(s), act = s->act != RT_ACT_NONE;
    if (dbias && !act) {
        #pragma omp parallel for schedule(static)
        for (int oc = 0; oc < s->oc; oc++) {
            real_t acc = 0;   /* one thread per channel: the sum order is fixed */
            for (int b = 0; b < s->n; b++)
                acc += masked_plane_sum(dout + b * out_img + (long)oc * ohw, NULL, ohw);
            dbias[oc] = acc;
        }
    }
    #pragma omp parallel num_threads(rt_slot_threads())
    {
        #pragma omp for schedule(static)
        for (int k = 0; k < slots; k++) {
            conv_slice sl = slice_of(work, k, s);
            real_t *dw_part = sl.dw;                       /* this slot's sum of dW over its images */
            real_t *col_buf = sl.col, *dy_buf = sl.dy, *db_part = sl.db;   /* dy, db: act only */
            memset(dw_part, 0, sizeof(real_t) * wn);
            if (act) memset(db_part, 0, sizeof(real_t) * s->oc);
            for (int b = rt_slot_begin(s->n, k, slots); b < rt_slot_begin(s->n, k + 1, slots); b++) {
                const real_t *dy_img = dout + b * out_img;
                if (act) {   /* ReLU backward: the gradient passes where the output is positive */
                    const real_t *y = act_out + b * out_img;
                    for (long i = 0; i < out_img; i++) dy_buf[i] = y[i] > 0 ? dy_img[i] : 0;
                    dy_img = dy_buf;
                    if (dbias)
                        for (int oc = 0; oc < s->oc; oc++)
                            db_part[oc] += masked_plane_sum(dy_buf + (long)oc * ohw, NULL, ohw);
                }
                for (int g = 0; g < s->groups; g++) {
                    const real_t *x = in + b * in_img + (long)g * cg * s->h * s->w;
                    const real_t *dy = dy_img + (long)g * ocg * ohw;
                    const real_t *w = weight + (long)g * ocg * kdim;
                    const real_t *col = x;
                    if (!pointwise) { RT_FN(conv2d_im2col)(col_buf, sl.shift, x, cg, s); col = col_buf; }
                    /* dW_g += dY_g . col^T */
                    RT_FN(rt_gemm)(0, 1, ocg, kdim, ohw, 1, dy, ohw, col, ohw, 1,
                                   dw_part + (long)g * ocg * kdim, kdim);
                    if (!din) continue;
                    double td = timing ? omp_get_wtime() : 0;
                    real_t *dx = din + b * in_img + (long)g * cg * s->h * s->w;
                    if (pointwise) {   /* dX_g (+)= W_g^T . dY_g straight into din */
                        RT_FN(rt_gemm)(1, 0, kdim, ohw, ocg, 1, w, kdim, dy, ohw, s->din_add ? 1 : 0,
                                       dx, ohw);
                    } else {           /* the col buffer is free again once dW is done: reuse it */
                        RT_FN(rt_gemm)(1, 0, kdim, ohw, ocg, 1, w, kdim, dy, ohw, 0, col_buf, ohw);
                        if (!s->din_add) memset(dx, 0, sizeof(real_t) * cg * s->h * s->w);
                        RT_FN(conv2d_col2im_add)(dx, sl.shift, col_buf, cg, s);
                    }
                    if (timing) {
                        double spent = omp_get_wtime() - td;
                        #pragma omp atomic
                        *data_s += spent;
                    }
                }
            }
        }
        /* implicit barrier: every partial is complete before the reduction below */
        long dw_at = slice_dw_at(s);
        #pragma omp for schedule(static)
        for (long i = 0; i < wn; i++) {
            real_t acc = 0;
            for (int u = 0; u < slots; u++) acc += work[u * per_slot + dw_at + i];
            dweight[i] = acc;
        }
        if (act && dbias) {
            long db_at = slice_db_at(s);
            #pragma omp for schedule(static)
            for (int oc = 0; oc < s->oc; oc++) {
                real_t acc = 0;
                for (int u = 0; u < slots; u++) acc += work[u * per_slot + db_at + oc];
                dbias[oc] = acc;
            }
        }
    }
}

/* Useful FLOPs of one pass: 2 x the direct convolution's multiply-adds. */
static double conv_flops(const rt_conv_shape *s) {
    return 2.0 * s->n * s->oc * (s->c / s->groups) * s->kh * s->kw * s->oh * s->ow;
}

void RT_FN(conv2d_forward)(real_t *out /*N,OC,OH,OW*/, const real_t *in /*N,C,H,W*/,
                           const real_t *weight /*OC,C/groups,KH,KW*/,
                           const real_t *bias /*OC or NULL*/, real_t *work,
                           const rt_conv_shape *shape) {
    double t0 = rt_op_stats_clock();
    rt_conv_shape e = running(shape, 0);
    switch (e.algo) {
#ifndef RT_REAL_DOUBLE
    case RT_CONV_C1: conv2d_c1_forward(out, in, weight, bias, work, &e); break;
    case RT_CONV_DNNL_BF16: conv2d_dnnl_bf16_forward(out, in, weight, bias, work, &e); break;
#endif
    case RT_CONV_WINOGRAD: case RT_CONV_WINOGRAD_F4:
        RT_FN(conv2d_winograd_forward)(out, in, weight, bias, work, &e);
        break;
    case RT_CONV_STRIDED_WINOGRAD: RT_FN(conv2d_strided_winograd_forward)(out, in, weight, bias, work, &e); break;
    case RT_CONV_STRIDED: RT_FN(conv2d_strided_forward)(out, in, weight, bias, work, &e); break;
    default: forward_im2col(out, in, weight, bias, work, &e); break;
    }
    if (t0) rt_op_stats_add(RT_OP_CONV_FWD, conv_flops(&e), rt_time_s() - t0);
}

void RT_FN(conv2d_backward)(real_t *din /*N,C,H,W or NULL*/, real_t *dweight /*OC,C/groups,KH,KW*/,
                            real_t *dbias /*OC or NULL*/, const real_t *dout /*N,OC,OH,OW*/,
                            const real_t *act_out /*N,OC,OH,OW or NULL*/, const real_t *in,
                            const real_t *weight, real_t *work, const rt_conv_shape *shape) {
    double t0 = rt_op_stats_clock(), data_s = 0;
    rt_conv_shape e = running(shape, din != NULL);
    int threads;
    switch (e.algo) {
#ifndef RT_REAL_DOUBLE
    case RT_CONV_C1:
        threads = 1;
        conv2d_c1_backward_weights(dweight, dbias, dout, act_out, in, work, &e);
        break;
    case RT_CONV_DNNL_BF16:
        threads = 1;   /* data_s is already the threads' mean */
        conv2d_dnnl_bf16_backward(din, dweight, dbias, dout, act_out, in, weight, work, &e, &data_s);
        break;
#endif
    case RT_CONV_WINOGRAD: case RT_CONV_WINOGRAD_F4:
        threads = omp_get_max_threads();
        RT_FN(conv2d_winograd_backward)(din, dweight, dbias, dout, act_out, in, weight, work, &e,
                                        t0 != 0, &data_s);
        break;
    case RT_CONV_STRIDED_WINOGRAD:
        threads = RT_FN(conv2d_strided_winograd_backward)(din, dweight, dbias, dout, act_out, in,
                                                          weight, work, &e, t0 != 0, &data_s);
        break;
    case RT_CONV_STRIDED:
        threads = RT_FN(conv2d_strided_backward)(din, dweight, dbias, dout, act_out, in, weight,
                                                 work, &e, t0 != 0, &data_s);
        break;
    default:
        threads = image_threads(&e);
        backward_im2col(din, dweight, dbias, dout, act_out, in, weight, work, &e, t0 != 0, &data_s);
        break;
    }
    if (t0) rt_op_stats_conv_backward(conv_flops(&e), din != NULL, t0, data_s / threads);
}
