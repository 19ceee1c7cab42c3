#!/usr/bin/env bash
# `make bench-gpu-model` (CPU only): the modeled ResNet-50 training step (batch 256, 224x224,
# channels-last) in BF16 and FP16 on an H100 and an H200, from `trainc show --gpu-cost` (bytes
# per kernel as the emulator counts them, tests/emu/traffic_emu_test.sh; times at the device's
# bandwidth and peak, cuDNN and cuBLASLt at compiler/lower/gpu_rates.def's measured rate),
# one line per precision and device; then the model's figure for the code the H100 measured
# (BF16 channels-last with the old batch-norm and pooling kernels, TRAINC_CUDA_BN=old
# TRAINC_CUDA_POOL=old, each bn applied apart from the add, no ReLU bitmasks and no conv +
# genstats: --no-bn-add --no-relu-mask --no-conv-genstats) beside the 72.9 ms per 256 images it
# took (bench/RESULTS.md) and its thread-per-channel sums' model against the profile (the
# serial round trip's calibration, gpu_cost.c), BF16 without its identity blocks' bn backward
# folded through conv3 (--no-bn-fold), BF16 and FP16 without cuDNN's conv + genstats engines
# (--no-conv-genstats), FP16 without its scale-bias-ReLU prologue (--no-conv-sbr), FP16 with
# the genstats sums finalized by our kernels, not cuDNN's BN finalize graph
# (--no-bn-finalize-graph), AlexNet and ConvNeXt-Tiny (and without its residual tails,
# --no-residual-tail, or its GELU backward's bias gradient, --no-bias-act-grad, or its
# depthwise convs' bias in their kernels, --no-dw-bias, or its stem conv's bias in the stem's
# layer norm, --no-ln-bias), and the
# anchors. Figures go in bench/RESULTS.md.
set -u
BUILD=${BUILD:-build}
out=$BUILD/bench-gpu-model
mkdir -p "$out"
status=0
for p in BF16 FP16; do
  printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: %s }\n' "$(pwd)" "$p" > "$out/resnet50_$p.spec"
  for d in h100 h200; do
    "$BUILD/trainc" show --gpu-cost --layout nhwc --device "$d" --label resnet50 "$out/resnet50_$p.spec" \
      > "$out/resnet50_${p}_$d.txt" || status=1
    tail -n 1 "$out/resnet50_${p}_$d.txt"
  done
done
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --old-kernels --no-bn-add --no-relu-mask --no-conv-genstats --label "resnet50 (the measured code: old BN and pooling kernels)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_old.txt" || status=1
echo "$(tail -n 1 "$out/resnet50_BF16_h100_old.txt"); measured on the H100: 72.9 ms (3,510 img/s), 68.0 ms of it kernel time"
# the serial round trips' calibration: the measured code's thread-per-channel sums, model against profile
awk '!/^#/ && ($4 == "bn_sum_partials_kernel" || $4 == "bn_finish_stats_kernel") { t[$4] += $NF; n[$4]++ }
     END { printf "resnet50 (the measured code) sums by the model: bn_sum_partials_kernel %d calls %.1f ms (H100 profile: 54 calls, 4.1 ms), bn_finish_stats_kernel %d calls %.1f ms (profile: 53 calls, 3.1 ms)\n",
           n["bn_sum_partials_kernel"], t["bn_sum_partials_kernel"] / 1e3, n["bn_finish_stats_kernel"], t["bn_finish_stats_kernel"] / 1e3 }' \
  "$out/resnet50_BF16_h100_old.txt"
