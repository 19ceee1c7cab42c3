/* Whether an MPI launcher (mpirun, srun) started this process as one of several ranks: read
 * from the environment alone, so it answers the same with or without MPI linked in. */
#include <stdlib.h>

#include "rt_comm.h"

long rt_launcher_ranks(void) {
    /* Open MPI's mpirun, MPICH/Hydra or srun with PMI-2, and srun's own step size. */
    static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS" };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *v = getenv(sizes[i]);
        if (v && *v) return strtol(v, NULL, 10);
    }
    return getenv("PMIX_RANK") ? 0 : 1;   /* PMIx (srun --mpi=pmix) names no size: ask MPI */
}

int rt_comm_launched(void) {
    long n = rt_launcher_ranks();
    return n > 1 || n == 0;
}
