#!/usr/bin/env bash
# A conv's bias added by the layer norm that alone reads its output (lower: fuse_ln_bias.c;
# layernorm.cu: x + bias rounded as the bias pass stores it, in every pass of the norm, and
# the bias gradient summed where the norm's backward writes din, channels-last) in whole
# trainers under the emulator: ConvNeXt's structure at 32x32 (tests/emu/traffic/convnext_mini.spec:
# the stem's 4x4 stride 4 conv with its bias -> layer norm; layer scale's init raised to 0.5),
# 4 steps, FP32 NCHW and BF16 channels-last, built by default and with --no-ln-bias (the
# generated stem bias kernel, bias.cu's channel sums). The default build's model.c passes the
# stem conv's bias and bias gradient to the norm (cuda_layernorm_forward_bias / _backward_bias)
# and has no stem bias kernel; --no-ln-bias's the reverse. Every value the norm reads is the
# unfused one, and the bias gradient is the same double sum of the same stored din (NCHW:
# bias.cu's own pass; channels-last: at this net's 256 stem rows, one split whose 8 warps take
# the rows bias.cu's 8 row lanes take, in the same order), so the two runs agree bit for bit:
# the per-step losses and every final parameter (tests/emu/same_run.py). Device memory within
# the start-up check's plan. test_ops_gpu checks the kernels against the CPU and the unfused
# passes over several row splits (and tests/emu/mutants.sh's ln-bias-* mutants show it failing).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-ln-bias
status=0
emu_convnext_specs

for cfg in "fp32 convnext nchw" "bf16 convnext_bf16 nhwc"; do
  read -r tag spec layout <<< "$cfg"
  emu_run "fused_$tag" "$spec" --backend cuda --layout "$layout" || { status=1; continue; }
  emu_run "apart_$tag" "$spec" --backend cuda --layout "$layout" --no-ln-bias || { status=1; continue; }
  f=$out/fused_$tag.src/model.c a=$out/apart_$tag.src/model.c
  nf=$(grep -c 'cuda_layernorm_forward_bias(stem_norm_out, .*, stem_conv_bias, ' "$f")
  nb=$(grep -c 'cuda_layernorm_backward_bias(.*, stem_conv_dbias, .*, stem_conv_bias, ' "$f")
  [ "$nf" = 1 ] && [ "$nb" = 1 ] && ! grep -q 'fused_stem_conv_bias(' "$f" && ! grep -q 'cuda_bias_backward(stem_conv_dbias' "$f" &&
    echo "$tag $layout: the stem norm takes the stem conv's bias each way, no bias kernel or pass" ||
    fail "$tag $layout: $nf forward and $nb backward norm calls with the stem conv's bias in model.c (not 1 and 1), or a bias pass left"
  grep -q 'cuda_layernorm_[a-z]*_bias(' "$a" && fail "$tag --no-ln-bias: model.c still passes a conv's bias to a norm"
  grep -q 'fused_stem_conv_bias(' "$a" && grep -q 'cuda_bias_backward(stem_conv_dbias' "$a" ||
    fail "$tag --no-ln-bias: no stem bias kernel and pass"
  "$PY" tests/emu/same_run.py "layer norm adds its conv's bias vs --no-ln-bias ($tag $layout)" \
    "$out/fused_$tag.run" "$out/apart_$tag.run" || fail "$tag $layout: the default build and --no-ln-bias differ"
  emu_within_plan "fused ($tag $layout) device memory" "$out/fused_$tag.log" "$out/$spec.spec" "--layout $layout" ||
    status=1
done
[ $status = 0 ] && echo "a conv's bias inside its layer norm in emulated CUDA trainers: ok"
exit $status
