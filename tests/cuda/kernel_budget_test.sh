#!/usr/bin/env bash
# Compile gates of the CUDA backend (part of `make test`): every runtime .cu file and the
# generated kernels.cu of each example spec compile for sm_80 and sm_90 machine code plus
# sm_90 PTX (the flags of mk/cuda.mk), with ptxas spill and local-memory warnings as errors,
# and every kernel stays within the budget: at most KERNEL_MAX_REGS registers (64 unless
# set), no stack frame, at most 16 KiB of static shared memory. Prints the largest register
# count per architecture. The objects are the default `make cuda` build's (sm_80 + sm_90),
# which keeps each one's ptxas report beside it (OBJ.ptxas): tests/cuda/cuda_build_test.sh
# links against that same library, so `make test` compiles each file once. Skips, saying
# so, only when nvcc is absent.
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
archs="80 90"
objdir=$(make -s cuda-objdir CUDA_ARCHS="$archs")
srcs=(runtime/cuda/*.cu runtime/cuda/*/*.cu generated/*/cuda/kernels.cu)
reports=()
for f in "${srcs[@]}"; do reports+=("$objdir/${f%.cu}.ptxas"); done
# -k: every file that compiles gets its report, so one failure does not hide the others'
nice make -k -s CUDA_ARCHS="$archs" CUDA_WERROR=1 "${reports[@]}" > "$out/make.log" 2>&1
status=0 built=()
for i in "${!srcs[@]}"; do
  if [ -f "${reports[$i]}" ]; then built+=("${reports[$i]}")
  else status=1; echo "FAIL: ${srcs[$i]} does not compile for sm_80 + sm_90 + PTX with ptxas warnings as errors"; fi
done
[ $status = 0 ] || grep -iE "error|warning" "$out/make.log" | head -20
# ptxas -v: "Compiling entry function 'K' for 'sm_X'", then its stack frame, registers, smem.
"$PY" - "$max_regs" "${built[@]}" <<'PY' || status=1
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
[ "$(cat /dev/null "${built[@]}" | grep -c 'Used [0-9]* registers')" -gt 100 ] || { echo "FAIL: too few kernels found in the ptxas output"; status=1; }
exit $status
