#!/usr/bin/env bash
# Caffe's LeNet (tests/caffe/lenet.prototxt, unchanged) with lenet_solver.prototxt (3 epochs
# of Fashion-MNIST at batch 64, poly policy; its comment says what else was tried), imported
# (--approximate only for the solver's momentum form; lr_mult maps exactly), given
# Fashion-MNIST read from its IDX files (source "idx": the 60,000 training and all 10,000
# test images) in a spec that extends the import, built and trained on the CPU; passes at
# >= 90% test top-1. Also `make test-caffe-train`.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
TRAINC=$PWD/$BUILD/trainc
DATA=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -x "$TRAINC" ] || { echo "missing $TRAINC (run make)" >&2; exit 1; }
[ -f "$DATA/train-images-idx3-ubyte.gz" ] || [ -f "$DATA/train-images-idx3-ubyte" ] \
  || { echo "FAIL: no Fashion-MNIST IDX files in $DATA (set FMNIST_DIR)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$TRAINC" import caffe --approximate tests/caffe/lenet.prototxt tests/caffe/lenet_solver.prototxt \
  -o "$tmp/lenet.spec" || { echo "FAIL: import (solver.iterations is needed for the solver)"; exit 1; }
cat >"$tmp/lenet_fmnist.spec" <<SPEC
# The imported LeNet on Fashion-MNIST read from its IDX files: all 60,000 training images,
# evaluated on all 10,000 test images.
extends: "lenet.spec"
data {
  train_samples: 60000
  val_samples: 10000
  train { source: "idx" path: "$DATA" }
  val { source: "idx" path: "$DATA" batch_per_rank: 1000 }
}
SPEC
"$TRAINC" build "$tmp/lenet_fmnist.spec" -o "$tmp/lenet" || { echo "FAIL: build"; exit 1; }
echo "Fashion-MNIST from the IDX files in $DATA: 60,000 training images, 10,000 test images"
"$tmp/lenet" --out "$tmp/run" > "$tmp/log" || { echo "FAIL: the trainer exited $?"; tail -5 "$tmp/log"; exit 1; }
grep -E 'test loss|^final' "$tmp/log"
top1=$(sed -nE 's/^final: test top-1 ([0-9.]+)%.*/\1/p' "$tmp/log")
[ -n "$top1" ] || { echo "FAIL: no final accuracy in the log"; tail -5 "$tmp/log"; exit 1; }
if awk -v a="$top1" 'BEGIN { exit !(a >= 90.0) }'; then
  echo "imported Caffe LeNet: $top1% test top-1 on Fashion-MNIST's 10,000 test images (>= 90%)"
else
  echo "FAIL: imported Caffe LeNet reached $top1% test top-1, below 90%"; exit 1
fi
