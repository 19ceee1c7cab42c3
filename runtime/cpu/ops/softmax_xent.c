/* Softmax cross-entropy with label smoothing (torch semantics), mean over the batch, with
 * the backward fused in: dlogits = dscale * (softmax - smoothed target). */
#include "rt_ops.h"
#include "rt_real.h"
#include "rt_slots.h"

/* Per sample, with lse = log sum exp(z): -log p_j = lse - z_j, so
 * loss = (1-eps)*(lse - z_y) + eps*(lse - mean_j z_j); target q = (1-eps)*onehot + eps/K. */
double RT_FN(softmax_xent_forward)(real_t *dlogits /*N,K or NULL*/, const real_t *logits /*N,K*/,
                                   const int32_t *labels /*N*/, int n, int k,
                                   real_t smoothing, real_t dscale) {
    /* the batch's sum in reduction slots (rt_slots.h): the same bits for any thread count */
    double part[RT_SLOTS_MAX] = { 0 };
    int slots = rt_slots();
    #pragma omp parallel for schedule(static) num_threads(rt_slot_threads()) if ((long)n * k > 16384)
    for (int s = 0; s < slots; s++)
    for (int b = rt_slot_begin(n, s, slots); b < rt_slot_begin(n, s + 1, slots); b++) {
        const real_t *z = logits + (long)b * k;
        int y = labels[b];
        real_t zmax = z[0];
        for (int j = 1; j < k; j++) if (z[j] > zmax) zmax = z[j];
        double sum = 0, zsum = 0;   /* double: K can be 1000+ terms */
        for (int j = 0; j < k; j++) { sum += rt_exp(z[j] - zmax); zsum += z[j]; }
        double lse = zmax + log(sum);
        part[s] += (1 - smoothing) * (lse - z[y]) + smoothing * (lse - zsum / k);
        if (!dlogits) continue;
        real_t *d = dlogits + (long)b * k;
        real_t off = smoothing / k, inv_sum = (real_t)(1 / sum);
        for (int j = 0; j < k; j++) {
            real_t p = rt_exp(z[j] - zmax) * inv_sum;
            d[j] = dscale * (p - off - (j == y ? 1 - smoothing : 0));
        }
    }
    double total = 0;
    for (int i = 0; i < slots; i++) total += part[i];
    return total / n;
}
