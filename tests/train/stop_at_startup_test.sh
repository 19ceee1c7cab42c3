#!/usr/bin/env bash
# A SIGTERM that reaches the trainer while it still starts (its data line printed, the loaders,
# weights and output still being set up), as Slurm's time-limit warning may reach a requeued
# job, stops it after its first step with a checkpoint and exit 143, instead of ending it
# without one. The signal is sent the moment the line "data: training on ..." is read.
set -eu
source "$(dirname "$0")/../lib.sh"
need_trainc
dir=$BUILD/test-train/stop_at_startup
fresh_dir "$dir"
"$TRAINC" build tests/slurm/specs/lenet_slurm.spec -o "$dir/lenet" > /dev/null
export OMP_NUM_THREADS=1
mkfifo "$dir/out"
stdbuf -oL "$dir/lenet" --out "$dir/run" > "$dir/out" 2>&1 &
pid=$!
sent=0
while IFS= read -r line; do
  echo "$line" >> "$dir/run.txt"
  if [ $sent = 0 ] && [[ $line == "data: training on"* ]]; then kill -TERM $pid; sent=1; fi
done < "$dir/out"
status=0; wait $pid || status=$?
grep -v '^epoch [0-9]* step' "$dir/run.txt"
[ $sent = 1 ] || die "the trainer printed no 'data: training on' line"
[ "$status" -eq 143 ] || die "expected exit 143 after SIGTERM at start-up, got $status"
grep -q '^stopped by signal 15 at step 1;' "$dir/run.txt" || die "the SIGTERM at start-up did not stop the run after step 1"
[ -f "$dir/run/checkpoints/ckpt-000000000001.bin" ] || die "no checkpoint at step 1"
echo "ok: SIGTERM at start-up: stopped after step 1 with its checkpoint, exit 143"
