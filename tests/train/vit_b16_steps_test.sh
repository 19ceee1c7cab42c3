#!/usr/bin/env bash
# specs/models/vit_b_16.spec (torchvision's ViT-B/16, every width and all 12 layers) trains on
# the CPU at a small image size: 32x32 (4 patches and the class token) on synthetic data,
# 3 AdamW steps with the recipe's gradient clipping. Its zeroed head (torchvision's init) makes
# the first loss exactly ln(10); every loss must be finite, and the evaluation must run. And
# Swin-T trains two steps on the CPU at 224 and its CUDA trainer's sources are emitted.
set -u
source tests/lib.sh
need_trainc
out=$BUILD/test-vit-b16
fresh_dir "$out"
cat > "$out/vit32.spec" <<SPEC
extends: "$PWD/specs/models/vit_b_16.spec"
vars { image: 32 classes: 10 }
data { train { source: "synthetic" samples: 6 batch_per_rank: 2 } val { source: "synthetic" batch_per_rank: 2 } val_samples: 2 }
solver { epochs: 1 adamw { weight_decay: 0.3 } lr { base: 0.0001 } clip_grad_norm: 1 log_every: 1 }
SPEC
"$TRAINC" build "$out/vit32.spec" -o "$out/net" > "$out/build.log" 2>&1 || { cat "$out/build.log"; die "trainc build"; }
"$out/net" --out "$out/run" > "$out/run.log" 2>&1 || { tail -20 "$out/run.log"; die "the run"; }
"$PY" - "$out/run/metrics.jsonl" <<'PY' || exit 1
import json, math, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
train = [r for r in recs if r.get("event") == "train"]
start = [r for r in recs if r.get("event") == "start"][0]
evals = [r for r in recs if r.get("event") == "eval"]
# 86567656 at 224: the position embedding has 5 tokens here, not 197
want = 86567656 - 768 * 197 + 768 * 5 - 769 * 1000 + 769 * 10
assert start["params"] == want, "params %d, want %d" % (start["params"], want)
assert len(train) == 3, "%d train records, want 3" % len(train)
assert abs(train[0]["loss"] - math.log(10)) < 1e-5, "first loss %r, want ln 10 (zeroed head)" % train[0]["loss"]
assert all(math.isfinite(r["loss"]) for r in train), [r["loss"] for r in train]
assert evals and math.isfinite(evals[-1]["loss"]), "no finite evaluation"
print("ViT-B/16 at 32x32: %d params, losses %s, eval loss %.4f" % (start["params"],
      " ".join("%.5f" % r["loss"] for r in train), evals[-1]["loss"]))
PY
# Swin-T (specs/models/swin_t.spec, at 224: its windows need it) trains two steps on the CPU;
cat > "$out/swin.spec" <<SPEC
extends: "$PWD/specs/models/swin_t.spec"
net { classes: 10 linear { name: "head" out: 10 } }
data { train { source: "synthetic" samples: 2 batch_per_rank: 1 } val { source: "synthetic" batch_per_rank: 1 } val_samples: 1 }
solver { epochs: 1 adamw { weight_decay: 0.05 } lr { base: 0.0001 } clip_grad_norm: 5 log_every: 1 }
SPEC
"$TRAINC" build "$out/swin.spec" -o "$out/swin" > "$out/swin.build.log" 2>&1 || { cat "$out/swin.build.log"; die "Swin-T: trainc build"; }
"$out/swin" --out "$out/swin.run" > "$out/swin.log" 2>&1 || { tail -20 "$out/swin.log"; die "Swin-T: the run"; }
"$PY" - "$out/swin.run/metrics.jsonl" <<'PY' || exit 1
import json, math, sys
train = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
assert len(train) == 2 and all(math.isfinite(r["loss"]) for r in train), train
print("Swin-T at 224 on the CPU: losses %s" % " ".join("%.5f" % r["loss"] for r in train))
PY
# its windowed attention runs on CUDA too (window_attention.cu; emitted here, compiled by
# tests/cuda/cuda_build_test.sh, run against the CPU by tests/emu/swin_emu_test.sh)
"$TRAINC" build "$out/swin.spec" -o "$out/swin_cuda" --backend cuda --emit-only > "$out/swin.cuda.log" 2>&1 ||
  { cat "$out/swin.cuda.log"; die "Swin-T: trainc build --backend cuda --emit-only"; }
n=$(grep -c 'cuda_window_attention_backward(' "$out/swin_cuda.src/model.c")
[ "$n" = 12 ] || die "Swin-T --backend cuda: $n windowed attention backward calls in model.c, want 12"
echo "Swin-T: trainc build --backend cuda emits its 12 windowed attention layers"
