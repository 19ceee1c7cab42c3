#!/usr/bin/env bash
# An identity block's output backward folded through its 1x1 stride-1 conv3 (lower:
# fuse_bn_fold.c; runtime/cuda/ops/bn_fold_conv1x1_backward.cu: one pass over dz and the ReLU
# bits writes the shortcut's gradient g and its sums, cuBLASLt's sum g h^T and sum h h^T, closed
# forms for bn3's dgamma and dbeta, conv3's weight gradient and its input's gradient) in whole
# trainers under the emulator: a small bottleneck ResNet (tests/emu/traffic/bottleneck_mini.spec,
# 3 identity blocks), BF16 channels-last, 4 steps, built by default and with --no-bn-fold.
# The default build's model.c calls the fold once per identity block (its descriptor names the
# largest fold's scratch, which the trainer allocates at start-up, before the step's graph is
# captured, and its memory check counts) and runs no backward for those conv3s, whose start-up
# algorithm search is the forward's alone; --no-bn-fold's
# has neither; FP16 (whose conv3 reads bn2 through its prologue, h never stored) folds none.
# The fold is not the unfused arithmetic (conv3's forward rounds x to BF16, which the
# statistics saw and the algebra does not; dW is never rounded through a BF16 dx3), so the
# runs agree within tolerances (tests/emu/same_run.py --tol), measured here: one SGD step from
# the same parameters (the forward is the same: only the backward differs), whose updates
# differ by 1.9% of the largest update (tolerance 5%; the fold-mean mutant of
# tests/emu/mutants.sh, dW without its mean term, 31%), the next evaluation's loss by 2.4e-5
# (1e-3); and 4 steps with momentum, losses within 6.7e-3 relative (2e-2) and parameters within
# 7.7e-3 of the largest (3e-2). (Builds that change the forward's rounding, --no-bn-add or
# --no-conv-genstats, move one step's updates by 24-34% of the largest: no baseline for a
# backward-only change.) Device memory within the start-up check's plan.
# test_ops_gpu checks the op itself against the unfused CPU ops (its fold-mean mutant fails it).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-bn-fold
status=0
for p in BF16 FP16; do
  printf 'extends: "%s/tests/emu/traffic/bottleneck_mini.spec"\n%s\n%s\nprecision { compute: %s }\n' "$(pwd)" \
    'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
    'solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }' "$p" > "$out/mini_$p.spec"
done
"$BUILD/trainc" build "$out/mini_FP16.spec" -o "$out/fp16" --backend cuda --layout nhwc --emit-only > /dev/null ||
  fail "FP16: trainc build --emit-only"
! grep -q 'cuda_bn_fold_' "$out/fp16.src/model.c" && echo "FP16: no fold (conv3 reads bn2 through its prologue)" ||
  fail "FP16: model.c folds a bn backward through conv3"
# The plan: a folded bn3's backward reads neither conv3's output x nor its gradient, so x lives
# only through the forward (compiler/lower/plan.c conv_folded). ResNet-50 at batch 256, BF16
# channels-last: the activation arena with the fold is smaller by at least 1 GiB (measured:
# 10314.4 -> 8366.7 MiB).
printf 'extends: "%s/bench/specs/gpu_resnet50.spec"\nprecision { compute: BF16 }\n' "$(pwd)" > "$out/r50.spec"
arena() {  # build flags...: the planned arena in MiB, as trainc build --emit-only says it
  "$BUILD/trainc" build "$out/r50.spec" --emit-only --emit-dir "$out/r50${1:-}.src" --backend cuda --layout nhwc "$@" |
    sed -n 's/.*arena \([0-9.]*\) MiB planned.*/\1/p'
}
a_fold=$(arena) a_apart=$(arena --no-bn-fold)
if [ -n "$a_fold" ] && [ -n "$a_apart" ] && awk -v f="$a_fold" -v a="$a_apart" 'BEGIN { exit !(f + 1024 <= a) }'; then
  echo "ResNet-50 BF16 nhwc, batch 256: arena $a_apart MiB with --no-bn-fold, $a_fold MiB with the fold (conv3's output lives through the forward only)"
else
  fail "ResNet-50 BF16 nhwc: the fold's arena (${a_fold:-?} MiB) is not 1 GiB under --no-bn-fold's (${a_apart:-?} MiB)"
fi
# one step from the same parameters (and a run that leaves them, rate 1e-20): the updates
sed 's/samples: 16/samples: 4/; s/momentum: 0.9/momentum: 0/' "$out/mini_BF16.spec" > "$out/step_BF16.spec"
sed 's/base: 0.01/base: 1e-20/' "$out/step_BF16.spec" > "$out/still_BF16.spec"
emu_run fold1 step_BF16 --backend cuda --layout nhwc || status=1
emu_run apart1 step_BF16 --backend cuda --layout nhwc --no-bn-fold || status=1
emu_run still1 still_BF16 --backend cuda --layout nhwc --no-bn-fold || status=1
emu_run fold mini_BF16 --backend cuda --layout nhwc || status=1
emu_run apart mini_BF16 --backend cuda --layout nhwc --no-bn-fold || status=1
if [ $status = 0 ]; then
  f=$out/fold.src/model.c a=$out/apart.src/model.c
  nf=$(grep -c '^ *cuda_bn_fold_conv1x1_backward_nhwc(' "$f") nr=$(grep -c '^ *.bn_fold_bytes = ' "$f")
  nc=$(grep -c 'folded into the backward of add' "$f")
  ns=$(grep -c 'rt_cuda_conv_select(.*, NULL, NULL, NULL)) > work)   /\* backward folded into add' "$f")
  [ "$nf" = 3 ] && [ "$nr" = 1 ] && [ "$nc" = 3 ] && [ "$ns" = 3 ] &&
    echo "default: 3 identity blocks' bn backward folded through conv3 (their scratch sized at start-up, 3 conv3s with no backward, their start-up search forward only)" ||
    fail "default: $nf fold calls, $nr scratch sizes, $nc conv3s folded, $ns forward-only searches in model.c (not 3, 1, 3, 3)"
  grep -q 'cuda_bn_fold_' "$a" && fail "--no-bn-fold: model.c still folds"
  "$PY" tests/emu/same_run.py --tol 1e-3 5e-2 --from "$out/still1.run" "one step's updates, bn fold vs --no-bn-fold (BF16 nhwc)" \
    "$out/fold1.run" "$out/apart1.run" || fail "one step: the fold's updates and --no-bn-fold's differ beyond the tolerance"
  "$PY" tests/emu/same_run.py --tol 2e-2 3e-2 "bn fold vs --no-bn-fold (BF16 nhwc)" "$out/fold.run" "$out/apart.run" ||
    fail "the fold and --no-bn-fold differ beyond the tolerances"
  emu_within_plan "fold (BF16 nhwc) device memory" "$out/fold.log" "$out/mini_BF16.spec" "--layout nhwc" || status=1
fi
[ $status = 0 ] && echo "a block output's bn backward folded through conv3 in emulated CUDA trainers: ok"
exit $status
