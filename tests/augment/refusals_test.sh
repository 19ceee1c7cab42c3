#!/usr/bin/env bash
# The modern-recipe fields are honoured or refused with one clear message: timm's RandAugment
# variant needs num_magnitude_bins 11 and refuses NEAREST; bad ranges are check errors naming
# the field; the CPU trainer's code calls the dense-target loss with the spec's values; both
# backends carry timm's variant into the run config; and a CUDA trainer with mixup, cutmix or
# random erasing takes float batches (input_u8 = 0) and calls the mixed loss.
set -u
source tests/lib.sh
dir=$BUILD/test-augment-refusals
rm -rf "$dir" && mkdir -p "$dir"
base=tests/augment/fmnist_lenet_mix.spec

# variant NAME 'sed expression': a copy of the LeNet mix spec with one change
variant() { sed "$2" "$base" > "$dir/$1.spec"; }
# expect_error NAME 'words' CMD...: non-zero exit, stderr naming every word, nothing written
expect_error() {
  local name=$1 words=$2; shift 2
  local rc=0
  "$@" > "$dir/$name.out" 2> "$dir/$name.err" || rc=$?
  [ "$rc" -ne 0 ] || { fail "$name: exit status 0"; return; }
  local w
  for w in $words; do grep -qi -- "$w" "$dir/$name.err" || fail "$name: message lacks '$w': $(head -2 "$dir/$name.err")"; done
  [ ! -e "$dir/$name.bin" ] || fail "$name: wrote a binary"
}

# honoured on CUDA: float batches, and the mixed targets' loss with the spec's smoothing
"$TRAINC" build --emit-only --backend cuda "$base" -o "$dir/cuda-mix" > /dev/null || fail "CUDA mixup + cutmix build"
grep -q '\.input_u8 = 0,' "$dir/cuda-mix.src/model.c" || fail "CUDA mixup build does not take float batches"
grep -q 'cuda_target_loss(rt_dev.loss, .*, rt_dev.y, 1, BATCH, CLASSES, 0, 0.1f, ' "$dir/cuda-mix.src/model.c" ||
  fail "CUDA mixed loss call: $(grep -m1 -e cuda_target_loss -e cuda_softmax_xent "$dir/cuda-mix.src/model.c")"
variant erase-only 's/      mixup_alpha: 0.2//; s/      cutmix_alpha: 1.0//'
"$TRAINC" build --emit-only --backend cuda "$dir/erase-only.spec" -o "$dir/cuda-erase" > /dev/null || fail "CUDA erasing build"
grep -q '\.input_u8 = 0,' "$dir/cuda-erase.src/model.c" || fail "CUDA erasing build does not take float batches"
grep -q 'cuda_softmax_xent(' "$dir/cuda-erase.src/model.c" || fail "CUDA erasing alone: not the plain label loss"
variant timm-bins 's/      random_erasing { p: 0.1 }/      rand_augment { magnitude: 7 magnitude_std: 0.5 }/'
expect_error timm-bins "num_magnitude_bins timm 11" "$TRAINC" check "$dir/timm-bins.spec"
variant timm-nearest 's/      random_erasing { p: 0.1 }/      rand_augment { magnitude: 7 num_magnitude_bins: 11 increasing: true } policy_interpolation: NEAREST/'
expect_error timm-nearest "timm NEAREST policy_interpolation" "$TRAINC" check "$dir/timm-nearest.spec"
variant bins 's/      random_erasing { p: 0.1 }/      rand_augment { magnitude: 31 }/'
expect_error bins "magnitude num_magnitude_bins" "$TRAINC" check "$dir/bins.spec"
variant range 's/random_erasing { p: 0.1 }/random_erasing { scale: [0.4, 0.1] }/'
expect_error range "scale random_erasing" "$TRAINC" check "$dir/range.spec"
variant both 's/      random_erasing { p: 0.1 }/      trivial_augment: true rand_augment { }/'
expect_error both "trivial_augment rand_augment" "$TRAINC" check "$dir/both.spec"
variant kind 's/loss { label_smoothing: 0.1 }/loss { kind: HINGE }/'
expect_error kind "kind SOFTMAX_CE BCE" "$TRAINC" check "$dir/kind.spec"

# Honoured: the CPU code's loss call carries the spec's mixing, BCE, smoothing and threshold;
# CUDA builds BCE and TrivialAugment (bytes) and puts the policy in the run config.
variant bce 's/loss { label_smoothing: 0.1 }/loss { label_smoothing: 0.1 kind: BCE bce_target_threshold: 0.2 }/'
"$TRAINC" build --emit-only "$dir/bce.spec" -o "$dir/bce" > /dev/null || fail "CPU BCE build"
grep -q 'target_loss_forward(fc2_dout, fc2_out, y, 1, BATCH, CLASSES, 1, 0.1f, 0.2f, 1.0f / BATCH)' \
  "$dir/bce.src/model.c" || fail "CPU BCE loss call: $(grep -m1 target_loss "$dir/bce.src/model.c")"
variant cuda-ok 's/      mixup_alpha: 0.2//; s/      cutmix_alpha: 1.0//; s/      random_erasing { p: 0.1 }/      trivial_augment: true policy_interpolation: BILINEAR/; s/loss { label_smoothing: 0.1 }/loss { kind: BCE }/'
"$TRAINC" build --emit-only --backend cuda "$dir/cuda-ok.spec" -o "$dir/cuda-ok" > /dev/null || fail "CUDA BCE + trivial_augment build"
grep -q 'cuda_target_loss(rt_dev.loss, .*, rt_dev.y, 0, BATCH, CLASSES, 1, 0.0f, 0.0f' "$dir/cuda-ok.src/model.c" ||
  fail "CUDA BCE loss call: $(grep -m1 cuda_target_loss "$dir/cuda-ok.src/model.c")"
grep -q '\.input_u8 = 1,' "$dir/cuda-ok.src/model.c" || fail "CUDA without mixing or erasing does not take bytes"
grep -q '.policy = RT_POLICY_TRIVIAL_AUGMENT, .num_ops = 1, .magnitude = 0, .num_bins = 31, .bilinear = 1' \
  "$dir/cuda-ok.src/model.c" || fail "CUDA run config lacks the policy: $(grep -m1 '.policy' "$dir/cuda-ok.src/model.c")"

# timm's RandAugment: honoured by both backends (the shared loader's augment_timm.c).
timm_ra='rand_augment { magnitude: 9 magnitude_std: 0.5 num_magnitude_bins: 11 increasing: true }'
variant timm-cuda "s/      mixup_alpha: 0.2//; s/      cutmix_alpha: 1.0//; s/      random_erasing { p: 0.1 }/      $timm_ra/"
for backend in cpu cuda; do
  "$TRAINC" build --emit-only --backend $backend "$dir/timm-cuda.spec" -o "$dir/timm-$backend" > /dev/null ||
    fail "$backend build of timm's RandAugment"
  grep -A1 -q '.policy = RT_POLICY_TIMM_RAND_AUGMENT, .num_ops = 2, .magnitude = 9, .num_bins = 11, .bilinear = 0' \
    "$dir/timm-$backend.src/model.c" && grep -q '.magnitude_std = 0.5f, .increasing = 1 }' "$dir/timm-$backend.src/model.c" ||
    fail "$backend run config lacks timm's policy: $(grep -A1 -m1 '.policy' "$dir/timm-$backend.src/model.c")"
done

[ "$failures" -eq 0 ] && echo "refusals_test: all passed"
[ "$failures" -eq 0 ]
