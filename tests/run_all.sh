#!/usr/bin/env bash
# Runs every unit-test binary in $BUILD/tests and every tests/*/*_test.sh script, one test
# each; prints a line per test and ends with "N passed, N failed". Exits 1 if any failed.
set -u
BUILD=${BUILD:-build}
export BUILD
passed=0; failed=0; failed_names=()
logdir="$BUILD/test-logs"; mkdir -p "$logdir"

run_one() {  # name, command...
  local name=$1; shift
  local log="$logdir/$(echo "$name" | tr '/' '_').log"
  local t0=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); printf 'PASS  %-48s %3ds\n' "$name" $((SECONDS - t0))
  else
    failed=$((failed + 1)); failed_names+=("$name")
    printf 'FAIL  %-48s %3ds  (log: %s)\n' "$name" $((SECONDS - t0)) "$log"
    tail -n 25 "$log" | sed 's/^/      | /'
  fi
}

for bin in "$BUILD"/tests/test_*; do
  [ -x "$bin" ] || continue
  run_one "unit/$(basename "$bin")" "$bin"
done
for script in tests/*/*_test.sh; do
  [ -f "$script" ] || continue
  run_one "${script#tests/}" bash "$script"
done

echo
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
