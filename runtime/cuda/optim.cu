/* The optimizer update as one multi-tensor kernel over every parameter: the parameters are
 * cut into fixed chunks, each block updates one chunk with its tensor's weight decay and
 * (LARS) trust ratio. Norms for LARS and gradient clipping are per-chunk partial sums added
 * in chunk order, so a run repeats bit for bit. Semantics: rt_optim.h, per tensor. */
#include <math.h>
#include "cuda_common.cuh"

#define CHUNK 32768
#define OPT_THREADS 256

typedef struct {
    long start;       /* first parameter index of the chunk */
    int len;
    int tensor;
} chunk_info;

typedef struct {
    long offset, count;
    float weight_decay;   /* 0 for exempt tensors */
    int exempt;
    int first_chunk, n_chunks;
} tensor_info;

struct rt_cuda_optim {
    rt_optim_config cfg;
    int n_tensors, n_chunks, per;
    double clip;
    chunk_info *chunks;          /* device */
    tensor_info *tensors;        /* device */
    double *sq_g, *sq_p;         /* device, per chunk */
    float *trust, *scale;        /* device: per tensor; one */
};

__global__ void chunk_norms_kernel(double *sq_g, double *sq_p, const chunk_info *chunks, const float *grads,
                                   const float *params) {
    chunk_info ch = chunks[blockIdx.x];
    double g = 0, p = 0;
    for (int i = threadIdx.x; i < ch.len; i += blockDim.x) {
        double gi = grads[ch.start + i];
        g += gi * gi;
        if (sq_p) {
            double pi = params[ch.start + i];
            p += pi * pi;
        }
    }
    g = block_sum(g);
    if (sq_p) p = block_sum(p);
    if (threadIdx.x == 0) {
        sq_g[blockIdx.x] = g;
        if (sq_p) sq_p[blockIdx.x] = p;
    }
}

/* One block: the clipping coefficient (torch's min(1, max/(norm + 1e-6)), 1 when the norm is
 * not finite) and, for LARS, every tensor's trust ratio (rt_lars_trust_ratio). */
__global__ void finalize_kernel(float *scale, float *trust, const double *sq_g, const double *sq_p,
                                const tensor_info *tensors, int n_tensors, int n_chunks, double clip,
                                float eta, float eps) {
    float s = 1.0f;
    if (clip > 0) {
        double acc = 0;
        for (int c = threadIdx.x; c < n_chunks; c += blockDim.x) acc += sq_g[c];
        double norm = sqrt(block_sum(acc));
        if (isfinite(norm)) {
            double coef = clip / (norm + 1e-6);
            s = coef < 1.0 ? (float)coef : 1.0f;
        }
    }
    if (threadIdx.x == 0) *scale = s;
    if (!trust) return;
    for (int t = threadIdx.x; t < n_tensors; t += blockDim.x) {
        tensor_info ti = tensors[t];
        double pp = 0, gg = 0;
        for (int c = ti.first_chunk; c < ti.first_chunk + ti.n_chunks; c++) pp += sq_p[c], gg += sq_g[c];
        double pn = sqrt(pp), gn = sqrt(gg) * fabs((double)s);
        float r = 1.0f;
        if (!ti.exempt && pn > 0 && gn > 0) r = (float)(eta * pn / (gn + ti.weight_decay * pn + eps));
        trust[t] = r;
    }
}

typedef struct {
    int kind, first_step, nesterov, per;
    float lr, momentum, dampening;
    float b1, b2, one_b1, one_b2, adam_eps, step_size, inv_sqrt_bc2;
} update_args;

__global__ void update_kernel(float *params, float *state, const float *grads, const chunk_info *chunks,
                              const tensor_info *tensors, const float *scale_p, const float *trust,
                              update_args a) {
    chunk_info ch = chunks[blockIdx.x];
    tensor_info t = tensors[ch.tensor];
    float s = *scale_p, wd = t.weight_decay, lr = a.lr, mom = a.momentum;
    float *st = state ? state + (long)a.per * t.offset : NULL;
    for (int i = threadIdx.x; i < ch.len; i += blockDim.x) {
        long e = ch.start + i, local = e - t.offset;
        float p = params[e], g = grads[e] * s;
        if (a.kind == RT_OPTIM_SGD) {
            float d = g + wd * p;
            if (mom == 0.0f) {
                p -= lr * d;
            } else if (a.first_step) {
                st[local] = d;
                p -= lr * (d + (a.nesterov ? mom : 0.0f) * d);
            } else {
                float b = mom * st[local] + (1.0f - a.dampening) * d;
                st[local] = b;
                p -= lr * (a.nesterov ? d + mom * b : b);
            }
        } else if (a.kind == RT_OPTIM_LARS) {
            float u = lr * trust[ch.tensor] * (g + wd * p);
            if (mom == 0.0f) {
                p -= u;
            } else {
                float b = mom * st[local] + u;
                st[local] = b;
                p -= a.nesterov ? mom * b + u : b;
            }
        } else {   /* AdamW */
            float m = a.b1 * st[local] + a.one_b1 * g;
            float v = a.b2 * st[t.count + local] + a.one_b2 * g * g;
            st[local] = m;
            st[t.count + local] = v;
            p = p * (1.0f - lr * wd) - a.step_size * m / (sqrtf(v) * a.inv_sqrt_bc2 + a.adam_eps);
        }
        params[e] = p;
    }
}

