#!/usr/bin/env bash
# `make test-cpu-paths` (CI runs it after make test): the tests whose outcome depends on the
# CPU's paths, again with each path forced where this machine would not go by itself, so that
# a CPU that takes another path (Zen 5, an AMX Xeon, a machine without AVX-512 BF16) is not the
# first to run it:
#   haswell   OPENBLAS_CORETYPE=Haswell: OpenBLAS's AVX2 kernels, and so FP32 products on
#             oneDNN's sgemm (runtime/cpu/gemm_library.c), as on Zen 5
#   no-bf16   TRAINC_CPU_NO_BF16=1 TRAINC_CONV_BF16=gemm TRAINC_CONV_C1=off: the BF16
#             convolutions and the 1-channel AVX-512 kernel off, BF16 refused as on a CPU
#             without avx512_bf16
#   1-thread  OMP_NUM_THREADS=1
# Each variant runs the unit tests and the CPU trainer tests below; a variant's failures are
# named with it. Needs make test-build (make test-cpu-paths does it).
set -u
source tests/lib.sh
tests="unit/ train/train_short_test.sh train/cpu_precision_test.sh train/resume_test.sh
       gradcheck/model_gradcheck_test.sh lower/params_hash_test.sh"
variants=("haswell:OPENBLAS_CORETYPE=Haswell"
          "no-bf16:TRAINC_CPU_NO_BF16=1 TRAINC_CONV_BF16=gemm TRAINC_CONV_C1=off"
          "1-thread:OMP_NUM_THREADS=1")
failed=()
for v in "${variants[@]}"; do
  name=${v%%:*} settings=${v#*:}
  echo "== $name: $settings"
  if ! env $settings TEST_ONLY="$tests" BUILD="$BUILD" bash tests/run_all.sh; then
    failed+=("$name")
  fi
  # keep each variant's logs apart
  rm -rf "$BUILD/test-logs-$name" && cp -r "$BUILD/test-logs" "$BUILD/test-logs-$name"
done
[ ${#failed[@]} -eq 0 ] || die "CPU path variants failed: ${failed[*]} (logs in $BUILD/test-logs-<variant>)"
echo "all CPU path variants passed"
