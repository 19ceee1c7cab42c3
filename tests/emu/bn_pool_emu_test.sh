#!/usr/bin/env bash
# The stem's bn + ReLU + max pooling in one pass (lower.c choose_bn_pool, bn_relu_maxpool_nhwc.cu)
# in whole trainers under the emulator: a ResNet-style stem (conv, bn, ReLU, 3x3 stride-2 pad-1
# max pooling) and a block after it, BF16 --layout nhwc, built by default and with --no-bn-pool
# (the generated bn apply writes the bn's output, the pooling reads it back; the pooling's
# backward writes the bn's output gradient, the bn's reads it), 4 steps each. The two do the
# same arithmetic in the same order (the fused kernel's bn values, their rounding, the
# window's first maximum and the bits are the unfused kernels'; the bn's backward gathers dy
# from the pooled gradient and the byte argmax in the pooling backward's order and rounds it
# as that stores it), so the losses and the final parameters must be equal, bit for bit; the
# default build's plan has no tensor for the bn's output nor its gradient, and its model.c
# calls the fused forward and the fused backward (cuda_batchnorm_backward_nhwc_pool, no
# pooling backward) where --no-bn-pool's calls the two each way. The
# kernel's own values are checked against the CPU ops by test_ops_gpu (whose mutants.sh
# bn-pool-shift and bn-pool-bits fail it); here any value it computes otherwise than the
# unfused kernels shows as differing parameters.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-bn-pool
status=0
cat > "$out/stem.spec" <<'SPEC'
net {
  input_shape: [3, 12, 12]
  classes: 10
  conv { name: "stem" out: 16 kernel: 3 pad: 1 bias: false }
  bn { name: "stem_bn" }
  relu { name: "stem_relu" }
  maxpool { name: "pool1" kernel: 3 stride: 2 pad: 1 }
  conv { name: "c1" out: 16 kernel: 3 pad: 1 bias: false }
  bn { name: "c1_bn" }
  relu { name: "c1_relu" }
  gap { name: "pool" }
  linear { name: "fc" out: 10 }
}
data { train { source: "synthetic" samples: 16 batch_per_rank: 4 } val { source: "synthetic" batch_per_rank: 4 } val_samples: 4 }
solver { epochs: 1 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.05 } }
precision { compute: BF16 }
SPEC

run() {  # tag, build flags...
  local tag=$1; shift
  "$BUILD/trainc" build "$out/stem.spec" -o "$out/$tag" --backend cuda --layout nhwc "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 || { fail "$tag: the run"; tail -20 "$out/$tag.log"; return 1; }
}

if run fused && run apart --no-bn-pool; then
  grep -q 'cuda_bn_relu_maxpool_forward_nhwc(' "$out/fused.src/model.c" &&
    ! grep -q 'cuda_bn_relu_maxpool_forward_nhwc(' "$out/apart.src/model.c" &&
    grep -q 'fused_stem_bn_apply(' "$out/apart.src/model.c" && ! grep -q 'fused_stem_bn_apply(' "$out/fused.src/model.c" ||
    fail "model.c: the fused stem kernel is not (only) in the default build"
  grep -q 'cuda_batchnorm_backward_nhwc_pool(' "$out/fused.src/model.c" &&
    ! grep -q 'cuda_maxpool2d_backward_nhwc(' "$out/fused.src/model.c" &&
    grep -q 'cuda_maxpool2d_backward_nhwc(' "$out/apart.src/model.c" &&
    ! grep -q 'cuda_batchnorm_backward_nhwc_pool(' "$out/apart.src/model.c" ||
    fail "model.c: the stem's backward is not folded (only) in the default build"
  grads() { awk '$1 == "grad" || $1 == "T_GRAD"' "$1" | wc -l; }
  [ "$(grads "$out/fused.src/plan.txt")" -lt "$(grads "$out/apart.src/plan.txt")" ] ||
    fail "plan: the default build still plans the bn's output gradient ($(grads "$out/fused.src/plan.txt") gradient tensors, --no-bn-pool $(grads "$out/apart.src/plan.txt"))"
  acts() { awk '$1 == "act" || $1 == "T_ACT"' "$1" | wc -l; }
  [ "$(acts "$out/fused.src/plan.txt")" -lt "$(acts "$out/apart.src/plan.txt")" ] ||
    fail "plan: the default build still plans the bn's output ($(acts "$out/fused.src/plan.txt") activation tensors, --no-bn-pool $(acts "$out/apart.src/plan.txt"))"
  "$PY" tests/emu/same_run.py "bn + relu + maxpool fused vs --no-bn-pool" "$out/fused.run" "$out/apart.run" || fail "the default build and --no-bn-pool differ"
  emu_within_plan "stem BF16 nhwc with bn + relu + maxpool fused, device memory" "$out/fused.log" "$out/stem.spec" "--layout nhwc" ||
    status=1
fi
exit $status
