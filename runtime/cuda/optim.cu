/* The optimizer update as one multi-tensor kernel over every parameter: the parameters are
 * cut into fixed chunks, each block updates one chunk with its tensor's weight decay and
 * (LARS, LAMB) trust ratio. LAMB first updates its moments and sums ‖p‖², ‖update‖² per
 * chunk (lamb_moments_kernel), then the trust ratios, then the update. Norms for LARS, gradient clipping and the loss scaler's overflow test
 * are per-chunk partial sums added in chunk order, so a run repeats bit for bit. Semantics:
 * rt_optim.h, per tensor. Every per-step value (LR, bias corrections, the loss scale) is
 * read from device memory, so the launch can be captured in a CUDA graph. The step's
 * scalars reach that memory through a one-thread kernel launched outside the graph with
 * them as its by-value argument: the driver copies a launch's arguments when the launch is
 * made, so the host may run any number of steps ahead of the device without a slot it must
 * not overwrite (a page-locked slot read at replay gave every queued step the last one's). */
#include <math.h>
#include <string.h>
#include "cuda_common.cuh"

#define CHUNK 32768
#define OPT_THREADS 256
#define FINALIZE_THREADS 1024   /* one block adds every chunk's norm */

typedef struct {
    long start;       /* first parameter index of the chunk */
    int len;
    int tensor;
} chunk_info;

typedef struct {
    long offset, count;
    float weight_decay;   /* 0 for exempt tensors; × Caffe's decay_mult */
    int exempt;
    float lr_mult;        /* Caffe's lr_mult; 0: frozen, left out of the norms */
    int first_chunk, n_chunks;
} tensor_info;

typedef struct {
    int kind, first_step, nesterov, per;
    int lr_in_velocity;    /* SGD in Caffe's form */
    int larc;              /* SGD with NVCaffe's LARC: rt_larc_policy; the rate is trust[] */
    int caffe_adam;        /* Adam in Caffe's form: L2 decay, eps on the uncorrected sqrt(v) */
    float decay, one_decay;   /* AdaDelta (rt_adaptive_config) */
    float lr, momentum, dampening;
    float b1, b2, one_b1, one_b2, adam_eps, step_size, inv_sqrt_bc2;   /* LAMB: step_size = 1/(1 − β1^t) */
    int trust_clip;        /* LAMB */
    float rms_alpha, rms_one_alpha, rms_eps;   /* RMSprop */
    int rms_tf;            /* RMSprop's TF form */
    long long step;        /* the trainer's step, skipped ones included */
    double beta1, beta2;   /* as configured, for bias corrections computed on the device */
} update_args;

/* The loss scaler (rt_cuda.h), on the device. */
#define SCALER_GROWTH_INTERVAL 2000
/* The dynamic scale stays within [2^-24, 2^24]: doubling past FP32's range would make it +inf
 * (every gradient then overflows, every step is skipped while the loss still looks finite),
 * halving forever would reach 0 (1/scale is +inf). At the floor a step that still overflows
 * is skipped, and the scale stays. */
#define SCALER_MIN 5.9604645e-08f
#define SCALER_MAX 16777216.0f
typedef struct {
    float scale;
    int mode;              /* 0 none, 1 static, 2 dynamic */
    int clean;             /* finite steps in a row */
    int skip;              /* this step's gradients overflowed */
    long long skipped;
} scaler_state;

struct rt_cuda_optim {
    rt_optim_config cfg;
    int n_tensors, n_chunks, per;
    double clip;
    float grad_div;
    chunk_info *chunks;          /* device */
    tensor_info *tensors;        /* device */
    double *sq_g, *sq_p;         /* device, per chunk */
    float *trust, *scale;        /* device: per tensor; one */
    scaler_state *scaler;        /* device */
    int scaler_mode;
    update_args *args;           /* device: set_step writes it in stream order */
};

/* The step's scalars, copied by the driver at the launch, stored where the graph reads them. */
__global__ void __launch_bounds__(1)
store_step_args_kernel(update_args *dst, update_args a) { *dst = a; }