rt_cuda_optim *rt_cuda_optim_create(const rt_optim_config *cfg, const long *offsets, const long *counts,
                                    const int *exempt, int n_tensors, float weight_decay, double clip) {
    rt_cuda_optim *o = (rt_cuda_optim *)rt_xcalloc(1, sizeof *o);
    o->cfg = *cfg;
    o->n_tensors = n_tensors;
    o->per = rt_optim_state_per_param(cfg);
    o->clip = clip;
    tensor_info *ti = (tensor_info *)rt_xcalloc((size_t)n_tensors, sizeof *ti);
    int nc = 0;
    for (int t = 0; t < n_tensors; t++) nc += (int)((counts[t] + CHUNK - 1) / CHUNK);
    chunk_info *ci = (chunk_info *)rt_xcalloc((size_t)(nc ? nc : 1), sizeof *ci);
    nc = 0;
    for (int t = 0; t < n_tensors; t++) {
        ti[t] = (tensor_info){ offsets[t], counts[t], exempt[t] ? 0.0f : weight_decay, exempt[t], nc, 0 };
        for (long s = 0; s < counts[t]; s += CHUNK) {
            long len = counts[t] - s < CHUNK ? counts[t] - s : CHUNK;
            ci[nc++] = (chunk_info){ offsets[t] + s, (int)len, t };
            ti[t].n_chunks++;
        }
    }
    o->n_chunks = nc;
    o->chunks = (chunk_info *)rt_cuda_malloc(sizeof *ci * (size_t)(nc ? nc : 1), "optimizer chunk table");
    o->tensors = (tensor_info *)rt_cuda_malloc(sizeof *ti * (size_t)(n_tensors ? n_tensors : 1), "optimizer tensor table");
    rt_cuda_copy_h2d(o->chunks, ci, sizeof *ci * (size_t)nc);
    rt_cuda_copy_h2d(o->tensors, ti, sizeof *ti * (size_t)n_tensors);
    o->sq_g = (double *)rt_cuda_malloc(sizeof(double) * (size_t)(nc ? nc : 1), "gradient norms");
    o->sq_p = (double *)rt_cuda_malloc(sizeof(double) * (size_t)(nc ? nc : 1), "parameter norms");
    o->trust = (float *)rt_cuda_malloc(sizeof(float) * (size_t)(n_tensors ? n_tensors : 1), "LARS trust ratios");
    o->scale = (float *)rt_cuda_malloc(sizeof(float), "gradient scale");
    const float one = 1.0f;
    rt_cuda_copy_h2d(o->scale, &one, sizeof one);
    rt_cuda_sync();   /* the host tables are freed next */
    free(ti);
    free(ci);
    return o;
}

void rt_cuda_optim_step(rt_cuda_optim *o, float *params, float *state, const float *grads, long n_params,
                        double lr, long step) {
    (void)n_params;
    if (o->n_chunks == 0) return;
    int lars = o->cfg.kind == RT_OPTIM_LARS;
    if (o->clip > 0 || lars) {
        chunk_norms_kernel<<<o->n_chunks, OPT_THREADS, 0, rt_stream()>>>(o->sq_g, lars ? o->sq_p : NULL, o->chunks,
                                                                        grads, params);
        CUDA_LAUNCHED();
        finalize_kernel<<<1, 1024, 0, rt_stream()>>>(o->scale, lars ? o->trust : NULL, o->sq_g, o->sq_p,
                                                     o->tensors, o->n_tensors, o->n_chunks, o->clip,
                                                     lars ? o->cfg.lars.eta : 0.0f, lars ? o->cfg.lars.eps : 0.0f);
        CUDA_LAUNCHED();
    }
    update_args a = {};
    a.kind = (int)o->cfg.kind;
    a.per = o->per;
    a.lr = (float)lr;
    a.first_step = step == 0;
    if (o->cfg.kind == RT_OPTIM_SGD) {
        a.momentum = o->cfg.sgd.momentum, a.dampening = o->cfg.sgd.dampening, a.nesterov = o->cfg.sgd.nesterov;
    } else if (lars) {
        a.momentum = o->cfg.lars.momentum, a.nesterov = o->cfg.lars.nesterov;
    } else {
        const rt_adamw_config *c = &o->cfg.adamw;
        double t = (double)step + 1.0;
        a.step_size = (float)((float)lr / (1.0 - pow(c->beta1, t)));
        a.inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(c->beta2, t)));
        a.b1 = (float)c->beta1, a.b2 = (float)c->beta2, a.adam_eps = (float)c->eps;
        a.one_b1 = (float)(1.0 - c->beta1), a.one_b2 = (float)(1.0 - c->beta2);
    }
    update_kernel<<<o->n_chunks, OPT_THREADS, 0, rt_stream()>>>(params, o->per ? state : NULL, grads, o->chunks,
                                                                o->tensors, o->scale, o->trust, a);
    CUDA_LAUNCHED();
}
