#!/usr/bin/env bash
# Mixup, cutmix and random erasing on the CUDA backend, run under the emulator (tests/emu/):
# such a trainer takes the loader's normalized FP32 batches instead of bytes (the descriptor's
# input_u8 = 0), with three target words per sample for the mixed loss. Checks, against the
# CPU trainer on the same spec (tests/gpu/compare_runs.py), on 3-channel synthetic images:
# the example LeNet with mixup + cutmix + erasing in FP32 (losses within 1e-4 relative), and
# the example ResNet with erasing alone (one target word) in BF16 (the device converts the
# floats; 5e-2 against the CPU's FP32, as emu_test.sh), in NCHW and in --layout nhwc (the
# loader transposes the floats after erasing), whose losses must equal NCHW's within 1e-5
# when built --no-bn-add --no-conv-genstats (the same roundings: by default a block's closing
# bn + add + ReLU run in one pass that keeps bn(x) in FP32, where NCHW rounds it to BF16 before
# the add, which moves BF16 losses by about 4e-3, and a conv's epilogue sums its bn's
# statistics from its FP32 output, where the statistics' pass sums the BF16 one, about 7e-3;
# the default build is held to the CPU's 5e-2 like NCHW).
# test_data_loader checks the channels-last floats after mixing too.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-mix
status=0

# spec TAG EXAMPLE 'augment fields' [extra]: the example net on 3 x 12 x 12 synthetic images,
# 4 steps of 8 (the ResNet with emu_test.sh's small peak LR, for BN on few samples)
spec() {
  cat > "$out/$1.spec" <<SPEC
extends: "$(pwd)/specs/examples/$2.spec"
net { input_shape: [3, 12, 12] }
data { train { source: "synthetic" samples: 32 batch_per_rank: 8 augment { $3 }
               normalize { mean: [0.5, 0.4, 0.3] std: [0.25, 0.2, 0.3] } }
       val { source: "synthetic" batch_per_rank: 8 normalize { mean: [0.5, 0.4, 0.3] std: [0.25, 0.2, 0.3] } }
       val_samples: 8 }
solver { epochs: 1 log_every: 1 lr { schedule { one_cycle { max_lr: 0.01 pct_start: 0.5 } } } }
${4:-}
SPEC
}
# check TAG CPU-TAG TOLERANCE BUILD-FLAGS...: the emulated CUDA trainer of TAG's spec against
# the CPU trainer of CPU-TAG's
check() {
  local tag=$1 cpu=$2 tol=$3; shift 3
  [ -x "$out/$cpu.cpu" ] || { "$BUILD/trainc" build "$out/$cpu.spec" -o "$out/$cpu.cpu" > "$out/$cpu.cpu.build" 2>&1 &&
    "$out/$cpu.cpu" --out "$out/$cpu.cpu.run" > "$out/$cpu.cpu.log" 2>&1; } ||
    { fail "$cpu: CPU trainer"; cat "$out/$cpu.cpu.build" "$out/$cpu.cpu.log" | tail -20; return; }
  local emu=$out/$tag.emu${1:+.nhwc}${3:+.${3#--}}
  "$BUILD/trainc" build "$out/$tag.spec" -o "$emu" --backend cuda "$@" > "$emu.build" 2>&1 ||
    { fail "$tag: trainc build --backend cuda $*"; tail -20 "$emu.build"; return; }
  grep -q '\.input_u8 = 0' "$emu.src/model.c" || fail "$tag: the descriptor does not ask for float batches"
  EMU_SCHEDULE=1 "$emu" --out "$emu.run" > "$emu.log" 2>&1 || { fail "$tag: the emulated run $*"; tail -25 "$emu.log"; return; }
  local r
  r=$("$PY" tests/gpu/compare_runs.py "$emu.run/metrics.jsonl" "$out/$cpu.cpu.run/metrics.jsonl" "$tol" 2>&1) &&
    echo "$tag ${*:-NCHW} vs CPU FP32 ($tol): $(echo "$r" | head -1)" || { fail "$tag $*:"; echo "$r"; }
}

spec mix fmnist_lenet 'mixup_alpha: 0.2 cutmix_alpha: 1.0 random_erasing { p: 0.5 }'
check mix mix 1e-4
crop='random_crop { size: 12 padding: 1 }'
spec erase fmnist_resnet "random_erasing { p: 0.5 } $crop"
spec erase_bf16 fmnist_resnet "random_erasing { p: 0.5 } $crop" 'precision { compute: BF16 }'
check erase_bf16 erase 5e-2
check erase_bf16 erase 5e-2 --layout nhwc
check erase_bf16 erase 5e-2 --layout nhwc --no-bn-add --no-conv-genstats
# the same math in either layout: a sample read in the wrong order would show here
r=$("$PY" tests/gpu/compare_runs.py "$out/erase_bf16.emu.nhwc.no-bn-add.run/metrics.jsonl" "$out/erase_bf16.emu.run/metrics.jsonl" 1e-5 2>&1) &&
  echo "erase_bf16 --layout nhwc --no-bn-add --no-conv-genstats vs NCHW (1e-5): $(echo "$r" | head -1)" || { fail "erase_bf16 NHWC vs NCHW:"; echo "$r"; }
[ $status = 0 ] && echo "mixup, cutmix and random erasing on the emulated CUDA backend: ok"
exit $status
