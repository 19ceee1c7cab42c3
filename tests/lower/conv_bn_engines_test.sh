#!/usr/bin/env bash
# Lowering's choice of cuDNN's fused conv + batch-norm-statistics engine (compiler/lower/
# fuse_conv_bn.c), as `trainc show --gpu-cost` lists it and `build --emit-only` spells it:
# ResNet-50 in FP16 channels-last fuses every conv that feeds a bn but the 7x7 stem on
# ConvBNfprop (1x1 and 3x3 only), in BF16 the same 52 on the runtime-fusion engine (the stem
# refused for its 3 channels), the ResNet example all but its 1-channel stem in both;
# --no-conv-genstats fuses none; the generated trainer calls the fused conv and finalize
# exactly where the listing says. Of those, in FP16, a conv whose input is a bn + ReLU that it
# alone reads (a bottleneck's conv2 and conv3: 32 in ResNet-50, each basic block's conv2 in the
# example) applies that bn in its prologue (scale+bias+ReLU+conv+genstats), its bn finalizing
# into the scale and bias, and its weight gradient recomputes the prologue inside itself
# (ConvBNwgrad); --no-conv-sbr keeps them all conv+genstats and names why; BF16 takes no
# prologue, and its 32 say why their data gradient runs apart from the bn's backward sums (no
# cuDNN graph documents it in BF16). Each bn whose sums a conv wrote finalizes them in cuDNN's
# BN finalize graph in FP16 (fuse_bn_finalize.c; BF16 and --no-bn-finalize-graph: our kernels,
# named why). Refused: --no-conv-genstats, --no-conv-sbr and --no-bn-finalize-graph off nhwc.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
out=$BUILD/test-conv-bn-engines
fresh_dir "$out"
for p in FP16 BF16; do
  printf 'extends: "%s/specs/models/resnet50.spec"\nnet { input_shape: [3, 32, 32] }\nprecision { compute: %s }\n' "$(pwd)" "$p" > "$out/r50_$p.spec"
  printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nprecision { compute: %s }\n' "$(pwd)" "$p" > "$out/ex_$p.spec"
done
count() { grep -c "$1" "$2" || true; }
"$TRAINC" show --gpu-cost --layout nhwc "$out/r50_FP16.spec" > "$out/r50_FP16.txt" 2>&1 || fail "show --gpu-cost resnet50 FP16"
plain=$(count 'ConvBNfprop conv+genstats (' "$out/r50_FP16.txt")
sbr=$(count 'ConvBNfprop scale+bias+ReLU+conv+genstats (' "$out/r50_FP16.txt")
fused=$((plain + sbr))
[ "$fused" = 52 ] || fail "resnet50 FP16: $fused convs fused, expected 52 (53 convs less the 7x7 stem)"
[ "$sbr" = 32 ] || fail "resnet50 FP16: $sbr convs with the bn's prologue, expected 32 (each bottleneck's conv2 and conv3)"
dg=$(count 'data gradient on DgradDreluBNBwdWeight' "$out/r50_FP16.txt"); dgc=$(count ' bwd  *cudnnBackendExecute  *conv-dgrad ' "$out/r50_FP16.txt")
dx=$(count ' bn_dx_kernel ' "$out/r50_FP16.txt")
[ "$dg" = 32 ] && [ "$dgc" = 32 ] && [ "$dx" = 32 ] ||
  fail "resnet50 FP16: $dg convs listed with DgradDreluBNBwdWeight, $dgc costed, $dx bn dx passes; expected 32 each"
grep -q '^# conv "conv1": unfused: the engine takes 1x1 and 3x3 kernels only' "$out/r50_FP16.txt" ||
  fail "resnet50 FP16: the stem's refusal is not named"
calls=$(count ' fwd  *cudnnBackendExecute  *conv-fwd ' "$out/r50_FP16.txt"); wgrad=$(count ' bwd  *cudnnBackendExecute  *conv-wgrad ' "$out/r50_FP16.txt")
graph=$(count ' fwd  *cudnnBackendExecute  *bn-finalize ' "$out/r50_FP16.txt")
[ "$calls" = 52 ] && [ "$graph" = 43 ] && [ "$wgrad" = 32 ] ||
  fail "resnet50 FP16: $calls fused forward calls, $graph BN finalize graphs and $wgrad fused weight gradients costed, expected 52, 43, 32"
