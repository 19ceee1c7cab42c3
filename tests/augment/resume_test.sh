#!/usr/bin/env bash
# A trainer with every recipe feature of the data path on (mixup + cutmix, random erasing,
# TrivialAugment, repeated augmentation, BCE on the mixed targets) resumes exactly: a run of 2
# epochs and a run resumed from its own checkpoint after epoch 1 end with the same params_hash
# and the same per-step losses; and 2 MPI ranks of 8 samples take the steps of 1 rank of 16
# (the batches are the same; only the gradient sum's rounding differs: losses within 1e-6).
# (Bit-exact batches per rank count and decode threads: reference_test.py and policy_test.py.)
set -eu
source tests/lib.sh
dir=$BUILD/test-augment-resume
rm -rf "$dir" && mkdir -p "$dir"
cat > "$dir/recipe.spec" <<SPEC
extends: "$(pwd)/specs/examples/fmnist_mlp.spec"
data { train { batch_per_rank: 16 repeated_augment: 2
               augment { mixup_alpha: 0.2 cutmix_alpha: 1.0 random_erasing { p: 0.5 random: true } trivial_augment: true } }
       val { batch_per_rank: 50 } }
solver { epochs: 2 log_every: 1 loss { kind: BCE label_smoothing: 0.1 } }
SPEC
"$BUILD/trainc" build "$dir/recipe.spec" -o "$dir/recipe" > /dev/null
"$PY" tests/train/make_idx.py /usr/share/datasets/fashion-mnist "$dir/data" 320 100
export OMP_NUM_THREADS=1
"$dir/recipe" --data "$dir/data/good" --out "$dir/full" > "$dir/full.log"
ckpt=$(ls "$dir/full/checkpoints"/ckpt-*.bin | head -n 1)
echo "resuming from $(basename "$ckpt")"
"$dir/recipe" --data "$dir/data/good" --out "$dir/resumed" --resume "$ckpt" > "$dir/resumed.log"
"$PY" - "$dir/full/metrics.jsonl" "$dir/resumed/metrics.jsonl" <<'PY'
import json, sys
def load(p):
    recs = [json.loads(l) for l in open(p)]
    train = {r["step"]: r["loss"] for r in recs if r["event"] == "train"}
    return [r for r in recs if r["event"] == "summary"][-1]["params_hash"], train
(ha, ta), (hb, tb) = load(sys.argv[1]), load(sys.argv[2])
later = sorted(s for s in tb if s in ta)
print("params_hash", ha, hb, "over", len(later), "resumed steps")
assert later and all(ta[s] == tb[s] for s in later), f"losses differ after resume: {[(s, ta[s], tb[s]) for s in later][:3]}"
assert ha == hb, "params_hash differs after resume"
PY

sed -e 's/batch_per_rank: 16/batch_per_rank: 8/' -e 's/^solver {/parallel { ranks: 2 }\nsolver {/' "$dir/recipe.spec" > "$dir/recipe2.spec"
"$BUILD/trainc" build "$dir/recipe2.spec" -o "$dir/recipe2" > /dev/null
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe \
  "$dir/recipe2" --data "$dir/data/good" --out "$dir/two-ranks" > "$dir/two-ranks.log" 2>&1 ||
  { echo "FAIL: the 2-rank run:"; tail -5 "$dir/two-ranks.log"; exit 1; }
"$PY" - "$dir/full/metrics.jsonl" "$dir/two-ranks/metrics.jsonl" <<'PY'
import json, sys
def losses(p):
    return {r["step"]: r["loss"] for r in map(json.loads, open(p)) if r["event"] == "train"}
a, b = losses(sys.argv[1]), losses(sys.argv[2])
worst = max((abs(a[s] - b[s]) / abs(a[s]), s) for s in a)
print(f"2 ranks vs 1: {len(a)} steps, largest relative loss difference {worst[0]:.2g} at step {worst[1]}")
assert set(a) == set(b) and worst[0] < 1e-6, f"step {worst[1]}: {a[worst[1]]} vs {b[worst[1]]}"
PY
