#!/usr/bin/env bash
# solver.ema (torchvision's recipe) on the CPU trainer:
#  1. the EMA in the last checkpoint equals an independent recomputation, in float64 from the
#     model's parameters and BN statistics in the checkpoint of every step, of torchvision's
#     rule (update after batch i when i % every == 0; the first update copies);
#  2. the eval reports the model and the EMA ("eval" and "eval_ema" records, an "EMA" line);
#  3. a run resumed from a checkpoint mid-way ends with the uninterrupted run's params and EMA
#     hashes and evaluations;
#  4. with two MPI ranks the EMA is the same on both (the trainer compares them at the end) and
#     again equals the recomputation from rank 0's checkpoints;
# (A checkpoint without the EMA cannot match: solver.ema is part of the spec hash resume checks.
# The CUDA backend's EMA: tests/emu/ema_emu_test.sh.)
set -eu
source tests/lib.sh
dir=$BUILD/test-train/ema
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build tests/train/specs/ema_tiny.spec -o "$dir/ema_tiny" >/dev/null
export OMP_NUM_THREADS=1

recompute() {  # checkpoint dir, every -> the last checkpoint's EMA against the recomputation
  "$PY" tests/train/ema_recompute.py "$1" "$2" 0.7
}

# 1, 2: one uninterrupted run
"$dir/ema_tiny" --out "$dir/full" > "$dir/full.txt"
recompute "$dir/full/checkpoints" 4
grep -q "EMA of the weights: test loss" "$dir/full.txt" || { echo "FAIL: no EMA evaluation line"; cat "$dir/full.txt"; exit 1; }
[ "$(grep -c '"event":"eval_ema"' "$dir/full/metrics.jsonl")" = 2 ] || { echo "FAIL: expected 2 eval_ema records"; exit 1; }

# 3: resumed from step 11 (between EMA updates, after 3 of them)
"$dir/ema_tiny" --out "$dir/resumed" --resume "$dir/full/checkpoints/ckpt-000000000011.bin" > "$dir/resumed.txt"
final() { grep -E "^final" "$1" | sed -E 's/wall time [^ ]+//'; }
if [ "$(final "$dir/full.txt")" != "$(final "$dir/resumed.txt")" ]; then
  echo "FAIL: the resumed run ends differently:"; final "$dir/full.txt"; final "$dir/resumed.txt"; exit 1
fi
"$PY" - "$dir/full/metrics.jsonl" "$dir/resumed/metrics.jsonl" <<'PY'
import json, sys
ev = lambda p: [(r["step"], r["top1"], r["loss"]) for r in map(json.loads, open(p)) if r["event"] == "eval_ema"]
a, b = ev(sys.argv[1]), ev(sys.argv[2])
assert a[-1] == b[-1], f"EMA evaluation after resume differs: {a} vs {b}"
PY
echo "resume: $(final "$dir/resumed.txt" | tail -1)"

# 4: two ranks
if command -v mpirun >/dev/null; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe --bind-to none -np 2 "$dir/ema_tiny" --out "$dir/two" > "$dir/two.txt" 2>&1 ||
    { echo "FAIL: two ranks"; tail -5 "$dir/two.txt"; exit 1; }
  grep -q "final EMA weights: params .* the same on 2 ranks" "$dir/two.txt" ||
    { echo "FAIL: no cross-rank EMA check"; tail -3 "$dir/two.txt"; exit 1; }
  recompute "$dir/two/checkpoints" 4
fi

echo "ema: ok"
