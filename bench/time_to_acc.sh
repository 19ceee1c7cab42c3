#!/usr/bin/env bash
# Time for the Fashion-MNIST example (specs/examples/fmnist_lenet.spec) to reach 92% test
# top-1: our trainer (CUDA backend) vs PyTorch with the same net and recipe
# (bench/torch_tta_ref.py), one after the other in one run. The time is each side's training
# clock at the first evaluation at or above the target (evaluations included, start-up not);
# the process wall times are printed beside it. Prints one RESULTS.md row. Run by
# `make bench-gpu` after the throughput rows. BACKEND=cpu DEVICE=cpu runs both on the CPU
# (slow; with EPOCHS=1 TARGET=0.8 a check of this script).
# Environment: BUILD, BACKEND (cuda), DEVICE (torch's, cuda), PYTHON (python3), FMNIST_DIR,
# TARGET (0.92), EPOCHS (the spec's).
set -u
BUILD=${BUILD:-build}
BACKEND=${BACKEND:-cuda}
DEVICE=${DEVICE:-cuda}
PYTHON=${PYTHON:-python3}
TARGET=${TARGET:-0.92}
data=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
spec=specs/examples/fmnist_lenet.spec
out=$BUILD/bench-tta
rm -rf "$out" && mkdir -p "$out"
epochs_flag=(); [ -n "${EPOCHS:-}" ] && epochs_flag=(--epochs "$EPOCHS")

"$BUILD/trainc" build "$spec" --backend "$BACKEND" -o "$out/lenet" > "$out/build.log" 2>&1 ||
  { cat "$out/build.log" >&2; echo "error: trainc build --backend $BACKEND failed" >&2; exit 1; }
t0=$(date +%s.%N)
"$out/lenet" --data "$data" --out "$out/run" "${epochs_flag[@]}" > "$out/ours.log" 2>&1 ||
  { tail -n 20 "$out/ours.log" >&2; echo "error: our trainer failed (log: $out/ours.log)" >&2; exit 1; }
ours_proc=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
t0=$(date +%s.%N)
"$PYTHON" bench/torch_tta_ref.py --data "$data" --device "$DEVICE" --target "$TARGET" \
  --epochs "${EPOCHS:-$(sed -n 's/^ *epochs: *\([0-9]*\).*/\1/p' "$spec" | head -1)}" > "$out/torch.json" 2> "$out/torch.err"
torch_proc=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
[ -s "$out/torch.json" ] || { cat "$out/torch.err" >&2; echo "error: the PyTorch reference failed" >&2; exit 1; }

"$PYTHON" - "$out/run/metrics.jsonl" "$out/torch.json" "$TARGET" "$ours_proc" "$torch_proc" "$BACKEND" <<'PY'
import datetime, json, subprocess, sys
metrics, torch_json, target, ours_proc, torch_proc, backend = sys.argv[1:]
target = float(target)
evals = [json.loads(l) for l in open(metrics) if '"event":"eval"' in l]
ours = next((e for e in evals if e["top1"] >= target), None)
ref = json.loads(open(torch_json).read().strip().splitlines()[-1])
theirs = ref["reached"]
try:
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.splitlines()[0]
except (OSError, IndexError):
    gpu = "no GPU (" + backend + ")"
fmt = lambda r: f'{r["wall_s"]:.1f} s (epoch {r["epoch"]})' if r else f"not reached"
ratio = f'{theirs["wall_s"] / ours["wall_s"]:.2f}×' if ours and theirs else "n/a"
print(f"| date | GPU | to {100 * target:.0f}%: trainc | PyTorch {ref['torch']} | speed-up | final top-1 trainc / PyTorch "
      f"| process wall trainc / PyTorch |")
print("|---|---|---|---|---|---|---|")
print(f"| {datetime.date.today()} | {gpu} | {fmt(ours)} | {fmt(theirs)} | {ratio} | "
      f"{100 * evals[-1]['top1']:.2f}% / {100 * ref['final_top1']:.2f}% | {ours_proc} s / {torch_proc} s |")
sys.exit(0 if ours and theirs else 1)
PY
