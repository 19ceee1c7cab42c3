#!/usr/bin/env bash
# Exact resume: a run interrupted by SIGTERM at an arbitrary moment and resumed from its
# checkpoint must end with the same params_hash and the same eval metrics as an
# uninterrupted run. Also: a checkpoint from another spec is refused naming both hashes.
set -eu
source tests/lib.sh
dir=$BUILD/test-train/resume
rm -rf "$dir" && mkdir -p "$dir"
"$BUILD/trainc" build specs/examples/fmnist_mlp.spec -o "$dir/mlp" >/dev/null

"$dir/mlp" --epochs 2 --out "$dir/full" > /dev/null

"$dir/mlp" --epochs 2 --out "$dir/cut" > "$dir/cut.txt" &
pid=$!
# Interrupt somewhere after the third log record: an arbitrary step inside epoch 1.
for _ in $(seq 600); do
  records=$(grep -c '"train"' "$dir/cut/metrics.jsonl" 2>/dev/null || true)
  [ "${records:-0}" -ge 3 ] && break   # no file yet: no records
  sleep 0.05
done
# Every thread of the trainer but one, the listener, blocks SIGTERM, SIGINT and SIGHUP: a
# signal's frame written on a thread inside oneDNN's sgemm, which runs with its stack pointer in
# a heap buffer, corrupted the heap (runtime/core/signals.c).
takers=0
for status_file in /proc/$pid/task/*/status; do
  blocked=$(awk '/^SigBlk/ { print $2 }' "$status_file" 2>/dev/null || true)
  [ -n "$blocked" ] && (( (0x$blocked & 0x4003) != 0x4003 )) && takers=$((takers + 1))
done
[ "$takers" -eq 1 ] || { echo "expected one thread of the trainer to take stop signals, found $takers" >&2; exit 1; }
kill -TERM $pid
status=0; wait $pid || status=$?
if [ "$status" -eq 0 ]; then echo "run finished before the signal; nothing interrupted" >&2; exit 1; fi
[ "$status" -eq 143 ] || { echo "expected exit 143 after SIGTERM, got $status" >&2; cat "$dir/cut.txt"; exit 1; }
ckpt=$(ls "$dir/cut/checkpoints"/ckpt-*.bin | tail -n 1)
echo "interrupted at $(basename "$ckpt")"
"$dir/mlp" --epochs 2 --out "$dir/cut" --resume "$ckpt" > /dev/null

"$PY" - "$dir/full/metrics.jsonl" "$dir/cut/metrics.jsonl" <<'PY'
import json, sys
def load(p):
    recs = [json.loads(l) for l in open(p)]
    evals = [(r["step"], r["loss"], r["top1"], r["top5"]) for r in recs if r["event"] == "eval"]
    train = [(r["step"], r["loss"], r["lr"]) for r in recs if r["event"] == "train"]
    return [r for r in recs if r["event"] == "summary"][-1]["params_hash"], evals, train
a, b = load(sys.argv[1]), load(sys.argv[2])
print("params_hash", a[0], b[0])
assert a[0] == b[0], "params_hash differs after resume"
assert a[1] == b[1], f"eval metrics differ: {a[1]} vs {b[1]}"
assert a[2] == b[2], "train records differ"
PY

# A checkpoint of a different spec must be refused with both hashes named.
sed 's/out: 128/out: 96/' specs/examples/fmnist_mlp.spec > "$dir/other.spec"
"$BUILD/trainc" build "$dir/other.spec" -o "$dir/other" >/dev/null
if "$dir/other" --out "$dir/other-run" --resume "$ckpt" 2> "$dir/foreign.txt"; then
  echo "foreign checkpoint was accepted" >&2; exit 1
fi
grep -q "spec" "$dir/foreign.txt" && cat "$dir/foreign.txt"
