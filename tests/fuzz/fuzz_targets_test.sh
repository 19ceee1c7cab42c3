#!/usr/bin/env bash
# The kept fuzz corpora (tests/fuzz/corpus/{spec,ckpt,idx}) replayed through their targets,
# then a short fuzz (FUZZ_SECONDS each, default 6) of the checkpoint and IDX readers. Fails
# on any crash, leak, timeout or sanitizer report. `make fuzz-long` runs them for longer and
# grows the corpora.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
root=$PWD
seconds=${FUZZ_SECONDS:-6}
work=$root/$BUILD/fuzz/targets
rm -rf "$work" && mkdir -p "$work/artifacts" "$work/cwd"
cd "$work/cwd" || exit 1
fail=0
for t in spec ckpt idx; do
  fuzz=$root/$BUILD/fuzz/fuzz_$t
  [ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz)" >&2; exit 1; }
  opts=(-timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$work/artifacts/$t-")
  corpus=$root/tests/fuzz/corpus/$t
  [ -d "$corpus" ] || continue
  n=$(ls "$corpus" | wc -l)
  if ! "$fuzz" "${opts[@]}" -runs=0 "$corpus" > "$work/$t.replay.log" 2>&1; then
    echo "FAIL: an input of tests/fuzz/corpus/$t crashes:"; grep -aE -A20 'ERROR:|runtime error:' "$work/$t.replay.log" | head -30
    fail=1; continue
  fi
  echo "$t: replayed $n kept inputs"
  [ "$t" = spec ] && continue   # tests/fuzz/fuzz_test.sh fuzzes the spec front end
  mkdir -p "$work/$t"
  "$fuzz" "${opts[@]}" -max_len=1024 -max_total_time="$seconds" -print_final_stats=1 "$work/$t" "$corpus" \
    > "$work/$t.log" 2>&1
  rc=$?
  if [ $rc -ne 0 ] || grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/$t.log"; then
    echo "FAIL: fuzzing $t, exit code $rc:"; grep -aE -A20 'ERROR:|runtime error:' "$work/$t.log" | head -30
    ls "$work/artifacts"; fail=1; continue
  fi
  echo "$t: $(grep -a '^stat::number_of_executed_units' "$work/$t.log" | awk '{ print $2 }') executions in ${seconds}s, $(grep -aE '^#[0-9]+' "$work/$t.log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+'), no crash"
done
exit $fail
