#!/usr/bin/env bash
# `trainc show --schedule` says what `trainc build` emits, choice by choice (both read one
# lowering, lower.h): the CPU LeNet's conv + ReLU + max pooling call, and each CPU conv's
# algorithm with its host rule (LeNet, the ResNet example in FP32 and BF16) against the
# .algo/.alt/.fallback of its emitted shape; the ResNet example in BF16 channels-last: the bns finished by
# their retire counter, applied inside their add, writing ReLU bitmasks, and the adds' two-pass
# backward against the generated calls and plan.txt's mask tensors, with and without
# --no-relu-mask and --no-bn-add; the bias + activation fusion on CUDA (a producer read twice
# keeps its bias pass; its backward summing the bias gradient, and apart with --no-bias-act-grad)
# against the generated calls; ResNet-50's stem bn + ReLU + max pooling in
# one pass, with and without --no-bn-pool; its identity blocks' bn backward folded through conv3,
# with and without --no-bn-fold; ResNet-50 FP16's bns in the next conv's prologue, with
# and without --no-conv-sbr; ConvNeXt-Tiny's residual tails in both layouts and
# with --no-residual-tail, and its depthwise convs' bias in their kernels (none with
# --no-dw-bias), and its stem conv's bias in the stem's layer norm (none with --no-ln-bias)
# against the generated calls. Then the usage errors, and a spec without
# a trainer.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
out=$BUILD/test-lower/show-schedule
fresh_dir "$out"
status=0
count() { grep -c -- "$1" "$2" || true; }   # lines of FILE matching
# A CUDA-only flag refused for the CPU backend with its usage error: by `show --schedule`, and
# with "build" by `trainc build` too.
cpu_refuses() {   # flag spec [build]
  local e=$out/refusal.err
  "$TRAINC" show --schedule "$1" "$2" > /dev/null 2> "$e" && status=1
  grep -q "is for --backend cuda" "$e" || { echo "FAIL: $1 on the CPU: $(cat "$e")"; status=1; }
  [ "${3:-}" = build ] || return 0
  "$TRAINC" build "$2" "$1" --emit-only --emit-dir "$out/refused.src" -o "$out/refused" > /dev/null 2> "$e" && status=1
  grep -q "is for --backend cuda" "$e" || { echo "FAIL: build $1 on the CPU: $(cat "$e")"; status=1; }
}
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

# CPU convs' algorithms, decided by lower (rt_conv_choice.h): each conv's chain as show says it
# ("A where <host rule>, else B ...") against the .algo/.alt/.fallback its shape was emitted
# with, for the LeNet, the ResNet example in FP32 and in BF16 (oneDNN first, its fallbacks)
conv_chains() {   # show.txt model.c what
  "$PY" - "$@" <<'PY'
import re, sys
show, model, what = sys.argv[1:]
texts = [("Winograd F(4x4,3x3)", "RT_CONV_WINOGRAD_F4"), ("Winograd F(2x2,", "RT_CONV_WINOGRAD"),
         ("Winograd F(7x7,2x2)", "RT_CONV_STRIDED_WINOGRAD"), ("one GEMM per tap", "RT_CONV_STRIDED"),
         ("oneDNN's BF16", "RT_CONV_DNNL_BF16"), ("the 1-channel AVX-512", "RT_CONV_C1"), ("im2col", "RT_CONV_IM2COL")]
def const(seg):
    for t, c in texts:
        if seg.startswith(t): return c
    sys.exit(f"FAIL: {what}: show --schedule names no known algorithm in {seg!r}")
shown = []
for line in open(show):
    f = line.split(None, 3)
    if len(f) == 4 and f[2] == "conv":
        shown.append([const(s) for s in f[3].split("; ")[0].split(", else ")])
emitted = []
for m in re.finditer(r"rt_conv_shape \w+_shape = \{([^}]*)\}", open(model).read()):
    fields = dict(re.findall(r"\.(algo|alt|fallback) = (\w+)", m.group(1)))
    chain = [fields.get(k) for k in ("algo", "alt", "fallback") if k in fields] or ["RT_CONV_IM2COL"]
    emitted.append([c for i, c in enumerate(chain) if i == 0 or c != chain[i - 1]])
if shown != emitted:
    sys.exit(f"FAIL: {what}: show --schedule's conv algorithms {shown} != emitted {emitted}")
print(f"{what}: {len(shown)} convs, {sum(len(c) > 1 for c in shown)} with a host rule")
PY
}
conv_chains "$out/lenet.txt" "$out/lenet.src/model.c" LeNet || status=1
grep -q 'conv1 .*1-channel AVX-512 kernel (conv2d_c1.c) where the CPU has AVX-512F' "$out/lenet.txt" ||
  { echo "FAIL: the LeNet's conv1 is not shown with the 1-channel kernel's host rule"; status=1; }
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/resnet_cpu_bf16.spec"
for spec in specs/examples/fmnist_resnet.spec "$out/resnet_cpu_bf16.spec"; do
  tag=cpu_$(basename "$spec" .spec)
  "$TRAINC" show --schedule "$spec" > "$out/$tag.txt" || die "show --schedule failed on $spec"
  "$TRAINC" build "$spec" --emit-only --emit-dir "$out/$tag.src" -o "$out/$tag" > /dev/null || die "build --emit-only failed on $spec"
  conv_chains "$out/$tag.txt" "$out/$tag.src/model.c" "$tag" || status=1
