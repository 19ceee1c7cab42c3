#!/usr/bin/env bash
# What goes wrong between ranks ends with one clear message, never a hang:
#  - a world size that disagrees with the spec, two different binaries in one world, and a
#    multi-rank spec started without a launcher are refused at start-up;
#  - an error every rank hits (a bad --data, a bad option) prints once, from rank 0; an error
#    of one rank prints once, from that rank, and the others add no "lost rank" line;
#  - a rank killed with SIGTERM-less kill -9 ends the others within 60 s (non-zero, the lost
#    rank named);
#  - SIGTERM to the launcher stops every rank at the same step with one checkpoint, which
#    resumes the exact run at the same world size and is refused at another.
set -eu
source tests/mpi/lib.sh
dir=$BUILD/test-mpi/failure
rm -rf "$dir" && mkdir -p "$dir"
build_spec dp_conv_r2; build_spec dp_bn_r2; build_spec dp_conv_any; build_spec mlp_any

expect_fail() {  # name, expected text, command... : must exit non-zero printing the text
  local name=$1 text=$2; shift 2
  if "$@" > "$dir/$name.txt" 2>&1; then echo "$name: succeeded but should have failed" >&2; exit 1; fi
  grep -q -- "$text" "$dir/$name.txt" || { echo "$name: no '$text' in:" >&2; cat "$dir/$name.txt" >&2; exit 1; }
  local n; n=$(grep -c '^error:' "$dir/$name.txt" || true)
  [ "$n" -eq 1 ] || { echo "$name: expected one error message, got $n:" >&2; cat "$dir/$name.txt" >&2; exit 1; }
  grep '^error:' "$dir/$name.txt"
}

expect_fail world "world size mismatch: the spec sets parallel.ranks: 2 but the launcher started 4 ranks" \
  "${MPIRUN[@]}" -np 4 "$dir/dp_conv_r2" --out "$dir/world"
[ ! -e "$dir/world" ] || { echo "a refused run created its output directory" >&2; exit 1; }
expect_fail binary "ranks run different executables: rank 0 runs sha256" \
  "${MPIRUN[@]}" -np 1 "$dir/dp_conv_r2" --out "$dir/binary" : -np 1 "$dir/dp_bn_r2" --out "$dir/binary"
expect_fail alone "the spec asks for 2 ranks but this process runs alone" "$dir/dp_conv_r2" --out "$dir/alone"

no_lost() {  # name: a rank that failed on its own error is not reported as lost
  if grep -q "lost rank" "$dir/$1.txt"; then echo "$1: a 'lost rank' line:" >&2; cat "$dir/$1.txt" >&2; exit 1; fi
}
expect_fail data "error: rank 0: data directory $dir/none does not exist" \
  "${MPIRUN[@]}" -np 4 "$dir/mlp_any" --data "$dir/none" --out "$dir/data"
no_lost data
expect_fail option "error: rank 0: unknown option '--bogus'" "${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --bogus
no_lost option
mkdir -p "$dir/taken/checkpoints" && touch "$dir/taken/checkpoints/ckpt-000000000001.bin"
expect_fail rank0 "error: rank 0: output directory '$dir/taken' already holds a run's checkpoints" \
  "${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --out "$dir/taken"
no_lost rank0
expect_fail rank1 "error: rank 1: unknown option '--bogus'" \
  "${MPIRUN[@]}" -np 1 "$dir/dp_conv_any" --out "$dir/rank1" : -np 1 "$dir/dp_conv_any" --bogus
no_lost rank1

# kill -9 of rank 1 in the middle of training.
"${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --epochs 1000 --out "$dir/killed" > "$dir/killed.txt" 2>&1 &
launcher=$!
for _ in $(seq 600); do
  [ "$(grep -c '"train"' "$dir/killed/metrics.jsonl" 2>/dev/null || true)" -ge 20 ] 2>/dev/null && break
  sleep 0.05
done
victim=""
for p in $(pgrep -f "$dir/dp_conv_any" || true); do
  tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$p
done
[ -n "$victim" ] || { echo "rank 1 not found" >&2; kill $launcher; exit 1; }
t0=$SECONDS
kill -9 "$victim"
for _ in $(seq 600); do kill -0 $launcher 2>/dev/null || break; sleep 0.1; done
if kill -0 $launcher 2>/dev/null; then
  echo "the job was still running 60 s after rank 1 was killed" >&2; kill -9 $launcher; exit 1
fi
status=0; wait $launcher || status=$?
echo "killed rank 1 (pid $victim): the job ended after $((SECONDS - t0)) s with status $status"
[ "$status" -ne 0 ] || { echo "the job exited 0 after losing a rank" >&2; exit 1; }
grep -q "lost rank 1 (pid $victim" "$dir/killed.txt" || { echo "no message naming the lost rank:" >&2; cat "$dir/killed.txt" >&2; exit 1; }
grep "lost rank 1" "$dir/killed.txt"

# SIGTERM to the launcher: all ranks stop at one step, rank 0 checkpoints, exact resume.
# 30 epochs (a few seconds) so that the signal lands mid-run however fast the machine is.
"${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --epochs 30 --out "$dir/full" > /dev/null
"${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --epochs 30 --out "$dir/cut" > "$dir/cut.txt" 2>&1 &
launcher=$!
for _ in $(seq 600); do
  [ "$(grep -c '"train"' "$dir/cut/metrics.jsonl" 2>/dev/null || true)" -ge 70 ] 2>/dev/null && break
  sleep 0.05
done
kill -TERM $launcher
status=0; wait $launcher || status=$?
grep -q "stopped by signal 15 at step" "$dir/cut.txt" || { echo "no stop at SIGTERM:" >&2; cat "$dir/cut.txt" >&2; exit 1; }
ckpt=$(ls "$dir/cut/checkpoints"/ckpt-*.bin | tail -n 1)
echo "interrupted at $(basename "$ckpt") (launcher status $status)"
cp "$ckpt" "$dir/stopped.bin"   # the resumed run rotates checkpoints away; keep this one
"${MPIRUN[@]}" -np 2 "$dir/dp_conv_any" --epochs 30 --out "$dir/cut" --resume "$ckpt" > /dev/null
"$PY" - "$dir/full/metrics.jsonl" "$dir/cut/metrics.jsonl" <<'PY'
import json, sys
def load(p):
    recs = [json.loads(l) for l in open(p)]
    train = [(r["step"], r["loss"], r["lr"]) for r in recs if r["event"] == "train"]
    evals = [(r["step"], r["loss"], r["top1"]) for r in recs if r["event"] == "eval"]
    return [r for r in recs if r["event"] == "summary"][-1]["params_hash"], evals, train
a, b = load(sys.argv[1]), load(sys.argv[2])
print("params_hash after resume at 2 ranks:", a[0], b[0])
assert a == b, "the resumed 2-rank run differs from the uninterrupted one"
PY
expect_fail resume1 "was written by a run of 2 ranks, this run has 1" \
  "$dir/dp_conv_any" --epochs 30 --out "$dir/cut" --resume "$dir/stopped.bin"
