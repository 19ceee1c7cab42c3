/* Top-1 / top-5 accuracy counts: the rank of the label's logit among the classes. */
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(topk_correct)(int *top1, int *top5, const real_t *logits /*N,K*/,
                         const int32_t *labels /*N*/, int n, int k) {
    int c1 = 0, c5 = 0;
    for (int b = 0; b < n; b++) {
        const real_t *z = logits + (long)b * k;
        real_t target = z[labels[b]];
        /* classes that beat the label; an equal logit at a lower index also beats it, as
         * in a stable sort, so an all-ties output is not counted correct for every label */
        int rank = 0;
        for (int j = 0; j < k; j++)
            if (z[j] > target || (z[j] == target && j < labels[b])) rank++;
        c1 += rank < 1;
        c5 += rank < 5;
    }
    *top1 = c1;
    *top5 = c5;
}
