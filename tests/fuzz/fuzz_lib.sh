# Sourced by the fuzz tests of make test: fuzz_run FUZZER WORK DICT RUNS REGRESSIONS_DIR CORPUS...
# replays every file in REGRESSIONS_DIR, then runs the fuzzer RUNS times from the CORPUS
# folders (the first one, emptied first, takes what it finds; DICT may be ""). Deterministic,
# so that make test never fails by luck: the same inputs in the same order, a fixed number of
# mutations from a fixed seed (FUZZ_SEED, default 1), no corpus reloading, address
# randomization off (setarch -R), and a timeout far above any input's time. A new find then
# comes from a change to the code or to the corpus; `make fuzz-long` is where the fuzzers
# explore. Returns 1 on any crash, leak, timeout or sanitizer report, with the report and the
# newest artifacts (WORK/artifacts/) printed.
fuzz_run() {
  local fuzz=$1 work=$2 dict=$3 runs=$4 regdir=$5; shift 5
  rm -rf "$1" "$work/artifacts"; mkdir -p "$1" "$work/artifacts"
  local opts=(-timeout=120 -rss_limit_mb=4096 -malloc_limit_mb=4096 -artifact_prefix="$work/artifacts/")
  local regs=("$regdir"/*)
  if [ -e "${regs[0]}" ]; then
    echo "replaying ${#regs[@]} regression input(s) of $regdir"
    "$fuzz" "${opts[@]}" "${regs[@]}" > "$work/replay.log" 2>&1 ||
      { echo "FAIL: a regression input crashes again:"; grep -aE -A30 'ERROR:|runtime error:' "$work/replay.log" | head -40; return 1; }
  fi
  [ -n "$dict" ] && opts+=(-dict="$dict")
  # Some paths of the spec front end run a different number of times with different heap
  # addresses (the edge counts, not the results, differ), which changes what the fuzzer
  # keeps: with address randomization off its choices repeat exactly.
  local fixed=(setarch -R)
  if ! setarch -R true 2>/dev/null; then
    fixed=(); echo "note: setarch -R is refused here, so addresses vary and the inputs tried may too"
  fi
  echo "fuzzing: $runs runs from seed ${FUZZ_SEED:-1}"
  "${fixed[@]}" "$fuzz" "${opts[@]}" -seed="${FUZZ_SEED:-1}" -runs="$runs" -reload=0 -print_final_stats=1 "$@" 2>"$work/fuzz.log"
  local rc=$?
  grep -aE '^#[0-9]+[[:space:]]' "$work/fuzz.log" | tail -n 1
  grep -aE '^(Done [0-9]+ runs|stat::new_units_added|stat::peak_rss_mb)' "$work/fuzz.log"
  if [ "$rc" -ne 0 ] || grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/fuzz.log"; then
    echo "FAIL: fuzzer exit code $rc; report:"
    grep -aE -A30 'ERROR:|runtime error:' "$work/fuzz.log" | head -60
    ls -1 "$work/artifacts" | tail -5
    return 1
  fi
  echo "no crash, leak or sanitizer report"
}