__global__ void __launch_bounds__(OPT_THREADS)
chunk_norms_kernel(double *sq_g, double *sq_p, const chunk_info *chunks, const tensor_info *tensors,
                   const float *grads, const float *params) {
    chunk_info ch = chunks[blockIdx.x];
    if (tensors[ch.tensor].lr_mult == 0.0f) {   /* the whole block: Caffe computes no gradient for it */
        if (threadIdx.x == 0) {
            sq_g[blockIdx.x] = 0;
            if (sq_p) sq_p[blockIdx.x] = 0;
        }
        return;
    }
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

/* One block: the gradient scale (1/world, 1/loss scale, and torch's clipping coefficient
 * min(1, max/(norm + 1e-6)), left out when the norm is not finite; then timm Lamb's own
 * 1/max(1, norm/lamb_max)), the loss scaler's verdict on this step and, for LARS, every
 * tensor's trust ratio (rt_lars_trust_ratio), for NVCaffe's LARC (larc_momentum >= 0) its
 * rate (rt_larc_rate; Intel Caffe's when larc_intel_wd >= 0). */
__global__ void __launch_bounds__(FINALIZE_THREADS)
finalize_kernel(float *scale, float *trust, const double *sq_g, const double *sq_p,
                const tensor_info *tensors, int n_tensors, int n_chunks, double clip,
                double lamb_max, float eta, float eps, float grad_div, scaler_state *sc, float larc_momentum,
                float larc_intel_wd) {
    float s = grad_div;
    if (sc && sc->mode) s /= sc->scale;   /* read by every thread before thread 0 updates it */
    double acc = 0;
    for (int c = threadIdx.x; c < n_chunks; c += blockDim.x) acc += sq_g[c];
    double total = block_sum(acc);
    int finite = isfinite(total);
    if (clip > 0 && finite) {
        double coef = clip / (sqrt(total) * fabs((double)s) + 1e-6);
        if (coef < 1.0) s *= (float)coef;
    }
    if (lamb_max > 0 && finite) {
        double norm = sqrt(total) * fabs((double)s);
        if (norm > lamb_max) s *= (float)(lamb_max / norm);
    }
    if (threadIdx.x == 0) {
        *scale = s;
        if (sc && sc->mode) {
            sc->skip = !finite;
            if (!finite) {
                sc->skipped++;
                if (sc->mode == 2) sc->scale = fmaxf(sc->scale * 0.5f, SCALER_MIN), sc->clean = 0;
            } else if (sc->mode == 2 && ++sc->clean >= SCALER_GROWTH_INTERVAL) {
                sc->scale = fminf(sc->scale * 2.0f, SCALER_MAX), sc->clean = 0;
            }
        }
    }
    if (!trust) return;
    for (int t = threadIdx.x; t < n_tensors; t += blockDim.x) {
        tensor_info ti = tensors[t];
        double pp = 0, gg = 0;
        for (int c = ti.first_chunk; c < ti.first_chunk + ti.n_chunks; c++) pp += sq_p[c], gg += sq_g[c];
        double pn = sqrt(pp), gn = sqrt(gg) * fabs((double)s);
        float r = 1.0f;
        if (larc_momentum >= 0.0f) {   /* the forks' float expressions, exempt tensors included */
            float wn = (float)pn, gnf = (float)gn;
            if (wn > 0.0f && gnf > 0.0f)
                r = larc_intel_wd >= 0.0f ? eta * wn / (gnf + larc_intel_wd * wn) : (1.0f - larc_momentum) * eta * wn / gnf;
        } else if (!ti.exempt && pn > 0 && gn > 0) {
            r = (float)(eta * pn / (gn + ti.weight_decay * pn + eps));
        }
        trust[t] = r;
    }
}

/* Steps the loss scaler skipped are not steps, as torch's GradScaler never calls
 * optimizer.step() for them: momentum starts, and the Adam bias corrections count, from the
 * steps taken. (The host set these from the trainer's step.) */
__device__ update_args args_for_taken_steps(const update_args *args, const scaler_state *sc) {
    update_args a = *args;
    if (!sc || !sc->skipped) return a;
    long long taken = a.step - sc->skipped;
    a.first_step = taken == 0;
    if (a.kind == RT_OPTIM_ADAMW || a.kind == RT_OPTIM_LAMB) {
        double t = (double)taken + 1.0, inv_bc1 = 1.0 / (1.0 - pow(a.beta1, t));
        a.step_size = (float)(a.kind == RT_OPTIM_LAMB ? inv_bc1 : a.lr * inv_bc1);
        if (a.caffe_adam) a.step_size = (float)(a.lr * sqrt(1.0 - pow(a.beta2, t)) * inv_bc1);   /* Caffe's correction */
        a.inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(a.beta2, t)));
    }
    return a;
}

