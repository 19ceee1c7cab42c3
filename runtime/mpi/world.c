/* The MPI world: joining it only when a launcher started several ranks, each rank's pid and
 * host (so a lost rank can be named), and leaving it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm_internal.h"
#include "rt_core.h"
#include "rt_env.h"

void comm_check(rt_comm *c, int rc, const char *what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    rt_die_hint("if another rank failed, its own message says why; resume from the last checkpoint",
                "MPI failed during %s: %s", what, text);
}

/* Two ranks can look at each other's processes only if they share the machine's boot id
 * (host names can repeat across containers) and the pid namespace (containers on one
 * machine share the boot id, yet a peer's pid means another process, or none, here: that
 * read as a lost rank). Without /proc the id stays empty and no peer is checked locally. */
static void read_machine_id(char *out, size_t cap) {
    out[0] = '\0';
    char boot[40] = "", ns[32] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (fgets(boot, (int)sizeof boot, f)) boot[strcspn(boot, "\n")] = '\0';
    fclose(f);
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    if (!boot[0] || n <= 0) return;
    ns[n] = '\0';
    snprintf(out, cap, "%.36s %.26s", boot, ns);   /* a boot id is 36 characters, "pid:[N]" at most 16 */
}

static void gather_peers(rt_comm *c) {
    typedef struct { int pid, answers_pings; char host[COMM_HOST_LEN], boot[COMM_HOST_LEN]; } peer;
    peer me = { (int)getpid(), c->answers_pings, "", "" };
    memcpy(me.host, c->host, sizeof me.host);
    memcpy(me.boot, c->boot, sizeof me.boot);
    peer *all = rt_xcalloc((size_t)c->size, sizeof *all);
    MPI_Request req;
    comm_check(c, MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, c->comm, &req),
               "start-up");
    comm_wait(c, 1, &req, "the start-up exchange of pids and hosts");
    for (int r = 0; r < c->size; r++) {
        c->peer_pid[r] = all[r].pid;
        c->peer_answers[r] = all[r].answers_pings;
        memcpy(c->peer_host[r], all[r].host, COMM_HOST_LEN);
        memcpy(c->peer_boot[r], all[r].boot, COMM_HOST_LEN);
        c->peer_host[r][COMM_HOST_LEN - 1] = c->peer_boot[r][COMM_HOST_LEN - 1] = '\0';
    }
    free(all);
}

rt_comm *rt_comm_init(void) {
    if (!rt_comm_launched()) return NULL;
    int provided = 0, size = 1;
    /* The training thread and, with overlap, the communication thread call MPI (each on a
     * communicator of its own); OpenMP workers and the data thread never do. */
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        rt_die_hint("check the MPI installation and the launcher (mpirun, srun --mpi=pmix)",
                    "cannot join the MPI world");
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size == 1) {   /* a world of one: no MPI in the training loop at all */
        MPI_Finalize();
        return NULL;
    }
    rt_comm *c = rt_xcalloc(1, sizeof *c);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    c->size = size;
    /* Errors come back as codes so a rank can say what failed instead of aborting blindly. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    MPI_Comm_dup(c->comm, &c->grad_comm);
    MPI_Comm_dup(c->comm, &c->notice_comm);
    /* TRAINC_COMM_THREAD=0 keeps overlap on the training thread (for comparison). */
    c->comm_thread = provided >= MPI_THREAD_MULTIPLE && rt_env_bool(RT_ENV_TRAINC_COMM_THREAD);
    c->timeout_s = (double)rt_env_long(RT_ENV_TRAINC_COMM_TIMEOUT);
    c->hung_rank = -1;
    gethostname(c->host, sizeof c->host - 1);
    read_machine_id(c->boot, sizeof c->boot);
    /* The watchdog's answering thread makes MPI calls beside the training thread's;
     * TRAINC_HEARTBEAT=0 leaves it out (peers then ping this rank no more). */
    c->answers_pings = provided >= MPI_THREAD_MULTIPLE && rt_env_bool(RT_ENV_TRAINC_HEARTBEAT);
    c->peer_answers = rt_xcalloc((size_t)size, sizeof *c->peer_answers);
    c->peer_pid = rt_xcalloc((size_t)size, sizeof *c->peer_pid);
    c->peer_host = rt_xcalloc((size_t)size, sizeof *c->peer_host);
    c->peer_boot = rt_xcalloc((size_t)size, sizeof *c->peer_boot);
    static char prefix[32];
    snprintf(prefix, sizeof prefix, "rank %d: ", c->rank);
    rt_set_error_prefix(prefix);
    /* The launcher sends SIGTERM when another rank dies: let waits see it (comm_wait). */
    rt_install_stop_signals();
    rt_stop_on_launcher_exit();
    gather_peers(c);
    comm_heartbeat_start(c);
    comm_fail_install(c);
    return c;
}

void rt_comm_finalize(rt_comm *c) {
    if (!c) return;
    rt_comm_barrier(c, "the end of the run");
    comm_progress_stop(&c->progress);
    comm_heartbeat_free(c);
    free(c->reqs);
    free(c->peer_answers);
    free(c->peer_pid);
    free(c->peer_host);
    free(c->peer_boot);
    rt_set_die_hook(NULL);
    MPI_Comm_free(&c->notice_comm);
    MPI_Comm_free(&c->grad_comm);
    MPI_Comm_free(&c->comm);
    free(c);
    MPI_Finalize();
}

int rt_comm_rank(const rt_comm *c) { return c ? c->rank : 0; }
int rt_comm_size(const rt_comm *c) { return c ? c->size : 1; }
