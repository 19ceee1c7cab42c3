#!/usr/bin/env bash
# Depthwise convolutions on our own CUDA kernels (runtime/cuda/ops/conv2d_depthwise.cu) in a
# whole trainer, under the emulator (tests/emu/): a small ConvNeXt-like net (7x7, 5x5 and 3x3
# depthwise convs, layer norm, 1x1 convs, GELU, layer scale, a residual add) for 4 steps on
# synthetic data, against the CPU trainer (tests/gpu/compare_runs.py): FP32 within 1e-4
# relative, BF16 channels-last within 5e-2 (as emu_test.sh), and BF16 channels-last against
# BF16 NCHW within 1e-5 (the same sums in either layout); the trainers allocate no more
# device memory than their start-up check counted (the weight gradient's partial sums live in
# the conv workspace). test_ops_gpu checks each kernel against the CPU op.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-depthwise
status=0

cat > "$out/dw.spec" <<'SPEC'
name: "depthwise_emu"
seed: 3
net {
  input_shape: [3, 14, 12]
  classes: 10
  conv { name: "stem" out: 16 kernel: 3 pad: 1 }
  conv { name: "dw7" out: 16 kernel: 7 pad: 3 groups: 16 }
  ln { name: "ln" }
  conv { name: "pw" out: 32 kernel: 1 }
  gelu { name: "gelu" }
  conv { name: "pw2" out: 16 kernel: 1 }
  layer_scale { name: "ls" init: 0.5 }
  add { name: "res" inputs: ["ls", "stem"] }
  conv { name: "dw5" out: 16 kernel: 5 pad: 2 groups: 16 }
  conv { name: "dw3" out: 16 kernel: 3 pad: 1 groups: 16 bias: false }
  relu { name: "r" }
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
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/dw.spec" > "$out/dw_bf16.spec"

emu_run cpu dw || exit 1
if emu_run fp32 dw --backend cuda; then
  emu_compare "depthwise net FP32 NCHW vs CPU (1e-4)" fp32 cpu 1e-4
  emu_within_plan "depthwise net FP32 device memory" "$out/fp32.log" "$out/dw.spec" || status=1
fi
emu_run bf16 dw_bf16 --backend cuda && emu_compare "depthwise net BF16 NCHW vs CPU FP32 (5e-2)" bf16 cpu 5e-2
if emu_run bf16_nhwc dw_bf16 --backend cuda --layout nhwc; then
  emu_compare "depthwise net BF16 --layout nhwc vs CPU FP32 (5e-2)" bf16_nhwc cpu 5e-2
  [ -d "$out/bf16.run" ] && emu_compare "depthwise net BF16 --layout nhwc vs NCHW (1e-5)" bf16_nhwc bf16 1e-5
  emu_within_plan "depthwise net BF16 nhwc device memory" "$out/bf16_nhwc.log" "$out/dw_bf16.spec" "--layout nhwc" ||
    status=1
fi
[ $status = 0 ] && echo "depthwise convolutions in emulated CUDA trainers: ok"
exit $status
