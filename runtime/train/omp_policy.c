/* Settings of the trainer's libraries that they read when they load, before main (libgomp
 * and OpenBLAS): the trainer sets them and re-executes itself once, by its own
 * path, so that ps and top keep showing its name rather than "exe".
 *
 * OpenMP wait policy, unless the user chose one (OMP_WAIT_POLICY or GOMP_SPINCOUNT): how long
 * a worker spins at a barrier before it sleeps. The ops open dozens of parallel regions per
 * step, so the choice shows in throughput (bench/RESULTS.md, "OpenMP wait policy"):
 *   - alone, a short spin (GOMP_SPINCOUNT=10000, about 0.5 ms: longer than the serial gaps
 *     between a step's parallel regions) beats sleeping at once (passive);
 *   - where trainers share the cores, a spinning thread burns the time slice its partner
 *     needs, and passive wins.
 * So: the short spin, or passive where this node's ranks times threads exceed its cores.
 *
 * OpenBLAS threads, unless OPENBLAS_NUM_THREADS is set: one. rt_gemm pins OpenBLAS to one
 * thread at its first call anyway (the ops thread with OpenMP, rt_gemm.h), but the library
 * starts a pool of workers when it loads, one of which spins on sched_yield at start-up.
 *
 * No huge pages by default: glibc.malloc.hugetlb=1 was slower on the ResNet example and no
 * better on the LeNet (bench/RESULTS.md), and costs start-up time;
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1 still turns them on.
 *
 * OMP_PROC_BIND or OMP_PLACES: libgomp binds the initial thread to the first place as it
 * loads, and an exec'd process inherits that single place, so the re-executed trainer would
 * run one thread. The process's own set (the union of the places) is restored for the exec. */
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt_env.h"
#include "rt_slots.h"
#include "rt_trainer.h"

/* The CPUs this process may run on: the union of libgomp's places where it made them (it has
 * then bound this thread to the first), else this thread's affinity. 0 if unknown. */
static int process_cpus(cpu_set_t *set) {
    CPU_ZERO(set);
    int places = omp_get_num_places();
    for (int p = 0; p < places; p++) {
        int ids[CPU_SETSIZE];
        if (omp_get_place_num_procs(p) > CPU_SETSIZE) return sched_getaffinity(0, sizeof *set, set) == 0;
        omp_get_place_proc_ids(p, ids);
        for (int i = 0; i < omp_get_place_num_procs(p); i++)
            if (ids[i] >= 0 && ids[i] < CPU_SETSIZE) CPU_SET(ids[i], set);
    }
    if (places > 0 && CPU_COUNT(set) > 0) return 1;
    return sched_getaffinity(0, sizeof *set, set) == 0;
}

/* Sets name=value unless the user set it; returns whether it did. */
static int default_env(const char *name, const char *value) {
    if (getenv(name)) return 0;
    setenv(name, value, 1);
    return 1;
}

/* Re-executes this binary with the process's CPUs; returns only if that failed. */
static void reexec(char **argv, const cpu_set_t *cpus, int have_cpus) {
    cpu_set_t mine;
    int restore = have_cpus && sched_getaffinity(0, sizeof mine, &mine) == 0 && !CPU_EQUAL(&mine, cpus) &&
                  sched_setaffinity(0, sizeof *cpus, cpus) == 0;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        execv(self, argv);
    }
    execv("/proc/self/exe", argv);   /* e.g. the binary was replaced since it started */
    if (restore) sched_setaffinity(0, sizeof mine, &mine);
}

void rt_trainer_choose_omp_policy(char **argv) {
    if (rt_env_bool(RT_ENV_TRAINC_NO_REEXEC)) return;
    cpu_set_t cpus;
    int have_cpus = process_cpus(&cpus);
    int changed = 0;
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT")) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        long cores = have_cpus ? CPU_COUNT(&cpus) : n > 0 ? n : 1, threads = rt_env_count("OMP_NUM_THREADS");
        if (!threads) threads = cores;
        if (rt_local_ranks() * threads > cores) setenv("OMP_WAIT_POLICY", "passive", 1);
        else setenv("GOMP_SPINCOUNT", "10000", 1);
        changed = 1;
    }
    changed |= default_env("OPENBLAS_NUM_THREADS", "1");
    if (!changed) return;
    setenv("TRAINC_NO_REEXEC", "1", 1);   /* never loop, whatever happens below */
    reexec(argv, &cpus, have_cpus);
    /* No /proc (or exec refused): carry on with the libraries' defaults; only speed differs. */
}
