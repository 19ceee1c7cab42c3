#!/usr/bin/env bash
# Runs every unit-test binary in $BUILD/tests and every tests/*/*_test.sh script, one test
# each (or those TEST_ONLY names), TEST_JOBS at a time (default: the number of cores), the longest first by the timings
# recorded in tests/durations.txt (a test not in it counts as longest: it may be slow); prints
# a line per test as it ends and then "N passed, N failed". Exits 1 if any failed. Each
# test's own time leaves out what it waited for another test's build (the make lock below);
# the run's timings go to $BUILD/test-logs/durations.txt (`make test-durations` records them).
set -u
BUILD=${BUILD:-build}
export BUILD
logdir="$BUILD/test-logs"
rm -rf "$logdir" && mkdir -p "$logdir"
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}

# Tests run side by side, but several call `make` on the same build tree, and two makes
# writing one object at once corrupt it: a `make` first on PATH takes one lock for the
# whole call (its recursive makes and the scripts it runs inherit the lock, so they do not
# wait for themselves). Being alone, it builds with one job per core.
shim="$BUILD/test-make-shim"
mkdir -p "$shim"
real_make=$(command -v make)
cat >"$shim/make" <<EOF
#!/bin/sh
# Written by tests/run_all.sh: one test's make at a time; the milliseconds spent waiting for
# the lock are added to \$TEST_WAIT_FILE, so that they do not count as the test's own time.
[ -n "\${TEST_MAKE_LOCKED:-}" ] && exec "$real_make" "\$@"
exec 9>"$PWD/$shim/lock"
t0=\$(date +%s%N)
flock 9
[ -n "\${TEST_WAIT_FILE:-}" ] && echo \$(( (\$(date +%s%N) - t0) / 1000000 )) >> "\$TEST_WAIT_FILE"
TEST_MAKE_LOCKED=1 exec "$real_make" -j$jobs "\$@"
EOF
chmod +x "$shim/make"
export PATH="$PWD/$shim:$PATH"
# Waiting OpenMP threads sleep instead of spinning: two trainers on two cores would
# otherwise spin away each other's time slices.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

found=()
for bin in "$BUILD"/tests/test_*; do
  [ -x "$bin" ] && found+=("unit/$(basename "$bin")")
done
for script in tests/*/*_test.sh; do
  [ -f "$script" ] && found+=("${script#tests/}")
done
# TEST_ONLY="unit/ train/train_short_test.sh ...": only the tests named or under a prefix
if [ -n "${TEST_ONLY:-}" ]; then
  only=()
  for name in "${found[@]}"; do
    for want in $TEST_ONLY; do
      [[ $name == "$want" || ( $want == */ && $name == "$want"* ) ]] && { only+=("$name"); break; }
    done
  done
  found=("${only[@]}")
fi
# Longest first: recorded seconds, descending; a test without a record first of all.
declare -A recorded=()
if [ -f tests/durations.txt ]; then
  while read -r name secs; do
    [[ $name == \#* || -z $name ]] || recorded[$name]=$secs
  done < tests/durations.txt
fi
mapfile -t tests < <(for name in "${found[@]}"; do echo "${recorded[$name]:-99999} $name"; done |
                     sort -s -k1,1nr | cut -d' ' -f2)

run_one() {  # name: runs it, leaves its log and "status seconds waited-seconds" in $logdir
  local name=$1 base t0 rc waited
  base="$logdir/$(echo "$name" | tr '/' '_')"
  t0=$(date +%s%N)
  if [[ $name == unit/* ]]; then
    "$BUILD/tests/${name#unit/}" >"$base.log" 2>&1; rc=$?
  else
    TEST_WAIT_FILE="$base.wait" bash "tests/$name" >"$base.log" 2>&1; rc=$?
  fi
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  waited=0
  [ -f "$base.wait" ] && waited=$(awk '{s += $1} END {print s + 0}' "$base.wait")
  echo "$rc $(( (ms - waited + 500) / 1000 )) $(( (waited + 500) / 1000 ))" >"$base.result"
}

report() {  # name: prints its line (and the tail of its log if it failed)
  local name=$1 base rc secs waited note=""
  base="$logdir/$(echo "$name" | tr '/' '_')"
  read -r rc secs waited <"$base.result"
  [ "$waited" -gt 0 ] && note="  (+${waited}s waiting for another test's build)"
  echo "$name $secs" >> "$logdir/durations.txt"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); printf 'PASS  %-48s %3ds%s\n' "$name" "$secs" "$note"
  else
    failed=$((failed + 1)); failed_names+=("$name")
    printf 'FAIL  %-48s %3ds%s  (log: %s)\n' "$name" "$secs" "$note" "$base.log"
    tail -n 25 "$base.log" | sed 's/^/      | /'
  fi
}

passed=0; failed=0; failed_names=()
declare -A running=()   # pid -> test name
next=0; t_start=$SECONDS
while [ $next -lt ${#tests[@]} ] || [ ${#running[@]} -gt 0 ]; do
  while [ $next -lt ${#tests[@]} ] && [ ${#running[@]} -lt "$jobs" ]; do
    run_one "${tests[$next]}" &
    running[$!]=${tests[$next]}
    next=$((next + 1))
  done
  wait -n
  for pid in "${!running[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      report "${running[$pid]}"
      unset "running[$pid]"
    fi
  done
done

echo
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed ($jobs at a time, $((SECONDS - t_start)) s)"
[ "$failed" -eq 0 ]
