#!/usr/bin/env bash
# Fuzzes `trainc import caffe` (tests/fuzz/fuzz_caffe.c) for FUZZ_CAFFE_SECONDS (default 20)
# from the prototxts of tests/caffe (nets, solvers, each net with its solver, the error
# cases), after replaying tests/fuzz/regressions_caffe/. Fails on any crash, leak, timeout or
# sanitizer report; a crashing input is left in $BUILD/fuzz_caffe/artifacts/.
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
root=$PWD
fuzz=$root/$BUILD/fuzz/fuzz_caffe
[ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz-caffe)" >&2; exit 1; }
seconds=${FUZZ_CAFFE_SECONDS:-20}
work=$root/$BUILD/fuzz_caffe
rm -rf "$work/seeds"; mkdir -p "$work/corpus" "$work/artifacts" "$work/seeds"
i=0
for f in tests/caffe/*.prototxt tests/caffe/errors/*.prototxt; do
  i=$((i + 1)); cp "$f" "$work/seeds/$i-$(basename "$f")"
done
for net in lenet alexnet resnet; do
  i=$((i + 1)); { cat tests/caffe/$net.prototxt; echo '---'; cat tests/caffe/${net}_solver.prototxt; } >"$work/seeds/$i-$net-with-solver"
done
opts=(-timeout=25 -rss_limit_mb=4096 -malloc_limit_mb=4096 -artifact_prefix="$work/artifacts/")
regs=("$root"/tests/fuzz/regressions_caffe/*)
if [ -e "${regs[0]}" ]; then
  "$fuzz" "${opts[@]}" "${regs[@]}" || { echo "FAIL: a regression input crashes again"; exit 1; }
fi
echo "fuzzing for ${seconds}s from $i seeds"
"$fuzz" "${opts[@]}" -dict="$root/tests/fuzz/caffe.dict" -max_total_time="$seconds" \
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