done
grep -q 'oneDNN.s BF16 convolution where .*, else Winograd F(2x2,3x3)' "$out/cpu_resnet_cpu_bf16.txt" ||
  { echo "FAIL: the BF16 ResNet shows no oneDNN convs falling back to Winograd F(2x2,3x3)"; status=1; }
grep -q 'Winograd F(4x4,3x3)' "$out/cpu_resnet_cpu_bf16.txt" &&
  { echo "FAIL: the BF16 ResNet shows Winograd F(4x4,3x3), which BF16 products must not run"; status=1; }

# CUDA ResNet example, BF16 channels-last, with each fusion and without
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/resnet_bf16.spec"
for flags in "" --no-relu-mask --no-bn-add; do
  tag=resnet${flags:+$flags}
  "$TRAINC" show --schedule --backend cuda --layout nhwc $flags "$out/resnet_bf16.spec" > "$out/$tag.txt" ||
    die "show --schedule $flags failed on the ResNet example"
  "$TRAINC" build "$out/resnet_bf16.spec" --backend cuda --layout nhwc $flags --emit-only --emit-dir "$out/$tag.src" \
    -o "$out/$tag" > /dev/null || die "build $flags --emit-only failed on the ResNet example"
  m=$out/$tag.src/model.c
  expect "$tag: bns with retired statistics" "$(count 'statistics and gradient sums finished by each channel tile' "$out/$tag.txt")" \
    "$(count 'cuda_batchnorm_stats_train_nhwc_retire(' "$m")"
  expect "$tag: bns summed in the conv's epilogue" "$(count "statistics summed in the conv's epilogue" "$out/$tag.txt")" \
    "$(count 'cuda_conv_bn_stats(' "$m")"
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
expect "their backward, each summing the bias gradient" "$(count 'in the same pass (bias_act.cu)' "$out/act.txt")" \
  "$(count 'cuda_bias_act_backward_bgrad(' "$out/act.src/model.c")"
expect "bias gradients summed in the activation's backward" "$(count 'bias gradient summed in this pass' "$out/act.txt")" \
  "$(count 'cuda_bias_act_backward_bgrad(' "$out/act.src/model.c")"
# --no-bias-act-grad (fuse_bias_act_grad.c off): the backward apart from the bias's sums
"$TRAINC" show --schedule --backend cuda --no-bias-act-grad "$out/act.spec" > "$out/act_apart.txt" ||
  die "show --schedule --no-bias-act-grad failed on the activations net"
"$TRAINC" build "$out/act.spec" --backend cuda --no-bias-act-grad --emit-only --emit-dir "$out/act_apart.src" \
  -o "$out/act_apart" > /dev/null || die "build --no-bias-act-grad --emit-only failed on the activations net"
expect "--no-bias-act-grad: the backward apart" "$(count 'in the same pass (bias_act.cu)' "$out/act_apart.txt")" \
  "$(count 'cuda_bias_act_backward(' "$out/act_apart.src/model.c")"
[ "$(count 'bias gradient summed in this pass' "$out/act_apart.txt")" = 0 ] &&
  [ "$(count 'cuda_bias_act_backward_bgrad(' "$out/act_apart.src/model.c")" = 0 ] ||
  { echo "FAIL: --no-bias-act-grad still sums a bias gradient in an activation's backward"; status=1; }
cpu_refuses --no-bias-act-grad "$out/act.spec"
"$TRAINC" show --schedule --backend cpu "$out/act.spec" | grep -q 'bias_act' &&
  { echo "FAIL: the CPU schedule shows the CUDA bias + activation fusion"; status=1; }

# the stem's bn + ReLU + max pooling in one pass (CUDA channels-last, lower.c choose_bn_pool):
# ResNet-50 in BF16, by default and with --no-bn-pool, against the generated calls
printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/r50_bf16.spec"
for flags in "" --no-bn-pool --no-bn-fold; do
  tag=r50${flags:+$flags}
  "$TRAINC" show --schedule --backend cuda --layout nhwc $flags "$out/r50_bf16.spec" > "$out/$tag.txt" ||
    die "show --schedule $flags failed on ResNet-50"
  "$TRAINC" build "$out/r50_bf16.spec" --backend cuda --layout nhwc $flags --emit-only --emit-dir "$out/$tag.src" \
    -o "$out/$tag" > /dev/null || die "build $flags --emit-only failed on ResNet-50"
  expect "$tag: poolings applying their bn" "$(count 'applies bn "' "$out/$tag.txt")" \
    "$(count 'cuda_bn_relu_maxpool_forward_nhwc(' "$out/$tag.src/model.c")"
  expect "$tag: bns applied inside their pooling" "$(count 'inside max pooling "' "$out/$tag.txt")" \
    "$(count 'applied inside max pooling' "$out/$tag.src/model.c")"
  expect "$tag: bns with the pooling's backward in theirs" "$(count 'gathers dy from the pooling' "$out/$tag.txt")" \
    "$(count 'cuda_batchnorm_backward_nhwc_pool(' "$out/$tag.src/model.c")"
done
[ "$(count 'applies bn "' "$out/r50.txt")" = 1 ] || { echo "FAIL: ResNet-50's stem pooling does not apply its bn"; status=1; }
# each identity block's output backward folded through its 1x1 conv3 (fuse_bn_fold.c), against
# the generated calls: 12 in BF16, none with --no-bn-fold, none in FP16 (its conv3 reads bn2
# through the prologue: h is never stored)
for tag in r50 r50--no-bn-pool r50--no-bn-fold; do
  expect "$tag: block outputs folded through conv3" "$(count 'folded through 1x1 conv "' "$out/$tag.txt")" \
    "$(count '^ *cuda_bn_fold_conv1x1_backward_nhwc(' "$out/$tag.src/model.c")"
  expect "$tag: conv3s without a backward of their own" "$(count 'the bn.s backward folded through it' "$out/$tag.txt")" \
    "$(count 'folded into the backward of add' "$out/$tag.src/model.c")"
done
[ "$(count 'folded through 1x1 conv "' "$out/r50.txt")" = 12 ] ||
  { echo "FAIL: ResNet-50 BF16: not its 12 identity blocks' bn backward folded through conv3"; status=1; }
[ "$(count 'folded through 1x1 conv "' "$out/r50--no-bn-fold.txt")" = 0 ] ||
  { echo "FAIL: --no-bn-fold: a block's bn backward still folded"; status=1; }

# ResNet-50 in FP16 (CUDA channels-last): each bottleneck's conv2 and conv3 read the previous bn's
# input and apply it in their prologue (fuse_conv_bn.c IR_CONV_BN_SBR), that bn finalized into
# the scale and bias and its backward recomputing the ReLU; none with --no-conv-sbr, which
# names why for each; against the generated calls. Their data gradient runs
# DgradDreluBNBwdWeight (the bn's ReLU and backward sums in its epilogue, the bn's backward its
# dx pass alone), none with --no-conv-dgrad-fuse; the 52 bns whose sums a conv wrote finalize
# them in cuDNN's BN finalize graph (fuse_bn_finalize.c), none with --no-bn-finalize-graph
printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: FP16 }\n' "$(pwd)" > "$out/r50_fp16.spec"
for flags in "" --no-conv-sbr --no-conv-dgrad-fuse --no-bn-finalize-graph; do
  tag=r50fp16${flags:+$flags}
  "$TRAINC" show --schedule --backend cuda --layout nhwc $flags "$out/r50_fp16.spec" > "$out/$tag.txt" ||
    die "show --schedule $flags failed on ResNet-50 FP16"
  "$TRAINC" build "$out/r50_fp16.spec" --backend cuda --layout nhwc $flags --emit-only --emit-dir "$out/$tag.src" \
    -o "$out/$tag" > /dev/null || die "build $flags --emit-only failed on ResNet-50 FP16"
  expect "$tag: convs applying the previous bn in their prologue" "$(count "input and applies its scale, bias and ReLU" "$out/$tag.txt")" \
    "$(count '^ *cuda_conv_bn_forward_sbr(' "$out/$tag.src/model.c")"
  expect "$tag: their weight gradient recomputing the prologue" "$(count 'backward: cuDNN graph ConvBNwgrad' "$out/$tag.txt")" \
    "$(count '^ *cuda_conv_bn_backward_sbr(' "$out/$tag.src/model.c")"
  expect "$tag: bns applied in the next conv's prologue" "$(count "applied with its ReLU in the next conv's prologue" "$out/$tag.txt")" \
    "$(count '^ *cuda_\(conv_bn_stats\|bn_finalize\)_scale_bias(' "$out/$tag.src/model.c")"
  expect "$tag: bns finalized by cuDNN's BN finalize graph" "$(count "finalized by cuDNN's BN finalize graph" "$out/$tag.txt")" \
    "$(count '^ *cuda_bn_finalize_\(stats\|scale_bias\)(' "$out/$tag.src/model.c")"
  expect "$tag: their backward" "$(count "applied with its ReLU in the next conv's prologue" "$out/$tag.txt")" \
    "$(count '^ *cuda_batchnorm_backward_nhwc_\(sbr\|dgrad\)(' "$out/$tag.src/model.c")"
  expect "$tag: the fused data gradients" "$(count 'backward: cuDNN graph DgradDreluBNBwdWeight' "$out/$tag.txt")" \
    "$(count '^ *cuda_conv_bn_dgrad(' "$out/$tag.src/model.c")"
  expect "$tag: bns whose backward is the dx pass alone" "$(count "gradient sums in the next conv's data gradient" "$out/$tag.txt")" \
    "$(count '^ *cuda_batchnorm_backward_nhwc_dgrad(' "$out/$tag.src/model.c")"
done
[ "$(count 'folded through 1x1 conv "' "$out/r50fp16.txt")" = 0 ] ||
  { echo "FAIL: ResNet-50 FP16: a block's bn backward folded (FP16's conv3 input is never stored)"; status=1; }
[ "$(count "applied with its ReLU in the next conv's prologue" "$out/r50fp16.txt")" = 32 ] ||
  { echo "FAIL: ResNet-50 FP16: not its 32 inner bns applied in the next conv's prologue"; status=1; }
[ "$(count "finalized by cuDNN's BN finalize graph" "$out/r50fp16.txt")" = 52 ] ||
  { echo "FAIL: ResNet-50 FP16: not its 52 genstats bns finalized by cuDNN's BN finalize graph"; status=1; }
[ "$(count "prologue: --no-conv-sbr" "$out/r50fp16--no-conv-sbr.txt")" = 32 ] ||
  { echo "FAIL: --no-conv-sbr: the 32 convs do not name why they run without the prologue"; status=1; }
[ "$(count "not cuDNN's BN finalize graph: --no-bn-finalize-graph" "$out/r50fp16--no-bn-finalize-graph.txt")" = 52 ] ||
  { echo "FAIL: --no-bn-finalize-graph: the 52 bns do not name why they finalize in our kernel"; status=1; }
[ "$(count "backward: cuDNN graph DgradDreluBNBwdWeight" "$out/r50fp16.txt")" = 32 ] ||
  { echo "FAIL: ResNet-50 FP16: not its 32 prologue convs' data gradients on DgradDreluBNBwdWeight"; status=1; }
[ "$(count "backward sums: --no-conv-dgrad-fuse" "$out/r50fp16--no-conv-dgrad-fuse.txt")" = 32 ] &&
  [ "$(count "DgradDreluBNBwdWeight" "$out/r50fp16--no-conv-dgrad-fuse.txt")" = 0 ] ||
  { echo "FAIL: --no-conv-dgrad-fuse: the 32 convs do not name why their data gradient runs apart"; status=1; }

# ConvNeXt-Tiny's residual tails (CUDA, both layouts): each block's pwconv2 bias, layer scale,
# drop path and add in one kernel each way, and none with --no-residual-tail
printf 'extends: "%s/bench/specs/gpu_convnext_tiny.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/cnx.spec"
for v in "nchw" "nhwc" "nhwc --no-residual-tail" "nhwc --no-dw-bias" "nhwc --no-ln-bias"; do
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
  expect "$tag: depthwise convs adding their bias" "$(count 'adds its bias in the store' "$out/$tag.txt")" \
    "$(count 'cuda_conv2d_forward_bias(' "$out/$tag.src/model.c")"
  expect "$tag: their bias gradient in the weight gradient's kernel" "$(count 'adds its bias in the store' "$out/$tag.txt")" \
    "$(count 'cuda_conv2d_backward_bias(' "$out/$tag.src/model.c")"
  expect "$tag: layer norms adding their conv's bias" "$(count 'bias as it reads x (no bias pass)' "$out/$tag.txt")" \
    "$(count 'cuda_layernorm_forward_bias(' "$out/$tag.src/model.c")"
  expect "$tag: their backward summing its gradient" "$(count 'bias as it reads x (no bias pass)' "$out/$tag.txt")" \
    "$(count 'cuda_layernorm_backward_bias(' "$out/$tag.src/model.c")"
done
# the stem conv's bias in its layer norm (fuse_ln_bias.c): the stem alone (the downsample
# convs' output has two readers), both layouts; none with --no-ln-bias
[ "$(count 'bias as it reads x (no bias pass)' "$out/cnx_nhwc.txt")" = 1 ] &&
  [ "$(count 'bias as it reads x (no bias pass)' "$out/cnx_nchw.txt")" = 1 ] &&
  grep -q '^0 .*stem.conv .*its bias added by layer norm "stem.norm"' "$out/cnx_nhwc.txt" &&
  [ "$(count 'bias as it reads x' "$out/cnx_nhwc--no-ln-bias.txt")" = 0 ] &&
  [ "$(count 'fused_stem_conv_bias(' "$out/cnx_nhwc--no-ln-bias.src/model.c")" = 1 ] ||
  { echo "FAIL: ConvNeXt-Tiny: not the stem conv's bias in its layer norm by default, or not apart with --no-ln-bias"; status=1; }
cpu_refuses --no-ln-bias "$out/cnx.spec" build
# the dwconvs' bias in the depthwise kernels (fuse_dw_bias.c): all 18, none with --no-dw-bias
[ "$(count 'adds its bias in the store' "$out/cnx_nhwc.txt")" = 18 ] && [ "$(count 'adds its bias in the store' "$out/cnx_nchw.txt")" = 18 ] &&
  [ "$(count 'adds its bias in the store' "$out/cnx_nhwc--no-dw-bias.txt")" = 0 ] &&
  [ "$(count 'fused_stages_[0-9]_[0-9]_dwconv_bias(' "$out/cnx_nhwc--no-dw-bias.src/model.c")" = 18 ] ||
  { echo "FAIL: ConvNeXt-Tiny: not its 18 dwconvs' bias in the kernels by default, or not apart with --no-dw-bias"; status=1; }
cpu_refuses --no-dw-bias "$out/cnx.spec" build
[ "$(count 'residual tail: "' "$out/cnx_nhwc.txt")" = 18 ] || { echo "FAIL: ConvNeXt-Tiny: not its 18 blocks' tails fused"; status=1; }
[ "$(count 'residual tail' "$out/cnx_nhwc--no-residual-tail.txt")" = 0 ] ||
  { echo "FAIL: --no-residual-tail still shows residual tails"; status=1; }
cpu_refuses --no-residual-tail "$out/cnx.spec"

# usage errors and a spec without a trainer
"$TRAINC" show --schedule --layout nhwc specs/examples/fmnist_lenet.spec > /dev/null 2> "$out/e1" && status=1
grep -q "needs --backend cuda" "$out/e1" || { echo "FAIL: --layout nhwc without cuda: $(cat "$out/e1")"; status=1; }
"$TRAINC" show --schedule --no-bn-add specs/examples/fmnist_lenet.spec > /dev/null 2> "$out/e2" && status=1
grep -q "are for --backend cuda --layout nhwc" "$out/e2" || { echo "FAIL: --no-bn-add on the CPU: $(cat "$out/e2")"; status=1; }
# the cuDNN graphs' engines: timed at start-up (lower's schedule.graph_candidates) unless --no-graph-autotune
"$TRAINC" show --schedule --backend cuda --layout nhwc "$out/resnet_bf16.spec" | grep -q '^cuDNN graphs: .*timed at start-up among up to 4' &&
  "$TRAINC" show --schedule --backend cuda --layout nhwc --no-graph-autotune "$out/resnet_bf16.spec" |
    grep -q "^cuDNN graphs: .*the heuristics' first, untimed" ||
  { echo "FAIL: show --schedule does not say how the cuDNN graphs' engines are chosen"; status=1; }
"$TRAINC" show --schedule --no-graph-autotune specs/examples/fmnist_lenet.spec > /dev/null 2> "$out/e6" && status=1
grep -q "is for show --schedule --backend cuda" "$out/e6" || { echo "FAIL: --no-graph-autotune on the CPU: $(cat "$out/e6")"; status=1; }
"$TRAINC" build specs/examples/fmnist_lenet.spec -o "$out/x" --no-graph-autotune > /dev/null 2> "$out/e7" && status=1
grep -q "is for --backend cuda" "$out/e7" || { echo "FAIL: build --no-graph-autotune on the CPU: $(cat "$out/e7")"; status=1; }
printf 'net { input_shape: [1, 4, 4] classes: 2 flatten { } linear { out: 2 } }\n' > "$out/netonly.spec"
"$TRAINC" show --schedule "$out/netonly.spec" > /dev/null 2> "$out/e3"; rc=$?
[ $rc = 1 ] && grep -q "no data or solver" "$out/e3" || { echo "FAIL: a spec without a trainer: rc $rc, $(cat "$out/e3")"; status=1; }
[ $status = 0 ] && echo "show --schedule matches build: LeNet and the ResNet example (CPU conv algorithms), the ResNet example (CUDA channels-last, 3 builds), ResNet-50's stem and bn folds (3 builds), ResNet-50 FP16's prologues (3 builds), bias + activation (CUDA), ConvNeXt-Tiny's residual tails, depthwise bias and stem bias in its layer norm (CUDA, 5 builds)"
exit $status