grep '^# totals' "$out/resnet50_BF16_h100.txt" | sed 's/^# totals/resnet50 BF16 nhwc h100 totals/'
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bn-retire --label "resnet50 (--no-bn-retire: the sums launched apart)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_noretire.txt" || status=1
tail -n 1 "$out/resnet50_BF16_h100_noretire.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bn-fold --label "resnet50 (--no-bn-fold: the identity blocks' bn backward not folded through conv3)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_nofold.txt" || status=1
tail -n 1 "$out/resnet50_BF16_h100_nofold.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bn-add --label "resnet50 (--no-bn-add: each bn applied apart, then the add)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_nobnadd.txt" || status=1
tail -n 1 "$out/resnet50_BF16_h100_nobnadd.txt"
for p in BF16 FP16; do
  "$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-conv-genstats --label "resnet50 (--no-conv-genstats: bn statistics in their own pass)" \
    "$out/resnet50_$p.spec" > "$out/resnet50_${p}_h100_nogenstats.txt" || status=1
  tail -n 1 "$out/resnet50_${p}_h100_nogenstats.txt"
done
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-conv-sbr --label "resnet50 (--no-conv-sbr: the inner bns applied in their own pass)" \
  "$out/resnet50_FP16.spec" > "$out/resnet50_FP16_h100_nosbr.txt" || status=1
tail -n 1 "$out/resnet50_FP16_h100_nosbr.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-conv-dgrad-fuse --label "resnet50 (--no-conv-dgrad-fuse: the inner bns' backward sums in their own pass)" \
  "$out/resnet50_FP16.spec" > "$out/resnet50_FP16_h100_nodgrad.txt" || status=1
tail -n 1 "$out/resnet50_FP16_h100_nodgrad.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bn-finalize-graph --label "resnet50 (--no-bn-finalize-graph: the genstats sums finalized by our kernels)" \
  "$out/resnet50_FP16.spec" > "$out/resnet50_FP16_h100_nobnfin.txt" || status=1
tail -n 1 "$out/resnet50_FP16_h100_nobnfin.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bn-pool --label "resnet50 (--no-bn-pool: the stem's bn + ReLU and max pooling in two passes)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_nobnpool.txt" || status=1
tail -n 1 "$out/resnet50_BF16_h100_nobnpool.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-relu-mask --label "resnet50 (--no-relu-mask: ReLU outputs read back; the add's and each bn's backward apart)" \
  "$out/resnet50_BF16.spec" > "$out/resnet50_BF16_h100_nomask.txt" || status=1
tail -n 1 "$out/resnet50_BF16_h100_nomask.txt"
# AlexNet (avgpool and dropout modeled; the linear after flatten + dropout runs as a conv
# channels-last): the device work of a step, beside the step the H100 measured (18,703 img/s
# BF16 NCHW over 30 steps, nvidia-smi's GPU busy 20% over the whole process, start-up included)
printf 'extends: "%s/bench/specs/gpu_alexnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/alexnet_BF16.spec"
for l in nchw nhwc; do
  "$BUILD/trainc" show --gpu-cost --layout "$l" --device h100 --label alexnet "$out/alexnet_BF16.spec" \
    > "$out/alexnet_BF16_${l}_h100.txt" || status=1
  echo "$(tail -n 1 "$out/alexnet_BF16_${l}_h100.txt")$([ $l = nchw ] && echo "; measured on the H100: 13.7 ms per 256 (18,703 img/s), torch.compile 6.7 ms (38,477 img/s)")"
done
# ConvNeXt-Tiny (depthwise, layer norm, GELU, layer scale, stochastic depth modeled), beside the
# H100's measured step (BF16: 1,209 img/s NCHW, 390 channels-last; torch.compile 3,971)
printf 'extends: "%s/bench/specs/gpu_convnext_tiny.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/convnext_BF16.spec"
for l in nchw nhwc; do
  "$BUILD/trainc" show --gpu-cost --layout "$l" --device h100 --label convnext_tiny "$out/convnext_BF16.spec" \
    > "$out/convnext_BF16_${l}_h100.txt" || status=1
  echo "$(tail -n 1 "$out/convnext_BF16_${l}_h100.txt"); measured on the H100: $([ $l = nchw ] && echo "211.7 ms per 256 (1,209 img/s)" || echo "656.4 ms per 256 (390 img/s)"), torch.compile 64.5 ms (3,971 img/s)"
done
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-residual-tail \
  --label "convnext_tiny (--no-residual-tail: bias, layer scale, drop path and add apart)" "$out/convnext_BF16.spec" \
  > "$out/convnext_BF16_nhwc_apart_h100.txt" || status=1
tail -n 1 "$out/convnext_BF16_nhwc_apart_h100.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-bias-act-grad \
  --label "convnext_tiny (--no-bias-act-grad: the GELU's backward and pwconv1's bias gradient in two passes)" \
  "$out/convnext_BF16.spec" > "$out/convnext_BF16_nhwc_nobgrad_h100.txt" || status=1
tail -n 1 "$out/convnext_BF16_nhwc_nobgrad_h100.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-dw-bias \
  --label "convnext_tiny (--no-dw-bias: the dwconv's bias in a pass of its own each way)" \
  "$out/convnext_BF16.spec" > "$out/convnext_BF16_nhwc_nodwbias_h100.txt" || status=1
tail -n 1 "$out/convnext_BF16_nhwc_nodwbias_h100.txt"
"$BUILD/trainc" show --gpu-cost --layout nhwc --device h100 --no-ln-bias \
  --label "convnext_tiny (--no-ln-bias: the stem conv's bias in a pass of its own each way)" \
  "$out/convnext_BF16.spec" > "$out/convnext_BF16_nhwc_nolnbias_h100.txt" || status=1
tail -n 1 "$out/convnext_BF16_nhwc_nolnbias_h100.txt"
echo "anchors (H100): MLPerf v4.0 35.7 ms per 256 images (H200: 32.1); torch.compile in our run 47.3 ms"
exit $status
