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

/* Slurm's tasks on node `node` of a step, from its SLURM_STEP_TASKS_PER_NODE list: counts,
 * each optionally repeated, "2(x3),1" (nodes 0-2 run 2 tasks, node 3 one); 0 if malformed. */
long rt_slurm_node_tasks(const char *list, long node) {
    const char *p = list;
    while (p && *p) {
        char *end;
        long n = strtol(p, &end, 10), times = 1;
        if (end == p || n < 1) return 0;
        p = end;
        if (*p == '(') {
            if (p[1] != 'x') return 0;
            times = strtol(p + 2, &end, 10);
            if (end == p + 2 || times < 1 || *end != ')') return 0;
            p = end + 1;
        }
        if (node < times) return n;
        node -= times;
        if (*p == ',') p++;
        else if (*p) return 0;
    }
    return 0;
}

/* srun sets SLURM_NTASKS_PER_NODE only when asked for it; the step's task list is always
 * there (not in a batch script's own process, which is a world of one). */
long rt_local_ranks(void) {
    static const char *const vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (rt_env_count(vars[i])) return rt_env_count(vars[i]);
    const char *step = getenv("SLURM_STEP_TASKS_PER_NODE"), *node = getenv("SLURM_NODEID");
    long here = step && node ? rt_slurm_node_tasks(step, strtol(node, NULL, 10)) : 0;
    if (here) return here;
    if (rt_env_count("SLURM_NTASKS_PER_NODE")) return rt_env_count("SLURM_NTASKS_PER_NODE");
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
