#!/usr/bin/env bash
# The token layers in a whole CUDA trainer, under the emulator (tests/emu/): a two-block ViT
# on 81 patch tokens and a class token (a 1x1 conv and space_to_depth make the patches; tokens,
# learned class token and position embedding, concat along tokens, ln, attention, 1x1-conv MLP with GELU, select_token), 4 steps
# on synthetic data against the CPU trainer (tests/gpu/compare_runs.py): FP32 within 1e-4
# relative, BF16 within 5e-2 (as emu_test.sh), device memory within the start-up check's plan;
# --layout nhwc is refused with its reason.
# test_ops_gpu checks attention and learned against the CPU ops one by one.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-vit
status=0

cat > "$out/vit.spec" <<'SPEC'
name: "vit_emu"
seed: 5
block encoder(dim) {
  ln { name: "ln_1" }
  attention { name: "self_attention" heads: 2 }
  add { name: "add_1" inputs: ["self_attention", "@in"] }
  ln { name: "ln_2" }
  conv { name: "mlp.0" out: 2 * dim kernel: 1 }
  gelu { name: "mlp.1" }
  conv { name: "mlp.3" out: dim kernel: 1 }
  add { name: "add_2" inputs: ["mlp.3", "add_1"] }
}
net {
  input_shape: [3, 18, 18]
  classes: 10
  conv { name: "conv_proj" out: 4 kernel: 1 }
  space_to_depth { name: "merge" block: 2 }
  tokens { name: "patches" }
  learned { name: "class_token" shape: [16, 1, 1] }
  concat { name: "cat" axis: TOKENS inputs: ["class_token", "patches"] }
  learned { name: "pos_embedding" shape: [16, 82, 1] weight_filler { type: GAUSSIAN std: 0.02 } }
  add { name: "embed" inputs: ["cat", "pos_embedding"] }
  repeat i in 2 { use encoder(16) as "layer" + i }
  ln { name: "ln" }
  select_token { name: "cls" }
  linear { name: "head" out: 10 }
}
data {
  train { source: "synthetic" samples: 32 batch_per_rank: 8 }
  val { source: "synthetic" batch_per_rank: 8 }
  val_samples: 8
}
solver { epochs: 1 adamw { weight_decay: 0.05 } lr { base: 0.001 } log_every: 1 }
SPEC
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/vit.spec" > "$out/vit_bf16.spec"

emu_run cpu vit || exit 1
if emu_run fp32 vit --backend cuda; then
  emu_compare "ViT FP32 vs CPU (1e-4)" fp32 cpu 1e-4
  # attention's backward works in a planned workspace: nothing allocated beyond the plan
  emu_within_plan "ViT FP32 device memory" "$out/fp32.log" "$out/vit.spec" || status=1
fi
emu_run bf16 vit_bf16 --backend cuda && emu_compare "ViT BF16 vs CPU FP32 (5e-2)" bf16 cpu 5e-2
if "$BUILD/trainc" build "$out/vit_bf16.spec" -o "$out/nhwc" --backend cuda --layout nhwc > "$out/nhwc.build" 2>&1; then
  fail "--layout nhwc built a net with token layers"
else
  grep -q "token layer.*--layout nhwc" "$out/nhwc.build" && echo "--layout nhwc refused: ok" ||
    { fail "--layout nhwc: not the token-layer refusal"; cat "$out/nhwc.build"; }
fi
[ $status = 0 ] && echo "token layers and attention in emulated CUDA trainers: ok"
exit $status