# cuDNN's BN finalize graph (fuse_bn_finalize.c) finalizes those 52 bns' sums but the last
# stage's 9, one value a channel at batch 1 and 1x1 (the spec's running variance is the
# biased one there); --no-bn-finalize-graph: our kernels (20 plain, 32 into a prologue's scale
# and bias)
"$TRAINC" show --gpu-cost --layout nhwc --no-bn-finalize-graph "$out/r50_FP16.spec" > "$out/r50_nofin.txt" 2>&1 || fail "show --no-bn-finalize-graph"
fin=$(count ' bn_finalize_sums_kernel ' "$out/r50_nofin.txt"); fin_sb=$(count ' finalize_scale_bias_kernel ' "$out/r50_nofin.txt")
[ "$fin" = 20 ] && [ "$fin_sb" = 32 ] && [ "$(count ' bn-finalize ' "$out/r50_nofin.txt")" = 0 ] &&
  grep -q '^# bn finalize: 0 batch norms .*, 52 in our kernel: --no-bn-finalize-graph' "$out/r50_nofin.txt" &&
  grep -q '^# bn finalize: 43 batch norms .*, 9 in our kernel: one value a channel' "$out/r50_FP16.txt" ||
  fail "resnet50 FP16: the BN finalize graph's choice (43 graphs, 9 refused and named; --no-bn-finalize-graph: 20 + 32 kernels, named)"
"$TRAINC" show --gpu-cost --layout nhwc --no-conv-sbr "$out/r50_FP16.spec" > "$out/r50_nosbr.txt" 2>&1 || fail "show --no-conv-sbr"
[ "$(count 'ConvBNfprop conv+genstats (' "$out/r50_nosbr.txt")" = 52 ] && [ "$(count 'no prologue: --no-conv-sbr' "$out/r50_nosbr.txt")" = 32 ] &&
  [ "$(count 'scale_bias' "$out/r50_nosbr.txt")" = 0 ] || fail "--no-conv-sbr still applies a bn in a conv's prologue"
"$TRAINC" show --gpu-cost --layout nhwc "$out/r50_BF16.spec" > "$out/r50_BF16.txt" 2>&1 || fail "show --gpu-cost resnet50 BF16"
bf=$(count 'runtime-fusion conv+genstats (' "$out/r50_BF16.txt")
[ "$bf" = 52 ] && [ "$(count 'ConvBNfprop' "$out/r50_BF16.txt")" = 0 ] ||
  fail "resnet50 BF16: $bf convs on the runtime-fusion engine, expected 52 (and none on FP16's ConvBNfprop)"
grep -q '^# conv "conv1": unfused: channels not a multiple of 8' "$out/r50_BF16.txt" || fail "resnet50 BF16: the stem's refusal is not named"
[ "$(count ' cudnnBackendExecute ' "$out/r50_BF16.txt")" = 52 ] && [ "$(count ' bn_finalize_sums_kernel ' "$out/r50_BF16.txt")" = 52 ] &&
  grep -q '^# bn finalize: 0 batch norms .*, 52 in our kernel: not FP16' "$out/r50_BF16.txt" ||
  fail "resnet50 BF16: the fused calls and finalizes are not costed 52 times each"
# BF16 has no documented data gradient + dReLU + bn sums graph: the same 32 convs say so
bdg=$(count 'no fused data gradient: BF16: cuDNN documents no such graph' "$out/r50_BF16.txt")
[ "$bdg" = 32 ] && [ "$(count 'no fused data gradient' "$out/r50_FP16.txt")" = 0 ] ||
  fail "resnet50 BF16: $bdg convs say why their data gradient runs apart, expected 32 (and none in FP16, which fuses them)"
"$TRAINC" show --gpu-cost --layout nhwc --no-conv-genstats "$out/r50_FP16.spec" > "$out/r50_off.txt" 2>&1 || fail "show --no-conv-genstats"
[ "$(count 'unfused: --no-conv-genstats' "$out/r50_off.txt")" = 53 ] && [ "$(count cudnnBackendExecute "$out/r50_off.txt")" = 0 ] ||
  fail "--no-conv-genstats still fuses"
echo "resnet50 (32x32) nhwc: $fused of 53 convs fused in FP16 (ConvBNfprop; $sbr with the previous bn in the prologue, none with --no-conv-sbr), $bf in BF16 (runtime fusion), none with --no-conv-genstats"

