#!/usr/bin/env bash
# --tensorboard DIR: the LeNet example (40 steps, a checkpoint at 20) writes TensorBoard event
# files beside metrics.jsonl; tests/interop/tb_check.py reads them by the record format's and
# event.proto's specifications (masked CRC32Cs checked) and finds every train and eval scalar
# of metrics.jsonl at its step. A run resumed from step 20 into the same folders adds a file
# that starts with a SessionLog START at 20 (TensorBoard then drops the first file's later
# steps), and the scalars still equal the rewritten metrics.jsonl.
set -eu
source tests/lib.sh
dir=$BUILD/test-interop/tensorboard
rm -rf "$dir" && mkdir -p "$dir"
export OMP_NUM_THREADS=1
sed -e 's/^  epochs: 5$/  iterations: 40\n  checkpoint { every_iterations: 20 }\n  eval_every_iterations: 20/' \
    -e 's/^  log_every: 100$/  log_every: 10/' -e 's/^  val {$/  val_samples: 500\n  val {/' \
    specs/examples/fmnist_lenet.spec > "$dir/lenet.spec"
grep -q "eval_every_iterations: 20" "$dir/lenet.spec" || { echo "FAIL: could not derive the spec" >&2; exit 1; }
"$TRAINC" build "$dir/lenet.spec" -o "$dir/lenet" > /dev/null
"$dir/lenet" --out "$dir/run" --tensorboard "$dir/tb" > /dev/null
"$PY" tests/interop/tb_check.py "$dir/tb" "$dir/run/metrics.jsonl"
sleep 1   # a new file name (its seconds)
"$dir/lenet" --out "$dir/run" --tensorboard "$dir/tb" --resume "$dir/run/checkpoints/ckpt-000000000020.bin" > /dev/null
[ "$(ls "$dir/tb" | wc -l)" = 2 ] || { echo "FAIL: expected two event files" >&2; ls "$dir/tb" >&2; exit 1; }
"$PY" tests/interop/tb_check.py "$dir/tb" "$dir/run/metrics.jsonl" 20
if "$dir/lenet" --eval "$dir/run/checkpoints/ckpt-000000000040.bin" --tensorboard "$dir/tb" 2> "$dir/bad.err"; then
  echo "FAIL: --eval accepted --tensorboard" >&2; exit 1
fi
grep -q "error: --eval trains nothing: --tensorboard is a training option" "$dir/bad.err"
echo "PASS"
