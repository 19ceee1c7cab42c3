#!/usr/bin/env bash
# Holes 1 and 8 of issue 21 under mpirun -np 2:
#  8. a stopped (SIGSTOP) rank, 0 or 1, ends the job with a message naming it and the bound
#     (derived from the step time; set by parallel.hang_timeout), long before the
#     communication timeout (set to 60 s here so the old behaviour fails by its message), and
#     the waiting rank sleeps instead of spinning (its CPU use while it waits is printed and
#     must stay under 0.15 of a core);
#  1. a second SIGTERM to mpirun, which then leaves at once, does not orphan the ranks: they
#     stop as at SIGTERM, rank 0 writes a stop checkpoint, nobody trains past it, and a resume
#     from it reaches the uninterrupted run's params_hash.
set -u
cd "$(dirname "$0")/../.."
source tests/reliability/lib.sh
source tests/mpi/lib.sh
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

rank_pid() {  # binary, rank -> pid of that rank's process
  for p in $(pgrep -f "$1" || true); do
    tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
wait_records() {  # metrics.jsonl, n: until n train records (a guard, not a measurement)
  for _ in $(seq 600); do
    local n; n=$(grep -c '"train"' "$1" 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.05
  done
  return 1
}
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

stop_one() {  # rank to stop, binary, the bound's origin the message must name
  local victim_rank=$1 bin=$2 origin=$3 name=stopped$1 other=$((1 - $1))
  "${MPIRUN[@]}" -np 2 "$bin" --data "$good" --epochs 100000 --out "$dir/$name" > "$dir/$name.txt" 2>&1 &
  local launcher=$!
  wait_records "$dir/$name/metrics.jsonl" 4 || { echo "$name: no training records" >&2; kill $launcher; return 1; }
  local victim waiter; victim=$(rank_pid "$bin" "$victim_rank"); waiter=$(rank_pid "$bin" "$other")
  [ -n "$victim" ] && [ -n "$waiter" ] || { echo "$name: ranks not found" >&2; kill $launcher; return 1; }
  local t0=$SECONDS
  kill -STOP "$victim"
  sleep 0.5   # the waiter's CPU use over the next 2 s (the bound is at least 3 s)
  local c0 w0; c0=$(cpu_ticks "$waiter"); w0=$(date +%s.%N)
  sleep 2
  local c1 w1; c1=$(cpu_ticks "$waiter"); w1=$(date +%s.%N)
  for _ in $(seq 1000); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
  local status=0
  if kill -0 $launcher 2>/dev/null; then
    echo "$name: the job was still running 100 s after rank $victim_rank was stopped" >&2
    kill -9 $launcher; status=-1
  else
    wait $launcher || status=$?
  fi
  kill -CONT "$victim" 2>/dev/null; kill -9 "$victim" "$waiter" 2>/dev/null
  local share; share=$(python3 -c "import os,sys; print(f'{($c1 - $c0) / os.sysconf(\"SC_CLK_TCK\") / ($w1 - $w0):.2f}')")
  echo "$name: job ended $((SECONDS - t0)) s after SIGSTOP to rank $victim_rank (status $status); the waiting rank used $share of a core while it waited"
  grep -q "rank $victim_rank (pid $victim on .*) is stopped.*(hang bound $origin" "$dir/$name.txt" ||
    { echo "$name: no message naming the stopped rank and the bound ($origin):" >&2; cat "$dir/$name.txt" >&2; return 1; }
  grep 'error:' "$dir/$name.txt"
  [ "$status" -gt 0 ] || { echo "$name: the job did not end with a failure status" >&2; return 1; }
  python3 -c "import sys; sys.exit(0 if $share < 0.15 else 1)" ||
    { echo "$name: the waiting rank spun ($share of a core) while it waited" >&2; return 1; }
}
stop_one 1 "$dir/mlp2" "3.0 s: 10x the median step" || fail=1
stop_one 0 "$dir/mlp2_bound4" "4.0 s: parallel.hang_timeout" || fail=1

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
  last=$(python3 -c 'import json,sys
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
