#!/usr/bin/env bash
# The small ViT example (specs/examples/fmnist_vit.spec, `make train-vit` trains it to 88%)
# as written, shortened only in length: 40 AdamW steps on real Fashion-MNIST (a 5-step warmup
# instead of its 1-epoch one, so the LR reaches its peak), then an evaluation on 2000 test
# images. The training loss must fall by a fifth and test top-1 must pass 30% (chance is 10%;
# the class token sees the patches only through attention): the patch
# embedding, class token, position embedding, attention and head all learning.
set -u
source tests/lib.sh
need_trainc
out=$BUILD/test-train/vit-smoke
fresh_dir "$out"
# The length fields are alternatives, so the copy's are rewritten rather than extended.
sed -e 's/^  epochs: [0-9]*$/  iterations: 40/' -e 's/warmup { epochs: 1 }/warmup { iterations: 5 }/' \
    -e 's/^  log_every: [0-9]*$/  log_every: 5/' -e 's/^  val {$/  val_samples: 2000\n  val {/' \
    specs/examples/fmnist_vit.spec > "$out/vit.spec"
grep -q 'iterations: 40' "$out/vit.spec" && grep -q 'warmup { iterations: 5 }' "$out/vit.spec" ||
  die "specs/examples/fmnist_vit.spec no longer has the epochs and warmup lines this test shortens"
"$TRAINC" build "$out/vit.spec" -o "$out/vit" > "$out/build.log" 2>&1 || { cat "$out/build.log"; die "trainc build"; }
OMP_NUM_THREADS=2 "$out/vit" --out "$out/run" > "$out/run.log" 2>&1 || { tail -20 "$out/run.log"; die "the run"; }
"$PY" - "$out/run/metrics.jsonl" <<'PY'
import json, math, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
train = [r for r in recs if r["event"] == "train"]
evals = [r for r in recs if r["event"] == "eval"]
assert len(train) == 8 and all(math.isfinite(r["loss"]) for r in train), [r["loss"] for r in train]
first, last = train[0]["loss"], train[-1]["loss"]
assert evals, "no evaluation"
top1 = evals[-1]["top1"]
print("small ViT, 40 steps: loss %.4f -> %.4f, test top-1 %.2f%% on 2000 images" % (first, last, 100 * top1))
assert last < 0.8 * first, "the training loss did not fall by a fifth"
assert top1 > 0.30, "test top-1 below 30% after 40 steps"
PY
