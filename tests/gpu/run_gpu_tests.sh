#!/usr/bin/env bash
# `make test-gpu`: the CUDA backend on a real GPU. Fails loudly (never skips) without one.
#  1. every CUDA op forward/backward vs the CPU op (test_ops_gpu: FP32 within 1e-4)
#  2. fused kernels vs the unfused sequence: tests/gpu/specs/ops_mix.spec trained with and
#     without --no-fuse (losses within 1e-4 per step), and vs the CPU trainer (1e-3, 20 steps)
#  3. end to end: fmnist_lenet on the GPU must reach the CPU trainer's bar, 92% test top-1
#  4. compute-sanitizer (memcheck) clean on ops_mix
# Environment: BUILD (build), FMNIST_DIR (Fashion-MNIST IDX files; default the Debian
# package's /usr/share/datasets/fashion-mnist), GPU_TEST_BIN (the op test binary).
set -u
BUILD=${BUILD:-build}
out=$BUILD/test-gpu
rm -rf "$out" && mkdir -p "$out"
fail=0; passed=0

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "error: make test-gpu needs an NVIDIA GPU and driver, and this machine has none (nvidia-smi -L failed)" >&2
  echo "HINT: run it on a GPU machine; 'make test' checks that the CUDA backend compiles without one" >&2
  exit 1
fi
nvidia-smi -L

step() {  # name, command...
  local name=$1; shift
  local log="$out/$(echo "$name" | tr ' /' '__').log"
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); printf 'PASS  %-52s %4ds\n' "$name" $((SECONDS - t0))
  else
    fail=$((fail + 1)); printf 'FAIL  %-52s %4ds  (log: %s)\n' "$name" $((SECONDS - t0)) "$log"
    tail -n 30 "$log" | sed 's/^/      | /'
  fi
}

step "ops: CUDA vs CPU forward/backward" "${GPU_TEST_BIN:?}"

mix=tests/gpu/specs/ops_mix.spec
build_and_run() {  # name, extra build flags...
  local name=$1; shift
  "$BUILD/trainc" build "$mix" -o "$out/$name" "$@" && "$out/$name" --out "$out/$name.run"
}
step "ops_mix: fused CUDA trainer" build_and_run mix_fused --backend cuda
step "ops_mix: unfused CUDA trainer (--no-fuse)" build_and_run mix_unfused --backend cuda --no-fuse
step "ops_mix: CPU trainer" build_and_run mix_cpu
step "fused vs unfused losses (1e-4)" python3 tests/gpu/compare_runs.py \
  "$out/mix_fused.run/metrics.jsonl" "$out/mix_unfused.run/metrics.jsonl" 1e-4
step "CUDA vs CPU losses (1e-3, 20 steps)" python3 tests/gpu/compare_runs.py \
  "$out/mix_fused.run/metrics.jsonl" "$out/mix_cpu.run/metrics.jsonl" 1e-3 20

fmnist=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
lenet_e2e() {
  [ -f "$fmnist/train-images-idx3-ubyte.gz" ] || {
    echo "error: Fashion-MNIST not found in $fmnist (train-images-idx3-ubyte.gz etc.)"
    echo "HINT: set FMNIST_DIR to a directory with the four IDX .gz files"; return 1; }
  "$BUILD/trainc" build specs/examples/fmnist_lenet.spec --backend cuda -o "$out/lenet" || return 1
  local t0; t0=$(date +%s.%N)
  "$out/lenet" --data "$fmnist" --out "$out/lenet.run" || return 1
  local t1; t1=$(date +%s.%N)
  python3 - "$out/lenet.run/metrics.jsonl" "$t0" "$t1" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
evals = [r for r in recs if r["event"] == "eval"]
first = next((r for r in evals if r["top1"] >= 0.92), None)
print(f"fmnist_lenet on the GPU: test top-1 per epoch {[round(r['top1'], 4) for r in evals]}; "
      f"whole run {float(sys.argv[3]) - float(sys.argv[2]):.1f} s")
assert evals and evals[-1]["top1"] >= 0.92, "below the CPU trainer's 92% bar"
PY
}
step "fmnist_lenet end to end on the GPU (>= 92%)" lenet_e2e

sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$cs" ] || { echo "error: compute-sanitizer not found"; return 1; }
  "$cs" --tool memcheck --error-exitcode 1 --leak-check no "$out/mix_fused" --out "$out/mix_sanitized.run"
}
step "compute-sanitizer memcheck on ops_mix" sanitize

echo
echo "test-gpu: $passed passed, $fail failed"
[ "$fail" -eq 0 ]
