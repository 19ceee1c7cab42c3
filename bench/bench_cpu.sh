#!/usr/bin/env bash
# `make bench-cpu`: training throughput of our compiled trainers vs PyTorch on the CPU, for
# the example nets, in one run. Same net (parameter counts are checked to match), batch,
# loss, optimizer and thread count; each side warms up 3 steps in-process, then the two
# sides alternate REPS times and the medians are compared, since shared machines are noisy.
# Prints one line per net with our img/s, torch's and the ratio "N.NN×" (ours / torch).
# usage: bench/bench_cpu.sh [NET ...]    env: THREADS (default: nproc), REPS (3), BUILD
set -eu
BUILD=${BUILD:-build}
THREADS=${THREADS:-$(nproc)}
REPS=${REPS:-3}
PY=/usr/bin/python3   # Debian's python3-torch lives there, not in a pyenv python
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(fmnist_lenet fmnist_mlp fmnist_resnet)
# Timed steps per repetition: a few seconds per side on a 2-core machine.
steps_for() { case $1 in fmnist_mlp) echo 1000 ;; fmnist_resnet) echo 5 ;; *) echo 20 ;; esac; }

"$PY" -c 'import torch' 2>/dev/null || {
  echo "error: PyTorch not found for $PY" >&2
  echo "HINT: apt-get install python3-torch" >&2; exit 1; }
dir=$BUILD/bench
mkdir -p "$dir"
export OMP_NUM_THREADS=$THREADS
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-cpu: $(date -u +%Y-%m-%d) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores," \
     "threads $THREADS, $REPS alternating repetitions (median), torch $("$PY" -c 'import torch; print(torch.__version__)')"
printf '%-15s %6s %6s %12s %12s %8s\n' net batch steps "ours img/s" "torch img/s" ratio
for net in "${nets[@]}"; do
  spec=specs/examples/$net.spec
  "$BUILD/trainc" build "$spec" -o "$dir/$net" >/dev/null
  json=$("$BUILD/trainc" show --json "$spec")
  batch=$(echo "$json" | grep -o '"batch_per_rank": [0-9]*' | head -n 1 | grep -o '[0-9]*$')
  ours_params=$(echo "$json" | grep -o '"params": [0-9]*' | head -n 1 | grep -o '[0-9]*$')
  torch_params=$("$PY" bench/torch_cpu_ref.py "$net" --params)
  if [ "$ours_params" != "$torch_params" ]; then
    echo "error: $net: the torch reference has $torch_params parameters, the spec $ours_params" >&2
    echo "HINT: bring bench/torch_cpu_ref.py in line with $spec" >&2; exit 1
  fi
  steps=$(steps_for "$net")
  ours=() theirs=()
  for _ in $(seq "$REPS"); do
    rm -rf "$dir/run-$net"
    ours+=("$("$dir/$net" --benchmark "$steps" --out "$dir/run-$net" | sed -n 's/.*: \([0-9.]*\) images\/s.*/\1/p')")
    theirs+=("$("$PY" bench/torch_cpu_ref.py "$net" --batch "$batch" --steps "$steps" --threads "$THREADS" |
               sed -n 's/.*: \([0-9.]*\) images\/s.*/\1/p')")
  done
  a=$(printf '%s\n' "${ours[@]}" | median)
  b=$(printf '%s\n' "${theirs[@]}" | median)
  printf '%-15s %6d %6d %12.1f %12.1f %7.2f×\n' "$net" "$batch" "$steps" "$a" "$b" "$(echo "$a $b" | awk '{ print $1 / $2 }')"
  echo "  runs, ours: ${ours[*]}; torch: ${theirs[*]}"
done
