#!/usr/bin/env bash
# Fuzzes `trainc import caffe` (tests/fuzz/fuzz_caffe.c), FUZZ_CAFFE_RUNS inputs (default
# 3000) from a fixed seed (FUZZ_SEED), from the kept corpus (tests/fuzz/corpus/caffe) and the
# prototxts of tests/caffe (nets, solvers, each net with its solver, the accepted and error cases), after
# replaying tests/fuzz/regressions_caffe/; deterministic (tests/fuzz/fuzz_lib.sh). Fails on any crash, leak, timeout or
# sanitizer report; a crashing input is left in $BUILD/fuzz_caffe/artifacts/.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
fuzz=$root/$BUILD/fuzz/fuzz_caffe
[ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz-caffe)" >&2; exit 1; }
runs=${FUZZ_CAFFE_RUNS:-3000}
work=$root/$BUILD/fuzz_caffe
bash tests/fuzz/make_caffe_seeds.sh "$work/seeds" || exit 1
. "$root/tests/fuzz/fuzz_lib.sh"
kept=$(ls -d "$root/tests/fuzz/corpus/caffe" 2>/dev/null)   # once make fuzz-long has grown one
fuzz_run "$fuzz" "$work" "$root/tests/fuzz/caffe.dict" "$runs" "$root/tests/fuzz/regressions_caffe" \
  "$work/corpus" $kept "$work/seeds"
