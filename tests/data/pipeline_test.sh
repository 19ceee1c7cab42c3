#!/usr/bin/env bash
# The image pipeline end to end on a JPEG tree made from Fashion-MNIST (make_tree.py: RGB,
# upscaled, nested class folders, a val folder, a flat val folder with labels.txt, and bad
# files of each kind): trainc pack (sanitized) names each bad file with its reason, converts
# PNG/CMYK/grayscale, resumes after an interruption with the same index, and refuses other
# options; the loader (sanitized) gives the same batches for 1, 2 and 4 ranks and 1 or 3
# decode threads, from the folder and from the shards; validation samples equal djpeg/Pillow;
# the trainer trains on both (decoding the folder's PNG named .JPEG as pack converts it), stops
# at the failure cap naming a file, and stops there at the same step and count after a
# resume; SIGTERM + --resume ends with the uninterrupted run's params_hash.
set -eu
source tests/lib.sh
dir=$BUILD/test-data/pipeline
tools=$BUILD/tests/data-tools
# the sanitized tools it drives: make test has built them; run alone, this builds them
nice make -s BUILD="$BUILD" data-tools > /dev/null
rm -rf "$dir" && mkdir -p "$dir"
tree=$dir/tree pack=$dir/packed
"$PY" tests/data/make_tree.py "$tree" 24 6 32 --bad

echo "== pack"
"$tools/pack" "$tree" -o "$pack" --shard-records 32 > "$dir/pack.out" 2> "$dir/pack.err"
cat "$dir/pack.out" "$dir/pack.err"
for want in "bad_empty.JPEG: skipped: empty file" "bad_text.JPEG: skipped: not an image" \
            "bad_truncated.JPEG: skipped: truncated JPEG" "bad_png.JPEG: converted: PNG content" \
            "bad_cmyk.JPEG: converted: CMYK JPEG" "bad_gray.JPEG: converted: gray JPEG" \
            "train: 243 records in 8 shards (3 converted, 0 resized), 3 files skipped" \
            "val: 60 records in 2 shards"; do
  grep -qF "$want" "$dir/pack.out" "$dir/pack.err" || { echo "pack did not report: $want"; exit 1; }
done
cp "$pack/train.index" "$dir/train.index.first"
rm "$pack/train-00002.idx" "$pack/train.index"   # as if interrupted while shard 2 was written
"$tools/pack" "$tree" -o "$pack" --shard-records 32 > /dev/null 2>&1
cmp "$dir/train.index.first" "$pack/train.index" || { echo "resumed pack wrote another index"; exit 1; }
if "$tools/pack" "$tree" -o "$pack" --shard-records 32 --quality 50 2> "$dir/other.err"; then
  echo "pack into a DST packed with other options was accepted"; exit 1
fi
grep -q "other options" "$dir/other.err" && head -1 "$dir/other.err"

echo "== loader: ranks x decode threads, folder and shards"
for src in "$tree" "$pack"; do
  ref=
  for wt in "1 1 0" "2 1 0" "4 1 0" "1 3 0" "4 3 5" "2 2 8"; do
    set -- $wt
    LOADER_SLOTS=$3 "$tools/loader_dump" "$src/train" - rrc 32 32 0 1 "$1" "$2" 2 3 20 7 1 "$dir/b.$1.$2" > /dev/null 2>&1
    sum=$(cat "$dir/b.$1.$2" "$dir/b.$1.$2.labels" | sha256sum | cut -c1-16)
    [ -z "$ref" ] && ref=$sum
    [ "$sum" = "$ref" ] || { echo "$src: ranks $1, threads $2 give other batches ($sum vs $ref)"; exit 1; }
  done
  echo "$src: 2 epochs x 3 global batches identical for 1/2/4 ranks, 1/2/3 decode threads, 3/5/8 slots ($ref)"
done
# Bicubic (a spec's interpolation: BICUBIC): the same batches for every layout of ranks and
# threads too, and not the bilinear ones.
for wt in "1 1" "4 3"; do
  set -- $wt
  LOADER_FILTER=bicubic "$tools/loader_dump" "$pack/train" - rrc 32 32 0 1 "$1" "$2" 2 3 20 7 1 "$dir/bc.$1.$2" > /dev/null 2>&1
done
cmp -s "$dir/bc.1.1" "$dir/bc.4.3" || { echo "bicubic: 4 ranks x 3 threads give other batches than 1 x 1"; exit 1; }
cmp -s "$dir/bc.1.1" "$dir/b.1.1" && { echo "bicubic batches equal the bilinear ones"; exit 1; }
echo "bicubic: 2 epochs x 3 global batches identical for 1 rank x 1 thread and 4 ranks x 3 threads"
# Channels-last (a CUDA plan with --layout nhwc), bytes and floats: the same samples transposed.
for raw in 1 0; do
  "$tools/loader_dump" "$pack/train" - rrc 32 32 0 1 2 2 1 2 20 7 $raw "$dir/c$raw" > /dev/null 2>&1
  LOADER_NHWC=1 "$tools/loader_dump" "$pack/train" - rrc 32 32 0 1 2 2 1 2 20 7 $raw "$dir/l$raw" > /dev/null 2>&1
