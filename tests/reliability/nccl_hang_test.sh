#!/usr/bin/env bash
# The hung-peer watchdog on the CUDA/NCCL path, under the CUDA emulator (tests/emu): a CUDA
# trainer on 2 ranks (gradients summed by the emulated NCCL, whose collectives stay in flight
# until the peer's part arrives, as on a GPU, and end at ncclCommAbort) has one rank stopped
# with SIGSTOP (the bound set to 4 s: emulated steps take 0.3-0.7 s). The waiting rank polls
# its stream (rt_cuda_sync) and NCCL's asynchronous error, the watchdog names the stopped
# rank, the NCCL communicator is aborted (the emulator says so on stderr) and the job ends;
# the waiting rank sleeps while it waits. Once with both ranks on this machine (found by its
# process state), once with each rank on a "machine" of its own
# (tests/reliability/other_machine.sh: found by its silence to the watchdog's pings).
set -u
cd "$(dirname "$0")/../.."
source tests/reliability/lib.sh
source tests/mpi/lib.sh
source tests/reliability/hang_lib.sh
if [ ! -f /usr/local/cuda/include/cuda_runtime.h ] && [ ! -f "${CUDA_HOME:-/nonexistent}/include/cuda_runtime.h" ]; then
  echo "SKIP: the CUDA headers are not installed: the emulated CUDA backend cannot be built"
  exit 0
fi
make_test_dir nccl-hang
nice make -s emu BUILD="$BUILD" > "$dir/make.log" 2>&1 || { echo "building the emulator failed:"; tail -20 "$dir/make.log"; exit 1; }
export TRAINC_CUDA_ENV=$PWD/$BUILD/emu/cuda.env ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export TRAINC_COMM_TIMEOUT=60
cat > "$dir/mlp2.spec" <<SPEC
extends: "$PWD/specs/examples/fmnist_mlp.spec"
data { train { source: "synthetic" samples: 64 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }
solver { log_every: 1 checkpoint { every_epochs: 0 } }
parallel { ranks: 2 hang_timeout: 4 }
SPEC
"$BUILD/trainc" build "$dir/mlp2.spec" -o "$dir/mlp2" --backend cuda > "$dir/build.log" 2>&1 ||
  { echo "trainc build --backend cuda failed:"; tail -20 "$dir/build.log"; exit 1; }
fail=0
aborted() {  # where: the waiting rank aborted its NCCL communicator
  grep -q "emu: ncclCommAbort on rank 0" "$dir/stopped1-$1.txt" ||
    { echo "stopped1-$1: the waiting rank did not abort its NCCL communicator:" >&2; cat "$dir/stopped1-$1.txt" >&2; return 1; }
  grep "emu: ncclCommAbort" "$dir/stopped1-$1.txt"
}
stop_one 1 "$dir/mlp2" "4.0 s: parallel.hang_timeout" local && aborted local || fail=1
if unshare --pid --fork --mount-proc --uts true 2>/dev/null; then
  MPIRUN_ARGS=(--mca btl tcp,self "$PWD/tests/reliability/other_machine.sh")
  stop_one 1 "$dir/mlp2" "4.0 s: parallel.hang_timeout" remote && aborted remote || fail=1
else
  echo "SKIP the cross-machine case: this container may not create pid and UTS namespaces (unshare)"
fi
exit $fail
