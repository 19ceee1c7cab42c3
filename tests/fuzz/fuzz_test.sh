#!/usr/bin/env bash
# Fuzzes parse/resolve/sema for a bounded time (FUZZ_SECONDS, default 60) with a seed corpus
# made of the repo's specs, after replaying every reproducer in tests/fuzz/regressions/.
# Fails on any crash, leak, timeout or sanitizer report; a new crashing input is left in
# $BUILD/fuzz/artifacts/ (copy it into tests/fuzz/regressions/ once fixed).
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
root=$PWD
fuzz=$root/$BUILD/fuzz/fuzz_spec
[ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz)" >&2; exit 1; }
seconds=${FUZZ_SECONDS:-60}
work=$root/$BUILD/fuzz
mkdir -p "$work/corpus" "$work/artifacts" "$work/cwd"
bash tests/fuzz/make_corpus.sh "$work/seeds" || exit 1

# Inputs may `include` paths relative to the working directory: give them an empty one.
cd "$work/cwd" || exit 1
. "$root/tests/fuzz/fuzz_lib.sh"
fuzz_run "$fuzz" "$work" "$root/tests/fuzz/spec.dict" "$seconds" "$root/tests/fuzz/regressions" \
  "$work/corpus" "$work/seeds"
