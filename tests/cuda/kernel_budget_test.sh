#!/usr/bin/env bash
# Compile gates of the CUDA backend (part of `make test`): every runtime .cu file and the
# generated kernels.cu of each example spec compile for sm_80 and sm_90 machine code plus
# sm_90 PTX (the flags of mk/cuda.mk), with ptxas spill and local-memory warnings as errors,
# and every kernel stays within the budget: at most KERNEL_MAX_REGS registers (64 unless
# set), no stack frame, at most 16 KiB of static shared memory. Prints the largest register
# count per architecture. Skips, saying so, only when nvcc is absent.
set -u
source tests/lib.sh
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
"$PY" - "$max_regs" "$out"/*.log <<'PY' || status=1
import re, sys
max_regs, bad, top, count = int(sys.argv[1]), 0, {}, {}
for path in sys.argv[2:]:
    kernel = arch = None
    for line in open(path, errors="replace"):
        m = re.search(r"Compiling entry function '([^']*)' for '(sm_\d+)'", line)
        if m:
            kernel, arch = m.groups()
            continue
        if kernel is None:
            continue
        m = re.search(r"(\d+) bytes stack frame", line)
        if m and int(m.group(1)) > 0:
            print(f"FAIL: {kernel} ({arch}) has a {m.group(1)}-byte stack frame"); bad = 1
        m = re.search(r"Used (\d+) registers", line)
        if m:
            regs = int(m.group(1))
            count[arch] = count.get(arch, 0) + 1
            if regs > top.get(arch, (0, ""))[0]:
                top[arch] = (regs, kernel)
            if regs > max_regs:
                print(f"FAIL: {kernel} ({arch}) uses {regs} registers, over the budget of {max_regs}"); bad = 1
            s = re.search(r"(\d+) bytes smem", line)
            if s and int(s.group(1)) > 16384:
                print(f"FAIL: {kernel} ({arch}) uses {s.group(1)} bytes of static shared memory"); bad = 1
            kernel = None
for arch in sorted(count):
    print(f"{arch}: {count[arch]} kernels checked; most registers {top[arch][0]} ({top[arch][1]})")
sys.exit(bad)
PY
[ "$(grep -h 'Used [0-9]* registers' "$out"/*.log | wc -l)" -gt 100 ] || { echo "FAIL: too few kernels found in the ptxas output"; status=1; }
exit $status
