#!/usr/bin/env bash
# `trainc show --schedule` says what `trainc build` emits, choice by choice (both read one
# lowering, lower.h): the CPU LeNet's conv + ReLU + max pooling call and each conv's algorithm
# against the generated model.c; the ResNet example in BF16 channels-last: the bns finished by
# their retire counter, applied inside their add, writing ReLU bitmasks, and the adds' two-pass
# backward against the generated calls and plan.txt's mask tensors, with and without
# --no-relu-mask and --no-bn-add; the bias + activation fusion on CUDA (a producer read twice
# keeps its bias pass) against the generated calls; ConvNeXt-Tiny's residual tails in both layouts
# and with --no-residual-tail against the generated calls. Then the usage errors, and a spec without a
# trainer.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
out=$BUILD/test-lower/show-schedule
fresh_dir "$out"
status=0
count() { grep -c -- "$1" "$2" || true; }   # lines of FILE matching
expect() {   # what, got, want
  if [ "$2" != "$3" ]; then echo "FAIL: $1: show --schedule says $2, build emitted $3"; status=1; fi
}

# CPU LeNet
"$TRAINC" show --schedule specs/examples/fmnist_lenet.spec > "$out/lenet.txt" || die "show --schedule failed on the LeNet"
"$TRAINC" build specs/examples/fmnist_lenet.spec --emit-only --emit-dir "$out/lenet.src" -o "$out/lenet" > /dev/null ||
  die "build --emit-only failed on the LeNet"
expect "LeNet: convs with their max pooling in the call" "$(count 'max pooling "' "$out/lenet.txt")" \
  "$(count 'conv2d_relu_maxpool_forward(' "$out/lenet.src/model.c")"
expect "LeNet: poolings computed in a conv's call" "$(count "computed in \"" "$out/lenet.txt")" \
  "$(count "'s call above" "$out/lenet.src/model.c")"
expect "LeNet: Winograd F(2x2,5x5) convs" "$(count 'Winograd F(2x2,5x5)' "$out/lenet.txt")" \
  "$(count '\.algo = RT_CONV_WINOGRAD }' "$out/lenet.src/model.c")"
expect "LeNet: im2col convs" "$(count 'im2col + GEMM' "$out/lenet.txt")" \
  "$(grep 'rt_conv_shape' "$out/lenet.src/model.c" | grep -vc '\.algo = ' || true)"

# CUDA ResNet example, BF16 channels-last, with each fusion and without
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/resnet_bf16.spec"
for flags in "" --no-relu-mask --no-bn-add; do
  tag=resnet${flags:+$flags}
  "$TRAINC" show --schedule --backend cuda --layout nhwc $flags "$out/resnet_bf16.spec" > "$out/$tag.txt" ||
    die "show --schedule $flags failed on the ResNet example"
  "$TRAINC" build "$out/resnet_bf16.spec" --backend cuda --layout nhwc $flags --emit-only --emit-dir "$out/$tag.src" \
    -o "$out/$tag" > /dev/null || die "build $flags --emit-only failed on the ResNet example"
  m=$out/$tag.src/model.c
  expect "$tag: bns with retired sums" "$(count 'finished by each channel tile' "$out/$tag.txt")" \
    "$(count 'cuda_batchnorm_stats_train_nhwc_retire(' "$m")"
  expect "$tag: adds applying bns" "$(count "bns\? applied in this pass" "$out/$tag.txt")" \
    "$(count 'cuda_bn_add_relu\(_bits\)\?_nhwc(' "$m")"
  expect "$tag: ops writing ReLU bitmasks" "$(count 'writes a ReLU bitmask' "$out/$tag.txt")" \
    "$(awk '$1 == "mask"' "$out/$tag.src/plan.txt" | wc -l)"
  expect "$tag: adds with the two-pass backward" "$(count 'in two passes' "$out/$tag.txt")" \
    "$(count 'cuda_bn_add_relu_backward_nhwc(' "$m")"
done
[ "$(count 'writes a ReLU bitmask' "$out/resnet.txt")" -gt 0 ] || { echo "FAIL: the default build chose no ReLU bitmasks"; status=1; }
[ "$(count 'writes a ReLU bitmask' "$out/resnet--no-relu-mask.txt")" = 0 ] ||
  { echo "FAIL: --no-relu-mask still shows ReLU bitmasks"; status=1; }

# the bias + activation fusion (CUDA): a conv's or linear's bias added by the GELU or activation
# that alone reads it, and the generated code calls the fused kernel exactly there
cat > "$out/act.spec" <<'SPEC'
net {
  input_shape: [3, 8, 8]
  classes: 10
  conv { name: "c1" out: 8 kernel: 3 pad: 1 }
  gelu { name: "g1" }
  conv { name: "c2" out: 8 kernel: 3 pad: 1 }
  silu { name: "s2" }
  add { name: "a2" inputs: ["s2", "c2"] }
  gap { name: "pool" }
  flatten { name: "flat" }
  linear { name: "fc1" out: 16 }
  hardswish { name: "hs" }
  linear { name: "fc2" out: 10 }
}
data { train { source: "synthetic" samples: 16 batch_per_rank: 4 } }
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }
SPEC
"$TRAINC" show --schedule --backend cuda "$out/act.spec" > "$out/act.txt" || die "show --schedule failed on the activations net"
"$TRAINC" build "$out/act.spec" --backend cuda --emit-only --emit-dir "$out/act.src" -o "$out/act" > /dev/null ||
  die "build --emit-only failed on the activations net"