/* LAMB's update for one element from its new moments (rt_lamb_step's lamb_update). */
__device__ __forceinline__ float lamb_update(float m, float v, float p, float wd, const update_args &a) {
    return (m * a.step_size) / (sqrtf(v) * a.inv_sqrt_bc2 + a.adam_eps) + wd * p;
}

/* LAMB, pass 1: the moments, and per chunk Σp² (sq_p) and Σupdate² (sq_u). */
__global__ void __launch_bounds__(OPT_THREADS)
lamb_moments_kernel(double *sq_u, double *sq_p, float *state, const float *params,
                                    const float *grads, const chunk_info *chunks, const tensor_info *tensors,
                                    const float *scale_p, const update_args *args, const scaler_state *sc) {
    if (sc && sc->skip) return;
    update_args a = args_for_taken_steps(args, sc);
    chunk_info ch = chunks[blockIdx.x];
    tensor_info t = tensors[ch.tensor];
    if (t.lr_mult == 0.0f) {   /* frozen (Caffe's lr_mult 0): no moments, as the host's rt_optim_apply_mults */
        if (threadIdx.x == 0) sq_p[blockIdx.x] = 0, sq_u[blockIdx.x] = 0;
        return;
    }
    float s = *scale_p;
    float *st = state + 2 * t.offset;
    double pp = 0, uu = 0;
    for (int i = threadIdx.x; i < ch.len; i += blockDim.x) {
        long e = ch.start + i, local = e - t.offset;
        float g = grads[e] * s, p = params[e];
        float m = a.b1 * st[local] + a.one_b1 * g;
        float v = a.b2 * st[t.count + local] + a.one_b2 * g * g;
        st[local] = m;
        st[t.count + local] = v;
        double u = lamb_update(m, v, p, t.weight_decay, a);
        pp += (double)p * p;
        uu += u * u;
    }
    pp = block_sum(pp);
    uu = block_sum(uu);
    if (threadIdx.x == 0) sq_p[blockIdx.x] = pp, sq_u[blockIdx.x] = uu;
}

/* LAMB, pass 2: trust = ‖p‖/‖u‖ per tensor with decay (1 without, or when either is 0). */
__global__ void __launch_bounds__(FINALIZE_THREADS)
lamb_trust_kernel(float *trust, const double *sq_u, const double *sq_p, const tensor_info *tensors,
                                  int n_tensors, const update_args *args) {
    for (int t = threadIdx.x; t < n_tensors; t += blockDim.x) {
        tensor_info ti = tensors[t];
        double pp = 0, uu = 0;
        for (int c = ti.first_chunk; c < ti.first_chunk + ti.n_chunks; c++) pp += sq_p[c], uu += sq_u[c];
        float r = 1.0f;
        if (ti.weight_decay != 0.0f && pp > 0 && uu > 0) r = (float)(sqrt(pp) / sqrt(uu));
        if (args->trust_clip && r > 1.0f) r = 1.0f;
        trust[t] = r;
    }
}

/* params_act: the compute copy of the parameters (16-bit modes), or NULL. A step the loss
 * scaler rejected changes nothing. */
