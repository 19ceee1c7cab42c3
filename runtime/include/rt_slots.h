/* Reduction slots: the fixed pieces a CPU op cuts a batch (or a GEMM's output) into, so that
 * its sums have one order whatever the OpenMP thread count. Slot k of R holds items
 * [n*k/R, n*(k+1)/R) and sums them in order into a partial of its own; the partials are then
 * added in slot order. Threads take whole slots, so 1, 2 or R threads give the same bits.
 * R is a property of the machine and the launch, not of OMP_NUM_THREADS: the CPUs online
 * divided among the ranks that this node runs, between 1 and RT_SLOTS_MAX. With as many
 * threads as slots (the default) the work is cut exactly as one piece per thread. */
#ifndef RT_SLOTS_H
#define RT_SLOTS_H

#define RT_SLOTS_MAX 64

/* R, decided once per process. */
int rt_slots(void);
/* How many per-thread-or-per-slot workspace slices an op needs: max(R, OpenMP threads). */
int rt_slot_slices(void);
/* The threads worth starting for R slots of work: min(R, OpenMP threads), at least 1. */
int rt_slot_threads(void);
/* A positive integer environment value (a launcher's or OpenMP's, not TRAINC_*, which
 * rt_env.h reads), else 0; OMP_NUM_THREADS may be a list: its first. */
long rt_env_count(const char *name);
/* Ranks on this node as the launchers tell them (Open MPI, MPICH/Hydra, Slurm's srun); 1 if
 * none. Under srun and mpirun the same ranks per node give the same slots, so the same bits. */
long rt_local_ranks(void);
/* Tasks on node `node` (0-based) in Slurm's "2(x3),1" tasks-per-node form; 0 if malformed. */
long rt_slurm_node_tasks(const char *list, long node);

/* First item of slot k when n items are cut into r slots. */
static inline int rt_slot_begin(int n, int k, int r) { return (int)((long)n * k / r); }

#endif