grep -q 'c1 .*its bias added by "g1"' "$out/act.txt" && grep -q 'fc1 .*its bias added by "hs"' "$out/act.txt" ||
  { echo "FAIL: the conv's and the linear's bias are not shown as added by their activation:"; cat "$out/act.txt"; status=1; }
grep -q 'c2 .*its bias added' "$out/act.txt" &&
  { echo "FAIL: c2, which a second layer reads, is shown with its bias in the activation"; status=1; }
expect "activations adding their producer's bias" "$(count 'in the same pass (bias_act.cu)' "$out/act.txt")" \
  "$(count 'cuda_bias_act_forward(' "$out/act.src/model.c")"
expect "their backward" "$(count 'in the same pass (bias_act.cu)' "$out/act.txt")" \
  "$(count 'cuda_bias_act_backward(' "$out/act.src/model.c")"
"$TRAINC" show --schedule --backend cpu "$out/act.spec" | grep -q 'bias_act' &&
  { echo "FAIL: the CPU schedule shows the CUDA bias + activation fusion"; status=1; }

# ConvNeXt-Tiny's residual tails (CUDA, both layouts): each block's pwconv2 bias, layer scale,
# drop path and add in one kernel each way, and none with --no-residual-tail
printf 'extends: "%s/bench/specs/gpu_convnext_tiny.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/cnx.spec"
for v in "nchw" "nhwc" "nhwc --no-residual-tail"; do
  tag=cnx_${v// /}
  "$TRAINC" show --schedule --backend cuda --layout $v "$out/cnx.spec" > "$out/$tag.txt" || die "show --schedule $v failed on ConvNeXt-Tiny"
  "$TRAINC" build "$out/cnx.spec" --backend cuda --layout $v --emit-only --emit-dir "$out/$tag.src" -o "$out/$tag" > /dev/null ||
    die "build --emit-only $v failed on ConvNeXt-Tiny"
  expect "$tag: residual tails" "$(count 'residual tail: "' "$out/$tag.txt")" \
    "$(count 'cuda_residual_tail_forward(' "$out/$tag.src/model.c")"
  expect "$tag: their backward" "$(count 'residual tail: "' "$out/$tag.txt")" \
    "$(count 'cuda_residual_tail_backward(' "$out/$tag.src/model.c")"
  expect "$tag: layer scales and drop paths inside them" "$(count 'inside residual tail' "$out/$tag.txt")" \
    "$(count 'in residual tail .*kernel: no output written' "$out/$tag.src/model.c")"
done
[ "$(count 'residual tail: "' "$out/cnx_nhwc.txt")" = 18 ] || { echo "FAIL: ConvNeXt-Tiny: not its 18 blocks' tails fused"; status=1; }
[ "$(count 'residual tail' "$out/cnx_nhwc--no-residual-tail.txt")" = 0 ] ||
  { echo "FAIL: --no-residual-tail still shows residual tails"; status=1; }
"$TRAINC" show --schedule --no-residual-tail "$out/cnx.spec" > /dev/null 2> "$out/e4" && status=1
grep -q "is for --backend cuda" "$out/e4" || { echo "FAIL: --no-residual-tail on the CPU: $(cat "$out/e4")"; status=1; }

# usage errors and a spec without a trainer
"$TRAINC" show --schedule --layout nhwc specs/examples/fmnist_lenet.spec > /dev/null 2> "$out/e1" && status=1
grep -q "needs --backend cuda" "$out/e1" || { echo "FAIL: --layout nhwc without cuda: $(cat "$out/e1")"; status=1; }
"$TRAINC" show --schedule --no-bn-add specs/examples/fmnist_lenet.spec > /dev/null 2> "$out/e2" && status=1
grep -q "are for --backend cuda --layout nhwc" "$out/e2" || { echo "FAIL: --no-bn-add on the CPU: $(cat "$out/e2")"; status=1; }
printf 'net { input_shape: [1, 4, 4] classes: 2 flatten { } linear { out: 2 } }\n' > "$out/netonly.spec"
"$TRAINC" show --schedule "$out/netonly.spec" > /dev/null 2> "$out/e3"; rc=$?
[ $rc = 1 ] && grep -q "no data or solver" "$out/e3" || { echo "FAIL: a spec without a trainer: rc $rc, $(cat "$out/e3")"; status=1; }
[ $status = 0 ] && echo "show --schedule matches build: LeNet (CPU), the ResNet example (CUDA channels-last, 3 builds), bias + activation (CUDA), ConvNeXt-Tiny's residual tails (CUDA, 3 builds)"
exit $status
