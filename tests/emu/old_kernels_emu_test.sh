#!/usr/bin/env bash
# The previous channels-last batch-norm and max-pool kernels and NCHW bias gradient, kept for
# A/B timing on a GPU (TRAINC_CUDA_BN=old, TRAINC_CUDA_POOL=old, TRAINC_CUDA_BIAS=old), still
# match the CPU under the emulator: those cases of tests/gpu/test_ops_gpu (its `old-kernels`
# argument) in all three precisions (emu_test.sh runs every op with the default kernels).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-old-kernels
if TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old TRAINC_CUDA_BIAS=old EMU_SCHEDULE=1 "$BUILD/emu/test_ops_gpu" old-kernels > "$out/ops.log" 2>&1; then
  echo "old batch norm (NHWC), max pool (NHWC) and bias (NCHW) kernels under the emulator: $(tail -1 "$out/ops.log")"
else
  echo "FAIL: the old kernels (TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old TRAINC_CUDA_BIAS=old):"
  grep -v '^ok' "$out/ops.log" | tail -20
  exit 1
fi
