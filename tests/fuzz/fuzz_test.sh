#!/usr/bin/env bash
# Fuzzes parse/resolve/sema, FUZZ_RUNS inputs (default 10000) from a fixed seed (FUZZ_SEED),
# from the kept corpus (tests/fuzz/corpus/spec) and the repo's specs, after replaying every
# reproducer in tests/fuzz/regressions/; deterministic (tests/fuzz/fuzz_lib.sh).
# Fails on any crash, leak, timeout or sanitizer report; a new crashing input is left in
# $BUILD/fuzz/artifacts/ (copy it into tests/fuzz/regressions/ once fixed).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
root=$PWD
fuzz=$root/$BUILD/fuzz/fuzz_spec
[ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz)" >&2; exit 1; }
runs=${FUZZ_RUNS:-10000}
work=$root/$BUILD/fuzz
mkdir -p "$work/cwd"
bash tests/fuzz/make_corpus.sh "$work/seeds" || exit 1

# Inputs may `include` paths relative to the working directory: give them an empty one.
cd "$work/cwd" || exit 1
. "$root/tests/fuzz/fuzz_lib.sh"
fuzz_run "$fuzz" "$work" "$root/tests/fuzz/spec.dict" "$runs" "$root/tests/fuzz/regressions" \
  "$work/corpus" "$root/tests/fuzz/corpus/spec" "$work/seeds"
