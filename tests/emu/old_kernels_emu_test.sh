#!/usr/bin/env bash
# The previous channels-last batch-norm and max-pool kernels, kept for A/B timing on a GPU
# (TRAINC_CUDA_BN=old, TRAINC_CUDA_POOL=old), still match the CPU under the emulator: the
# channels-last batch norm and max pooling cases of tests/gpu/test_ops_gpu in all three
# precisions (emu_test.sh runs every op with the default kernels).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-old-kernels
if TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old EMU_SCHEDULE=1 "$BUILD/emu/test_ops_gpu" nhwc-norm-pool > "$out/ops.log" 2>&1; then
  echo "old channels-last batch norm and max pool kernels under the emulator: $(tail -1 "$out/ops.log")"
else
  echo "FAIL: the old channels-last batch norm or max pool kernels (TRAINC_CUDA_BN=old TRAINC_CUDA_POOL=old):"
  grep -v '^ok' "$out/ops.log" | tail -20
  exit 1
fi
