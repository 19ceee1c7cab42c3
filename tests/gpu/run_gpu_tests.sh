#!/usr/bin/env bash
# `make test-gpu`: the CUDA backend on a real GPU. Fails loudly (never skips) without one.
#  1. every CUDA op forward/backward vs the CPU op (test_ops_gpu: FP32 within 1e-4)
#  2. fused kernels vs the unfused sequence: tests/gpu/specs/ops_mix.spec trained with and
#     without --no-fuse (losses within 1e-4 per step), and vs the CPU trainer (1e-3, 20 steps)
#     CUDA graphs vs --no-graph (losses within 1e-4: each process times its own cuDNN
#     algorithms, so rounding may differ; TRAINC_CUDNN_DETERMINISTIC=1 keeps atomics out)
#  3. mixed precision: ops_mix in BF16 and FP16 (dynamic loss scaling) against FP32, losses
#     within 5e-2 over 20 steps; the FP16 run logs skipped_steps
#  4. end to end: fmnist_lenet on the GPU must reach the CPU trainer's bar, 92% test top-1,
#     in FP32 and in BF16
#  5. channels-last: the ResNet example in BF16 with --layout nhwc vs NCHW (5e-2, 20 steps)
#     and memcheck-clean; compute-sanitizer (memcheck) clean on ops_mix, FP32 and FP16
#  6. with 2 or more GPUs: ops_mix on 2 ranks (mpirun, NCCL buckets) vs the CPU trainer on 2
#     ranks (losses within 1e-3), also with sync_bn; with one GPU this step says it did not run
# Environment: BUILD (build), FMNIST_DIR (Fashion-MNIST IDX files; default the Debian
# package's /usr/share/datasets/fashion-mnist), GPU_TEST_BIN (the op test binary),
# TEST_GPU_ONLY (a bash regex: run only the steps whose name matches, e.g. 'ops|ops_mix' to
# split the suite over several calls of a time-limited machine; a later step that needs an
# earlier one's output then fails, so keep the ops_mix builds with their comparisons).
set -u
BUILD=${BUILD:-build}
# Runs compared with each other use deterministic cuDNN algorithms (no atomics in backward).
export TRAINC_CUDNN_DETERMINISTIC=1
out=$BUILD/test-gpu
[ -n "${TEST_GPU_ONLY:-}" ] || rm -rf "$out"   # a partial run keeps what earlier ones built
mkdir -p "$out"
fail=0; passed=0; skipped=0

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "error: make test-gpu needs an NVIDIA GPU and driver, and this machine has none (nvidia-smi -L failed)" >&2
  echo "HINT: run it on a GPU machine; 'make test' checks that the CUDA backend compiles without one" >&2
  exit 1
fi
nvidia-smi -L

