#!/usr/bin/env bash
# Runs every unit-test binary in $BUILD/tests and every tests/*/*_test.sh script, one test
# each (or those TEST_ONLY names), TEST_JOBS at a time (default: the number of cores), the
# longest first by the timings recorded in tests/durations.txt (a test not in it counts as
# longest: it may be slow); prints a line per test as it ends, with its wall and CPU seconds,
# and then "N passed, N failed". Exits 1 if any failed. Each test's own time leaves out what
# it waited for another test's build (the make lock below); the run's timings go to
# $BUILD/test-logs/durations.txt (`make test-durations` records them).
# A test marked "wait" in tests/durations.txt spends most of its time waiting (a launcher's
# start-up, a hung rank's detection, Slurm's 30 s time-limit checks): one such test at a time
# runs in a slot of its own beside the TEST_JOBS others, so that its waits overlap their CPU
# work instead of leaving a core idle; once the others are all started, the free slots take
# the remaining waiting tests too. It runs at the same priority as the others (it neither
# starves them when it computes nor is starved by them). TEST_JOBS=1: one test at a time.
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
# Longest first: recorded seconds, descending; a test without a record first of all. The
# waiting tests ("wait" after the seconds) in a queue of their own, longest first too.
declare -A recorded=() waits=()
if [ -f tests/durations.txt ]; then
  while read -r name secs mark; do
    [[ $name == \#* || -z $name ]] && continue
    recorded[$name]=$secs
    [ "$mark" = wait ] && waits[$name]=1
  done < tests/durations.txt
fi
by_time() { for name in "$@"; do echo "${recorded[$name]:-99999} $name"; done | sort -s -k1,1nr | cut -d' ' -f2; }
cpu_tests=() wait_tests=()
for name in "${found[@]}"; do
  if [ -n "${waits[$name]:-}" ] && [ "$jobs" -gt 1 ]; then wait_tests+=("$name"); else cpu_tests+=("$name"); fi
done
mapfile -t cpu_tests < <(by_time "${cpu_tests[@]}")
mapfile -t wait_tests < <(by_time "${wait_tests[@]}")

run_one() {  # name: runs it, leaves its log and "status seconds waited-seconds cpu-seconds" in $logdir
  local name=$1 base t0 rc waited cpu
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
  # CPU: user + system time of the test's processes (this subshell runs only it), as `times`
  # says on its second line ("0m1.250s 0m0.310s"), not what daemons the test started did for
  # it (Slurm's job steps). Not in a pipe or $(...): a forked shell's children start at zero.
  times >"$base.times"
  cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += t[1] * 60 + t[2] }
                       printf "%d", n + 0.5 }' "$base.times")
  echo "$rc $(( (ms - waited + 500) / 1000 )) $(( (waited + 500) / 1000 )) ${cpu:-0}" >"$base.result"
}

report() {  # name: prints its line (and the tail of its log if it failed)
  local name=$1 base rc secs waited cpu note=""
  base="$logdir/$(echo "$name" | tr '/' '_')"
  read -r rc secs waited cpu <"$base.result"
  [ "$waited" -gt 0 ] && note="  (+${waited}s waiting for another test's build)"
  echo "$name $secs${waits[$name]:+ wait}" >> "$logdir/durations.txt"
  cpu_total=$((cpu_total + cpu))
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1)); printf 'PASS  %-48s %3ds %4ds CPU%s\n' "$name" "$secs" "$cpu" "$note"
  else
    failed=$((failed + 1)); failed_names+=("$name")
    printf 'FAIL  %-48s %3ds %4ds CPU%s  (log: %s)\n' "$name" "$secs" "$cpu" "$note" "$base.log"
    tail -n 25 "$base.log" | sed 's/^/      | /'
  fi
}

start() {  # name, slot kind (cpu or wait)
  run_one "$1" &
  running[$!]=$1; kind[$!]=$2
}
passed=0; failed=0; failed_names=(); cpu_total=0
declare -A running=() kind=()   # pid -> test name, pid -> the slot it holds
next=0 next_wait=0 t_start=$SECONDS
while [ $next -lt ${#cpu_tests[@]} ] || [ $next_wait -lt ${#wait_tests[@]} ] || [ ${#running[@]} -gt 0 ]; do
  n_cpu=0 n_wait=0
  for pid in "${!kind[@]}"; do [ "${kind[$pid]}" = cpu ] && n_cpu=$((n_cpu + 1)) || n_wait=$((n_wait + 1)); done
  while [ $n_cpu -lt "$jobs" ]; do
    if [ $next -lt ${#cpu_tests[@]} ]; then start "${cpu_tests[$next]}" cpu; next=$((next + 1))
    elif [ $next_wait -lt ${#wait_tests[@]} ]; then start "${wait_tests[$next_wait]}" cpu; next_wait=$((next_wait + 1))
    else break; fi
    n_cpu=$((n_cpu + 1))
  done
  if [ $n_wait -eq 0 ] && [ $next_wait -lt ${#wait_tests[@]} ]; then
    start "${wait_tests[$next_wait]}" wait; next_wait=$((next_wait + 1))
  fi
  wait -n
  for pid in "${!running[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid"
      report "${running[$pid]}"
      unset "running[$pid]" "kind[$pid]"
    fi
  done
done

echo
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$passed passed, $failed failed ($jobs at a time$([ ${#wait_tests[@]} -gt 0 ] && echo ", and a waiting test beside them"), $((SECONDS - t_start)) s, $cpu_total s of CPU)"
[ "$failed" -eq 0 ]
