#!/usr/bin/env bash
# Compiles the tiny MLP example and trains it for one epoch on real Fashion-MNIST: the
# training loss must fall and test top-1 must pass 80%; metrics.jsonl must be complete.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/short
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build specs/examples/fmnist_mlp.spec -o "$dir/mlp" >/dev/null
"$dir/mlp" --out "$dir/run" > "$dir/stdout.txt"
"$PY" - "$dir/run/metrics.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
train = [r for r in recs if r["event"] == "train"]
evals = [r for r in recs if r["event"] == "eval"]
summary = [r for r in recs if r["event"] == "summary"]
assert len(train) >= 5, f"expected periodic train records, got {len(train)}"
first, last = train[0]["loss"], train[-1]["loss"]
print(f"loss {first:.4f} -> {last:.4f}; test top-1 {evals[-1]['top1']:.4f}")
assert last < 0.8 * first, "training loss did not fall"
assert evals and evals[-1]["top1"] > 0.80, "test top-1 below the 80% bar after one epoch"
assert summary and len(summary[0]["params_hash"]) == 16, "summary with params_hash missing"
for r in train:
    for k in ("epoch", "step", "lr", "loss", "images_per_s"):
        assert k in r, f"train record lacks {k}"
PY
