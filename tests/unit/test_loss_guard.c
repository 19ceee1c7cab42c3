/* The trainer's divergence test: a non-finite loss ends a run at once, except under FP16
 * loss scaling, where only a long run of them does. */
#include <math.h>
#include "rt_loss_guard.h"
#include "testlib.h"

int main(void) {
    rt_loss_guard g = { 0 };
    CHECK(rt_loss_guard_step(&g, 2.3, 0) == 0);
    CHECK(rt_loss_guard_step(&g, INFINITY, 0) == 1);   /* no scaling: at once */
    g = (rt_loss_guard){ 0 };
    CHECK(rt_loss_guard_step(&g, NAN, 0) == 1);

    /* scaling: overflowing forwards are skipped steps until there are too many in a row */
    g = (rt_loss_guard){ 0 };
    for (int i = 0; i < RT_LOSS_GUARD_MAX_RUN; i++) CHECK(rt_loss_guard_step(&g, INFINITY, 1) == 0);
    CHECK(rt_loss_guard_step(&g, 1.0, 1) == 0);         /* a finite loss resets the count */
    CHECK(g.overflow_run == 0);
    for (int i = 0; i < RT_LOSS_GUARD_MAX_RUN; i++) CHECK(rt_loss_guard_step(&g, NAN, 1) == 0);
    CHECK(rt_loss_guard_step(&g, -INFINITY, 1) == 1);   /* one more: diverged */
    return test_finish("test_loss_guard");
}
