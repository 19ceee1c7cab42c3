/* conv2d under compute BF16 on oneDNN's BF16 convolution primitives (vdpbf16ps kernels with
 * FP32 accumulation): the forward and backward drivers; see rt_conv_bf16.h, and
 * conv2d_dnnl_bf16_internal.h for the other two files.
 *
 * oneDNN's fast kernels want its blocked layouts (nChw16c; with plain NCHW it falls back to
 * GEMM-based kernels), so each chunk of images is converted from NCHW floats to blocked BF16
 * and its blocked FP32 result back, in passes that also add the bias, apply the fused ReLU or
 * mask the gradient by it (and sum the bias gradient). The batch runs as chunks of up to
 * CHUNK (conv2d_dnnl_bf16_plan.c) images on the OpenMP threads, each chunk through
 * single-threaded primitives, like conv2d.c's images: a chunk's conversions stay in cache,
 * and no oneDNN-internal barrier waits on a descheduled thread
 * (its own threading ran stride-2 backward-weights 40x slower on the shared 2-core host).
 * Each thread sums its chunks' weight gradients, and the threads' sums add up in thread
 * order, so the result does not depend on timing. A 1x1 strided unpadded conv (the ResNet's
 * projections) gives oneDNN only the pixels it reads, as a stride-1 input. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "conv2d_dnnl_bf16_internal.h"
#include "rt_conv_bf16.h"
#include "rt_core.h"

#ifdef BF16_CONV_KERNELS
/* Thread th's view of tensor t in the workspace (shared tensors: the same for all). */
static void *bind(const plan *p, float *work, const tensor *t, int th, int shared) {
    void *ptr = work + (shared ? 0 : p->shared_floats + th * p->thread_floats) + t->at;
    bf16conv_dnnl.dnnl_memory_set_data_handle(t->mem[th], ptr);
    return ptr;
}

static void execute(dnnl_primitive_t prim, int th, const tensor *pad, int a0, const tensor *t0, int a1,
                    const tensor *t1, int a2, const tensor *t2) {
    dnnl_exec_arg_t args[4] = { { a0, t0->mem[th] }, { a1, t1->mem[th] }, { a2, t2->mem[th] },
                                { DNNL_ARG_SCRATCHPAD, pad->mem[th] } };
    if (bf16conv_dnnl.dnnl_primitive_execute(prim, bf16conv_streams[th], pad->elems ? 4 : 3, args) != dnnl_success)
        rt_die("conv2d BF16: a oneDNN convolution failed to run");
    bf16conv_dnnl.dnnl_stream_wait(bf16conv_streams[th]);
}

/* A sampled plan's input (see samples_input in conv2d_dnnl_bf16_plan.c): the chunk's pixels
 * at multiples of the stride, oh x ow per channel, gathered into dst. */
static void sample_input(float *dst, const float *in, const rt_conv_shape *s, int images) {
    for (long plane = 0; plane < (long)images * s->c; plane++) {
        const float *src = in + plane * s->h * s->w;
        for (int oy = 0; oy < s->oh; oy++, dst += s->ow) {
            const float *row = src + (long)oy * s->sh * s->w;
            for (int ox = 0; ox < s->ow; ox++) dst[ox] = row[ox * s->sw];
        }
    }
}

/* The input gradient of a sampled plan: din = (add ? din : 0) + grad at the sampled pixels
 * (grad: oh x ow per channel), din's other pixels 0 (or kept, with add). */
static void scatter_input_grad(float *din, const float *grad, const rt_conv_shape *s, int images, int add) {
    for (long plane = 0; plane < (long)images * s->c; plane++) {
        float *dst = din + plane * s->h * s->w;
        for (int y = 0; y < s->h; y++) {
            float *row = dst + (long)y * s->w;
            int oy = y / s->sh;
            if (y % s->sh != 0 || oy >= s->oh) {
                if (!add) memset(row, 0, sizeof(float) * s->w);
                continue;
            }
            const float *g = grad + (plane * s->oh + oy) * s->ow;
            if (!add) memset(row, 0, sizeof(float) * s->w);
            for (int ox = 0; ox < s->ow; ox++) row[ox * s->sw] = add ? row[ox * s->sw] + g[ox] : g[ox];
        }
    }
}

/* One chunk of the input (in: its first image) into t's BF16 layout, through the thread's
 * samples buffer where the plan is sampled. */
