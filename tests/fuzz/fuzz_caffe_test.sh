#!/usr/bin/env bash
# Fuzzes `trainc import caffe` (tests/fuzz/fuzz_caffe.c) for FUZZ_CAFFE_SECONDS (default 20)
# from the prototxts of tests/caffe (nets, solvers, each net with its solver, the accepted and error
# cases), after replaying tests/fuzz/regressions_caffe/. Fails on any crash, leak, timeout or
# sanitizer report; a crashing input is left in $BUILD/fuzz_caffe/artifacts/.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
root=$PWD
fuzz=$root/$BUILD/fuzz/fuzz_caffe
[ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz-caffe)" >&2; exit 1; }
seconds=${FUZZ_CAFFE_SECONDS:-20}
work=$root/$BUILD/fuzz_caffe
rm -rf "$work/seeds"; mkdir -p "$work/corpus" "$work/seeds"
i=0
for f in tests/caffe/*.prototxt tests/caffe/errors/*.prototxt tests/caffe/accepted/*.prototxt; do
  i=$((i + 1)); cp "$f" "$work/seeds/$i-$(basename "$f")"
done
for net in lenet alexnet resnet; do
  i=$((i + 1)); { cat tests/caffe/$net.prototxt; echo '---'; cat tests/caffe/${net}_solver.prototxt; } >"$work/seeds/$i-$net-with-solver"
done
. "$root/tests/fuzz/fuzz_lib.sh"
fuzz_run "$fuzz" "$work" "$root/tests/fuzz/caffe.dict" "$seconds" "$root/tests/fuzz/regressions_caffe" \
  "$work/corpus" "$work/seeds"
