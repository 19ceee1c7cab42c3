#!/usr/bin/env bash
# Train and eval resolutions on the CUDA backend, run under the emulator (tests/emu/): a small
# ResNet trained at 16x16 and evaluated at data.val's crop, 24x24, by a second schedule lowered
# at that shape (model_eval.c, kernels_eval.cu) over the same parameters and BN statistics.
# The run keeps an EMA of the weights, evaluated at 24x24 too. Checks against the CPU trainer
# (whose eval resolution tests/train/eval_resolution_test.sh checks against an independent
# 24x24 trainer): FP32 NCHW on two ranks with sync-BN, with mixup, cutmix and erasing (the
# loader sends normalized floats, as RSB's and torchvision's recipes do; the emulated NCCL
# stops ranks whose cuDNN algorithms differ, so every rank must adopt rank 0's for the
# evaluation's convolutions too), the losses of every step and the
# evaluations' losses (model and EMA) within 1e-4 relative and top-1 within one sample
# (tests/emu's bounds); BF16 channels-last without mixing (bytes) within 5e-2. Both search
# cuDNN's algorithms after allocation, the evaluation's convs for their forward alone, and
# allocate no more after the start-up memory check than it counted for both schedules
# (emu_within_plan; a conv that runs unsearched stops the trainer). The FP32
# evaluations must differ from the CPU's at 16x16 by more than 1e-4, so the checks can tell
# the evaluation resolution's forward from the training one.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-evalres
"$PY" tests/data/make_tree.py "$out/tree" 3 1 24 > /dev/null
spec() {  # name crop solver-extra spec-extra augment-extra -> the spec on stdout
  cat <<SPEC
name: "$1"
seed: 7
net {
  input_shape: [3, 16, 16]
  classes: 10
  conv { name: "stem" out: 8 kernel: 3 pad: 1 bias: false }
  bn { name: "stem_bn" }
  relu { name: "stem_relu" }
  conv { name: "conv1" out: 8 kernel: 3 pad: 1 bias: false }
  bn { name: "bn1" }
  relu { name: "relu1" }
  conv { name: "conv2" out: 8 kernel: 3 pad: 1 }
  add { name: "add" inputs: ["conv2", "stem_relu"] }
  relu { name: "relu" }
  conv { name: "down" out: 16 kernel: 3 stride: 2 pad: 1 bias: false }
  bn { name: "down_bn" }
  relu { name: "down_relu" }
  gap { name: "pool" }
  linear { name: "fc" out: 10 }
}
data {
  train {
    source: "imagenet-folder"
    batch_per_rank: 6
    augment { random_resized_crop { size: 16 scale: [0.5, 1.0] } flip: true ${5:-} }
    normalize { mean: [0.3, 0.25, 0.2] std: [0.35, 0.3, 0.25] }
  }
  val { source: "imagenet-folder" batch_per_rank: 6 resize: $2 center_crop: $2
        normalize { mean: [0.3, 0.25, 0.2] std: [0.35, 0.3, 0.25] } }
  decode_threads: 1
}
solver { iterations: 8 eval_every_iterations: 4 log_every: 1 sgd { momentum: 0.9 } lr { base: 0.2 } $3 }
$4
SPEC
}
ema="ema { decay: 0.5 every_iterations: 2 batch_adjust: false }"
mix="mixup_alpha: 0.2 cutmix_alpha: 1.0 random_erasing { p: 0.5 }"
two="parallel { ranks: 2 sync_bn: true }"
spec evalres 24 "$ema" "$two" "$mix" > "$out/fp32.spec"
spec evalres_16 16 "$ema" "$two" "$mix" > "$out/fp32_16.spec"
spec evalres_plain 24 "$ema" "" > "$out/plain.spec"
spec evalres_bf16 24 "$ema" "precision { compute: BF16 }" > "$out/bf16.spec"
status=0
mpi=(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 mpirun -np 2 --oversubscribe)
launch=("${mpi[@]}")   # the FP32 runs: two ranks
build() {  # name spec [trainc build args]: build, then train with "${launch[@]}"
  local name=$1 spec=$2; shift 2
  "$BUILD/trainc" build "$spec" -o "$out/$name" "$@" > "$out/$name.build" 2>&1 ||
    { echo "FAIL: trainc build $name $*"; tail -20 "$out/$name.build"; exit 1; }
  "${launch[@]}" "$out/$name" --data "$out/tree" --out "$out/$name.run" > "$out/$name.log" 2>&1 ||
    { echo "FAIL: the $name trainer"; tail -25 "$out/$name.log"; exit 1; }
}
build cpu "$out/fp32.spec"
build cpu16 "$out/fp32_16.spec"
build emu "$out/fp32.spec" --backend cuda
launch=(env)   # BF16: one rank
build cpu_plain "$out/plain.spec"
build bf16 "$out/bf16.spec" --backend cuda --layout nhwc
for f in model_eval.c kernels_eval.cu kernels_eval.h; do
  [ -f "$out/emu.src/$f" ] || { echo "FAIL: no $f emitted"; status=1; }
