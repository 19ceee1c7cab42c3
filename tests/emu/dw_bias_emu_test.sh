#!/usr/bin/env bash
# A depthwise conv's bias in our depthwise kernels (lower: fuse_dw_bias.c; conv2d_depthwise.cu:
# added in the forward's store, its gradient summed by the weight gradient's kernel) in whole
# trainers under the emulator: ConvNeXt's structure at 32x32 (tests/emu/traffic/convnext_mini.spec,
# one block a stage, each with a 7x7 depthwise conv with a bias; layer scale's init raised to
# 0.5 so that the branch moves the loss), 4 steps, FP32 NCHW and BF16 channels-last, built by
# default and with --no-dw-bias (the generated bias kernel, bias.cu's channel sums). The
# default build's model.c passes the bias to each block's dwconv (4 forward, 4 backward calls)
# and has no dwconv bias kernel; --no-dw-bias's the reverse. The fused bias gradient is an FP32
# sum in the kernels' order where bias.cu sums in double, and in BF16 the forward rounds once
# where the two passes round twice, so the runs agree within rounding, not bit for bit: losses
# within 1e-6 relative in FP32 and 2e-3 in BF16, the final parameters within 1e-6 (FP32) and
# 5e-3 (BF16) of the largest (tests/emu/same_run.py --tol; measured: 7e-9 and 1.5e-8 in FP32,
# 7e-4 and 6e-4 in BF16). Device memory within the start-up
# check's plan. test_ops_gpu checks the kernels against the CPU and the unfused passes (and
# tests/emu/mutants.sh's dw-bias-* mutants show it failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-dw-bias
status=0
sed 's/init: 1e-6/init: 0.5/' specs/models/convnext_tiny.spec > "$out/convnext_tiny_ls.spec"
sed "s|\.\./\.\./\.\./specs/models/convnext_tiny.spec|$(pwd)/$out/convnext_tiny_ls.spec|" tests/emu/traffic/convnext_mini.spec \
  > "$out/convnext_mini.spec"
grep -q 'init: 0.5' "$out/convnext_tiny_ls.spec" && grep -q convnext_tiny_ls "$out/convnext_mini.spec" ||
  { echo "FAIL: could not derive the test's ConvNeXt spec"; exit 1; }
printf 'extends: "%s/%s/convnext_mini.spec"\n%s\n%s\n' "$(pwd)" "$out" \
  'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
  'solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }' > "$out/convnext.spec"
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/convnext.spec" > "$out/convnext_bf16.spec"

for cfg in "fp32 convnext nchw 1e-6 1e-6" "bf16 convnext_bf16 nhwc 2e-3 5e-3"; do
  read -r tag spec layout ltol ptol <<< "$cfg"
  emu_run "fused_$tag" "$spec" --backend cuda --layout "$layout" || { status=1; continue; }
  emu_run "apart_$tag" "$spec" --backend cuda --layout "$layout" --no-dw-bias || { status=1; continue; }
  f=$out/fused_$tag.src/model.c a=$out/apart_$tag.src/model.c
  nf=$(grep -c 'cuda_conv2d_forward_bias(stages_[0-9]_0_dwconv_conv' "$f")
  nb=$(grep -c 'cuda_conv2d_backward_bias(stages_[0-9]_0_dwconv_conv' "$f")
  [ "$nf" = 4 ] && [ "$nb" = 4 ] && ! grep -q 'fused_stages_[0-9]_0_dwconv_bias(' "$f" &&
    echo "$tag $layout: 4 dwconvs take their bias each way, no bias kernel" ||
    fail "$tag $layout: $nf forward and $nb backward dwconv calls with the bias in model.c (not 4 and 4), or a bias kernel left"
  grep -q 'cuda_conv2d_[a-z]*_bias(' "$a" && fail "$tag --no-dw-bias: model.c still passes the bias to a conv"
  [ "$(grep -c 'fused_stages_[0-9]_0_dwconv_bias(' "$a")" = 4 ] || fail "$tag --no-dw-bias: not 4 dwconv bias kernels"
  "$PY" tests/emu/same_run.py --tol "$ltol" "$ptol" "depthwise bias in the kernels vs --no-dw-bias ($tag $layout)" \
    "$out/fused_$tag.run" "$out/apart_$tag.run" || fail "$tag $layout: the default build and --no-dw-bias differ"
  emu_within_plan "fused ($tag $layout) device memory" "$out/fused_$tag.log" "$out/$spec.spec" "--layout $layout" ||
    status=1
done
[ $status = 0 ] && echo "depthwise convs with their bias in the kernels in emulated CUDA trainers: ok"
exit $status
