#!/usr/bin/env bash
# Holes 1 and 8 of issue 21 under mpirun -np 2:
#  8. a stopped (SIGSTOP) rank, 0 or 1, ends the job with a message naming it and the bound
#     (derived from the step time; set by parallel.hang_timeout), long before the
#     communication timeout (set to 60 s here so the old behaviour fails by its message), and
#     the waiting rank sleeps instead of spinning (its CPU use while it waits is printed and
#     must stay under 0.15 of a core); the same with the ranks on "different machines"
#     (other_machine.sh), where the rank is found by its silence to the watchdog's pings;
#  1. a second SIGTERM to mpirun, which then leaves at once, does not orphan the ranks: they
#     stop as at SIGTERM, rank 0 writes a stop checkpoint, nobody trains past it, and a resume
#     from it reaches the uninterrupted run's params_hash.
set -u
cd "$(dirname "$0")/../.."
source tests/reliability/lib.sh
source tests/mpi/lib.sh
source tests/reliability/hang_lib.sh
make_test_dir mpi-hang
fail=0
make_small_idx 320 100
good=$dir/data/good
cat > "$dir/mlp2.spec" <<SPEC
extends: "$PWD/specs/examples/fmnist_mlp.spec"
data { train { batch_per_rank: 16 } val { batch_per_rank: 50 } }
solver { log_every: 5 checkpoint { every_epochs: 0 } }
parallel { ranks: 0 }
SPEC
"$BUILD/trainc" build "$dir/mlp2.spec" -o "$dir/mlp2" >/dev/null || exit 1
# The same with the bound set in the spec (parallel.hang_timeout), for the stop of rank 0.
sed 's/^parallel { ranks: 0 }/parallel { ranks: 0 hang_timeout: 4 }/' "$dir/mlp2.spec" > "$dir/mlp2_bound4.spec"
"$BUILD/trainc" build "$dir/mlp2_bound4.spec" -o "$dir/mlp2_bound4" >/dev/null || exit 1
export TRAINC_COMM_TIMEOUT=60

RUN_ARGS=(--data "$good")
stop_one 1 "$dir/mlp2" "3.0 s: 10x the median step" local || fail=1
stop_one 0 "$dir/mlp2_bound4" "4.0 s: parallel.hang_timeout" local || fail=1
# The same across machines: each rank in a pid and UTS namespace of its own, over TCP
# (tests/reliability/other_machine.sh), so no rank can look at the other's process and only
# the watchdog's pings (runtime/mpi/heartbeat.c) can find the stopped one.
if unshare --pid --fork --mount-proc --uts true 2>/dev/null; then
  MPIRUN_ARGS=(--mca btl tcp,self "$PWD/tests/reliability/other_machine.sh")
  stop_one 1 "$dir/mlp2" "3.0 s: 10x the median step" remote || fail=1
  stop_one 0 "$dir/mlp2_bound4" "4.0 s: parallel.hang_timeout" remote || fail=1
  MPIRUN_ARGS=()
else
  echo "SKIP the cross-machine case: this container may not create pid and UTS namespaces (unshare)"
fi

# 1. Two SIGTERMs in a row to mpirun. A fresh out dir each time; every_epochs: 0, so any
# checkpoint is the stop checkpoint.
"${MPIRUN[@]}" -np 2 "$dir/mlp2" --data "$good" --epochs 200 --out "$dir/full" > /dev/null || { echo "reference run failed" >&2; exit 1; }
"${MPIRUN[@]}" -np 2 "$dir/mlp2" --data "$good" --epochs 200 --out "$dir/twice" > "$dir/twice.txt" 2>&1 &
launcher=$!
wait_records "$dir/twice/metrics.jsonl" 6 || { echo "twice: no training records" >&2; kill $launcher; exit 1; }
ranks=$(pgrep -f "$dir/mlp2" | tr '\n' ' ')
kill -TERM $launcher; sleep 0.01; kill -TERM $launcher
wait $launcher; status=$?
for _ in $(seq 600); do  # the ranks must end on their own (a guard, not a measurement)
  alive=0; for p in $ranks; do kill -0 "$p" 2>/dev/null && alive=1; done
  [ $alive -eq 0 ] && break; sleep 0.1
done
if [ $alive -ne 0 ]; then echo "twice: ranks $ranks still alive 60 s after mpirun left" >&2; kill -9 $ranks; exit 1; fi
ckpt=$(ls "$dir/twice/checkpoints"/ckpt-*.bin 2>/dev/null | tail -n 1)
if [ -z "$ckpt" ]; then
  echo "twice: mpirun left (status $status) and the ranks ended without a stop checkpoint" >&2; fail=1
else
  step=$(basename "$ckpt" .bin); step=$((10#${step#ckpt-}))
  last=$("$PY" -c 'import json,sys
print(max([json.loads(l)["step"] for l in open(sys.argv[1]) if "\"train\"" in l] or [0]))' "$dir/twice/metrics.jsonl")
  echo "twice: mpirun left with status $status; the ranks stopped with checkpoint step $step, last logged step $last"
  [ "$last" -le "$step" ] || { echo "twice: the ranks trained past their stop checkpoint" >&2; fail=1; }
  "${MPIRUN[@]}" -np 2 "$dir/mlp2" --data "$good" --epochs 200 --out "$dir/twice" --resume "$ckpt" > /dev/null ||
    { echo "twice: the resume failed" >&2; fail=1; }
  a=$(params_hash "$dir/full/metrics.jsonl"); b=$(params_hash "$dir/twice/metrics.jsonl")
  echo "twice: params_hash uninterrupted $a, resumed $b"
  [ "$a" = "$b" ] || { echo "twice: the resumed run differs" >&2; fail=1; }
fi
exit "$fail"
