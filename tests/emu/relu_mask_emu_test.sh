#!/usr/bin/env bash
# ReLU bitmasks and the block output's two-pass backward (lower.c choose_relu_mask) in whole
# trainers under the emulator: the ResNet example (identity and projection blocks) in BF16
# --layout nhwc, built by default and with --no-relu-mask (the ReLU outputs read back, the
# add's and each bn's backward apart), 4 steps each. The two do the same arithmetic in the
# same order (the bits are the stored outputs' signs, the sums the retiring kernels' own), so
# the losses and the final parameters must be equal, bit for bit. The default build's plan
# holds a mask tensor per ReLU'd bn and block add, and its device memory after the start-up
# check stays within the plan (a projection block's backward sums both bns: partials for
# twice its channels, ir_partial_sum_channels). A wrong bit or a dropped branch changes the
# parameters: with bn_add_relu_backward_nhwc.cu ignoring the bits (mutants.sh's bwd-bits),
# 694812 of the 697760 parameters differ and this test fails.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-relu-mask
status=0
printf 'extends: "%s/specs/examples/fmnist_resnet.spec"\nnet { input_shape: [1, 8, 8] }\n%s\n%s\n%s\n' "$(pwd)" \
  'data { train { source: "synthetic" samples: 16 batch_per_rank: 4 augment { random_crop { size: 8 padding: 1 } } } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }' \
  'solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }' \
  'precision { compute: BF16 }' > "$out/resnet.spec"

run() {  # tag, build flags...
  local tag=$1; shift
  "$BUILD/trainc" build "$out/resnet.spec" -o "$out/$tag" --backend cuda --layout nhwc "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 || { fail "$tag: the run"; tail -20 "$out/$tag.log"; return 1; }
}

if run bits && run nomask --no-relu-mask; then
  masks=$(grep -c '^mask ' "$out/bits.src/plan.txt"); none=$(grep -c '^mask ' "$out/nomask.src/plan.txt")
  [ "$masks" -ge 10 ] && [ "$none" = 0 ] && echo "plan: $masks ReLU bitmasks (none with --no-relu-mask)" ||
    fail "plan: $masks mask tensors by default, $none with --no-relu-mask"
  grep -q 'cuda_bn_add_relu_backward_nhwc' "$out/bits.src/model.c" && ! grep -q 'cuda_bn_add_relu_backward_nhwc' "$out/nomask.src/model.c" ||
    fail "model.c: the two-pass block backward is not (only) in the default build"
  "$PY" tests/emu/same_run.py "bitmask vs --no-relu-mask" "$out/bits.run" "$out/nomask.run" || fail "the default build and --no-relu-mask differ"
  emu_within_plan "ResNet example BF16 nhwc with bitmasks, device memory" "$out/bits.log" "$out/resnet.spec" "--layout nhwc" ||
    status=1
fi
exit $status
