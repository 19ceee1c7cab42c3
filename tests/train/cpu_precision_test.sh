#!/usr/bin/env bash
# precision on the CPU backend: compute FP16 and any loss_scale are refused at build time with
# one clear message (and no binary written); BF16 builds, and its trainer either trains with BF16 products
# (one MLP epoch: test top-1 over 80% and within 2 points of the FP32 run, other final params)
# and refuses at start-up, with one clear message, on a CPU without avx512_bf16 (simulated by
# TRAINC_CPU_NO_BF16=1); a LeNet BF16 trainer runs its convolutions for a few steps.
set -eu
source tests/lib.sh
out=$BUILD/test-train/cpu-precision
rm -rf "$out" && mkdir -p "$out"

spec_with() {  # compute -> spec path
  printf 'extends: "%s/specs/examples/fmnist_mlp.spec"\nprecision { compute: %s }\n' "$(pwd)" "$1" > "$out/mlp_$1.spec"
  echo "$out/mlp_$1.spec"
}

# Refused by `trainc build`, naming the field and what to do, writing no binary.
expect_refused() {  # compute
  local rc=0
  "$BUILD/trainc" build "$(spec_with "$1")" -o "$out/$1" > "$out/$1.out" 2> "$out/$1.err" || rc=$?
  if [ "$rc" -eq 0 ]; then fail "$1 on the CPU built (status 0)"
  elif [ "$(grep -c 'error:' "$out/$1.err")" -ne 1 ] || ! grep -q "compute: $1" "$out/$1.err" ||
       ! grep -q 'hint:' "$out/$1.err"; then
    fail "$1 refusal is not one clear error:"; cat "$out/$1.err"
  elif [ -e "$out/$1" ]; then fail "$1 refusal left a binary behind"
  fi
}
expect_refused FP16
# a loss scale has no CPU implementation either
printf 'extends: "%s/specs/examples/fmnist_mlp.spec"\nprecision { compute: BF16 loss_scale: STATIC }\n' "$(pwd)" > "$out/mlp_ls.spec"
rc=0
"$BUILD/trainc" build "$out/mlp_ls.spec" -o "$out/ls" > /dev/null 2> "$out/ls.err" || rc=$?
if [ "$rc" -eq 0 ] || [ "$(grep -c 'error:' "$out/ls.err")" -ne 1 ] || ! grep -q 'loss_scale' "$out/ls.err"; then
  fail "loss_scale on the CPU: status $rc, expected one clear error:"; cat "$out/ls.err"
fi

# BF16 builds and trains.
"$BUILD/trainc" build "$(spec_with BF16)" -o "$out/bf16" > /dev/null
"$BUILD/trainc" build "$(spec_with FP32)" -o "$out/fp32" > /dev/null
rc=0
TRAINC_CPU_NO_BF16=1 "$out/bf16" --out "$out/run-refused" > "$out/refused.out" 2> "$out/refused.err" || rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -ge 128 ]; then fail "BF16 on a CPU without avx512_bf16: status $rc, expected a refusal"
elif [ "$(grep -c '^error:' "$out/refused.err")" -ne 1 ] || ! grep -q 'avx512_bf16' "$out/refused.err"; then
  fail "BF16 start-up refusal is not one clear error:"; cat "$out/refused.err"
fi
if grep -q avx512_bf16 /proc/cpuinfo && [ "${TRAINC_CPU_NO_BF16:-0}" != 1 ]; then   # make test-cpu-paths hides it
  for p in fp32 bf16; do "$out/$p" --out "$out/run-$p" > "$out/$p.out"; done
  "$PY" - "$out/run-fp32/metrics.jsonl" "$out/run-bf16/metrics.jsonl" <<'PY' || fail "BF16 MLP run vs FP32 (above)"
import json, sys
def summary(path):
    recs = [json.loads(l) for l in open(path)]
    return [r for r in recs if r["event"] == "summary"][-1]
f, b = summary(sys.argv[1]), summary(sys.argv[2])
print(f"MLP one epoch: FP32 top-1 {f['top1']:.4f} params {f['params_hash']}; BF16 top-1 {b['top1']:.4f} params {b['params_hash']}")
assert b["top1"] > 0.80, "BF16 top-1 below 80%"
assert abs(b["top1"] - f["top1"]) < 0.02, "BF16 top-1 more than 2 points from FP32's"
assert b["params_hash"] != f["params_hash"], "BF16 trained exactly as FP32: BF16 products did not run"
PY
  printf 'extends: "%s/specs/examples/fmnist_lenet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/lenet_bf16.spec"
  "$BUILD/trainc" build "$out/lenet_bf16.spec" -o "$out/lenet_bf16" > /dev/null
  "$out/lenet_bf16" --benchmark 2 --out "$out/run-lenet" > "$out/lenet.out" || fail "LeNet BF16 benchmark steps failed"
else
  echo "cpu_precision_test: this CPU has no avx512_bf16 (or TRAINC_CPU_NO_BF16=1): BF16 training not run"
fi

if [ "$failures" -eq 0 ]; then echo "cpu_precision_test: PASS"; else echo "cpu_precision_test: $failures failure(s)"; exit 1; fi
