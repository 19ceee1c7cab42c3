#!/usr/bin/env bash
# make bench-mpi: data-parallel throughput on this machine. The LeNet example (synthetic data,
# global batch 128) on 1 rank with all cores, and on 2 ranks with one core each: all-reduce
# overlapped with backward by the communication thread (1 MiB buckets), overlapped without
# it (TRAINC_COMM_THREAD=0: MPI progresses only at the bucket hand-overs), blocking after
# backward, and overlapped with one bucket. Prints images/s, rank 0's communication wait and
# the exposed communication per step, and records them in bench/RESULTS.md (section "MPI
# data parallelism"). Ratios, no limits.
set -eu
BUILD=${BUILD:-build}
STEPS=${STEPS:-40}
dir=$BUILD/bench-mpi
rm -rf "$dir" && mkdir -p "$dir"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
load=$(cut -d' ' -f1-3 /proc/loadavg)
for s in lenet_r1 lenet_r2 lenet_r2_blocking lenet_r2_one_bucket; do
  "$BUILD/trainc" build "bench/mpi/$s.spec" -o "$dir/$s" > /dev/null
done

run() {  # label, ranks, binary, communication thread (1/0)
  local label=$1 ranks=$2 bin=$3
  if [ "$ranks" = 1 ]; then
    OMP_NUM_THREADS=$cores "$dir/$bin" --benchmark "$STEPS" --out "$dir/$label" > "$dir/$label.txt"
  else
    TRAINC_COMM_THREAD=$4 OMP_NUM_THREADS=$((cores / ranks > 0 ? cores / ranks : 1)) mpirun --oversubscribe \
      -np "$ranks" --map-by "ppr:$ranks:node:pe=$((cores / ranks > 0 ? cores / ranks : 1))" --bind-to core \
      -x TRAINC_COMM_THREAD "$dir/$bin" --benchmark "$STEPS" --out "$dir/$label" > "$dir/$label.txt"
  fi
  python3 - "$label" "$ranks" "$dir/$label/benchmark.jsonl" >> "$dir/rows.txt" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[3]) if '"benchmark"' in l][-1]
ms = lambda k: '-' if r.get(k) is None else f"{r[k]:.2f}"
print(f"| {sys.argv[1]} | {sys.argv[2]} | {r['images_per_s']:.0f} | "
      f"{1e3 * r['seconds'] / r['steps']:.1f} | {ms('comm_wait_ms')} | {ms('comm_exposed_ms')} |")
PY
}

run "1 rank, $cores threads" 1 lenet_r1
run "2 ranks, overlapped (comm thread), 1 MiB buckets (3)" 2 lenet_r2 1
run "2 ranks, overlapped without comm thread, 1 MiB buckets (3)" 2 lenet_r2 0
run "2 ranks, blocking, 1 MiB buckets (3)" 2 lenet_r2_blocking 1
run "2 ranks, overlapped (comm thread), one 25 MiB bucket" 2 lenet_r2_one_bucket 1

{
  echo "## MPI data parallelism (make bench-mpi)"
  echo
  echo "Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "Open MPI $(mpirun --version | head -1 | awk '{print $NF}'), LeNet example (1.66 M params, 6.7 MB of gradients)"
  echo "on synthetic data, global batch 128 (2 ranks: 64 each), $STEPS timed steps after 3 warm-up"
  echo "steps. \"comm wait\" is rank 0's time per step in communication waits (the gradient"
  echo "all-reduce, blocking all-reduces, the per-step loss sum), so it also holds the time it"
  echo "waits for a slower rank; \"exposed\" is, per step, the least wait of any rank: the last"
  echo "rank to finish backward waits only for the communication compute did not hide. \"-\" for"
  echo "one rank, which makes no MPI call. Load average before the runs: $load (other jobs"
  echo "share the machine: compare rows of one run, not across runs)."
  echo
  echo "| run | ranks | images/s | ms/step | comm wait ms/step | exposed comm ms/step |"
  echo "|---|---|---|---|---|---|"
  cat "$dir/rows.txt"
  echo
} > "$dir/section.md"
cat "$dir/section.md"

# Replace this script's section of bench/RESULTS.md (other sections belong to other benches).
results=bench/RESULTS.md
[ -f "$results" ] || printf '# Benchmark results\n\nEach section is written by the `make` target it names; rerun it to refresh.\n\n' > "$results"
python3 - "$results" "$dir/section.md" <<'PY'
import sys
path, section = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
head = "## MPI data parallelism"
start = text.find(head)
if start < 0:
    text = text.rstrip("\n") + "\n\n" + section
else:
    end = text.find("\n## ", start + len(head))
    text = text[:start] + section + (text[end + 1:] if end >= 0 else "")
open(path + ".tmp", "w").write(text)
import os; os.replace(path + ".tmp", path)
PY
echo "recorded in $results"