static void input_to_layout(const plan *p, const tensor *t, uint16_t *dst, const float *in, float *samples,
                            const rt_conv_shape *s) {
    if (p->sampled) {
        sample_input(samples, in, s, p->chunk);
        in = samples;
    }
    bf16conv_to_layout(t, dst, in, NULL, NULL);
}

/* The forward's BF16 copy of its input, kept for backward-weights, which would otherwise
 * convert the same input again: one per plan and input tensor (the input of a layer holds
 * the same values from its forward to its backward, which reads it too). Full-batch, in
 * chunks of p->src's layout; only for plans that have run a backward (not for evaluation's
 * batches). NULL once MAX_COPIES are taken (the backward then converts). */
#define MAX_COPIES 128
typedef struct { const plan *p; const float *in; uint16_t *bf16; } input_copy;
static input_copy copies[MAX_COPIES];
static int copy_count;

static uint16_t *input_copy_of(const plan *p, const float *in, int create) {
    for (int i = 0; i < copy_count; i++)
        if (copies[i].p == p && copies[i].in == in) return copies[i].bf16;
    if (!create || copy_count == MAX_COPIES) return NULL;
    uint16_t *bf16 = malloc(sizeof(uint16_t) * p->src.elems * (p->key.n / p->chunk));
    if (!bf16) return NULL;
    copies[copy_count++] = (input_copy){ p, in, bf16 };
    return bf16;
}

void conv2d_dnnl_bf16_forward(float *out, const float *in, const float *weight, const float *bias,
                              float *work, const rt_conv_shape *s) {
    plan *p = bf16conv_plan_for(s);
    uint16_t *copy = p->trains ? input_copy_of(p, in, 1) : NULL;
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    bf16conv_weights_to_layout(&p->wei, (uint16_t *)(work + p->wei.at), weight);
    #pragma omp parallel num_threads(p->threads)
    {
        int th = omp_get_thread_num();
        omp_set_num_threads(1);   /* this thread's nested regions, oneDNN's included */
        bind(p, work, &p->wei, th, 1);
        uint16_t *src = bind(p, work, &p->src, th, 0);
        float *dst = bind(p, work, &p->dst, th, 0);
        bind(p, work, &p->fwd_pad, th, 0);
        float *samples = work + p->shared_floats + th * p->thread_floats + p->sample_at;
        #pragma omp for schedule(static)
        for (int b = 0; b < s->n; b += p->chunk) {
            if (copy) {
                src = copy + b / p->chunk * p->src.elems;
                bf16conv_dnnl.dnnl_memory_set_data_handle(p->src.mem[th], src);
            }
            input_to_layout(p, &p->src, src, in + b * in_img, samples, s);
            execute(p->fwd, th, &p->fwd_pad, DNNL_ARG_SRC, &p->src, DNNL_ARG_WEIGHTS, &p->wei, DNNL_ARG_DST, &p->dst);
            bf16conv_from_layout(&p->dst, out + b * out_img, dst, bias, s->act == RT_ACT_RELU, 0);
        }
    }
}

/* dbias[oc] = sum over images and pixels of dout, where the ReLU passed it (where the output
 * gradient's layout is not BLOCK16; else the conversion sums it, see block16_to_bf16). */
static void bias_gradient(float *dbias, const float *dout, const float *act_out, const rt_conv_shape *s) {
    long hw = (long)s->oh * s->ow;
    #pragma omp parallel for schedule(static)
    for (int oc = 0; oc < s->oc; oc++) {
        float acc = 0;   /* one thread per channel: the sum order is fixed */
        for (int b = 0; b < s->n; b++) {
            long base = ((long)b * s->oc + oc) * hw;
            for (long i = 0; i < hw; i++)
                acc += act_out && !(act_out[base + i] > 0) ? 0 : dout[base + i];
        }
        dbias[oc] = acc;
    }
}

/* dweight (OIHW) = the threads' blocked sums, added in thread order. */
static void sum_weight_gradients(float *dweight, const plan *p, const float *work) {
    const tensor *t = &p->dwei_sum;
    const float *first = work + p->shared_floats + t->at;
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < t->elems; i++) {
        long j = t->kind == LAYOUT_TABLE ? t->table[i] : i;
        if (j < 0) continue;
        float acc = 0;
        for (int th = 0; th < p->threads; th++) acc += first[th * p->thread_floats + i];
        dweight[j] = acc;
    }
}

