#!/usr/bin/env bash
# Crash-and-resume soak: SOAK_KILLS (default 30) kill -9 of the MLP trainer on a small IDX
# subset, half at a random moment of the run, half just after a checkpoint's temp file
# appears (mid-write). After each kill:
#  - a temp file the kill left is offered to the trainer as a checkpoint (a complete one, left
#    by a kill between fsync and rename, cut at a random byte first): it must be refused
#    with a clear error;
#  - the run resumes from its newest checkpoint (or starts over when it had none), and may
#    itself be killed again; when a run completes, its params_hash must equal the
#    uninterrupted run's.
# Prints the counts; fails on any corrupt checkpoint accepted or any differing hash.
# `make soak` runs a longer version (SOAK_KILLS=300).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
source tests/reliability/lib.sh
make_test_dir soak
kills_wanted=${SOAK_KILLS:-30}
epochs=6
seed=${SOAK_SEED:-$RANDOM}
RANDOM=$seed
build_small_mlp mlp
make_small_idx 320 100
good=$dir/data/good
run() { "$dir/mlp" --data "$good" --epochs $epochs "$@"; }

run --out "$dir/reference" > /dev/null || { echo "reference run failed" >&2; exit 1; }
want=$(params_hash "$dir/reference/metrics.jsonl")
full_size=$(stat -c %s "$(ls "$dir/reference/checkpoints"/ckpt-*.bin | head -n 1)")
t0=$(date +%s.%N); run --out "$dir/timing" > /dev/null; t1=$(date +%s.%N)
run_ms=$("$PY" -c "print(max(50, int(1000 * ($t1 - $t0))))")
echo "seed $seed; reference params_hash $want; one run takes about $run_ms ms; checkpoints are $full_size bytes"

attempts_missed=0 kills=0 mid_write=0 random_kills=0 partial_offered=0 partial_refused=0 complete_temps=0 resumes=0 chains=0 finished=0
fail=0
chain_dir=""
new_chain() { chains=$((chains + 1)); chain_dir=$dir/chain$chains; }
new_chain
while [ $kills -lt "$kills_wanted" ] || [ -n "$chain_dir" ]; do
  [ -n "$chain_dir" ] || new_chain
  ckpts="$chain_dir/checkpoints"
  latest=$(ls "$ckpts"/ckpt-*.bin 2>/dev/null | tail -n 1)
  args=(--out "$chain_dir"); [ -n "$latest" ] && { args+=(--resume "$latest"); resumes=$((resumes + 1)); }
  if [ $kills -ge "$kills_wanted" ]; then   # enough kills: let this chain finish
    run "${args[@]}" > "$chain_dir.last.txt" 2>&1; status=$?
  else
    mode=$((kills % 2))
    "$dir/mlp" --data "$good" --epochs $epochs "${args[@]}" > "$chain_dir.last.txt" 2>&1 &
    pid=$!   # the trainer itself (not a subshell), so that kill -9 hits it
    if [ $mode -eq 0 ]; then   # a random moment of the run
      delay_ms=$((RANDOM % run_ms))
      sleep "$((delay_ms / 1000)).$(printf %03d $((delay_ms % 1000)))"
    else                       # just after a checkpoint's temp file appears
      for _ in $(seq 200000); do
        compgen -G "$ckpts/.ckpt-*.tmp.*" > /dev/null && break
        kill -0 $pid 2>/dev/null || break
      done
    fi
    kill -9 $pid 2>/dev/null
    wait $pid; status=$?
  fi
  if [ $status -eq 137 ]; then
    kills=$((kills + 1))
    [ $mode -eq 0 ] && random_kills=$((random_kills + 1)) || mid_write=$((mid_write + 1))
    for tmp in "$ckpts"/.ckpt-*.tmp.*; do
      [ -f "$tmp" ] || continue
      size=$(stat -c %s "$tmp")
      if [ "$size" -ge "$full_size" ]; then
        # The kill came between fsync and rename. Offer it cut at a random byte instead, as a
        # write killed at that byte would have left it.
        complete_temps=$((complete_temps + 1))
        size=$(( (RANDOM * 32768 + RANDOM) % full_size ))
      fi
      # Offer the partial write under a final name, as the newest checkpoint, to a fresh run.
      partial_offered=$((partial_offered + 1))
      head -c "$size" "$tmp" > "$dir/offered.bin"
      if run --out "$dir/offered-run" --resume "$dir/offered.bin" > /dev/null 2> "$dir/offered.err"; then
        echo "ACCEPTED a partial checkpoint ($size of $full_size bytes) written before kill $kills" >&2
        cp "$dir/offered.bin" "$dir/accepted-$kills.bin"; fail=1
      elif grep -qE "error: checkpoint .* is (truncated|corrupt)|error: .* is not a trainc checkpoint" "$dir/offered.err"; then
        partial_refused=$((partial_refused + 1))
      else
        echo "a partial checkpoint was refused without a clear message:" >&2; cat "$dir/offered.err" >&2; fail=1
      fi
      rm -rf "$dir/offered-run"
    done
  elif [ $status -eq 0 ]; then
    attempts_missed=$((attempts_missed + 1))
    [ $attempts_missed -le $((10 * kills_wanted)) ] || { echo "the kills keep missing the runs" >&2; exit 1; }
    got=$(params_hash "$chain_dir/metrics.jsonl")
    finished=$((finished + 1))
    if [ "$got" != "$want" ]; then
      echo "chain $chains ended with params_hash $got, the uninterrupted run has $want" >&2; fail=1
    fi
    if compgen -G "$ckpts/.ckpt-*.tmp.*" > /dev/null; then echo "chain $chains: temp files left after the run" >&2; fail=1; fi
    rm -rf "$chain_dir"; chain_dir=""
  else
    echo "a run ended with status $status:" >&2; cat "$chain_dir.last.txt" >&2; fail=1; rm -rf "$chain_dir"; chain_dir=""
  fi
done
echo "kill -9: $kills ($random_kills at random moments, $mid_write just after a temp file appeared)"
echo "partial checkpoint writes offered to a resume: $partial_offered ($complete_temps of them complete temp files, killed between fsync and rename, cut at a random byte), refused: $partial_refused, accepted: $((partial_offered - partial_refused))"
echo "resumes: $resumes; runs completed: $finished, each with params_hash $want: $([ $fail -eq 0 ] && echo yes || echo NO)"
exit $fail
