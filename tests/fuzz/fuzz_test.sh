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
opts=(-timeout=25 -rss_limit_mb=4096 -malloc_limit_mb=4096 -artifact_prefix="$work/artifacts/")

regs=("$root"/tests/fuzz/regressions/*)
if [ -e "${regs[0]}" ]; then
  echo "replaying ${#regs[@]} regression input(s)"
  "$fuzz" "${opts[@]}" "${regs[@]}" || { echo "FAIL: a regression input crashes again"; exit 1; }
fi

echo "fuzzing for ${seconds}s"
"$fuzz" "${opts[@]}" -dict="$root/tests/fuzz/spec.dict" -max_total_time="$seconds" \
  -print_final_stats=1 "$work/corpus" "$work/seeds" 2>"$work/fuzz.log"
rc=$?
grep -aE '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log"
if [ "$rc" -ne 0 ] || grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/fuzz.log"; then
  echo "FAIL: fuzzer exit code $rc; report:"
  grep -aE -A30 'ERROR:|runtime error:' "$work/fuzz.log" | head -60
  ls -1 "$work/artifacts" | tail -5
  exit 1
fi
echo "no crash, leak or sanitizer report"
