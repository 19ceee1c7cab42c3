#!/usr/bin/env bash
# Holes 2-7 of issue 21, each reproduced: a metrics log that cannot be written ends the run
# (2); `include` of a FIFO or a device is refused by name instead of hanging or reading as
# empty (3, 4); a flipped bit in the checkpoint trailer's reserved bytes is refused (5); the
# temp file of an interrupted checkpoint write is removed at the next start (6); an
# unreadable --data directory is reported as unreadable, not as a missing file (7).
set -u
source tests/lib.sh
cd "$(dirname "$0")/../.."
source tests/reliability/lib.sh
make_test_dir holes
fail=0
build_small_mlp mlp
make_small_idx 320 100
good=$dir/data/good

# 2. metrics.jsonl on a full disk (/dev/full answers every write with ENOSPC), checkpoints off.
build_small_mlp nockpt -e 's/^solver {/solver {\n  checkpoint { every_epochs: 0 }/'
mkdir -p "$dir/full" && ln -s /dev/full "$dir/full/metrics.jsonl"
expect_error metrics_full "metrics.jsonl failed: No space left on device" \
  "$dir/nockpt" --data "$good" --out "$dir/full" || fail=1

# 3, 4. include of a FIFO (used to hang: the guard below is not a measurement) and of a device.
mkfifo "$dir/fifo.spec"
printf 'include "fifo.spec"\n' > "$dir/inc_fifo.spec"
printf 'include "/dev/zero"\n' > "$dir/inc_dev.spec"
expect_error include_fifo "is a FIFO, not a regular file" timeout 20 "$BUILD/trainc" check "$dir/inc_fifo.spec" || fail=1
expect_error include_dev "'/dev/zero' is a character device, not a regular file" \
  timeout 20 "$BUILD/trainc" check "$dir/inc_dev.spec" || fail=1
expect_error spec_fifo "is a FIFO, not a regular file" timeout 20 "$BUILD/trainc" check "$dir/fifo.spec" || fail=1

# 5. One bit flipped in each of the trailer's 4 reserved bytes (the file's last 4).
"$dir/mlp" --data "$good" --out "$dir/run" --epochs 2 > /dev/null || { echo "reference run failed" >&2; exit 1; }
ckpt=$(ls "$dir/run/checkpoints"/ckpt-*.bin | tail -n 1)
size=$(stat -c %s "$ckpt")
for k in 1 2 3 4; do
  cp "$ckpt" "$dir/flip$k.bin"
  "$PY" - "$dir/flip$k.bin" $((size - k)) <<'PY'
import sys
p, at = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read()); b[at] ^= 0x10; open(p, "wb").write(b)
PY
  expect_error "trailer_flip$k" "the trailer's reserved bytes at offset $((size - 4)) are not zero" \
    "$dir/mlp" --data "$good" --out "$dir/flip-run$k" --epochs 2 --resume "$dir/flip$k.bin" || fail=1
done

# 6. A temp file as a checkpoint write cut short by kill -9 leaves it (same name pattern as
# mkstemp's), then a resume: it must be gone afterwards and the run must still end right.
mkdir -p "$dir/cut/checkpoints"
first=$(ls "$dir/run/checkpoints"/ckpt-*.bin | head -n 1)
cp "$first" "$dir/cut/checkpoints/"
head -c 5000 "$ckpt" > "$dir/cut/checkpoints/.ckpt-000000000039.tmp.Ab3dEf"
"$dir/mlp" --data "$good" --out "$dir/cut" --epochs 2 --resume "$dir/cut/checkpoints/$(basename "$first")" \
  > "$dir/cut.out" || { echo "resume failed" >&2; fail=1; }
if ls -A "$dir/cut/checkpoints" | grep -q '\.tmp\.'; then
  echo "temp_cleanup: the interrupted write's temp file is still there after a resume:" >&2
  ls -la "$dir/cut/checkpoints" >&2; fail=1
else
  echo "temp_cleanup: $(grep 'temp file' "$dir/cut.out")"
fi
[ "$(params_hash "$dir/cut/metrics.jsonl")" = "$(params_hash "$dir/run/metrics.jsonl")" ] ||
  { echo "temp_cleanup: the resumed run's params_hash differs" >&2; fail=1; }

# 7. An unreadable --data directory, as a user that permissions apply to (root ignores them).
as_user=()
if [ "$(id -u)" -eq 0 ]; then as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
# Under a folder that user can reach (a checkout may sit below a 0700 folder such as mktemp's,
# which would make the directory unreachable rather than unreadable), with its own trainer copy.
pub=$(mktemp -d) && chmod 755 "$pub" && cp "$dir/mlp" "$pub/mlp"
cp -r "$good" "$pub/locked" && chmod 000 "$pub/locked"
mkdir -p "$pub/locked-out" && chmod 777 "$pub/locked-out"
expect_error data_unreadable "cannot read data directory $pub/locked: Permission denied" \
  "${as_user[@]}" "$pub/mlp" --data "$pub/locked" --out "$pub/locked-out/run" || fail=1
chmod 755 "$pub/locked" && rm -rf "$pub"

[ "$fail" -eq 0 ] && echo "holes 2-7: all refused or handled as they must be"
exit "$fail"
