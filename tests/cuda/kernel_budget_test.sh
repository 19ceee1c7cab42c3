#!/usr/bin/env bash
# Compile gates of the CUDA backend (part of `make test`): every runtime .cu file and the
# generated kernels.cu of each example spec compile for sm_80 and sm_90 machine code plus
# sm_90 PTX (the flags of mk/cuda.mk), with ptxas spill and local-memory warnings as errors,
# and every kernel stays within the budget: at most KERNEL_MAX_REGS registers (64 unless
# set), no stack frame, at most 16 KiB of static shared memory. Prints the largest register
# count per architecture. Skips, saying so, only when nvcc is absent.
set -u
BUILD=${BUILD:-build}
out=$BUILD/test-cuda-budget
rm -rf "$out" && mkdir -p "$out"
nvcc=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)}
if [ -z "$nvcc" ]; then
  echo "SKIP: nvcc not found (PATH, /usr/local/cuda/bin): the kernel budget check did not run"
  exit 0
fi
max_regs=${KERNEL_MAX_REGS:-64}
read -r -a flags <<< "$(make -s cuda-flags CUDA_ARCHS="80 90" CUDA_PTXAS_VERBOSE=1)"
srcs=(runtime/cuda/*.cu runtime/cuda/*/*.cu generated/*/cuda/kernels.cu)
printf '%s\n' "${srcs[@]}" | nice xargs -P 2 -I{} sh -c \
  'dir=$0 f=$1; shift; log="$dir/$(echo "$f" | tr / _).log"
   "$@" -c "$f" -o "${log%.log}.o" > "$log" 2>&1 || echo "FAILED $f" >> "$dir/failed"' \
  "$out" {} "$nvcc" "${flags[@]}"
status=0
if [ -f "$out/failed" ]; then
  status=1
  while read -r _ f; do echo "FAIL: $f does not compile for sm_80 + sm_90 + PTX with ptxas warnings as errors:"
    grep -iE "error|warning" "$out/$(echo "$f" | tr / _).log" | head -10; done < "$out/failed"
fi
# ptxas -v: "Compiling entry function 'K' for 'sm_X'", then its stack frame, registers, smem.
awk -v max="$max_regs" '
  /Compiling entry function/ { match($0, /function .([^'"'"']*). for .(sm_[0-9]+)/, m); k = m[1]; a = m[2]; next }
  /bytes stack frame/ && k != "" { if ($1 + 0 > 0) { print "FAIL: " k " (" a ") has a " $1 "-byte stack frame"; bad = 1 } }
  /Used [0-9]+ registers/ && k != "" {
    match($0, /Used ([0-9]+) registers/, r); regs = r[1] + 0; n[a]++
    if (regs > top[a]) { top[a] = regs; topk[a] = k }
    if (regs > max) { print "FAIL: " k " (" a ") uses " regs " registers, over the budget of " max; bad = 1 }
    if (match($0, /([0-9]+) bytes smem/, s) && s[1] + 0 > 16384) { print "FAIL: " k " (" a ") uses " s[1] " bytes of shared memory"; bad = 1 }
    k = "" }
  END { for (a in n) printf "%s: %d kernels within budget check; most registers %d (%s)\n", a, n[a], top[a], topk[a]; exit bad }
' "$out"/*.log || status=1
[ "$(grep -h 'Used [0-9]* registers' "$out"/*.log | wc -l)" -gt 100 ] || { echo "FAIL: too few kernels found in the ptxas output"; status=1; }
exit $status
