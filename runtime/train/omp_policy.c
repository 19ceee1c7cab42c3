/* OpenMP wait policy of the trainer, unless the user chose one (OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT): how long a worker spins at a barrier before it sleeps. The ops open dozens
 * of parallel regions per step, so the choice shows in throughput. Measured on the 2-core
 * machine (bench/RESULTS.md, session 6):
 *   - alone, a short spin (GOMP_SPINCOUNT=10000, tens of microseconds) beat sleeping at once
 *     (passive) in 7 of 8 alternating ResNet runs, median 312.7 vs 297.6 img/s;
 *   - two LeNet trainers side by side on the 2 cores (4 threads), passive gave 2.47-2.64k
 *     img/s together, the short spin 2.39-2.43k, libgomp's default (300000 spins) 1.27-1.74k:
 *     a spinning thread burns the time slice its partner needs.
 * So: the short spin, or passive where this node's ranks times threads exceed its cores.
 * libgomp reads the variables when it loads, before main, so the trainer sets them and
 * re-executes itself once. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_trainer.h"

/* A positive integer environment value, else 0 (OMP_NUM_THREADS may be a list: its first). */
static long env_count(const char *name) {
    const char *v = getenv(name);
    if (!v) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return n > 0 && end != v ? n : 0;
}

/* The cores this process may run on. */
static long usable_cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* Ranks on this node, as the launchers tell them (Open MPI, MPICH/Hydra, Slurm). */
static long local_ranks(void) {
    const char *vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (env_count(vars[i])) return env_count(vars[i]);
    return 1;
}

void rt_trainer_choose_omp_policy(char **argv) {
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || getenv("TRAINC_NO_REEXEC")) return;
    long cores = usable_cores(), threads = env_count("OMP_NUM_THREADS");
    if (!threads) threads = cores;
    if (local_ranks() * threads > cores) setenv("OMP_WAIT_POLICY", "passive", 1);
    else setenv("GOMP_SPINCOUNT", "10000", 1);
    setenv("TRAINC_NO_REEXEC", "1", 1);   /* never loop, whatever happens below */
    execv("/proc/self/exe", argv);
    /* No /proc (or exec refused): carry on with libgomp's default; only speed differs. */
}
