#!/usr/bin/env bash
# Fuzzes `trainc import caffe` (tests/fuzz/fuzz_caffe.c) for FUZZ_CAFFE_SECONDS (default 20)
# from the prototxts of tests/caffe (nets, solvers, each net with its solver, the error
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
mkdir -p "$work/corpus"
bash tests/fuzz/make_caffe_seeds.sh "$work/seeds" || exit 1
. "$root/tests/fuzz/fuzz_lib.sh"
fuzz_run "$fuzz" "$work" "$root/tests/fuzz/caffe.dict" "$seconds" "$root/tests/fuzz/regressions_caffe" \
  "$work/corpus" "$work/seeds"
