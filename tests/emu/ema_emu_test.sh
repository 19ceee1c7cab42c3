#!/usr/bin/env bash
# solver.ema on the CUDA backend, run under the emulator (tests/emu/): the device model
# downloads its weights at each EMA update and evaluates the EMA by loading it in place of the
# model's weights. Checks: the EMA in the last checkpoint equals torchvision's rule recomputed
# from the device run's per-step checkpoints (tests/train/ema_recompute.py), the run evaluates
# the model and the EMA, and its losses and EMA evaluations follow the CPU trainer's within
# 1e-4 relative (tests/gpu/compare_runs.py, as the other emulated trainers).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-ema
# ema_tiny (conv, BN, EMA every 4 steps, a checkpoint per step) on a small synthetic set
cat > "$out/ema.spec" <<SPEC
extends: "$(pwd)/tests/train/specs/ema_tiny.spec"
data { train { source: "synthetic" samples: 256 batch_per_rank: 8 }
       val { source: "synthetic" batch_per_rank: 8 } val_samples: 16 }
solver { iterations: 14 eval_every_iterations: 7 log_every: 1 }
parallel { ranks: 1 }
SPEC
status=0
"$BUILD/trainc" build "$out/ema.spec" -o "$out/cpu" > "$out/cpu.build" 2>&1 || { cat "$out/cpu.build"; exit 1; }
TRAINC_CUDA_ENV=$(pwd)/$BUILD/emu/cuda.env "$BUILD/trainc" build "$out/ema.spec" -o "$out/emu" --backend cuda \
  > "$out/emu.build" 2>&1 || { echo "FAIL: --backend cuda build"; tail -20 "$out/emu.build"; exit 1; }
"$out/cpu" --out "$out/cpu.run" > "$out/cpu.log" 2>&1 || { tail -20 "$out/cpu.log"; exit 1; }
"$out/emu" --out "$out/emu.run" > "$out/emu.log" 2>&1 || { echo "FAIL: the emulated run"; tail -25 "$out/emu.log"; exit 1; }
"$PY" tests/train/ema_recompute.py "$out/emu.run/checkpoints" 4 0.7 || status=1
grep -q "EMA of the weights: test loss" "$out/emu.log" || { echo "FAIL: no EMA evaluation"; status=1; }
r=$("$PY" tests/gpu/compare_runs.py "$out/emu.run/metrics.jsonl" "$out/cpu.run/metrics.jsonl" 1e-4 2>&1) &&
  echo "losses: $(echo "$r" | head -1)" || { echo "FAIL: losses"; echo "$r"; status=1; }
"$PY" - "$out/emu.run/metrics.jsonl" "$out/cpu.run/metrics.jsonl" <<'PY' || status=1
import json, sys
ev = lambda p: [(r["step"], r["loss"]) for r in map(json.loads, open(p)) if r["event"] == "eval_ema"]
a, b = ev(sys.argv[1]), ev(sys.argv[2])
assert len(a) == len(b) == 2, f"eval_ema records: {a} vs {b}"
worst = max(abs(x[1] - y[1]) / abs(y[1]) for x, y in zip(a, b))
print(f"EMA evaluations (device vs CPU): {a} vs {b}, largest relative difference {worst:.2g}")
assert worst < 1e-4, "the device EMA's evaluation differs from the CPU's"
PY
[ $status = 0 ] && echo "ema on the emulated CUDA backend: ok"
exit $status
