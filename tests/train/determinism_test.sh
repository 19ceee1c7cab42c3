#!/usr/bin/env bash
# Run-to-run determinism of a CPU trainer: tests/mpi/specs/dp_conv.spec (a conv net without
# batch norm, random crops with zero padding, Winograd 3x3 convolutions) trained six times
# with one and with two OpenMP threads must end with one params_hash. On the AMX Xeon its
# trainer once gave other parameters in about one run of four, sometimes a NaN loss (GCC's
# vectorized bias-gradient plane sums in the Winograd backward), which made the MPI
# equivalence tests fail there (bench/RESULTS.md, "Nondeterministic Winograd backward").
set -eu
source tests/lib.sh
need_trainc
dir=$BUILD/test-train/determinism
fresh_dir "$dir"
"$TRAINC" build tests/mpi/specs/dp_conv.spec -o "$dir/dp_conv" > "$dir/build.log" 2>&1 ||
  { cat "$dir/build.log"; die "trainc build dp_conv"; }
hashes=()
for run in 1 2 3 4 5 6; do
  threads=$(( run % 2 + 1 ))
  if ! OMP_NUM_THREADS=$threads "$dir/dp_conv" --out "$dir/run$run" > "$dir/run$run.log" 2>&1; then
    tail -3 "$dir/run$run.log"; fail "run $run ($threads threads) did not finish"; continue
  fi
  hashes+=("$(grep -o '"params_hash":"[0-9a-f]*"' "$dir/run$run/metrics.jsonl" | cut -d'"' -f4)")
done
distinct=$(printf '%s\n' "${hashes[@]}" | sort -u | wc -l)
if [ "$distinct" -eq 1 ] && [ ${#hashes[@]} -eq 6 ]; then echo "ok: six runs (1 and 2 threads) end with ${hashes[0]}"
else fail "six runs ended with ${#hashes[@]} hashes, $distinct distinct: ${hashes[*]}"; fi
exit $status
