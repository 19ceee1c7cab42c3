#!/usr/bin/env bash
# Run identity and run length in iterations. A spec measured in iterations (120 steps, an
# evaluation and a checkpoint every 50) stops, evaluates and checkpoints at those steps; a spec
# that differs only in its descriptive fields (name, description, reference) has the same
# training hash, so it resumes the first one's checkpoint and ends with the same parameters,
# while its text hash, recorded in metrics.jsonl, differs.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/run_identity
rm -rf "$dir" && mkdir -p "$dir"
sed -e 's/^  epochs: 1$/  iterations: 120\n  eval_every_iterations: 50\n  log_every: 10\n  checkpoint { every_iterations: 50 }/' \
  specs/examples/fmnist_mlp.spec > "$dir/a.spec"
grep -q "iterations: 120" "$dir/a.spec" || { echo "could not derive the iterations spec" >&2; exit 1; }
sed -e 's/^name: .*/name: "mlp-renamed"/' -e 's/^description: .*/description: "edited"/' "$dir/a.spec" > "$dir/b.spec"
printf 'reference { source: "a paper" top1: 0.8 gpus: 1 time: "2s" notes: "edited" }\n' >> "$dir/b.spec"

hash_of() { "$BUILD/trainc" show "$1" | sed -n "s/^$2 hash sha256:\([0-9a-f]*\).*/\1/p"; }
[ "$(hash_of "$dir/a.spec" spec)" = "$(hash_of "$dir/b.spec" spec)" ] || { echo "training hashes differ" >&2; exit 1; }
[ "$(hash_of "$dir/a.spec" text)" != "$(hash_of "$dir/b.spec" text)" ] || { echo "text hashes are equal" >&2; exit 1; }

"$BUILD/trainc" build "$dir/a.spec" -o "$dir/a" >/dev/null
"$BUILD/trainc" build "$dir/b.spec" -o "$dir/b" >/dev/null
"$dir/a" --out "$dir/run-a" > /dev/null
ls "$dir/run-a/checkpoints" | tr '\n' ' ' > "$dir/ckpts.txt"
[ "$(cat "$dir/ckpts.txt")" = "ckpt-000000000050.bin ckpt-000000000100.bin ckpt-000000000120.bin " ] ||
  { echo "checkpoints at the wrong steps: $(cat "$dir/ckpts.txt")" >&2; exit 1; }
"$dir/b" --out "$dir/run-b" --resume "$dir/run-a/checkpoints/ckpt-000000000050.bin" > "$dir/resume.txt"

"$PY" - "$dir/run-a/metrics.jsonl" "$dir/run-b/metrics.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
def one(recs, event): return [r for r in recs if r["event"] == event]
evals = [r["step"] for r in one(a, "eval")]
print("evaluations at steps", evals, "| params", one(a, "summary")[0]["params_hash"], one(b, "summary")[0]["params_hash"])
assert evals == [50, 100, 120], evals
sa, sb = one(a, "start")[0], one(b, "start")[0]
assert sb["resumed_at"] == 50, sb
assert sa["spec_hash"] == sb["spec_hash"], "training hash differs"
assert sa["spec_text_hash"] != sb["spec_text_hash"], "text hash not recorded apart"
assert one(a, "summary")[0]["params_hash"] == one(b, "summary")[0]["params_hash"], "the resumed run ended elsewhere"
assert [r["top1"] for r in one(b, "eval")] == [r["top1"] for r in one(a, "eval")][1:], "evaluations differ"
PY
