#!/usr/bin/env bash
# `make bench-cpu`: training throughput of our compiled trainers vs PyTorch on the CPU, for
# the example nets (LeNet, MLP, ResNet, the small ViT), in FP32 and BF16, in one run. Same net
# (parameter counts are checked to match), batch, loss, optimizer and thread count; every run
# warms up 3 steps in-process.
# Peer: a current PyTorch 2.x from PyPI (bench/torch2_env.sh installs it under $BUILD/bench),
# its best of eager / channels-last / torch.compile (one run each picks it), with BF16 as CPU
# autocast; then ours and that configuration alternate REPS times and the medians are
# compared, since shared machines are noisy. The Debian PyTorch (1.13, eager FP32) row is kept
# for continuity. Also prints the sgemm and bf16 GEMM peaks measured in the same run
# (bench/gemm_peak.c), the memory bandwidth at the start and the end (the host's slow spells
# show there: bench/RESULTS.md, session 16), the ResNet's FP32 convolution rate (its --benchmark op classes) as a
# share of the sgemm peak, and per row the rate 2x the peer would need against the peak.
# usage: bench/bench_cpu.sh [NET ...]
# env: THREADS (default: nproc), REPS (3), PRECISIONS ("FP32 BF16"), TORCH2_MODES
#      ("eager channels_last compile"), BUILD, STEPS (timed steps per run for every net, both
#      sides; default per net: a few seconds each)
set -eu
BUILD=${BUILD:-build}
THREADS=${THREADS:-$(nproc)}
REPS=${REPS:-3}
PRECISIONS=${PRECISIONS:-FP32 BF16}
TORCH2_MODES=${TORCH2_MODES:-eager channels_last compile}
PY=/usr/bin/python3   # Debian's python3-torch lives there, not in a pyenv python
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=(fmnist_lenet fmnist_mlp fmnist_resnet fmnist_vit)
# Timed steps per repetition: a few seconds per side on a 2-core machine.
steps_for() { [ -n "${STEPS:-}" ] && { echo "$STEPS"; return; }
  case $1 in fmnist_mlp) echo 300 ;; fmnist_resnet) echo 5 ;; fmnist_vit) echo 10 ;; *) echo 20 ;; esac; }

"$PY" -c 'import torch' 2>/dev/null || {
  echo "error: PyTorch not found for $PY" >&2
  echo "HINT: apt-get install python3-torch" >&2; exit 1; }
dir=$BUILD/bench
mkdir -p "$dir"
# shellcheck source=bench/torch2_env.sh
source bench/torch2_env.sh
torch2_setup
export OMP_NUM_THREADS=$THREADS
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
rate_of() { sed -n 's/.*: \([0-9.]*\) images\/s.*/\1/p'; }
ratio() { echo "$1 $2" | awk '{ printf "%.2f", $1 / $2 }'; }

torch2() {  # net batch steps precision mode -> img/s
  local bf=""; [ "$4" = BF16 ] && bf=--bf16
  "$TORCH2_PY" bench/torch_cpu_ref.py "$1" --batch "$2" --steps "$3" --threads "$THREADS" --mode "$5" $bf 2>/dev/null | rate_of
}

peak_line=$(OMP_NUM_THREADS=$THREADS "$dir/gemm_peak" --peak 1.0)
peak=$(echo "$peak_line" | sed -n 's/sgemm peak: \([0-9.]*\) .*/\1/p')
bf16_peak=$(echo "$peak_line" | sed -n 's/bf16 peak: \([0-9.]*\) .*/\1/p')
echo "bench-cpu: $(date -u '+%Y-%m-%d %H:%M UTC') $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores," \
     "threads $THREADS, $REPS alternating repetitions (median), torch $("$TORCH2_PY" -c 'import torch; print(torch.__version__)' 2>/dev/null)" \
     "and Debian's $("$PY" -c 'import torch; print(torch.__version__)'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$peak_line"