template <typename T>
__global__ void __launch_bounds__(OPT_THREADS)
update_kernel(float *params, T *params_act, float *state, const float *grads,
              const chunk_info *chunks, const tensor_info *tensors, const float *scale_p,
              const float *trust, const update_args *args, const scaler_state *sc) {
    if (sc && sc->skip) return;
    update_args a = args_for_taken_steps(args, sc);
    chunk_info ch = chunks[blockIdx.x];
    tensor_info t = tensors[ch.tensor];
    if (t.lr_mult == 0.0f) {   /* frozen: as the host, no update and no state change */
        for (int i = threadIdx.x; params_act && i < ch.len; i += blockDim.x)
            params_act[ch.start + i] = rt_st<T>(params[ch.start + i]);   /* the copy stays whole */
        return;
    }
    float s = *scale_p, wd = t.weight_decay, lr = a.lr * t.lr_mult, mom = a.momentum;
    float step_size = a.step_size * t.lr_mult;
    float *st = state ? state + (long)a.per * t.offset : NULL;
    for (int i = threadIdx.x; i < ch.len; i += blockDim.x) {
        long e = ch.start + i, local = e - t.offset;
        float p = params[e], g = grads[e] * s;
        if (a.kind == RT_OPTIM_SGD) {
            float d = g + wd * p;
            if (a.larc)   /* NVCaffe's local rate, in place of lr·lr_mult */
                lr = a.larc == RT_LARC_CLIP ? fminf(a.lr, trust[ch.tensor]) : a.lr * trust[ch.tensor];
            if (mom == 0.0f) {
                p -= lr * d;
            } else if (a.lr_in_velocity) {   /* Caffe's form: v from 0, the LR inside it */
                float before = st[local], v = mom * before + lr * d;
                st[local] = v;
                p -= a.nesterov ? (1.0f + mom) * v - mom * before : v;
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
        } else if (a.kind == RT_OPTIM_RMSPROP) {   /* rt_rmsprop_step; the TF form's mean square starts at 1 */
            float d = g + wd * p;
            float prev = a.rms_tf && a.first_step ? 1.0f : st[local];
            float sq = a.rms_alpha * prev + a.rms_one_alpha * d * d;
            st[local] = sq;
            float u = a.rms_tf ? d / sqrtf(sq + a.rms_eps) : d / (sqrtf(sq) + a.rms_eps);
            if (mom == 0.0f) {
                p -= lr * u;
            } else {
                float b = mom * st[t.count + local] + (a.rms_tf ? lr * u : u);
                st[t.count + local] = b;
                p -= a.rms_tf ? b : lr * b;
            }
        } else if (a.kind == RT_OPTIM_LAMB) {   /* the moments are this step's already */
            p -= lr * trust[ch.tensor] * lamb_update(st[local], st[t.count + local], p, wd, a);
        } else if (a.kind == RT_OPTIM_ADAGRAD) {   /* as rt_adaptive_step */
            float d = g + wd * p;
            float v = st[local] + d * d;
            st[local] = v;
            p -= lr * d / (sqrtf(v) + a.adam_eps);
        } else if (a.kind == RT_OPTIM_ADADELTA) {
            float d = g + wd * p;
            float v = a.decay * st[local] + a.one_decay * d * d;
            float u = d * sqrtf((st[t.count + local] + a.adam_eps) / (v + a.adam_eps));
            st[local] = v;
            st[t.count + local] = a.decay * st[t.count + local] + a.one_decay * u * u;
            p -= lr * u;
        } else if (a.caffe_adam) {   /* step_size = lr·sqrt(1 − β2^t)/(1 − β1^t) */
            float gd = g + wd * p;
            float m = a.b1 * st[local] + a.one_b1 * gd;
            float v = a.b2 * st[t.count + local] + a.one_b2 * gd * gd;
            st[local] = m;
            st[t.count + local] = v;
            p -= step_size * m / (sqrtf(v) + a.adam_eps);
        } else {   /* AdamW */
            float m = a.b1 * st[local] + a.one_b1 * g;
            float v = a.b2 * st[t.count + local] + a.one_b2 * g * g;
            st[local] = m;
            st[t.count + local] = v;
            p = p * (1.0f - lr * wd) - step_size * m / (sqrtf(v) * a.inv_sqrt_bc2 + a.adam_eps);
        }
        params[e] = p;
        if (params_act) params_act[e] = rt_st<T>(p);
    }
}

rt_cuda_optim *rt_cuda_optim_create(const rt_optim_config *cfg, const long *offsets, const long *counts,
                                    const int *exempt, int n_tensors, float weight_decay, double clip,
                                    float grad_div) {
    rt_cuda_optim *o = (rt_cuda_optim *)rt_xcalloc(1, sizeof *o);
    o->cfg = *cfg;
    o->n_tensors = n_tensors;
    o->per = rt_optim_state_per_param(cfg);
    o->clip = clip;
    o->grad_div = grad_div;
    tensor_info *ti = (tensor_info *)rt_xcalloc((size_t)n_tensors, sizeof *ti);
    int nc = 0;
    for (int t = 0; t < n_tensors; t++) nc += (int)((counts[t] + CHUNK - 1) / CHUNK);
    chunk_info *ci = (chunk_info *)rt_xcalloc((size_t)(nc ? nc : 1), sizeof *ci);
    nc = 0;
    for (int t = 0; t < n_tensors; t++) {
        ti[t] = (tensor_info){ offsets[t], counts[t], exempt[t] ? 0.0f : weight_decay, exempt[t], 1.0f, nc, 0 };
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
    o->trust = (float *)rt_cuda_malloc(sizeof(float) * (size_t)(n_tensors ? n_tensors : 1), "LARS/LAMB trust ratios");
    o->scale = (float *)rt_cuda_malloc(sizeof(float), "gradient scale");
    rt_cuda_copy_h2d(o->scale, &grad_div, sizeof grad_div);
    o->scaler = (scaler_state *)rt_cuda_malloc(sizeof *o->scaler, "loss scaler");
    rt_cuda_memset0(o->scaler, sizeof *o->scaler);
    o->args = (update_args *)rt_cuda_malloc(sizeof *o->args, "optimizer step arguments");
    rt_cuda_sync();   /* the host tables are freed next */
    free(ti);
    free(ci);
    return o;
}

void rt_cuda_optim_set_mults(rt_cuda_optim *o, const float *lr_mult, const float *decay_mult) {
    tensor_info *ti = (tensor_info *)rt_xcalloc((size_t)(o->n_tensors ? o->n_tensors : 1), sizeof *ti);
    rt_cuda_copy_d2h(ti, o->tensors, sizeof *ti * (size_t)o->n_tensors);
    for (int t = 0; t < o->n_tensors; t++) ti[t].lr_mult = lr_mult[t], ti[t].weight_decay *= decay_mult[t];
    rt_cuda_copy_h2d(o->tensors, ti, sizeof *ti * (size_t)o->n_tensors);
    rt_cuda_sync();   /* ti is freed next */
    free(ti);
}

void rt_cuda_optim_set_loss_scale(rt_cuda_optim *o, int mode, float init_scale) {
    scaler_state st = { init_scale, mode, 0, 0, 0 };
    o->scaler_mode = mode;
    rt_cuda_copy_h2d(o->scaler, &st, sizeof st);
    rt_cuda_sync();   /* st lives on this stack frame */
}

const float *rt_cuda_optim_loss_scale(const rt_cuda_optim *o) { return o->scaler_mode ? &o->scaler->scale : NULL; }

void rt_cuda_optim_scaler_get(const rt_cuda_optim *o, double state_host[3]) {
    scaler_state st;
    rt_cuda_copy_d2h(&st, o->scaler, sizeof st);
    state_host[0] = st.scale, state_host[1] = st.clean, state_host[2] = (double)st.skipped;
}

void rt_cuda_optim_scaler_set(rt_cuda_optim *o, const double state_host[3]) {
    scaler_state st = { (float)state_host[0], o->scaler_mode, (int)state_host[1], 0, (long long)state_host[2] };
    rt_cuda_copy_h2d(o->scaler, &st, sizeof st);
    rt_cuda_sync();
}

void rt_cuda_optim_set_step(rt_cuda_optim *o, double lr, double momentum_scale, long step) {
    update_args a = {};
    a.kind = (int)o->cfg.kind;
    a.per = o->per;
    a.lr = (float)lr;
    a.first_step = step == 0;
    a.step = step;
    if (o->cfg.kind == RT_OPTIM_SGD) {
        a.momentum = o->cfg.sgd.momentum, a.dampening = o->cfg.sgd.dampening, a.nesterov = o->cfg.sgd.nesterov;
        a.lr_in_velocity = o->cfg.sgd.lr_in_velocity;
        a.larc = (int)o->cfg.sgd.larc;
        /* Intel Caffe's warmup: momentum * (rate / prev_rate), in float (rt_sgd_step) */
        if (o->cfg.sgd.warmup_momentum_correction && momentum_scale != 0.0 && a.momentum != 0.0f)
            a.momentum *= (float)momentum_scale;
    } else if (o->cfg.kind == RT_OPTIM_LARS) {
        a.momentum = o->cfg.lars.momentum, a.nesterov = o->cfg.lars.nesterov;
    } else if (o->cfg.kind == RT_OPTIM_RMSPROP) {
        const rt_rmsprop_config *c = &o->cfg.rmsprop;
        a.momentum = c->momentum, a.rms_tf = c->tf;
        a.rms_alpha = (float)c->alpha, a.rms_one_alpha = (float)(1.0 - c->alpha), a.rms_eps = (float)c->eps;
    } else if (o->cfg.kind == RT_OPTIM_ADAGRAD || o->cfg.kind == RT_OPTIM_ADADELTA) {
        const rt_adaptive_config *c = &o->cfg.adaptive;
        a.decay = (float)c->decay, a.one_decay = (float)(1.0 - c->decay), a.adam_eps = (float)c->eps;
    } else if (o->cfg.kind == RT_OPTIM_LAMB) {
        const rt_lamb_config *c = &o->cfg.lamb;
        double t = (double)step + 1.0;
        a.step_size = (float)(1.0 / (1.0 - pow(c->beta1, t)));
        a.inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(c->beta2, t)));
        a.b1 = (float)c->beta1, a.b2 = (float)c->beta2, a.adam_eps = (float)c->eps;
        a.beta1 = c->beta1, a.beta2 = c->beta2;
        a.one_b1 = (float)(1.0 - c->beta1), a.one_b2 = (float)(1.0 - c->beta2);
        a.trust_clip = c->trust_clip;
    } else {
        const rt_adamw_config *c = &o->cfg.adamw;
        double t = (double)step + 1.0;
        a.step_size = (float)((float)lr / (1.0 - pow(c->beta1, t)));
        a.inv_sqrt_bc2 = (float)(1.0 / sqrt(1.0 - pow(c->beta2, t)));
        a.caffe_adam = c->caffe_form;
        if (c->caffe_form) a.step_size = (float)((double)(float)lr * sqrt(1.0 - pow(c->beta2, t)) / (1.0 - pow(c->beta1, t)));
        a.b1 = (float)c->beta1, a.b2 = (float)c->beta2, a.adam_eps = (float)c->eps;
        a.beta1 = c->beta1, a.beta2 = c->beta2;
        a.one_b1 = (float)(1.0 - c->beta1), a.one_b2 = (float)(1.0 - c->beta2);
    }
    /* Captured, the launch would freeze this step's scalars into every replay. */
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(rt_stream(), &capturing));
    if (capturing != cudaStreamCaptureStatusNone) rt_die("internal: rt_cuda_optim_set_step inside a CUDA graph capture");
    store_step_args_kernel<<<1, 1, 0, rt_stream()>>>(o->args, a);
    CUDA_LAUNCHED();
}

