/* Reduction slots (rt_slots.h): how many, from the machine and the launch. */
#include <omp.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_slots.h"

long rt_env_count(const char *name) {
    const char *v = getenv(name);
    if (!v) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return n > 0 && end != v ? n : 0;
}

long rt_local_ranks(void) {
    static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (rt_env_count(vars[i])) return rt_env_count(vars[i]);
    return 1;
}

/* The pinned-arithmetic runtime (mk/runtime.mk) gives the same bits on every machine, so
 * its slots cannot follow the machine's CPU count. */
#define PINNED_SLOTS 4

int rt_slots(void) {
#ifdef RT_PINNED_ARITH
    return PINNED_SLOTS;
#endif
    static int slots;
    int r = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (r > 0) return r;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long per_rank = (cpus > 0 ? cpus : 1) / rt_local_ranks();
    r = per_rank < 1 ? 1 : per_rank > RT_SLOTS_MAX ? RT_SLOTS_MAX : (int)per_rank;
    __atomic_store_n(&slots, r, __ATOMIC_RELEASE);
    return r;
}

int rt_slot_slices(void) {
    int t = omp_get_max_threads(), r = rt_slots();
    return t > r ? t : r;
}

int rt_slot_threads(void) {
    int t = omp_get_max_threads(), r = rt_slots();
    return t < r ? t : r;
}
