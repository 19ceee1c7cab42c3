#!/usr/bin/env bash
# usage (under mpirun): other_machine.sh PROGRAM ARGS...
# Runs one MPI rank as if on a machine of its own, for the hung-peer tests: in a pid
# namespace of its own (with its own /proc, so no rank can see another's process, as across
# machines; the boot id stays shared, as for containers on one host), with a host name of its
# own (node-RANK). Ranks must then talk over TCP (mpirun --mca btl tcp,self), as between
# machines: shared-memory transports need to see the peer's process. --kill-child ends the
# rank when the launcher ends this wrapper.
exec unshare --pid --fork --mount-proc --uts --kill-child \
  sh -c 'hostname "node-$OMPI_COMM_WORLD_RANK" && "$@"; exit $?' other_machine "$@"