done
grep -q '\.input_u8 = 0' "$out/emu.src/model.c" || { echo "FAIL: the mixed FP32 trainer does not take float batches"; status=1; }
grep -q "evaluates at 24x24 with a forward of its own" "$out/emu.log" ||
  { echo "FAIL: the start-up line about the evaluation resolution is missing"; status=1; }
emu_within_plan "FP32 on two ranks, device memory" "$out/emu.log" "$out/fp32.spec" || status=1
emu_within_plan "BF16 channels-last, device memory" "$out/bf16.log" "$out/bf16.spec" "--layout nhwc" || status=1
compare() {  # device-run CPU-run tolerance CPU-run-at-16-or-"" what
  "$PY" tests/gpu/compare_runs.py "$out/$1.run/metrics.jsonl" "$out/$2.run/metrics.jsonl" "$3" > "$out/$1.cmp" 2>&1 &&
    echo "$5, training losses: $(head -1 "$out/$1.cmp")" || { echo "FAIL: $5, training losses"; cat "$out/$1.cmp"; status=1; }
  "$PY" - "$out/$1.run/metrics.jsonl" "$out/$2.run/metrics.jsonl" "$3" "${4:+$out/$4.run/metrics.jsonl}" "$5" <<'PY' || status=1
import json, sys
dev, cpu, tol, cpu16, what = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
def evals(path):
    return [(r["event"], r["step"], r["loss"], r["top1"]) for r in map(json.loads, open(path))
            if r["event"] in ("eval", "eval_ema")]
a, b, c = evals(dev), evals(cpu), evals(cpu16) if cpu16 else []
assert len(a) == len(b) >= 2 and [x[:2] for x in a] == [y[:2] for y in b], f"eval records: {a} vs {b}"
val = 10   # make_tree's val images: one per class
worst = max(abs(x[2] - y[2]) / abs(y[2]) for x, y in zip(a, b))
top1 = max(abs(x[3] - y[3]) for x, y in zip(a, b))
print(f"{what}, evaluations at 24x24 (device vs CPU): {[(e, s, round(l, 6), t) for e, s, l, t in a]} vs "
      f"{[(e, s, round(l, 6), t) for e, s, l, t in b]}; largest relative loss difference {worst:.2g}, top-1 {top1:g}")
assert worst <= tol, f"the device's evaluation loss differs from the CPU's by more than {tol}"
assert top1 <= 1.0 / val + 1e-9, "the device's top-1 differs from the CPU's by more than one sample"
if c:   # the CPU's evaluations of the same run at 16x16
    print(f"{what}, the CPU's evaluations at 16x16: {[(e, s, round(l, 6), t) for e, s, l, t in c]}")
    near16 = [x for x, y in zip(a, c) if abs(x[2] - y[2]) <= tol * abs(y[2])]
    assert not near16, f"the device's evaluations at 24x24 are those at 16x16: {near16} vs {c}"
PY
}
compare emu cpu 1e-4 cpu16 "FP32, mixed floats"
compare bf16 cpu_plain 5e-2 "" "BF16 channels-last, bytes"
grep -q '"event": *"eval_ema"' "$out/emu.run/metrics.jsonl" || { echo "FAIL: no EMA evaluation"; status=1; }
# a training op named eval_<another op's name>: the eval schedule's launchers take another
# prefix, so none is defined twice at link time (emitted only: the names are what matters);
# with a dropout, whose evaluation is the identity
sed -e 's/name: "bn1"/name: "eval_stem_bn"/' -e 's/^  gap /  dropout { name: "drop" p: 0.3 }\n  gap /' "$out/fp32.spec" > "$out/clash.spec"
"$BUILD/trainc" build "$out/clash.spec" --backend cuda --emit-only --emit-dir "$out/clash" > "$out/clash.log" 2>&1 ||
  { echo "FAIL: the spec with an op named eval_stem_bn"; cat "$out/clash.log"; status=1; }
twice=$(cat "$out/clash/kernels.h" "$out/clash/kernels_eval.h" | grep -o 'fused_[A-Za-z0-9_]*' | sort | uniq -d)
[ -z "$twice" ] && grep -q "fused_eval2_stem_bn_apply" "$out/clash/kernels_eval.h" ||
  { echo "FAIL: launchers named in both kernels.h and kernels_eval.h: $twice"; status=1; }
# the evaluation's files are its forward alone: no backward launcher, gradient or training branch
grep -q 'fused_drop_backward' "$out/clash/kernels.h" && ! grep -n '_backward\|_mask' "$out/clash/kernels_eval.h" &&
  ! grep -n 'ctx->training\|_dweight\|_dbias\|_dout' "$out/clash/model_eval.c" "$out/cpu.src/model_eval.c" ||
  { echo "FAIL: the evaluation's model_eval.c or kernels_eval.h names backward or training code (above)"; status=1; }
[ $status = 0 ] && echo "train 16x16 / eval 24x24 on the emulated CUDA backend: ok"
exit $status
