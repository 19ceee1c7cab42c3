/* stop_gradient's forward: the identity, into a tensor of its own. It has no backward: the
 * plan routes no gradient from its readers to its input (compiler/lower/plan.c), which is
 * Caffe's propagate_down: false. */
#include <string.h>
#include "rt_ops.h"
#include "rt_real.h"

void RT_FN(stop_gradient_forward)(real_t *out, const real_t *in, long n) {
    if (out != in) memcpy(out, in, sizeof(real_t) * (size_t)n);
}
