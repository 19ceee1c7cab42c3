/* Mixup and CutMix over a global batch (timm Mixup / torchvision v2 MixUp and CutMix): one
 * lambda ~ Beta(alpha, alpha) and one box per global batch, drawn from (seed, epoch, step);
 * each sample is mixed with the sample before it in the global batch (torchvision's
 * batch.roll(1)), so a rank's share needs one sample from outside it, which it prepares
 * itself: the result is the same at any rank count. The labels get the partner label and the
 * weight of the own label (RT_TARGET_WORDS's layout). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "loader_internal.h"
#include "rt_rng.h"

/* Gamma(a, 1) by Marsaglia and Tsang; for a < 1 through Gamma(a + 1) * U^(1/a). */
static double gamma_draw(rt_rng *r, double a) {
    if (a < 1) {
        double u = augment_uniform(r);
        return gamma_draw(r, a + 1) * pow(u > 0 ? u : 0x1.0p-53, 1 / a);
    }
    double d = a - 1.0 / 3, c = 1 / sqrt(9 * d);
    for (;;) {
        double x = rt_rng_normal(r), v = 1 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = augment_uniform(r);
        if (u < 1 - 0.0331 * x * x * x * x) return d * v;
        if (u > 0 && log(u) < 0.5 * x * x + d * (1 - v + log(v))) return d * v;
    }
}

double augment_beta(rt_rng *r, double alpha) {
    double x = gamma_draw(r, alpha), y = gamma_draw(r, alpha);
    return x + y > 0 ? x / (x + y) : 0.5;
}

int augment_mix_plan(const rt_augment_config *a, uint64_t batch_key, int h, int w, augment_mix *m) {
    rt_rng r;
    rt_rng_init(&r, batch_key, RT_STREAM_AUGMENT);
    memset(m, 0, sizeof *m);
    m->lam = 1;
    if (!(a->mixup_alpha > 0 || a->cutmix_alpha > 0) || augment_uniform(&r) >= a->mix_prob) return 0;
    m->cutmix = a->cutmix_alpha > 0 && (a->mixup_alpha <= 0 || augment_uniform(&r) < a->mix_switch_prob);
    double lam = augment_beta(&r, m->cutmix ? a->cutmix_alpha : a->mixup_alpha);
    if (m->cutmix) {   /* torchvision v2 CutMix: a box of half-sides r * W, r * H around a random centre */
        int cx = (int)rt_rng_below(&r, (uint32_t)w), cy = (int)rt_rng_below(&r, (uint32_t)h);
        double rr = 0.5 * sqrt(1 - lam);
        int half_w = (int)(rr * w), half_h = (int)(rr * h);
        m->x0 = cx - half_w < 0 ? 0 : cx - half_w;
        m->y0 = cy - half_h < 0 ? 0 : cy - half_h;
        m->x1 = cx + half_w > w ? w : cx + half_w;
        m->y1 = cy + half_h > h ? h : cy + half_h;
        lam = 1 - (double)(m->x1 - m->x0) * (m->y1 - m->y0) / ((double)w * h);   /* the clipped box's real area */
    }
    m->lam = lam;
    return 1;
}

/* dst = mix of dst and partner (one C x H x W float sample). */
static void mix_sample(float *dst, const float *partner, const augment_mix *m, int c, int h, int w) {
    if (!m->cutmix) {
        float lam = (float)m->lam;
        for (long i = 0; i < (long)c * h * w; i++) dst[i] = lam * dst[i] + (1 - lam) * partner[i];
        return;
    }
    for (int ch = 0; ch < c; ch++)
        for (int y = m->y0; y < m->y1; y++) {
            size_t off = ((size_t)ch * h + y) * w + m->x0;
            memcpy(dst + off, partner + off, (size_t)(m->x1 - m->x0) * sizeof(float));
        }
}

void augment_mix_batch(const rt_loader *l, const uint32_t *perm, int64_t epoch, int64_t step, long lo, long hi,
                       float *x, int32_t *y) {
    const rt_dataset *ds = l->ds;
    const long B = l->cfg.global_batch, n = l->batch_per_rank, first = (long)step * B;
    const size_t sample = (size_t)ds->c * ds->h * ds->w;
    uint64_t aug_key = rt_hash_u64(l->cfg.seed, RT_STREAM_AUGMENT, (uint64_t)epoch);
    augment_mix m;
    int mixed = augment_mix_plan(&l->cfg.augment, rt_hash_u64(aug_key, (uint64_t)step, 2), ds->h, ds->w, &m);
    float lam = (float)m.lam;
    /* The partner of the share's first sample: the one before it in the global batch,
     * prepared here exactly as its own rank prepares it. */
    long before = (lo - 1 + B) % B;
    float *partner = rt_xmalloc(l->sample_bytes);
    int32_t partner_label;
    loader_fill_samples(l, perm, epoch, first, before, before + 1, partner, &partner_label);
    for (long j = hi - 1; j >= lo; j--) {   /* downwards: row j - 1 is still unmixed */
        long row = j - lo;
        const float *src = j > lo ? x + (size_t)(row - 1) * sample : partner;
        int32_t other = j > lo ? y[row - 1] : partner_label;
        if (mixed) mix_sample(x + (size_t)row * sample, src, &m, ds->c, ds->h, ds->w);
        y[n + row] = mixed ? other : y[row];
        memcpy(&y[2 * n + row], &lam, sizeof lam);
    }
    free(partner);
}