printf '%-14s %-5s %5s %5s %11s %11s %-14s %7s\n' net prec batch steps "ours img/s" "torch img/s" "torch config" ratio
for net in "${nets[@]}"; do
  spec=specs/examples/$net.spec
  json=$("$BUILD/trainc" show --json "$spec")
  batch=$(echo "$json" | grep -o '"batch_per_rank": [0-9]*' | head -n 1 | grep -o '[0-9]*$')
  ours_params=$(echo "$json" | grep -o '"params": [0-9]*' | head -n 1 | grep -o '[0-9]*$')
  torch_params=$("$PY" bench/torch_cpu_ref.py "$net" --params)
  if [ "$ours_params" != "$torch_params" ]; then
    echo "error: $net: the torch reference has $torch_params parameters, the spec $ours_params" >&2
    echo "HINT: bring bench/torch_cpu_ref.py in line with $spec" >&2; exit 1
  fi
  steps=$(steps_for "$net")
  for prec in $PRECISIONS; do
    bin=$dir/$net-$prec
    printf 'extends: "%s/%s"\nprecision { compute: %s }\n' "$(pwd)" "$spec" "$prec" > "$bin.spec"
    "$BUILD/trainc" build "$bin.spec" -o "$bin" >/dev/null
    # torch 2.x: its best configuration, one run each
    best_mode="" best=0 tried=""
    for mode in $TORCH2_MODES; do
      r=$(torch2 "$net" "$batch" "$steps" "$prec" "$mode" || true)
      tried="$tried $mode=${r:-failed}"
      [ -n "$r" ] && awk -v r="$r" -v b="$best" 'BEGIN { exit !(r > b) }' && best=$r best_mode=$mode
    done
    if [ -z "$best_mode" ]; then echo "error: $net $prec: every torch 2.x configuration failed" >&2; exit 1; fi
    ours=() theirs=() debian=()
    for _ in $(seq "$REPS"); do
      rm -rf "$dir/run-$net"
      "$bin" --benchmark "$steps" --out "$dir/run-$net" > "$bin.bench.txt"
      ours+=("$(rate_of < "$bin.bench.txt")")
      theirs+=("$(torch2 "$net" "$batch" "$steps" "$prec" "$best_mode")")
      [ "$prec" = FP32 ] && debian+=("$("$PY" bench/torch_cpu_ref.py "$net" --batch "$batch" --steps "$steps" --threads "$THREADS" | rate_of)")
    done
    a=$(printf '%s\n' "${ours[@]}" | median)
    b=$(printf '%s\n' "${theirs[@]}" | median)
    printf '%-14s %-5s %5d %5d %11.1f %11.1f %-14s %6s×\n' "$net" "$prec" "$batch" "$steps" "$a" "$b" "2.x $best_mode" "$(ratio "$a" "$b")"
    if [ "$prec" = FP32 ]; then
      c=$(printf '%s\n' "${debian[@]}" | median)
      printf '%-14s %-5s %5s %5s %11s %11.1f %-14s %6s×\n' "" FP32 "" "" "" "$c" "1.13 eager" "$(ratio "$a" "$c")"
    fi
    echo "  runs, ours: ${ours[*]}; torch 2.x $best_mode: ${theirs[*]}${debian[*]:+; torch 1.13: ${debian[*]}}; torch 2.x picks:$tried"
    # What 2x the peer would take: the useful FLOPs of the convolutions and GEMMs alone (direct
    # multiply-adds, from our --benchmark op classes) at twice torch's rate, against the dot-
    # product ceiling of the precision measured in this run. Above 100% only a fast algorithm
    # (Winograd) can get there, and everything else in the step would have to take no time.
    ceiling=$peak ceiling_name=sgemm
    [ "$prec" = BF16 ] && [ -n "$bf16_peak" ] && ceiling=$bf16_peak ceiling_name=bf16
    awk -v b="$b" -v n=$((steps * batch)) -v peak="$ceiling" -v name="$ceiling_name" '
      /GFLOP in/ { f += $(NF-9) }
      END { if (f > 0) printf "  2x torch = %.0f img/s: %.1f MFLOP/img in convs+GEMMs, %.1f useful GFLOP/s = %.0f%% of the %s peak %.1f\n", 2 * b, 1e3 * f / n, 2 * b * f / n, 100 * 2 * b * f / n / peak, name, peak }' "$bin.bench.txt"
    if [ "$net" = fmnist_resnet ] && [ "$prec" = FP32 ]; then   # the last of ours' runs
      awk -v peak="$peak" '/^  conv / { f += $(NF-9); s += $(NF-6) }
        END { if (s > 0) printf "  ResNet FP32 convolutions: %.1f GFLOP/s useful (fwd + bwd), %.0f%% of the sgemm peak %.1f\n", f / s, 100 * f / s / peak, peak }' "$bin.bench.txt"
      grep '^  ' "$bin.bench.txt" | sed 's/^/  /'
    fi
  done
done
echo "at the end, $(OMP_NUM_THREADS=$THREADS "$dir/gemm_peak" --bandwidth)"