void conv2d_dnnl_bf16_backward(float *din, float *dweight, float *dbias, const float *dout,
                               const float *act_out, const float *in, const float *weight,
                               float *work, const rt_conv_shape *s, double *data_s) {
    plan *p = bf16conv_plan_for(s);
    long in_img = (long)s->c * s->h * s->w, out_img = (long)s->oc * s->oh * s->ow;
    const float *mask = s->act == RT_ACT_RELU ? act_out : NULL;
    float *chunk_sums = dbias ? p->bias_sums : NULL;   /* NULL: not BLOCK16 */
    if (dbias && !chunk_sums) bias_gradient(dbias, dout, mask, s);
    if (din) bf16conv_weights_to_layout(&p->wei_t, (uint16_t *)(work + p->wei_t.at), weight);
    const uint16_t *copy = bf16conv_dnnl.dnnl_memory_desc_equal(&p->src.md, &p->src_w.md) ? input_copy_of(p, in, 0) : NULL;
    double data_sum = 0;
    #pragma omp parallel num_threads(p->threads) reduction(+ : data_sum)
    {
        int th = omp_get_thread_num();
        omp_set_num_threads(1);
        bind(p, work, &p->wei_t, th, 1);
        uint16_t *ddst = bind(p, work, &p->ddst, th, 0), *ddst_w = bind(p, work, &p->ddst_w, th, 0);
        uint16_t *src_w = bind(p, work, &p->src_w, th, 0);
        float *dsrc = bind(p, work, &p->dsrc, th, 0), *dwei = bind(p, work, &p->dwei, th, 0);
        float *sum = bind(p, work, &p->dwei_sum, th, 0);
        bind(p, work, &p->bwd_data_pad, th, 0);
        bind(p, work, &p->bwd_weights_pad, th, 0);
        float *samples = work + p->shared_floats + th * p->thread_floats + p->sample_at;
        memset(sum, 0, sizeof(float) * p->dwei_sum.elems);
        #pragma omp for schedule(static)
        for (int b = 0; b < s->n; b += p->chunk) {
            const float *dy = dout + b * out_img, *m = mask ? mask + b * out_img : NULL;
            bf16conv_to_layout(&p->ddst, ddst, dy, m, chunk_sums ? chunk_sums + b / p->chunk * s->oc : NULL);
            if (ddst_w != ddst) bf16conv_to_layout(&p->ddst_w, ddst_w, dy, m, NULL);
            if (copy) bf16conv_dnnl.dnnl_memory_set_data_handle(p->src_w.mem[th], (void *)(copy + b / p->chunk * p->src_w.elems));
            else input_to_layout(p, &p->src_w, src_w, in + b * in_img, samples, s);
            execute(p->bwd_weights, th, &p->bwd_weights_pad, DNNL_ARG_SRC, &p->src_w, DNNL_ARG_DIFF_DST, &p->ddst_w,
                    DNNL_ARG_DIFF_WEIGHTS, &p->dwei);
            for (long i = 0; i < p->dwei.elems; i++) sum[i] += dwei[i];
            if (!din) continue;
            double t0 = omp_get_wtime();
            execute(p->bwd_data, th, &p->bwd_data_pad, DNNL_ARG_DIFF_DST, &p->ddst, DNNL_ARG_WEIGHTS, &p->wei_t,
                    DNNL_ARG_DIFF_SRC, &p->dsrc);
            if (p->sampled) {
                bf16conv_from_layout(&p->dsrc, samples, dsrc, NULL, 0, 0);
                scatter_input_grad(din + b * in_img, samples, s, p->chunk, s->din_add);
            } else
                bf16conv_from_layout(&p->dsrc, din + b * in_img, dsrc, NULL, 0, s->din_add);
            data_sum += omp_get_wtime() - t0;
        }
    }
    sum_weight_gradients(dweight, p, work);
    if (chunk_sums)   /* the chunks' sums in chunk order: the same for any thread count */
        for (int oc = 0; oc < s->oc; oc++) {
            float acc = 0;
            for (int q = 0; q < s->n / p->chunk; q++) acc += chunk_sums[(long)q * s->oc + oc];
            dbias[oc] = acc;
        }
    *data_s = data_sum / p->threads;
    p->trains = 1;
}

#else
void conv2d_dnnl_bf16_forward(float *out, const float *in, const float *weight, const float *bias,
                              float *work, const rt_conv_shape *s) {
    rt_die("conv2d BF16 on oneDNN is not built into this runtime");
}
void conv2d_dnnl_bf16_backward(float *din, float *dweight, float *dbias, const float *dout,
                               const float *act_out, const float *in, const float *weight,
                               float *work, const rt_conv_shape *s, double *data_s) {
    rt_die("conv2d BF16 on oneDNN is not built into this runtime");
}
#endif
