/* The loss against dense targets: softmax cross-entropy or per-class sigmoid binary
 * cross-entropy (timm BinaryCrossEntropy), each against the label-smoothed one-hot target,
 * optionally mixed with a partner label (mixup/cutmix), with the backward fused in. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"

/* Sample b's target for class j: w * q(a)_j + (1 - w) * q(c)_j with q(y) = (1 - eps) * onehot(y)
 * + eps / K (torchvision's CrossEntropyLoss(label_smoothing) on mixed one-hots, and timm's
 * mixup_target: the same), then, for BCE with a threshold, 1 above it and 0 otherwise. */
static inline real_t class_target(int j, int ya, int yb, real_t w, real_t eps, int k, real_t threshold) {
    real_t t = eps / k + (1 - eps) * ((j == ya ? w : 0) + (j == yb ? 1 - w : 0));
    if (threshold > 0) t = t > threshold ? 1 : 0;
    return t;
}

double RT_FN(target_loss_forward)(real_t *dlogits, const real_t *logits, const int32_t *targets,
                                  int mixed, int n, int k, int bce, real_t smoothing,
                                  real_t bce_threshold, real_t dscale) {
    /* the batch's sum in reduction slots (rt_slots.h): the same bits for any thread count */
    double part[RT_SLOTS_MAX] = { 0 };
    int slots = rt_slots();
    #pragma omp parallel for schedule(static) num_threads(rt_slot_threads()) if ((long)n * k > 16384)
    for (int s = 0; s < slots; s++)
    for (int b = rt_slot_begin(n, s, slots); b < rt_slot_begin(n, s + 1, slots); b++) {
        const real_t *z = logits + (long)b * k;
        int ya = targets[b], yb = mixed ? targets[n + b] : ya;
        float wf = 1.0f;
        if (mixed) memcpy(&wf, &targets[2L * n + b], sizeof wf);   /* the weight travels as float bits */
        real_t w = wf;
        real_t *d = dlogits ? dlogits + (long)b * k : NULL;
        if (bce) {
            /* per class: max(z,0) - z t + log(1 + exp(-|z|)), stable for any z; the row's
             * share of the mean over N*K is its sum / K */
            double row = 0;
            for (int j = 0; j < k; j++) {
                real_t t = class_target(j, ya, yb, w, smoothing, k, bce_threshold);
                real_t zj = z[j];
                row += (zj > 0 ? zj : 0) - zj * t + rt_log1p(rt_exp(-(zj > 0 ? zj : -zj)));
                if (d) d[j] = dscale * (1 / (1 + rt_exp(-zj)) - t) / k;
            }
            part[s] += row / k;
            continue;
        }
        real_t zmax = z[0];
        for (int j = 1; j < k; j++) if (z[j] > zmax) zmax = z[j];
        double sum = 0, tz = 0;   /* with sum_j t_j = 1: loss = lse - sum_j t_j z_j */
        for (int j = 0; j < k; j++) {
            sum += rt_exp(z[j] - zmax);
            tz += class_target(j, ya, yb, w, smoothing, k, 0) * z[j];
        }
        part[s] += zmax + log(sum) - tz;
        if (!d) continue;
        real_t inv_sum = (real_t)(1 / sum);
        for (int j = 0; j < k; j++)
            d[j] = dscale * (rt_exp(z[j] - zmax) * inv_sum - class_target(j, ya, yb, w, smoothing, k, 0));
    }
    double total = 0;
    for (int i = 0; i < slots; i++) total += part[i];
    return total / n;
}
