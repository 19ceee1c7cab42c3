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
source tests/caffe/source_promises.sh

spec "$tmp/r1.spec" 32 1 2
spec "$tmp/r2.spec" 16 2 2
"$tmp/r1" --out "$tmp/r1.run" >"$tmp/r1.log" 2>&1 || { fail "1 rank:"; tail -3 "$tmp/r1.log"; }
same_on_two_ranks "$tmp" 30

# resume: 1 epoch, then the rest from its checkpoint, against the 2 epochs of r1 straight
exact_resume "$tmp" 1

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "lmdb source: the same batches on 1 and 2 ranks, exact resume"
