/* OpenMP wait policy of the trainer: passive (sleeping) workers unless the user chose one.
 * libgomp's default spins at every barrier; the ops open dozens of parallel regions per step,
 * and on a machine whose cores are shared (other jobs, more ranks than cores) a spinning thread
 * burns the time slice its partner needs. Measured on the 2-core machine, two LeNet trainers
 * side by side: 405 img/s each by default, 870 passive; alone the two policies are within
 * noise (1660-1720 img/s). libgomp reads the variable when it loads, before main, so the
 * trainer sets it and re-executes itself once. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_trainer.h"

void rt_trainer_choose_omp_policy(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("TRAINC_NO_REEXEC")) return;
    setenv("OMP_WAIT_POLICY", "passive", 1);
    setenv("TRAINC_NO_REEXEC", "1", 1);   /* never loop, whatever happens below */
    execv("/proc/self/exe", argv);
    /* No /proc (or exec refused): carry on with libgomp's default; only speed differs. */
}
