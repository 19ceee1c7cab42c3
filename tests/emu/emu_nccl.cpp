/* Reference NCCL for the CUDA emulator, over MPI (each emulated GPU is one MPI process): the
 * calls runtime/cuda/nccl.cu makes. A communicator's operations run in the order they were
 * issued, whatever stream they are on (NCCL's rule; a capture replays them in node order).
 * Before each one the ranks compare what they are about to do (call number, kind, type,
 * count, root) and stop with both sides' calls when they differ: a rank that issues its
 * calls in another order, or with another size, would hang or corrupt a real run. They also
 * compare the cuDNN convolution algorithms each has run and the cuDNN graph plans (engines)
 * each holds (emu::cudnn_digest). */
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <memory>
#include <vector>
#include <nccl.h>
#include "emu_internal.h"

using emu::fail;

struct ncclComm {
    MPI_Comm mpi;
    int rank, size;
    emu::ordered order;
    long calls = 0;
    int in_flight = 0;   /* collectives started and not complete */
    bool aborted = false;
};

namespace {
struct signature {
    long call;
    int kind, dtype, root, op;
    long count;
    uint64_t cudnn;   /* emu::cudnn_digest when the collective runs */
};
const char *kind_name(int k) { return k == 0 ? "ncclAllReduce" : "ncclBroadcast"; }

MPI_Datatype mpi_type(ncclDataType_t t, size_t *bytes) {
    switch (t) {
    case ncclFloat32: *bytes = 4; return MPI_FLOAT;
    case ncclFloat64: *bytes = 8; return MPI_DOUBLE;
    case ncclInt32: *bytes = 4; return MPI_INT;
    case ncclInt64: *bytes = 8; return MPI_LONG_LONG;
    default: fail("NCCL: data type %d is not emulated", (int)t);
    }
}

/* Every rank checks that every rank is at the same call with the same arguments. */
void agree(ncclComm *c, const signature &mine, const std::vector<signature> &all) {
    for (int r = 0; r < c->size; r++) {
        const signature &o = all[(size_t)r];
        if (o.cudnn != mine.cudnn)
            fail("ranks %d and %d ran different cuDNN convolution algorithms or hold different cuDNN graph engines before "
                 "NCCL call #%ld (digests %016llx and %016llx): every rank must run rank 0's choice", c->rank, r, mine.call, (unsigned long long)mine.cudnn,
                 (unsigned long long)o.cudnn);
        if (memcmp(&o, &mine, sizeof o) != 0)
            fail("NCCL calls differ between ranks: rank %d's call #%ld is %s(type %d, count %ld, root %d), rank %d's "
                 "is %s(type %d, count %ld, root %d)",
                 c->rank, mine.call, kind_name(mine.kind), mine.dtype, mine.count, mine.root, r, kind_name(o.kind),
                 o.dtype, o.count, o.root);
    }
}

ncclResult_t collective(int kind, const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op, int root,
                        ncclComm *c, cudaStream_t s) {
    if (c->aborted) return ncclInvalidUsage;
    if (kind == 0 && op != ncclSum) fail("NCCL: only ncclSum is emulated");
    size_t eb;
    MPI_Datatype mt = mpi_type(t, &eb);
    emu::check_device(recv, count * eb, kind_name(kind));
    emu::check_device(send, count * eb, kind_name(kind));
    signature sig = { 0, kind, (int)t, root, (int)op, (long)count, 0 };
    /* As on a GPU, the collective waits for its peers without holding the host: the stream
     * reaches it (start), then it stays in flight until every rank's part has arrived, first
     * the calls' signatures, then the data; ncclCommAbort ends it where it is. */
    struct flight {
        signature me;
        std::vector<signature> all;
        MPI_Request req = MPI_REQUEST_NULL;
        bool moving_data = false, complete = false;
    };
    auto f = std::make_shared<flight>();
    auto start = [=]() {
        emu::traffic_touch(send, count * eb, false);   /* EMU_TRAFFIC: this rank's device side */
        emu::traffic_touch(recv, count * eb, true);
        f->me = sig;
        f->me.call = c->calls++;
        f->me.cudnn = emu::cudnn_digest;
        f->moving_data = f->complete = false;   /* a graph replays the same collective */
        f->all.resize((size_t)c->size);
        MPI_Iallgather(&f->me, sizeof f->me, MPI_BYTE, f->all.data(), sizeof f->me, MPI_BYTE, c->mpi, &f->req);
        c->in_flight++;
    };
    auto finished = [=]() {
        if (c->aborted || f->complete) return true;   /* aborted: the kernel left, its output undefined */
        int done = 0;
        MPI_Test(&f->req, &done, MPI_STATUS_IGNORE);
        if (!done) return false;
        if (f->moving_data) {
            c->in_flight--;
            return f->complete = true;
        }
        agree(c, f->me, f->all);
        f->moving_data = true;
        if (kind == 0) {
            if (send == recv) MPI_Iallreduce(MPI_IN_PLACE, recv, (int)count, mt, MPI_SUM, c->mpi, &f->req);
            else MPI_Iallreduce(send, recv, (int)count, mt, MPI_SUM, c->mpi, &f->req);
        } else {
            if (c->rank == root && send != recv) memcpy(recv, send, count * eb);
            MPI_Ibcast(recv, (int)count, mt, root, c->mpi, &f->req);
        }
        return false;
    };
    emu::enqueue(s, kind_name(kind), start, &c->order, finished);
    return ncclSuccess;
}
}   // namespace

extern "C" {

const char *ncclGetErrorString(ncclResult_t r) {
    return r == ncclSuccess ? "no error" : r == ncclInvalidUsage ? "invalid usage (emulated NCCL)" : "error (emulated NCCL)";
}
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "emu-nccl-%d", (int)getpid());
    return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) fail("ncclCommInitRank: the emulated NCCL runs over MPI, which is not initialized");
    ncclComm *c = new ncclComm;
    MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi);
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
    if (c->size != nranks || c->rank != rank)
        fail("ncclCommInitRank(nranks %d, rank %d) in an MPI world where this is rank %d of %d", nranks, rank, c->rank, c->size);
    /* Every rank must hold rank 0's id (it was broadcast over MPI). */
    std::vector<char> root(sizeof id.internal);
    memcpy(root.data(), id.internal, sizeof id.internal);
    MPI_Bcast(root.data(), (int)root.size(), MPI_BYTE, 0, c->mpi);
    if (memcmp(root.data(), id.internal, sizeof id.internal) != 0)
        fail("ncclCommInitRank: rank %d holds another unique id than rank 0", rank);
    *comm = c;
    return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op, ncclComm_t c,
                           cudaStream_t s) {
    return collective(0, send, recv, count, t, op, 0, c, s);
}
ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root, ncclComm_t c,
                           cudaStream_t s) {
    return collective(1, send, recv, count, t, ncclSum, root, c, s);
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *err) {
    *err = c->aborted ? ncclInvalidUsage : ncclSuccess;
    return ncclSuccess;
}
/* The kernels of collectives in flight exit at once (their MPI requests are abandoned: the
 * process is about to end); said on stderr so a test can see the abort happened. */
ncclResult_t ncclCommAbort(ncclComm_t c) {
    fprintf(stderr, "emu: ncclCommAbort on rank %d: %d collective(s) in flight abandoned\n", c->rank, c->in_flight);
    c->aborted = true;
    return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t c) {
    cudaDeviceSynchronize();
    MPI_Comm_free(&c->mpi);
    delete c;
    return ncclSuccess;
}

}   // extern "C"
