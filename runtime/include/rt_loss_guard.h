/* When a step's non-finite loss ends the run: at once without loss scaling, and only after a
 * long run of them with FP16 loss scaling, where a step whose forward overflows is skipped
 * like any other overflowing step (its gradients are not finite either). */
#ifndef RT_LOSS_GUARD_H
#define RT_LOSS_GUARD_H

/* Consecutive overflowing forwards after which a loss-scaled run is called diverged: the
 * scale only touches the backward, so a forward that keeps overflowing never recovers. */
#define RT_LOSS_GUARD_MAX_RUN 50

typedef struct {
    long overflow_run;   /* steps in a row whose loss was not finite */
} rt_loss_guard;

/* Notes one step's loss (summed over ranks, so every rank decides alike). Returns 1 when the
 * run must end as diverged, 0 to go on. */
int rt_loss_guard_step(rt_loss_guard *g, double loss, int loss_scaling);

#endif
