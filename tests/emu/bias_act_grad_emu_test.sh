#!/usr/bin/env bash
# A bias + GELU's backward with the conv's bias gradient in one pass (lower:
# fuse_bias_act_grad.c; bias_act_bgrad.cu) in whole trainers under the emulator: ConvNeXt's
# structure at 32x32 (tests/emu/traffic/convnext_mini.spec, one block a stage, layer scale's
# init raised to 0.5 so that the branch moves the loss), 4 steps, FP32 NCHW (one block a
# channel over NCHW planes) and BF16 channels-last (rows of channels, partial sums), built by
# default and with --no-bias-act-grad (bias_act.cu's backward writes the conv's output
# gradient, bias.cu reads it back for the sums). The fused kernel rounds each value as the
# unfused one stores it and sums in bias.cu's order, so the losses and the final parameters
# must be equal, bit for bit, in both precisions; the default build's model.c calls the fused
# backward for each block's pwconv1 (4) and --no-bias-act-grad's none; device memory within
# the start-up check's plan. test_ops_gpu checks the kernel against the CPU ops (and
# tests/emu/mutants.sh's bgrad-sum shows it failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-bias-act-grad
status=0
emu_convnext_specs

for cfg in "fp32 convnext nchw" "bf16 convnext_bf16 nhwc"; do
  read -r tag spec layout <<< "$cfg"
  emu_run "fused_$tag" "$spec" --backend cuda --layout "$layout" || { status=1; continue; }
  emu_run "apart_$tag" "$spec" --backend cuda --layout "$layout" --no-bias-act-grad || { status=1; continue; }
  n=$(grep -c 'cuda_bias_act_backward_bgrad(' "$out/fused_$tag.src/model.c")
  [ "$n" = 4 ] && echo "$tag $layout: 4 blocks' GELU backward sum pwconv1's bias gradient" ||
    fail "$tag $layout: $n fused bias + GELU backward calls in model.c, not 4"
  grep -q 'cuda_bias_act_backward_bgrad' "$out/apart_$tag.src/model.c" &&
    fail "$tag --no-bias-act-grad: model.c still calls the fused backward"
  "$PY" tests/emu/same_run.py "bias + GELU backward + bias gradient fused vs --no-bias-act-grad ($tag $layout)" \
    "$out/fused_$tag.run" "$out/apart_$tag.run" || fail "$tag $layout: the default build and --no-bias-act-grad differ"
  emu_within_plan "fused ($tag $layout) device memory" "$out/fused_$tag.log" "$out/$spec.spec" "--layout $layout" ||
    status=1
done
[ $status = 0 ] && echo "bias + activation backward with the bias gradient in emulated CUDA trainers: ok"
exit $status