# The trainer as emitted: FP16 and BF16 call the fused conv and finalize, --no-conv-genstats
# does not; FP16's prologue convs call the prologue's forward, weight gradient and bn backward.
for v in FP16 BF16 off nosbr; do
  spec=$out/ex_FP16.spec flag=
  case $v in BF16) spec=$out/ex_BF16.spec ;; off) flag=--no-conv-genstats ;; nosbr) flag=--no-conv-sbr ;; esac
  "$TRAINC" build "$spec" -o "$out/ex_$v" --backend cuda --layout nhwc --emit-only $flag > "$out/ex_$v.log" 2>&1 ||
    { fail "build --emit-only $v"; continue; }
  "$TRAINC" show --gpu-cost --layout nhwc $flag "$spec" > "$out/ex_$v.txt" 2>&1
  listed=$(count 'conv+genstats (' "$out/ex_$v.txt"); sbr=$(count 'ConvBNfprop scale+bias+ReLU' "$out/ex_$v.txt")
  emitted=$(count '^ *cuda_conv_bn_forward' "$out/ex_$v.src/model.c"); stats=$(count '^ *cuda_\(conv_bn_stats\|bn_finalize_\)' "$out/ex_$v.src/model.c")
  pro=$(count 'cuda_conv_bn_forward_sbr(' "$out/ex_$v.src/model.c")
  bwd=$(count 'cuda_batchnorm_backward_nhwc_\(sbr\|dgrad\)(' "$out/ex_$v.src/model.c")
  dgr=$(count '^ *cuda_conv_bn_dgrad(' "$out/ex_$v.src/model.c"); dgs=$(count 'data gradient on DgradDreluBNBwdWeight' "$out/ex_$v.txt")
  want=0; [ $v = FP16 ] && want=$sbr
  [ "$dgr" = "$dgs" ] && [ "$dgr" = "$want" ] ||
    fail "example $v: show lists $dgs fused data gradients, model.c calls $dgr (the FP16 build: one per prologue, $sbr)"
  wg=$(count 'cuda_conv_bn_backward_sbr(' "$out/ex_$v.src/model.c")
  [ "$listed" = "$emitted" ] && [ "$listed" = "$stats" ] || fail "example $v: show lists $listed fused convs, model.c calls $emitted / $stats"
  [ "$sbr" = "$pro" ] && [ "$sbr" = "$bwd" ] && [ "$sbr" = "$wg" ] ||
    fail "example $v: show lists $sbr prologues, model.c calls $pro, $wg fused weight gradients and $bwd recomputing bn backwards"
  if [ $v = off ]; then
    [ "$listed" = 0 ] || fail "example $v fuses"
  else
    [ "$listed" -gt 0 ] || fail "example $v fuses no conv"
    grep -q 'unfused: channels not a multiple of 8' "$out/ex_$v.txt" || fail "example $v: the 1-channel stem's refusal"
  fi
  [ $v = FP16 ] && [ "$sbr" != 6 ] && fail "example FP16: $sbr prologues, expected 6 (each basic block's conv2)"
  [ $v != FP16 ] && [ "$sbr" != 0 ] && fail "example $v applies a bn in a conv's prologue"
  echo "fmnist_resnet $v: $listed convs fused ($sbr with the previous bn in the prologue), $emitted fused calls in model.c"
done
"$TRAINC" build "$out/ex_FP16.spec" -o "$out/x" --backend cuda --emit-only --no-conv-genstats > "$out/refuse.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-conv-genstats is for --backend cuda --layout nhwc' "$out/refuse.log" || fail "--no-conv-genstats off nhwc not refused"
"$TRAINC" show --gpu-cost --no-conv-genstats "$out/ex_FP16.spec" > "$out/refuse2.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-conv-genstats is for --layout nhwc' "$out/refuse2.log" || fail "show --no-conv-genstats off nhwc not refused"
"$TRAINC" build "$out/ex_FP16.spec" -o "$out/x" --backend cuda --emit-only --no-conv-sbr > "$out/refuse3.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-conv-sbr is for --backend cuda --layout nhwc' "$out/refuse3.log" || fail "--no-conv-sbr off nhwc not refused"
"$TRAINC" show --gpu-cost --no-conv-sbr "$out/ex_FP16.spec" > "$out/refuse4.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-conv-sbr is for --layout nhwc' "$out/refuse4.log" || fail "show --no-conv-sbr off nhwc not refused"
# --no-conv-dgrad-fuse: the prologue stays, its data gradient and the bn's sums apart
"$TRAINC" show --gpu-cost --layout nhwc --no-conv-dgrad-fuse "$out/r50_FP16.spec" > "$out/r50_nodg.txt" 2>&1 || fail "show --no-conv-dgrad-fuse"
[ "$(count 'no fused data gradient: --no-conv-dgrad-fuse' "$out/r50_nodg.txt")" = 32 ] && [ "$(count ' bn_dx_kernel ' "$out/r50_nodg.txt")" = 0 ] &&
  [ "$(count 'ConvBNfprop scale+bias+ReLU+conv+genstats (' "$out/r50_nodg.txt")" = 32 ] || fail "--no-conv-dgrad-fuse still fuses the data gradient"
"$TRAINC" build "$out/ex_FP16.spec" -o "$out/x" --backend cuda --emit-only --no-conv-dgrad-fuse > "$out/refuse5.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-conv-dgrad-fuse is for --backend cuda --layout nhwc' "$out/refuse5.log" || fail "--no-conv-dgrad-fuse off nhwc not refused"
"$TRAINC" build "$out/ex_FP16.spec" -o "$out/x" --backend cuda --emit-only --no-bn-finalize-graph > "$out/refuse6.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-bn-finalize-graph is for --backend cuda --layout nhwc' "$out/refuse6.log" || fail "--no-bn-finalize-graph off nhwc not refused"
"$TRAINC" show --gpu-cost --no-bn-finalize-graph "$out/ex_FP16.spec" > "$out/refuse7.log" 2>&1
[ $? = 2 ] && grep -q -- '--no-bn-finalize-graph is for --backend cuda --layout nhwc' "$out/refuse7.log" || fail "show --no-bn-finalize-graph off nhwc not refused"
exit $status
