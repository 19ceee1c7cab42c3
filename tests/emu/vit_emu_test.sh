#!/usr/bin/env bash
# The token layers in a whole CUDA trainer, under the emulator (tests/emu/): a two-block ViT
# on 81 patch tokens and a class token (a 1x1 conv and space_to_depth make the patches; tokens,
# learned class token and position embedding, concat along tokens, ln, attention, 1x1-conv MLP with GELU, select_token), 4 steps
# on synthetic data against the CPU trainer (tests/gpu/compare_runs.py): FP32 within 1e-4
# relative, BF16 within 5e-2 (as emu_test.sh) both on cuDNN's fused attention (the BF16 default
# for its 8-channel heads: the emulator's SDPA reference) and with --no-cudnn-attention, device
# memory within the start-up check's plan; show --schedule names each layer's choice or why
# not; --layout nhwc is refused with its reason.
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
# BF16 with heads of 8 channels: attention's core on cuDNN's fused SDPA (the emulator's reference
# of it), both directions fused, no fallback said; --no-cudnn-attention keeps our kernels
if emu_run bf16 vit_bf16 --backend cuda; then
  emu_compare "ViT BF16 (cuDNN fused attention) vs CPU FP32 (5e-2)" bf16 cpu 5e-2
  grep -q "cuda_attention_sdpa_backward(" "$out/bf16.src/model.c" || fail "BF16 ViT: attention not on cuDNN's SDPA"
  ! grep -q "not cuDNN's fused attention" "$out/bf16.log" || fail "BF16 ViT: the fused attention fell back: $(grep -m1 "fused attention" "$out/bf16.log")"
  # its 16-bit copies are planned tensors: nothing allocated beyond the plan
  emu_within_plan "ViT BF16 (fused attention) device memory" "$out/bf16.log" "$out/vit_bf16.spec" || status=1
fi
if emu_run bf16_ours vit_bf16 --backend cuda --no-cudnn-attention; then
  emu_compare "ViT BF16 (--no-cudnn-attention) vs CPU FP32 (5e-2)" bf16_ours cpu 5e-2
  ! grep -q "cuda_attention_sdpa" "$out/bf16_ours.src/model.c" || fail "--no-cudnn-attention still calls cuDNN's SDPA"
fi
"$BUILD/trainc" show --schedule --backend cuda "$out/vit_bf16.spec" > "$out/sched.txt" 2>&1
grep -q "core on cuDNN's fused SDPA" "$out/sched.txt" || fail "show --schedule does not name cuDNN's fused attention"
"$BUILD/trainc" show --schedule --backend cuda --no-cudnn-attention "$out/vit_bf16.spec" > "$out/sched_off.txt" 2>&1
grep -q "no cuDNN fused attention: --no-cudnn-attention" "$out/sched_off.txt" || fail "show --schedule --no-cudnn-attention: no reason"
"$BUILD/trainc" show --schedule --backend cuda "$out/vit.spec" > "$out/sched_fp32.txt" 2>&1
grep -q "no cuDNN fused attention: not BF16 or FP16" "$out/sched_fp32.txt" || fail "show --schedule FP32: no reason"
if "$BUILD/trainc" build "$out/vit_bf16.spec" -o "$out/nhwc" --backend cuda --layout nhwc > "$out/nhwc.build" 2>&1; then
  fail "--layout nhwc built a net with token layers"
else
  grep -q "token layer.*--layout nhwc" "$out/nhwc.build" && echo "--layout nhwc refused: ok" ||
    { fail "--layout nhwc: not the token-layer refusal"; cat "$out/nhwc.build"; }
fi
[ $status = 0 ] && echo "token layers and attention in emulated CUDA trainers: ok"
exit $status