done
"$PY" - "$dir" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
for raw, t in (("1", np.uint8), ("0", np.float32)):
    nchw = np.fromfile(f"{d}/c{raw}", t).reshape(-1, 3, 32, 32)
    nhwc = np.fromfile(f"{d}/l{raw}", t).reshape(-1, 32, 32, 3)
    assert len(nchw) == 40 and (nhwc == nchw.transpose(0, 2, 3, 1)).all(), f"channels-last {t.__name__} samples differ"
print("channels-last batches (bytes and floats) = the NCHW batches transposed")
PY
# The same under mpirun: one process per rank, each writing its own slices.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for np in 2 4; do
  mpirun -np $np --oversubscribe "$tools/loader_dump" "$pack/train" - rrc 32 32 0 1 mpi 2 2 3 20 7 1 "$dir/m$np" > /dev/null 2>&1
  "$PY" - "$dir/m$np" $np "$dir/b.1.1" <<'PY'
import sys
base, world, ref = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for suffix, item in (("", 3 * 32 * 32), (".labels", 4)):
    parts = [open(f"{base}.rank{r}{suffix}", "rb").read() for r in range(world)]
    per = 20 // world * item            # one rank's slice of a global batch of 20
    steps = len(parts[0]) // per
    joined = b"".join(parts[r][s * per:(s + 1) * per] for s in range(steps) for r in range(world))
    assert joined == open(ref + suffix, "rb").read(), f"mpirun -np {world}: batches differ ({suffix or 'pixels'})"
print(f"mpirun -np {world}: the ranks' slices make the same global batches as one process")
PY
done
"$tools/loader_dump" "$tree/train" "$tree/val" center 32 32 36 0 2 2 1 3 20 1 0 "$dir/val.f32" > /dev/null
"$PY" tests/data/loader_reference.py "$tree/val" "$dir/val.f32" 36 32 60
LOADER_FILTER=bicubic "$tools/loader_dump" "$tree/train" "$tree/val" center 32 32 36 0 2 2 1 3 20 1 0 "$dir/val_bc.f32" > /dev/null
"$PY" tests/data/loader_reference.py "$tree/val" "$dir/val_bc.f32" 36 32 60 bicubic
"$tools/loader_dump" "$tree/train" "$tree/val_flat" center 32 32 36 0 1 1 1 3 20 1 1 "$dir/flat" > /dev/null
"$tools/loader_dump" "$tree/train" "$tree/val" center 32 32 36 0 1 1 1 3 20 1 1 "$dir/nested" > /dev/null
"$PY" - "$dir/flat.labels" "$dir/nested.labels" <<'PY'
import sys
a, b = (sorted(open(p, "rb").read()) for p in sys.argv[1:])
assert a == b, "the flat val folder's labels.txt gives other labels than the class folders"
print("flat val folder + labels.txt: the same labels as val/<class>/")
PY

echo "== trainer"
# The tree is not the spec's 60,000 images: without data.train_samples the trainer takes the
# whole tree (with it, it refuses a smaller set at start-up).
sed '/^ *train_samples:/d' bench/specs/fmnist_jpeg.spec > "$dir/jpeg.spec"
"$BUILD/trainc" build "$dir/jpeg.spec" -o "$dir/jpeg" > /dev/null
run() { OMP_NUM_THREADS=1 "$dir/jpeg" --decode-threads 2 "$@"; }
run --data "$tree" --out "$dir/folder" --epochs 2 > "$dir/folder.out" 2> "$dir/folder.err"
run --data "$pack" --out "$dir/shards" --epochs 2 > "$dir/shards.out" 2> "$dir/shards.err"
grep -q "^final:" "$dir/folder.out" && grep -q "^final:" "$dir/shards.out"
# As trainc pack converts them, the folder reader decodes the PNG named .JPEG (and the CMYK and
# grayscale JPEGs); it names the files pack skips.
for bad in "bad_empty.JPEG: empty file" "bad_text.JPEG: not an image" "bad_truncated.JPEG: truncated JPEG"; do
  grep -q "$bad" "$dir/folder.err" || { echo "folder run did not name $bad"; cat "$dir/folder.err"; exit 1; }
done
if grep -E "bad_(png|cmyk|gray)" "$dir/folder.err"; then echo "folder run did not decode the file above"; exit 1; fi
[ "$(head -1 "$dir/folder/classes.txt")" = "0 bag" ] || { echo "classes.txt missing or unsorted"; exit 1; }
if run --data "$tree" --out "$dir/capped" --epochs 2 --max-decode-failures 0 > /dev/null 2> "$dir/capped.err"; then
  echo "a run over the failure cap did not stop"; exit 1