void rt_cuda_optim_launch(rt_cuda_optim *o, float *params, void *params_act, float *state, const float *grads) {
    if (o->n_chunks == 0) return;
    int lars = o->cfg.kind == RT_OPTIM_LARS, lamb = o->cfg.kind == RT_OPTIM_LAMB;
    int larc = o->cfg.kind == RT_OPTIM_SGD && o->cfg.sgd.larc != RT_LARC_NONE;
    float eta = lars ? o->cfg.lars.eta : larc ? o->cfg.sgd.larc_eta : 0.0f;
    double lamb_max = lamb ? o->cfg.lamb.max_grad_norm : 0.0;
    scaler_state *sc = o->scaler_mode ? o->scaler : NULL;
    if (o->clip > 0 || lars || larc || sc || lamb_max > 0) {
        chunk_norms_kernel<<<o->n_chunks, OPT_THREADS, 0, rt_stream()>>>(o->sq_g, lars || larc ? o->sq_p : NULL,
                                                                        o->chunks, o->tensors, grads, params);
        CUDA_LAUNCHED();
        finalize_kernel<<<1, FINALIZE_THREADS, 0, rt_stream()>>>(o->scale, lars || larc ? o->trust : NULL, o->sq_g,
                                                     o->sq_p, o->tensors, o->n_tensors, o->n_chunks, o->clip, lamb_max,
                                                     eta, lars ? o->cfg.lars.eps : 0.0f, o->grad_div, sc,
                                                     larc ? o->cfg.sgd.momentum : -1.0f,
                                                     larc && o->cfg.sgd.larc_intel ? o->cfg.sgd.larc_weight_decay : -1.0f);
        CUDA_LAUNCHED();
    }
    float *st = o->per ? state : NULL;
    if (lamb) {   /* the gradient norms are spent: their buffer takes the update's */
        lamb_moments_kernel<<<o->n_chunks, OPT_THREADS, 0, rt_stream()>>>(o->sq_g, o->sq_p, st, params, grads,
                                                                         o->chunks, o->tensors, o->scale, o->args, sc);
        CUDA_LAUNCHED();
        lamb_trust_kernel<<<1, FINALIZE_THREADS, 0, rt_stream()>>>(o->trust, o->sq_g, o->sq_p, o->tensors, o->n_tensors, o->args);
        CUDA_LAUNCHED();
    }
    RT_ACT_DISPATCH(update_kernel<T><<<o->n_chunks, OPT_THREADS, 0, rt_stream()>>>(
        params, (T *)params_act, st, grads, o->chunks, o->tensors, o->scale, o->trust, o->args, sc));
    CUDA_LAUNCHED();
}

void rt_cuda_optim_step(rt_cuda_optim *o, float *params, void *params_act, float *state, const float *grads,
                        double lr, long step) {
    rt_cuda_optim_set_step(o, lr, 1.0, step);
    rt_cuda_optim_launch(o, params, params_act, state, grads);
}
