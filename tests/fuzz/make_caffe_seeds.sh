#!/usr/bin/env bash
# Builds the Caffe importer fuzzer's seeds in DIR from the prototxts of tests/caffe (nets,
# solvers, the accepted and error cases, and each example net followed by "---" and its solver). A build
# product, never committed (tests/fuzz/corpus/caffe keeps what the fuzzer added to them).
set -eu
cd "$(dirname "$0")/../.."
dir=$1
rm -rf "$dir"; mkdir -p "$dir"
i=0
for f in tests/caffe/*.prototxt tests/caffe/errors/*.prototxt tests/caffe/accepted/*.prototxt; do
  i=$((i + 1)); cp "$f" "$dir/$i-$(basename "$f")"
done
for net in lenet alexnet resnet; do
  i=$((i + 1)); { cat tests/caffe/$net.prototxt; echo '---'; cat tests/caffe/${net}_solver.prototxt; } >"$dir/$i-$net-with-solver"
done