fi
grep -q "could not be decoded by step 1, more than the run's cap of 0" "$dir/capped.err" && grep -q "bad_" "$dir/capped.err"
echo "failure cap 0: stopped with $(grep -c 'warning: data:' "$dir/capped.err") file(s) named"

echo "== the failure count across a resume"
# The count is part of the checkpoint: a run resumed at step 6 (after the bad files came up)
# stops at the cap in the same step with the same count as a run that never stopped.
cap=12
if run --data "$tree" --out "$dir/cap_full" --epochs 8 --max-decode-failures $cap > /dev/null 2> "$dir/cap_full.err"; then
  echo "the run with a cap of $cap did not stop"; exit 1
fi
run --data "$tree" --out "$dir/cap_cut" --epochs 2 --max-decode-failures $cap > /dev/null 2>&1
if run --data "$tree" --out "$dir/cap_cut" --epochs 8 --max-decode-failures $cap \
       --resume "$(ls "$dir/cap_cut/checkpoints"/ckpt-*.bin | tail -n 1)" > /dev/null 2> "$dir/cap_cut.err"; then
  echo "the resumed run with a cap of $cap did not stop"; exit 1
fi
want=$(grep "could not be decoded" "$dir/cap_full.err"); got=$(grep "could not be decoded" "$dir/cap_cut.err")
[ "$want" = "$got" ] || { printf 'resumed run: %s\nuninterrupted: %s\n' "$got" "$want"; exit 1; }
echo "resumed at step 6, the same stop: ${want#error: }"
# A checkpoint written before the "data" section existed (the same file without it) still
# loads; its run counts failures from 0 again, so it stops later.
"$PY" - "$(ls "$dir/cap_cut/checkpoints"/ckpt-000000000006.bin)" "$dir/old.bin" <<'PY'
import struct, sys, zlib
b = open(sys.argv[1], "rb").read()
n, pos, keep = struct.unpack_from("<I", b, 12)[0], 112, []
for _ in range(n):
    ln = struct.unpack_from("<I", b, pos)[0]
    name = b[pos + 4:pos + 4 + ln]
    size = struct.unpack_from("<Q", b, pos + 4 + ln)[0]
    end = pos + 4 + ln + 12 + size
    if name != b"data": keep.append(b[pos:end])
    pos = end
assert len(keep) == n - 1, "the checkpoint has no data section"
body = b"".join(keep)
head = bytearray(b[:112])
struct.pack_into("<I", head, 12, n - 1)
struct.pack_into("<Q", head, 32, 112 + len(body) + 16)
struct.pack_into("<I", head, 108, zlib.crc32(bytes(head[:108])))
out = bytes(head) + body
open(sys.argv[2], "wb").write(out + b"TCKPEND\0" + struct.pack("<II", zlib.crc32(out), 0))
PY
mkdir -p "$dir/old" && run --data "$tree" --out "$dir/old" --epochs 8 --max-decode-failures $cap --resume "$dir/old.bin" > /dev/null 2> "$dir/old.err" || true
old=$(grep "could not be decoded" "$dir/old.err") || { echo "the checkpoint without a data section did not resume:"; cat "$dir/old.err"; exit 1; }
[ "$old" != "$want" ] || { echo "a checkpoint without a data section stopped as if it had one"; exit 1; }
echo "a checkpoint without a data section resumes, counting from 0: ${old#error: }"

echo "== SIGTERM + --resume (from the folder, with its undecodable files)"
run --data "$tree" --out "$dir/full" --epochs 8 > /dev/null 2>&1
run --data "$tree" --out "$dir/cut" --epochs 8 > "$dir/cut.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ "$(ls "$dir/cut/checkpoints" 2>/dev/null | grep -c 'ckpt-.*bin$')" -ge 2 ] && break
  sleep 0.05
done
kill -TERM $pid
status=0; wait $pid || status=$?
[ "$status" -eq 143 ] || { echo "expected exit 143 after SIGTERM, got $status"; cat "$dir/cut.out"; exit 1; }
ckpt=$(ls "$dir/cut/checkpoints"/ckpt-*.bin | tail -n 1)
run --data "$tree" --out "$dir/cut" --epochs 8 --resume "$ckpt" > /dev/null 2>&1
"$PY" - "$dir/full/metrics.jsonl" "$dir/cut/metrics.jsonl" "$(basename "$ckpt")" <<'PY'
import json, sys
h = [[json.loads(l) for l in open(p) if '"summary"' in l][-1]["params_hash"] for p in sys.argv[1:3]]
print(f"stopped at {sys.argv[3]}; params_hash uninterrupted {h[0]}, resumed {h[1]}")
assert h[0] == h[1], "params_hash differs after resume"
PY
