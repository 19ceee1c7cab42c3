#!/usr/bin/env bash
# The checkpoint reader, the IDX reader, the image decoder and the torch.save reader fuzzed from
# their kept corpora (tests/fuzz/corpus/{ckpt,idx,jpeg,pt}, every input replayed first) after their regression
# inputs (tests/fuzz/regressions_<target>/), a fixed number of runs each from a fixed seed
# (FUZZ_TARGET_RUNS, FUZZ_SEED): deterministic (tests/fuzz/fuzz_lib.sh). Fails on any crash,
# leak, timeout or sanitizer report. The spec front end and the Caffe importer have
# fuzz_test.sh and fuzz_caffe_test.sh; `make fuzz-long` explores and grows the corpora.
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
work=$root/$BUILD/fuzz/targets
rm -rf "$work" && mkdir -p "$work"
. "$root/tests/fuzz/fuzz_lib.sh"
fail=0
for t in ckpt idx jpeg pt; do
  fuzz=$root/$BUILD/fuzz/fuzz_$t
  [ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz)" >&2; exit 1; }
  echo "== $t: $(ls "tests/fuzz/corpus/$t" | wc -l) kept inputs"
  fuzz_run "$fuzz" "$work/$t" "" "${FUZZ_TARGET_RUNS:-8000}" "$root/tests/fuzz/regressions_$t" \
    "$work/$t/new" "$root/tests/fuzz/corpus/$t" -max_len=2048 || fail=1
done
exit $fail
