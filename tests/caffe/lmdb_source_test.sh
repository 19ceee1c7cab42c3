#!/usr/bin/env bash
# The LMDB source keeps the promises of the other sources: on 512 Fashion-MNIST images in
# Caffe's LMDBs (write_mnist_lmdb.py) with flips, (1) the same global batch of 32 on 1 and 2
# ranks trains to the same per-step losses (within 1e-5 relative), and (2) a run stopped after
# epoch 1 and resumed from its checkpoint ends at the params_hash of the run that never
# stopped. Both follow from the loader, which reads the LMDB's records like IDX files: order and
# flips depend on (seed, epoch, position) alone.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
TRAINC=$root/$BUILD/trainc
DATA=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -x "$TRAINC" ] || { echo "missing $TRAINC (run make)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$PY" tests/caffe/write_mnist_lmdb.py "$DATA" "$tmp" --small 512 >/dev/null || { echo "FAIL: writing the LMDBs"; exit 1; }
spec() {  # file, batch_per_rank, ranks, epochs
  cat >"$1" <<SPEC
name: "lmdb_promises"
net {
  input_shape: [1, 28, 28]
  conv { name: "c1" out: 4 kernel: 5 stride: 2 }
  relu {}
  flatten {}
  linear { name: "fc" out: 10 }
}
data {
  train_samples: 512
  train { source: "lmdb" path: "$tmp/mnist_train_lmdb" batch_per_rank: $2 augment { flip: true }
          normalize { mean_value: [0] scale: 0.00390625 } }
  val { source: "lmdb" path: "$tmp/mnist_test_lmdb" batch_per_rank: 64 }
}
solver { epochs: $4 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.05 schedule { inv { gamma: 0.01 power: 0.75 } } } }
parallel { ranks: $3 }
SPEC
  "$TRAINC" build "$1" -o "${1%.spec}" >/dev/null 2>"$1.err" || { fail "build $1:"; cat "$1.err"; }
}
losses() { "$PY" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["event"] == "train": print(r["step"], repr(r["loss"]))' "$1"; }
hash_of() { "$PY" -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]["params_hash"])' "$1"; }

spec "$tmp/r1.spec" 32 1 2
spec "$tmp/r2.spec" 16 2 2
"$tmp/r1" --out "$tmp/r1.run" >"$tmp/r1.log" 2>&1 || { fail "1 rank:"; tail -3 "$tmp/r1.log"; }
if command -v mpirun >/dev/null; then
  mpirun --oversubscribe --bind-to none -np 2 "$tmp/r2" --out "$tmp/r2.run" >"$tmp/r2.log" 2>&1 || { fail "2 ranks:"; tail -3 "$tmp/r2.log"; }
  losses "$tmp/r1.run/metrics.jsonl" >"$tmp/l1"; losses "$tmp/r2.run/metrics.jsonl" >"$tmp/l2"
  r=$("$PY" - "$tmp/l1" "$tmp/l2" <<'PY'
import sys
a = [tuple(l.split()) for l in open(sys.argv[1])]
b = [tuple(l.split()) for l in open(sys.argv[2])]
if len(a) < 30 or [s for s, _ in a] != [s for s, _ in b]:
    sys.exit(f"steps differ: {len(a)} vs {len(b)}")
worst = max(abs(float(x) - float(y)) / abs(float(x)) for (_, x), (_, y) in zip(a, b))
print(f"{len(a)} steps, largest relative loss difference {worst:.2g}")
sys.exit(worst > 1e-5)
PY
  ) && echo "1 vs 2 ranks: $r" || fail "1 vs 2 ranks: $r"
else
  echo "SKIP: 1 vs 2 ranks (no mpirun)"
fi

# resume: 1 epoch, then the rest from its checkpoint, against the 2 epochs of r1 straight
"$tmp/r1" --out "$tmp/first.run" --epochs 1 >"$tmp/first.log" 2>&1 || { fail "the first epoch:"; tail -3 "$tmp/first.log"; }
ckpt=$(ls "$tmp/first.run/checkpoints/"ckpt-*.bin 2>/dev/null | tail -1)
[ -n "$ckpt" ] && "$tmp/r1" --out "$tmp/rest.run" --resume "$ckpt" >"$tmp/rest.log" 2>&1 || { fail "resume from ${ckpt:-no checkpoint}:"; tail -3 "$tmp/rest.log"; }
a=$(hash_of "$tmp/r1.run/metrics.jsonl" 2>/dev/null); b=$(hash_of "$tmp/rest.run/metrics.jsonl" 2>/dev/null)
[ -n "$a" ] && [ "$a" = "$b" ] && echo "stopped after epoch 1 and resumed: params $b, as the run that never stopped" \
  || fail "resume: params ${b:-none}, the straight run ${a:-none}"

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "lmdb source: the same batches on 1 and 2 ranks, exact resume"
