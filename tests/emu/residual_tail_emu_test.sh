#!/usr/bin/env bash
# A residual block's tail in one kernel each way (lower: fuse_residual_tail.c; residual_tail.cu)
# in whole trainers under the emulator: ConvNeXt's structure at 32x32 (tests/emu/traffic/
# convnext_mini.spec, one block a stage, drop path raised to 0.6 so that samples are dropped,
# layer scale's init to 0.5),
# 4 steps, FP32 NCHW and BF16 channels-last. The fused build trains as the CPU trainer (1e-4
# relative in FP32, 5e-2 in BF16, as the other emulated trainers) and as --no-residual-tail
# (the bias, layer scale, drop path and add apart): 1e-5 in FP32 (the same arithmetic; only a
# multiply-add's rounding may differ), 1e-2 in BF16 (the fused kernels keep the chain in
# FP32, the unfused round each op's output to BF16); the fused build calls the tail kernels
# and the other does not; device memory within the start-up check's plan. test_ops_gpu checks the kernels against the CPU
# ops one by one (and tests/emu/mutants.sh's tail-drop and tail-shortcut show it failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-residual-tail
status=0
emu_convnext_specs 'vars { drop_path: 0.6 }'

emu_run cpu convnext || status=1
# tag, spec, layout, tolerance against the CPU, tolerance against --no-residual-tail
for cfg in "fp32 convnext nchw 1e-4 1e-5" "bf16 convnext_bf16 nhwc 5e-2 1e-2"; do
  read -r tag spec layout tol_cpu tol_apart <<< "$cfg"
  emu_run "tail_$tag" "$spec" --backend cuda --layout "$layout" || { status=1; continue; }
  emu_compare "fused tail ($tag $layout) against the CPU" "tail_$tag" cpu "$tol_cpu"
  n=$(grep -c 'cuda_residual_tail_forward' "$out/tail_$tag.src/model.c")
  [ "$n" = 4 ] && echo "$tag $layout: 4 blocks' tails fused" || fail "$tag $layout: $n fused tails in model.c, not 4"
  emu_within_plan "fused tail ($tag $layout) device memory" "$out/tail_$tag.log" "$out/$spec.spec" "--layout $layout" ||
    status=1
  emu_run "apart_$tag" "$spec" --backend cuda --layout "$layout" --no-residual-tail || { status=1; continue; }
  grep -q 'cuda_residual_tail' "$out/apart_$tag.src/model.c" && fail "$tag --no-residual-tail: model.c still calls the tail kernels"
  emu_compare "fused tail against --no-residual-tail ($tag $layout)" "tail_$tag" "apart_$tag" "$tol_apart"
done
[ $status = 0 ] && echo "residual tails in emulated CUDA trainers: ok"
exit $status