step() {  # name, command...
  local name=$1; shift
  if [ -n "${TEST_GPU_ONLY:-}" ] && ! [[ $name =~ $TEST_GPU_ONLY ]]; then
    skipped=$((skipped + 1)); printf 'SKIP  %s (TEST_GPU_ONLY)\n' "$name"; return
  fi
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
step "ops_mix: --no-graph" "$out/mix_fused" --no-graph --out "$out/mix_nograph.run"
step "CUDA graph vs --no-graph losses (1e-4)" python3 tests/gpu/compare_runs.py \
  "$out/mix_fused.run/metrics.jsonl" "$out/mix_nograph.run/metrics.jsonl" 1e-4

for p in BF16 FP16; do
  printf 'extends: "%s/%s"\nprecision { compute: %s }\n' "$(pwd)" "$mix" $p > "$out/mix_$p.spec"
  step "ops_mix: $p CUDA trainer" bash -c "'$BUILD/trainc' build '$out/mix_$p.spec' -o '$out/mix_$p' --backend cuda && '$out/mix_$p' --out '$out/mix_$p.run'"
  step "$p vs FP32 losses (5e-2, 20 steps)" python3 tests/gpu/compare_runs.py \
    "$out/mix_$p.run/metrics.jsonl" "$out/mix_fused.run/metrics.jsonl" 5e-2 20
done
step "FP16 run logs skipped_steps (train and summary)" bash -c \
  "grep -q '\"event\":\"train\".*\"skipped_steps\":' '$out/mix_FP16.run/metrics.jsonl' && grep -q '\"event\":\"summary\".*\"skipped_steps\":' '$out/mix_FP16.run/metrics.jsonl'"

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
lenet_bf16() {
  printf 'extends: "%s/specs/examples/fmnist_lenet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/lenet_bf16.spec"
  "$BUILD/trainc" build "$out/lenet_bf16.spec" --backend cuda -o "$out/lenet_bf16" || return 1
  "$out/lenet_bf16" --data "$fmnist" --out "$out/lenet_bf16.run" || return 1
  python3 - "$out/lenet_bf16.run/metrics.jsonl" <<'PY'
import json, sys
evals = [json.loads(l) for l in open(sys.argv[1]) if '"eval"' in l]
print(f"fmnist_lenet BF16: test top-1 per epoch {[round(r['top1'], 4) for r in evals]}")
assert evals and evals[-1]["top1"] >= 0.92, "below the 92% bar"
PY
}
step "fmnist_lenet end to end in BF16 (>= 92%)" lenet_bf16

# Channels-last: the ResNet example in BF16 built with --layout nhwc against the NCHW build,
# one epoch each (losses within 5e-2 over 20 logged steps, as BF16 vs FP32), and memcheck on it.
nhwc_vs_nchw() {
  printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/resnet_bf16.spec"
  "$BUILD/trainc" build "$out/resnet_bf16.spec" --backend cuda -o "$out/resnet_nchw" || return 1
  "$BUILD/trainc" build "$out/resnet_bf16.spec" --backend cuda --layout nhwc -o "$out/resnet_nhwc" || return 1
  "$out/resnet_nchw" --data "$fmnist" --epochs 1 --out "$out/resnet_nchw.run" || return 1
  "$out/resnet_nhwc" --data "$fmnist" --epochs 1 --out "$out/resnet_nhwc.run" || return 1
  python3 tests/gpu/compare_runs.py "$out/resnet_nhwc.run/metrics.jsonl" "$out/resnet_nchw.run/metrics.jsonl" 5e-2 20
}
step "fmnist_resnet BF16: --layout nhwc vs nchw (5e-2, 20 steps)" nhwc_vs_nchw
sanitize_nhwc() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$cs" ] || { echo "error: compute-sanitizer not found"; return 1; }
  "$cs" --tool memcheck --error-exitcode 1 --leak-check no "$out/resnet_nhwc" --data "$fmnist" --benchmark 3 \
    --out "$out/resnet_nhwc_sanitized.run"
}
step "compute-sanitizer memcheck on the NHWC ResNet" sanitize_nhwc

sanitize() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$cs" ] || { echo "error: compute-sanitizer not found"; return 1; }
  "$cs" --tool memcheck --error-exitcode 1 --leak-check no "$out/mix_fused" --out "$out/mix_sanitized.run"
}
step "compute-sanitizer memcheck on ops_mix" sanitize
sanitize_fp16() {
  local cs
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$cs" ] || { echo "error: compute-sanitizer not found"; return 1; }
  "$cs" --tool memcheck --error-exitcode 1 --leak-check no "$out/mix_FP16" --out "$out/mix_fp16_sanitized.run"
}
step "compute-sanitizer memcheck on ops_mix in FP16" sanitize_fp16

ngpu=$(nvidia-smi -L | grep -c '^GPU')
if [ "$ngpu" -ge 2 ] && command -v mpirun > /dev/null; then
  two_ranks() {  # tag, extra parallel fields
    # ops_mix on 2 ranks: per-rank batch norm and masks make it its own run, so the reference
    # is the CPU trainer on 2 ranks (MPI all-reduce), which computes the same per-rank values
    local tag=$1 fields=$2
    printf 'extends: "%s/%s"\nparallel { ranks: 2 %s }\n' "$(pwd)" "$mix" "$fields" > "$out/$tag.spec"
    "$BUILD/trainc" build "$out/$tag.spec" --backend cuda -o "$out/$tag" || return 1
    "$BUILD/trainc" build "$out/$tag.spec" -o "$out/${tag}_cpu" || return 1
    local mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe)
    "${mpi[@]}" "$out/$tag" --out "$out/$tag.run" || return 1
    "${mpi[@]}" "$out/${tag}_cpu" --out "$out/${tag}_cpu.run" || return 1
    python3 tests/gpu/compare_runs.py "$out/$tag.run/metrics.jsonl" "$out/${tag}_cpu.run/metrics.jsonl" 1e-3 20
  }
  step "2 GPUs over NCCL vs the CPU trainer on 2 ranks (1e-3, 20 steps)" two_ranks mix_2r ""
  step "2 GPUs, sync_bn over NCCL vs the CPU trainer's (1e-3, 20 steps)" two_ranks mix_2s "sync_bn: true"
else
  echo "NOT RUN  2-GPU NCCL test: this machine has $ngpu GPU(s) (or no mpirun); it needs 2"
fi

echo
echo "test-gpu: $passed passed, $fail failed${TEST_GPU_ONLY:+, $skipped skipped (TEST_GPU_ONLY=$TEST_GPU_ONLY)}"
[ "$fail" -eq 0 ]
