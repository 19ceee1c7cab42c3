/* Start-up handshake: before any data moves, every rank shows the others which executable
 * and which spec it runs, and the world size is checked against the spec. A mismatch (an
 * old binary on one node, a hand-edited spec, -np 2 for a 4-rank spec) would otherwise
 * train silently wrong or hang. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_internal.h"
#include "rt_core.h"

typedef struct {
    char spec[RT_SHA256_HEX_LEN + 1];
    char binary[RT_SHA256_HEX_LEN + 1];
} identity;

/* sha256 of this process's executable file, or "unreadable". */
static void hash_executable(char out[RT_SHA256_HEX_LEN + 1]) {
    FILE *f = fopen("/proc/self/exe", "rb");
    if (!f) {
        snprintf(out, RT_SHA256_HEX_LEN + 1, "unreadable");
        return;
    }
    rt_sha256_ctx h;
    rt_sha256_init(&h);
    static unsigned char buf[1 << 16];
    for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) rt_sha256_update(&h, buf, n);
    fclose(f);
    uint8_t digest[32];
    rt_sha256_final(&h, digest);
    rt_hex_encode(digest, sizeof digest, out);
}

/* Fills msg/hint when the identities or the world size disagree; returns 1 then. */
static int find_mismatch(const identity *all, int size, int spec_ranks, char *msg, size_t mcap, char *hint,
                         size_t hcap) {
    for (int r = 1; r < size; r++)
        if (strcmp(all[r].binary, all[0].binary)) {
            snprintf(msg, mcap, "ranks run different executables: rank 0 runs sha256 %.12s, rank %d runs "
                     "sha256 %.12s", all[0].binary, r, all[r].binary);
            snprintf(hint, hcap, "copy the same trainer binary to every node (or rebuild it everywhere from "
                     "the same spec and trainc)");
            return 1;
        }
    for (int r = 1; r < size; r++)
        if (strcmp(all[r].spec, all[0].spec)) {
            snprintf(msg, mcap, "ranks run different specs: rank 0 runs spec %.12s, rank %d runs spec %.12s",
                     all[0].spec, r, all[r].spec);
            snprintf(hint, hcap, "launch one trainer binary on every rank");
            return 1;
        }
    if (spec_ranks > 0 && spec_ranks != size) {
        snprintf(msg, mcap, "world size mismatch: the spec sets parallel.ranks: %d but the launcher started "
                 "%d ranks", spec_ranks, size);
        snprintf(hint, hcap, "launch with mpirun -np %d (or srun -n %d), or set parallel.ranks to %d (or 0 "
                 "for any world size) and rebuild", spec_ranks, spec_ranks, size);
        return 1;
    }
    return 0;
}

void rt_comm_handshake(rt_comm *c, const char *spec_hash, int spec_ranks) {
    if (!c) return;
    identity me, *all = rt_xcalloc((size_t)c->size, sizeof *all);
    memset(&me, 0, sizeof me);
    snprintf(me.spec, sizeof me.spec, "%s", spec_hash);
    hash_executable(me.binary);
    MPI_Request req;
    comm_check(c, MPI_Iallgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, c->comm, &req),
               "the start-up handshake");
    comm_wait(c, 1, &req, "the start-up handshake");
    char msg[512], hint[384];
    /* Every rank sees the same table and reaches the same verdict; rank 0 alone says it. */
    int bad = find_mismatch(all, c->size, spec_ranks, msg, sizeof msg, hint, sizeof hint);
    free(all);
    if (bad) rt_comm_die_all(c, hint, "%s", msg);
}
