#!/usr/bin/env bash
# Swin's windowed attention in a whole CUDA trainer, under the emulator (tests/emu/): two Swin
# blocks on an 8x8 map of patches (windows of 4: the first unshifted, the second shifted by 2
# with its mask, each with its relative-position bias table), patch merging (space_to_depth,
# ln, a 1x1 reduction), 4 steps on synthetic data against the CPU trainer
# (tests/gpu/compare_runs.py): FP32 within 1e-4 relative, BF16 within 5e-2 (as vit_emu_test.sh),
# device memory within the start-up check's plan. test_ops_gpu checks the op alone against
# window_attention.c.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-swin
status=0

cat > "$out/swin.spec" <<'SPEC'
name: "swin_emu"
seed: 7
block swin_block(dim, h, shift) {
  ln { name: "norm1" }
  attention { name: "attn" heads: h window: 4 shift: shift }
  add { name: "add_1" inputs: ["attn", "@in"] }
  ln { name: "norm2" }
  conv { name: "mlp.0" out: 2 * dim kernel: 1 }
  gelu { name: "mlp.1" }
  conv { name: "mlp.3" out: dim kernel: 1 }
  add { name: "add_2" inputs: ["mlp.3", "add_1"] }
}
net {
  input_shape: [3, 16, 16]
  classes: 10
  conv { name: "patch" out: 16 kernel: 2 stride: 2 }
  ln { name: "patch_norm" }
  use swin_block(16, 2, 0) as "block0"
  use swin_block(16, 2, 2) as "block1"
  space_to_depth { name: "merge" block: 2 }
  ln { name: "merge_norm" }
  conv { name: "reduction" out: 32 kernel: 1 bias: false }
  gap { }
  linear { name: "head" out: 10 }
}
data {
  train { source: "synthetic" samples: 32 batch_per_rank: 8 }
  val { source: "synthetic" batch_per_rank: 8 }
  val_samples: 8
}
solver { epochs: 1 adamw { weight_decay: 0.05 } lr { base: 0.002 } log_every: 1 }
SPEC
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/swin.spec" > "$out/swin_bf16.spec"

emu_run cpu swin || exit 1
if emu_run fp32 swin --backend cuda; then
  grep -q "cuda_window_attention_forward" "$out/fp32.src/model.c" ||
    fail "model.c does not call cuda_window_attention_forward"
  emu_compare "Swin FP32 vs CPU (1e-4)" fp32 cpu 1e-4
  # the backward's score gradients are in the planned workspace: nothing beyond the plan
  emu_within_plan "Swin FP32 device memory" "$out/fp32.log" "$out/swin.spec" || status=1
fi
emu_run bf16 swin_bf16 --backend cuda && emu_compare "Swin BF16 vs CPU FP32 (5e-2)" bf16 cpu 5e-2
[ $status = 0 ] && echo "Swin's windowed attention in emulated CUDA trainers: ok"
exit $status
