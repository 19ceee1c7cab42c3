#!/usr/bin/env bash
# The activation family and the channel ops in a whole CUDA trainer, under the emulator
# (tests/emu/): a small net with an SE gate (gap, 1x1 convs, silu, sigmoid, mul), hardswish,
# relu6 and hardsigmoid, and a ShuffleNetV2 unit (two channel_slices, concat,
# channel_shuffle), 4 steps on synthetic data against the CPU trainer
# (tests/gpu/compare_runs.py): FP32 within 1e-4 relative, BF16 NCHW and channels-last within
# 5e-2 (as emu_test.sh); and the same net with RMSprop in TF's form (the EfficientNet recipe's
# optimizer), FP32 against the CPU. test_ops_gpu checks each op and optimizer against the CPU.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-arch-ops
status=0

cat > "$out/arch.spec" <<'SPEC'
name: "arch_ops_emu"
seed: 3
net {
  input_shape: [3, 12, 10]
  classes: 10
  conv { name: "stem" out: 16 kernel: 3 pad: 1 bias: false }
  bn { name: "bn" }
  hardswish { name: "hs" }
  gap { name: "sq" }
  conv { name: "fc1" out: 8 kernel: 1 }
  silu { name: "act" }
  conv { name: "fc2" out: 16 kernel: 1 }
  sigmoid { name: "gate" }
  mul { name: "se" inputs: ["hs", "gate"] }
  channel_slice { name: "left" end: 8 }
  channel_slice { name: "right" input: "se" start: 8 end: 16 }
  conv { name: "pw" out: 8 kernel: 1 }
  relu6 { name: "r6" }
  conv { name: "dw" out: 8 kernel: 3 pad: 1 groups: 8 }
  hardsigmoid { name: "hsg" }
  concat { name: "cat" inputs: ["left", "hsg"] }
  channel_shuffle { name: "shuf" groups: 2 }
  gap { name: "gap" }
  linear { name: "fc" out: 10 }
}
data {
  train { source: "synthetic" samples: 32 batch_per_rank: 8 }
  val { source: "synthetic" batch_per_rank: 8 }
  val_samples: 8
}
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } log_every: 1 }
SPEC
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/arch.spec" > "$out/arch_bf16.spec"
sed 's/sgd { momentum: 0.9 }/rmsprop { form: TF alpha: 0.9 eps: 0.001 momentum: 0.9 weight_decay: 1e-5 }/; s/base: 0.1/base: 0.01/' \
  "$out/arch.spec" > "$out/arch_rms.spec"
grep -q "rmsprop" "$out/arch_rms.spec" || { echo "FAIL: no rmsprop in $out/arch_rms.spec"; exit 1; }

emu_run cpu arch || exit 1
if emu_run fp32 arch --backend cuda; then
  emu_compare "SE/shuffle net FP32 NCHW vs CPU (1e-4)" fp32 cpu 1e-4
  emu_within_plan "SE/shuffle net FP32 device memory" "$out/fp32.log" "$out/arch.spec" || status=1
fi
emu_run bf16 arch_bf16 --backend cuda && emu_compare "SE/shuffle net BF16 NCHW vs CPU FP32 (5e-2)" bf16 cpu 5e-2
emu_run bf16_nhwc arch_bf16 --backend cuda --layout nhwc &&
  emu_compare "SE/shuffle net BF16 --layout nhwc vs CPU FP32 (5e-2)" bf16_nhwc cpu 5e-2
emu_run cpu_rms arch_rms && emu_run fp32_rms arch_rms --backend cuda &&
  emu_compare "SE/shuffle net, RMSprop TF form, FP32 NCHW vs CPU (1e-4)" fp32_rms cpu_rms 1e-4
[ $status = 0 ] && echo "activations, channel ops and RMSprop in emulated CUDA trainers: ok"
exit $status
