#!/usr/bin/env bash
# `make fuzz-long`: fuzzes every target (the spec front end, the Caffe importer, the checkpoint
# reader, the IDX reader, the image decoder) for FUZZ_SECONDS in all (default 600, split
# evenly; FUZZ_TARGETS picks some), starting from the corpus kept in tests/fuzz/corpus/<target>/
# (plus the repo's specs and prototxts for spec and caffe), and adds to that corpus the few
# inputs that reach new code edges, at most the target's max_len bytes each, so the committed
# corpus stays small. Prints executions, coverage and crashes per
# target; fails on any crash (reproducer left in $BUILD/fuzz/long/artifacts/).
set -u
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.."
root=$PWD
seconds=${FUZZ_SECONDS:-600}
work=$root/$BUILD/fuzz/long
rm -rf "$work" && mkdir -p "$work/artifacts" "$work/cwd"
read -r -a targets <<< "${FUZZ_TARGETS:-spec caffe ckpt idx jpeg pt}"
per=$((seconds / ${#targets[@]}))
fail=0
for t in "${targets[@]}"; do
  fuzz=$root/$BUILD/fuzz/fuzz_$t
  [ -x "$fuzz" ] || { echo "missing $fuzz (run make fuzz fuzz-caffe)" >&2; exit 1; }
  kept=$root/tests/fuzz/corpus/$t
  mkdir -p "$kept" "$work/$t/new" "$work/$t/merged"
  max_len=${FUZZ_MAX_LEN:-1024}
  seeds=()
  case $t in   # the repo's own inputs take part as seeds that are not copied into the corpus
    spec)  bash tests/fuzz/make_corpus.sh "$work/$t/seeds" > /dev/null || exit 1; seeds=("$work/$t/seeds") ;;
    caffe) bash tests/fuzz/make_caffe_seeds.sh "$work/$t/seeds" || exit 1; seeds=("$work/$t/seeds") ;;
    jpeg)  max_len=2048 ;;   # small JPEGs are 400-1000 bytes
    pt)    max_len=2048 ;;   # torch.save pads its records to 64 bytes: a small state_dict is ~1.2 KB
  esac
  opts=(-timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len="$max_len"
        -artifact_prefix="$work/artifacts/$t-")
  [ -f "$root/tests/fuzz/$t.dict" ] && opts+=(-dict="$root/tests/fuzz/$t.dict")
  before=$(ls "$kept" | wc -l)
  # Specs may `include` paths relative to the working directory: give them an empty one.
  (cd "$work/cwd" && "$fuzz" "${opts[@]}" -max_total_time="$per" -print_final_stats=1 \
     "$work/$t/new" "$kept" "${seeds[@]}" 2> "$work/$t.log")
  rc=$?
  execs=$(grep -a '^stat::number_of_executed_units' "$work/$t.log" | awk '{ print $2 }')
  cov=$(grep -aE '^#[0-9]+' "$work/$t.log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
  crashes=$(ls "$work/artifacts" | grep -cE "^$t-(crash|leak|timeout|oom)-" || true)
  slow=$(ls "$work/artifacts" | grep -c "^$t-slow-unit-" || true)   # over 10 s: worth a look, not a failure
  if [ "$rc" -ne 0 ] || grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$work/$t.log"; then
    echo "FAIL $t: fuzzer exit code $rc after ${execs:-?} executions"; grep -aE -A20 'ERROR:|runtime error:' "$work/$t.log" | head -40
    fail=1; continue
  fi
  # Grow the kept corpus: what it holds stays, and of the run's finds only a smallest set
  # that reaches the code edges neither it nor the repo's own inputs reach joins it (a set
  # cover over edges, -use_counters=0: hit counts alone would add hundreds of files; named by
  # content), so each run adds a few files instead of reshuffling the set.
  cp "$kept"/* "$work/$t/merged/" 2>/dev/null
  for d in "${seeds[@]}"; do for f in "$d"/*; do cp "$f" "$work/$t/merged/repo-$(basename "$f")"; done; done
  # -timeout=3 in the merge: an input that slow (a spec refused only after seconds) stays out
  # of the kept corpus, whose every input make test replays.
  (cd "$work/cwd" && "$fuzz" "${opts[@]}" -timeout=3 -use_counters=0 -set_cover_merge=1 "$work/$t/merged" "$work/$t/new" \
     > "$work/$t.merge.log" 2>&1) ||
    { echo "FAIL $t: merge"; tail -5 "$work/$t.merge.log"; fail=1; continue; }
  # The fuzzer reads only the first max_len bytes of an input: longer ones would only take room.
  added=0
  for f in "$work/$t/merged"/*; do
    name=$(basename "$f")
    case $name in repo-*) continue ;; esac
    [ -e "$kept/$name" ] && continue
    [ "$(stat -c %s "$f")" -le "$max_len" ] || continue
    cp "$f" "$kept/" && added=$((added + 1))
  done
  echo "$t: ${per}s, ${execs:-?} executions, ${cov:-cov ?}, $crashes crashes, $slow slow inputs (over 10 s, in $work/artifacts); corpus $before -> $(ls "$kept" | wc -l) inputs ($added added) ($(cat "$kept"/* 2>/dev/null | wc -c) bytes)"
done
echo "corpus in tests/fuzz/corpus: $(find tests/fuzz/corpus -type f -exec cat {} + | wc -c) bytes; commit it to keep what this run found"
exit $fail
