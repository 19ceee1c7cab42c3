#!/usr/bin/env bash
# Loss heads (softmax_ce loss_weight: auxiliary classifiers) in a whole CUDA trainer, under the
# emulator (tests/emu/): a small net with two auxiliary heads (0.3 through a flatten view, 0.4
# after a dropout) and the main head, label smoothing on all, 4 steps on synthetic data
# against the CPU trainer (tests/gpu/compare_runs.py): FP32 within 1e-4 relative; BF16, and
# FP16 with its loss scaling (the heads' gradients seeded with the scale), within 5e-2 (as
# emu_test.sh); a main head of weight 0.5 (its mean weighed on the device too, cuda_loss_add)
# and the heads under solver.loss.kind BCE (cuda_target_loss) in FP32. The loss compared is
# the weighted sum of the heads (a CPU run with every weight 1 must differ from it); the
# generated CUDA model.c calls cuda_loss_add once per head that is not a main head of weight
# 1. tests/gradcheck/gradcheck_aux*.spec check the CPU gradient in double precision.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-loss-heads
status=0

cat > "$out/heads.spec" <<'SPEC'
name: "loss_heads_emu"
seed: 3
net {
  input_shape: [3, 12, 12]
  classes: 10
  conv { name: "stem" out: 8 kernel: 3 pad: 1 }
  bn { name: "bn1" }
  relu { name: "r1" }
  avgpool { name: "aux1.pool" kernel: 4 stride: 4 }
  conv { name: "aux1.conv" out: 4 kernel: 1 }
  relu { name: "aux1.relu" }
  linear { name: "aux1.fc" out: 10 }
  flatten { name: "aux1.flat" }
  softmax_ce { name: "aux1.loss" loss_weight: 0.3 }
  conv { name: "c2" input: "r1" out: 12 kernel: 3 stride: 2 pad: 1 }
  relu { name: "r2" }
  gap { name: "aux2.gap" }
  dropout { name: "aux2.drop" p: 0.3 }
  linear { name: "aux2.fc" out: 10 }
  softmax_ce { name: "aux2.loss" loss_weight: 0.4 }
  conv { name: "c3" input: "r2" out: 16 kernel: 3 pad: 1 }
  relu { name: "r3" }
  gap { name: "gap" }
  linear { name: "fc" out: 10 }
  softmax_ce { name: "loss" }
}
data {
  train { source: "synthetic" samples: 32 batch_per_rank: 8 }
  val { source: "synthetic" batch_per_rank: 8 }
  val_samples: 8
}
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.05 } log_every: 1 loss { label_smoothing: 0.1 } }
SPEC
sed 's/^solver/precision { compute: BF16 }\nsolver/' "$out/heads.spec" > "$out/heads_bf16.spec"
sed 's/softmax_ce { name: "loss" }/softmax_ce { name: "loss" loss_weight: 0.5 }/' "$out/heads.spec" > "$out/main_half.spec"

emu_run cpu heads || exit 1
if emu_run fp32 heads --backend cuda; then
  emu_compare "loss heads FP32 vs CPU (1e-4)" fp32 cpu 1e-4
  n=$(grep -c 'cuda_loss_add(rt_dev.loss, rt_dev.loss + 1, ' "$out/fp32.src/model.c")
  [ "$n" = 2 ] || fail "FP32: $n cuda_loss_add calls in model.c, expected 2 (the auxiliary heads)"
fi
emu_run bf16 heads_bf16 --backend cuda && emu_compare "loss heads BF16 vs CPU FP32 (5e-2)" bf16 cpu 5e-2
sed 's/^solver/precision { compute: FP16 }\nsolver/' "$out/heads.spec" > "$out/heads_fp16.spec"
emu_run fp16 heads_fp16 --backend cuda && emu_compare "loss heads FP16 (loss scaling) vs CPU FP32 (5e-2)" fp16 cpu 5e-2
emu_run cpu_half main_half || exit 1
if emu_run half main_half --backend cuda; then
  emu_compare "main head of weight 0.5 FP32 vs CPU (1e-4)" half cpu_half 1e-4
  grep -q 'cuda_loss_add(rt_dev.loss, rt_dev.loss + 1, 0.5f, 1);' "$out/half.src/model.c" ||
    fail "main head of weight 0.5: its mean is not weighed into the step's loss first"
fi
# solver.loss.kind BCE: every head through cuda_target_loss, weighed the same way
sed 's/loss { label_smoothing: 0.1 }/loss { kind: BCE label_smoothing: 0.1 }/' "$out/heads.spec" > "$out/bce.spec"
emu_run cpu_bce bce || exit 1
emu_run cuda_bce bce --backend cuda && emu_compare "loss heads, BCE, FP32 vs CPU (1e-4)" cuda_bce cpu_bce 1e-4
# the weights matter: a run whose heads all weigh 1 has another loss
sed 's/ loss_weight: 0\.[34]//' "$out/heads.spec" > "$out/unweighted.spec"
emu_run cpu_unweighted unweighted || exit 1
if "$PY" tests/gpu/compare_runs.py "$out/cpu_unweighted.run/metrics.jsonl" "$out/cpu.run/metrics.jsonl" 1e-3 >/dev/null; then
  fail "the CPU losses with and without the heads' weights agree: the weights are not applied"
fi
[ $status = 0 ] && echo "loss heads in emulated CUDA trainers: ok"
exit $status
