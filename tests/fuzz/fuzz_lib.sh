# Sourced by the fuzz tests: fuzz_run FUZZER WORK DICT SECONDS REGRESSIONS_DIR CORPUS...
# replays every file in REGRESSIONS_DIR, then fuzzes for SECONDS from the CORPUS folders
# (the first one keeps what it finds); returns 1 on any crash, leak, timeout or sanitizer
# report, with the report and the newest artifacts (WORK/artifacts/) printed.
fuzz_run() {
  local fuzz=$1 work=$2 dict=$3 seconds=$4 regdir=$5; shift 5
  mkdir -p "$work/artifacts"
  local opts=(-timeout=25 -rss_limit_mb=4096 -malloc_limit_mb=4096 -artifact_prefix="$work/artifacts/")
  local regs=("$regdir"/*)
  if [ -e "${regs[0]}" ]; then
    echo "replaying ${#regs[@]} regression input(s)"
    "$fuzz" "${opts[@]}" "${regs[@]}" || { echo "FAIL: a regression input crashes again"; return 1; }
  fi
  echo "fuzzing for ${seconds}s"
  "$fuzz" "${opts[@]}" -dict="$dict" -max_total_time="$seconds" -print_final_stats=1 "$@" 2>"$work/fuzz.log"
  local rc=$?
  grep -aE '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log"
  if [ "$rc" -ne 0 ] || grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/fuzz.log"; then
    echo "FAIL: fuzzer exit code $rc; report:"
    grep -aE -A30 'ERROR:|runtime error:' "$work/fuzz.log" | head -60
    ls -1 "$work/artifacts" | tail -5
    return 1
  fi
  echo "no crash, leak or sanitizer report"
}
