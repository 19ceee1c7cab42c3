#!/usr/bin/env bash
# trainc pack of IDX files (sanitized packer): a small Fashion-MNIST train (gzip) and t10k
# (plain) split become train/val shards whose records, decoded by Pillow, are the IDX images
# (grey in all three channels, within the JPEG's rounding at --quality 100), with the IDX
# labels in order, valid checksums and classes named by label; a truncated IDX file is
# refused by name before anything is written.
set -eu
source tests/lib.sh
dir=$BUILD/test-data/pack_idx
tools=$BUILD/tests/data-tools
# the sanitized tools it drives: make test has built them; run alone, this builds them
nice make -s BUILD="$BUILD" data-tools > /dev/null
rm -rf "$dir" && mkdir -p "$dir/src"
"$PY" - "$dir/src" <<'PY'
import gzip, struct, sys
src, data = sys.argv[1], "/usr/share/datasets/fashion-mnist"
def take(name, n, out, gz):
    raw = gzip.open(f"{data}/{name}").read()
    dims = struct.unpack(">" + "I" * raw[3], raw[4:4 + 4 * raw[3]])
    per = 1
    for d in dims[1:]: per *= d
    head = raw[:4] + struct.pack(">I", n) + raw[8:4 + 4 * raw[3]]
    body = raw[4 + 4 * raw[3]:][:n * per]
    (gzip.open if gz else open)(f"{src}/{out}", "wb").write(head + body)
take("train-images-idx3-ubyte.gz", 300, "train-images-idx3-ubyte.gz", True)
take("train-labels-idx1-ubyte.gz", 300, "train-labels-idx1-ubyte.gz", True)
take("t10k-images-idx3-ubyte.gz", 70, "t10k-images-idx3-ubyte", False)
take("t10k-labels-idx1-ubyte.gz", 70, "t10k-labels-idx1-ubyte", False)
PY
"$tools/pack" "$dir/src" -o "$dir/packed" --quality 100 --shard-records 128 | tee "$dir/pack.out"
grep -q "^train: 300 records in 3 shards" "$dir/pack.out" && grep -q "^val: 70 records in 1 shard" "$dir/pack.out"
"$PY" - "$dir/src" "$dir/packed" <<'PY'
import gzip, io, struct, sys, zlib
import numpy as np
from PIL import Image
src, packed = sys.argv[1:3]
def idx(path):
    raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw[4 + 4 * nd:], np.uint8).reshape(dims)
classes = open(f"{packed}/classes.txt").read().split()
assert classes == [str(k) for k in range(10)], f"classes.txt: {classes}"
worst = 0
for split, name, ext in (("train", "train", ".gz"), ("val", "t10k", "")):
    images, labels = idx(f"{src}/{name}-images-idx3-ubyte{ext}"), idx(f"{src}/{name}-labels-idx1-ubyte{ext}")
    lines = open(f"{packed}/{split}.index").read().splitlines()
    n = int(lines[0].split()[2]); shards = [l.split()[1] for l in lines[1:] if l.startswith("shard ")]
    recs = [tuple(map(int, l.split())) for l in lines[1 + len(shards):]]
    assert n == len(recs) == len(images), f"{split}: {n} records indexed, {len(images)} IDX images"
    for i, (k, off, length, label) in enumerate(recs):
        blob = open(f"{packed}/{shards[k]}", "rb").read()
        magic, lab, ln, crc = struct.unpack("<IiII", blob[off:off + 16])
        jpg = blob[off + 16:off + 16 + ln]
        assert (lab, ln) == (label, length) and lab == labels[i], f"{split}[{i}]: label {lab}, IDX {labels[i]}"
        assert zlib.crc32(jpg) == crc, f"{split}[{i}]: checksum"
        img = np.asarray(Image.open(io.BytesIO(jpg)).convert("RGB")).astype(int)
        d = np.abs(img - images[i].astype(int)[..., None])
        if d.max() > 3:
            sys.exit(f"FAIL {split}[{i}]: max |diff| {d.max()} > 3; ours {img[..., 0].reshape(-1)[:8]} "
                     f"IDX {images[i].reshape(-1)[:8]}")
        worst = max(worst, int(d.max()))
    print(f"{split}: {n} records = the IDX images (RGB, within {worst} grey levels at quality 100) and labels in order")
PY
# A truncated IDX file: refused by name, nothing packed.
head -c 5000 "$dir/src/t10k-images-idx3-ubyte" > "$dir/t" && mv "$dir/t" "$dir/src/t10k-images-idx3-ubyte"
if "$tools/pack" "$dir/src" -o "$dir/packed2" 2> "$dir/bad.err"; then echo "a truncated IDX file was packed"; exit 1; fi
grep -q "t10k-images-idx3-ubyte" "$dir/bad.err" || { echo "the truncated file was not named:"; cat "$dir/bad.err"; exit 1; }
[ ! -e "$dir/packed2" ] || { echo "pack created DST before refusing its source"; exit 1; }
echo "truncated IDX: $(head -1 "$dir/bad.err")"
