#!/usr/bin/env bash
# The op-case table's nets (tests/op_cases.def) on the CUDA backend, under the emulator: each
# net named there is checked to hold, as the CPU lowers it, every kind whose row names it, and
# its CUDA trainer (FP32) runs every step of its one epoch against the CPU trainer's losses
# (tests/gpu/compare_runs.py, 1e-4 relative). The CPU runs the same nets in double precision
# against central differences (tests/gradcheck/model_gradcheck_test.sh), so every op kind is
# run by both backends on the same cases.
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-op-cases
status=0
list=$("$BUILD/tests/test_op_cases" --list) || { echo "FAIL: $BUILD/tests/test_op_cases --list"; exit 1; }

# Each net holds its rows' kinds in the CPU schedule (the kind column of show --schedule).
nets=$(echo "$list" | cut -f2 | tr ' ' '\n' | sort -u)
for net in $nets; do
  spec=tests/gradcheck/$net.spec
  [ -f "$spec" ] || { fail "op_cases.def names $net, but there is no $spec"; continue; }
  kinds=$("$BUILD/trainc" show --schedule "$spec" | awk 'NR > 2 { print $3 }' | sort -u)
  echo "$list" | awk -F'\t' -v n="$net" '{ split($2, a, " "); for (i in a) if (a[i] == n) print $1 }' |
    while read -r kind; do
      echo "$kinds" | grep -qx "$kind" || { echo "FAIL: $net is listed for \"$kind\" in tests/op_cases.def, but its CPU schedule has no $kind op"; exit 1; }
    done || status=1
done

# Nets the CUDA backend still refuses at build time, with the refusal expected: anything
# else from their build fails, and so does their building.
declare -A cuda_refuses=()   # none today

# Both backends, every step logged.
for net in $nets; do
  sed 's/^solver {/solver { log_every: 1/' "tests/gradcheck/$net.spec" > "$out/$net.spec"
  if [ -n "${cuda_refuses[$net]:-}" ]; then
    if "$BUILD/trainc" build "$out/$net.spec" --backend cuda -o "$out/$net.cuda" > "$out/$net.cuda.build" 2>&1; then
      fail "$net: CUDA built it: take it out of cuda_refuses"
    elif grep -qF "${cuda_refuses[$net]}" "$out/$net.cuda.build"; then
      echo "$net: CUDA refuses it at build time, as expected: ${cuda_refuses[$net]}"
    else
      fail "$net: CUDA's build failed, but not with the expected refusal"; tail -5 "$out/$net.cuda.build"
    fi
    continue
  fi
  emu_run "$net.cpu" "$net" || { status=1; continue; }
  emu_run "$net.cuda" "$net" --backend cuda || { status=1; continue; }
  emu_compare "$net: CUDA against the CPU" "$net.cuda" "$net.cpu" 1e-4
done
[ $status = 0 ] && echo "op cases: every net of tests/op_cases.def on both backends"
exit $status
