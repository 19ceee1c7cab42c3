#!/usr/bin/env bash
# Runs every unit-test binary in $BUILD/tests and every tests/*/*_test.sh script, one test
# each, TEST_JOBS at a time (default: the number of cores); prints a line per test as it ends
# and then "N passed, N failed". Exits 1 if any failed.
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
# Written by tests/run_all.sh: one test's make at a time.
[ -n "\${TEST_MAKE_LOCKED:-}" ] && exec "$real_make" "\$@"
TEST_MAKE_LOCKED=1 exec flock "$PWD/$shim/lock" "$real_make" -j$jobs "\$@"
EOF
chmod +x "$shim/make"
export PATH="$PWD/$shim:$PATH"
# Waiting OpenMP threads sleep instead of spinning: two trainers on two cores would
# otherwise spin away each other's time slices.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

tests=()
for bin in "$BUILD"/tests/test_*; do
  [ -x "$bin" ] && tests+=("unit/$(basename "$bin")")
done
for script in tests/*/*_test.sh; do
  [ -f "$script" ] && tests+=("${script#tests/}")
done

run_one() {  # name: runs it, leaves its log and "status seconds" in $logdir
  local name=$1 base t0=$SECONDS rc
  base="$logdir/$(echo "$name" | tr '/' '_')"
  if [[ $name == unit/* ]]; then
    "$BUILD/tests/${name#unit/}" >"$base.log" 2>&1; rc=$?
  else
    bash "tests/$name" >"$base.log" 2>&1; rc=$?
  fi
  echo "$rc $((SECONDS - t0))" >"$base.result"
}

report() {  # name: prints its line (and the tail of its log if it failed)
  local name=$1 base rc secs
  base="$logdir/$(echo "$name" | tr '/' '_')"
  read -r rc secs <"$base.result"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); printf 'PASS  %-48s %3ds\n' "$name" "$secs"
  else
    failed=$((failed + 1)); failed_names+=("$name")
    printf 'FAIL  %-48s %3ds  (log: %s)\n' "$name" "$secs" "$base.log"
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
