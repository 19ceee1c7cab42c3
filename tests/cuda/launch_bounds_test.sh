#!/usr/bin/env bash
# Every CUDA kernel declares __launch_bounds__ (part of `make test`): each __global__ function
# of runtime/cuda/ and of the generated kernels.cu of the example specs (generated/, which
# tests/cuda/cuda_build_test.sh keeps equal to what trainc emits). All our kernels launch
# with a fixed block size; the bound lets ptxas budget registers for exactly that size, and
# the CUDA emulator (tests/emu/) stops at any launch with a larger block than its kernel's
# bound. Text only: no nvcc needed.
set -u
source tests/lib.sh
status=0 n=0
srcs=(runtime/cuda/*.cu runtime/cuda/*/*.cu runtime/cuda/*.cuh runtime/include/*.cuh generated/*/cuda/kernels.cu)
# A declaration runs from __global__ to the first '(' after the kernel's name.
while IFS= read -r bad; do
  [ -n "$bad" ] && { echo "FAIL: kernel without __launch_bounds__: $bad"; status=1; }
done < <(perl -0ne 'while (/__global__\s+void\s+(__launch_bounds__\s*\([^()]*\)\s*)?(\w+)\s*\(/g) {
                      my ($b, $k) = ($1, $2); my $l = 1 + (substr($_, 0, pos($_)) =~ tr/\n//);
                      print "$ARGV:$l $k\n" unless $b; }' "${srcs[@]}")
n=$(cat "${srcs[@]}" | grep -o "__global__" | wc -l)
[ "$n" -gt 40 ] || { echo "FAIL: only $n kernels found in ${srcs[*]}"; status=1; }
[ $status = 0 ] && echo "all $n kernels of runtime/cuda and generated/*/cuda declare __launch_bounds__"
exit $status
