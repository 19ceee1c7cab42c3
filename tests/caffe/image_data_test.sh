#!/usr/bin/env bash
# Caffe's ImageData layer as the image-list source. Pillow writes 64 small JPEG and PNG images
# of two colour classes at assorted sizes and Caffe's "path label" lists (paths under a
# root_folder); tests/caffe/image_data.prototxt (ImageData with new_height/new_width, crop_size,
# mirror, mean_value, scale, shuffle) imports to source "image-list" with resize_to, bgr,
# random_crop / center_crop and the lists' line count as train_samples, and trains above 90%
# top-1. The source keeps the promises of the other image sources: the same global batch of 16
# on 1 and 2 ranks trains to the same per-step losses, a run stopped after epoch 1 and resumed
# ends at the params_hash of the one that never stopped. A sample's pixels (resize_to, the
# center crop, B, G, R) equal OpenCV's (Debian's python3-opencv): cv2.imread, cv2.resize with
# INTER_LINEAR, the center crop, as Caffe's ImageData makes them, JPEG and PNG alike, bit for
# bit (tests/data/opencv_reference_test.sh checks more sizes and decodes). A label outside the classes is
# named by list and line, a missing image by its path, each exit 1.
set -u
source tests/lib.sh
need_trainc
[ -x "$BUILD/tests/data-tools/loader_dump" ] || die "missing $BUILD/tests/data-tools/loader_dump (make data-tools)"
dir=$BUILD/test-caffe/image_data
fresh_dir "$dir"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$PY" - "$dir" <<'PY' || die "writing the images"
import os, sys
import numpy as np
from PIL import Image
out = sys.argv[1]
r = np.random.default_rng(3)
sizes = [(14, 10), (12, 12), (9, 16), (20, 13)]
for split, n in (("train", 48), ("val", 16)):
    lines = []
    for i in range(n):
        label = i % 2
        h, w = sizes[i % 4]
        base = np.array([200, 40, 40] if label == 0 else [40, 60, 210], np.float64)
        px = np.clip(base + r.normal(0, 30, (h, w, 3)), 0, 255).astype(np.uint8)
        sub = f"{split}/c{label}"
        os.makedirs(f"{out}/img/{sub}", exist_ok=True)
        name = f"{sub}/{i:03d}.{'png' if i % 3 else 'jpg'}"
        Image.fromarray(px).save(f"{out}/img/{name}")
        lines.append(f"{name} {label}")
    open(f"{out}/{split}.txt", "w").write("\n".join(lines) + "\n")
PY
sed "s|ROOT|$dir/img/|; s|TRAIN_LIST|$dir/train.txt|; s|VAL_LIST|$dir/val.txt|" tests/caffe/image_data.prototxt >"$dir/net.prototxt"
"$TRAINC" import caffe "$dir/net.prototxt" -o "$dir/net.spec" >"$dir/import.txt" 2>&1 || { cat "$dir/import.txt"; die "import"; }
for want in 'source: "image-list"' "root_folder: \"$dir/img/\"" 'resize_to: [12, 12]' 'bgr: true' 'interpolation: OPENCV_LINEAR' \
            'random_crop { size: 10 }' 'center_crop: 10' 'train_samples: 48' 'mean_value: [104, 117, 123]'; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q "ImageData \"data\" -> data.train, image-list" "$dir/import.txt" || fail "the summary names the ImageData mapping"

spec() {  # name, batch_per_rank, ranks, epochs
  cat >"$dir/$1.spec" <<SPEC
extends: "net.spec"
data { train { batch_per_rank: $2 } val { batch_per_rank: 8 } decode_threads: 2 max_decode_failures: 0 }
solver { epochs: $4 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.02 } }
parallel { ranks: $3 }
SPEC
  "$TRAINC" build "$dir/$1.spec" -o "$dir/$1" >/dev/null 2>"$dir/$1.err" || { cat "$dir/$1.err"; die "build $1"; }
}
source tests/caffe/source_promises.sh
spec r1 16 1 4
spec r2 8 2 4
"$dir/r1" --out "$dir/r1.run" >"$dir/r1.log" 2>&1 || { fail "1 rank:"; tail -3 "$dir/r1.log"; }
top1=$(summary_of "$dir/r1.run/metrics.jsonl" top1 2>/dev/null || echo 0)
"$PY" -c "import sys; sys.exit(float('$top1') < 0.9)" && echo "trains from the lists: top-1 $top1" || fail "top-1 $top1 < 0.9"
same_on_two_ranks "$dir" 10
exact_resume "$dir" 2

# pixels: a validation sample (resize_to 12x12, center crop 10, B, G, R) against OpenCV
LOADER_LIST_ROOT=$dir/img/ LOADER_RESIZE_TO=12x12 LOADER_BGR=1 LOADER_FILTER=opencv "$BUILD/tests/data-tools/loader_dump" "$dir/val.txt" "$dir/val.txt" center 10 10 0 0 1 1 1 1 16 1 1 "$dir/dump" \
  >/dev/null 2>"$dir/dump.err" || { fail "loader_dump:"; cat "$dir/dump.err"; }
"$PY" - "$dir" <<'PY' || fail "samples differ from OpenCV's"
import sys
import numpy as np
import cv2
out = sys.argv[1]
got = np.fromfile(f"{out}/dump", np.uint8).reshape(16, 3, 10, 10)
lines = open(f"{out}/val.txt").read().split("\n")
for i, line in enumerate(lines[:16]):   # Caffe's ReadImageToCVMat, then its TEST crop: the center
    name = line.split()[0]
    im = cv2.resize(cv2.imread(f"{out}/img/{name}", cv2.IMREAD_COLOR), (12, 12), interpolation=cv2.INTER_LINEAR)
    want = im[1:11, 1:11].transpose(2, 0, 1)   # B, G, R planes
    if not np.array_equal(got[i], want):
        print(f"{name}: largest difference {np.abs(got[i].astype(int) - want).max()}"); sys.exit(1)
print("16 samples (JPEG and PNG) equal OpenCV's imread, resize to 12x12 (INTER_LINEAR) and center crop, B, G, R")
PY

# a bad line and a missing image: named, exit 1
printf '%s 0\n%s 7\n' "$(head -1 "$dir/train.txt" | cut -d' ' -f1)" "$(sed -n 2p "$dir/train.txt" | cut -d' ' -f1)" >"$dir/bad.txt"
"$dir/r1" --data "$dir/bad.txt" --out "$dir/bad.run" >"$dir/bad.log" 2>&1 && fail "a label outside the classes was accepted"
grep -qF "bad.txt:2: label 7 is outside 0..1" "$dir/bad.log" || { fail "bad label message"; cat "$dir/bad.log"; }
sed '5s|^[^ ]*|train/c0/gone.png|' "$dir/train.txt" >"$dir/gone.txt"
"$dir/r1" --data "$dir/gone.txt" --out "$dir/gone.run" >"$dir/gone.log" 2>&1 && fail "a missing image was accepted (max_decode_failures 0)"
grep -qF "$dir/img/train/c0/gone.png" "$dir/gone.log" || { fail "missing image message"; cat "$dir/gone.log"; }

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "image-list source (Caffe's ImageData): imported, trained, the same batches on 1 and 2 ranks, exact resume"
