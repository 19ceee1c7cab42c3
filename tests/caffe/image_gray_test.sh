#!/usr/bin/env bash
# Caffe's ImageData with is_color: false: tests/caffe/image_gray.prototxt imports to the
# image-list source with gray: true (net.input_shape [1, 10, 10], one mean_value), resize_to
# with OpenCV's filter, random_crop / center_crop and mirror, and trains above 90% top-1 on
# colour JPEG, PNG and CMYK JPEG images that only their gray level tells apart
# (write_gray_images.py); a 1-channel mean_file of 128 trains as mean_value 128 does. A validation sample equals OpenCV's (Debian's python3-opencv):
# cv2.imread(IMREAD_GRAYSCALE), cv2.resize INTER_LINEAR to 12x12, the center 10x10, bit for bit;
# --predict reads files as one gray plane too; a spec whose gray does not match the net's channels,
# or OPENCV_LINEAR with a random-resized crop, is refused at check time.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
[ -x "$BUILD/tests/data-tools/loader_dump" ] || die "missing $BUILD/tests/data-tools/loader_dump (make data-tools)"
dir=$BUILD/test-caffe/image_gray
fresh_dir "$dir"
export OMP_NUM_THREADS=1
"$PY" tests/caffe/write_gray_images.py "$dir" || die "writing the images"
sed "s|ROOT|$dir/img/|; s|TRAIN_LIST|$dir/train.txt|; s|VAL_LIST|$dir/val.txt|" tests/caffe/image_gray.prototxt >"$dir/net.prototxt"
"$TRAINC" import caffe "$dir/net.prototxt" -o "$dir/net.spec" >"$dir/import.txt" 2>&1 || { cat "$dir/import.txt"; die "import"; }
for want in 'input_shape: [1, 10, 10]' 'gray: true' 'interpolation: OPENCV_LINEAR' 'resize_to: [12, 12]' \
            'random_crop { size: 10 }' 'center_crop: 10' 'mean_value: [128]'; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q 'bgr' "$dir/net.spec" && fail "a gray import asks for B, G, R planes"
cat >"$dir/run.spec" <<SPEC
extends: "net.spec"
data { decode_threads: 2 max_decode_failures: 0 }
solver { epochs: 4 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.02 } }
SPEC
"$TRAINC" build "$dir/run.spec" -o "$dir/r1" >"$dir/build.txt" 2>&1 || { cat "$dir/build.txt"; die "build"; }
"$dir/r1" --out "$dir/r1.run" >"$dir/r1.log" 2>&1 || { fail "the run:"; tail -3 "$dir/r1.log"; }
source tests/caffe/source_promises.sh
top1=$(summary_of "$dir/r1.run/metrics.jsonl" top1 2>/dev/null || echo 0)
"$PY" -c "import sys; sys.exit(float('$top1') < 0.9)" && echo "trains on gray images: top-1 $top1" || fail "top-1 $top1 < 0.9"

# mean_file on gray images: a 1x12x12 mean image of 128 everywhere is mean_value 128, subtracted at
# each pixel's place before the crop and the mirror: the same per-step losses
PYTHONPATH=tests/caffe "$PY" -c "
import caffemodel as cm
open('$dir/mean.binaryproto', 'wb').write(cm.M['BlobProto'](num=1, channels=1, height=12, width=12, data=[128.0] * 144).SerializeToString())" \
  || die "writing the mean image"
sed "s|mean_value: 128|mean_file: \"$dir/mean.binaryproto\"|" "$dir/net.prototxt" >"$dir/mean.prototxt"
"$TRAINC" import caffe "$dir/mean.prototxt" -o "$dir/mean.net.spec" >"$dir/mean_import.txt" 2>&1 || { fail "import with a gray mean_file"; cat "$dir/mean_import.txt"; }
sed 's/net.spec/mean.net.spec/' "$dir/run.spec" >"$dir/mean.spec"
if "$TRAINC" build "$dir/mean.spec" -o "$dir/m1" >"$dir/mean_build.txt" 2>&1 && "$dir/m1" --out "$dir/m1.run" >"$dir/m1.log" 2>&1; then
  r=$("$PY" tests/gpu/compare_runs.py "$dir/m1.run/metrics.jsonl" "$dir/r1.run/metrics.jsonl" 1e-5 2>&1) \
    && echo "gray mean_file (all 128) vs mean_value 128: $(echo "$r" | head -1)" || { fail "gray mean_file:"; echo "$r"; }
else
  fail "the gray mean_file run"; tail -3 "$dir/mean_build.txt" "$dir/m1.log"
fi

# --predict decodes files as the training data was: one gray plane
ck=$(ls -d "$dir"/r1.run/checkpoints/* 2>/dev/null | tail -1)
"$dir/r1" --predict "$ck" --top-k 1 "$dir"/img/val/c0/000.png "$dir"/img/val/c1/001.jpg >"$dir/predict.txt" 2>&1 \
  && grep -q "c0/000.png: 0 " "$dir/predict.txt" && grep -q "c1/001.jpg: 1 " "$dir/predict.txt" \
  || { fail "--predict on gray images"; cat "$dir/predict.txt"; }

# pixels: the validation samples against OpenCV
LOADER_LIST_ROOT=$dir/img/ LOADER_RESIZE_TO=12x12 LOADER_GRAY=1 LOADER_FILTER=opencv "$BUILD/tests/data-tools/loader_dump" \
  "$dir/val.txt" "$dir/val.txt" center 10 10 0 0 1 1 1 1 16 1 1 "$dir/dump" >/dev/null 2>"$dir/dump.err" \
  || { fail "loader_dump:"; cat "$dir/dump.err"; }
"$PY" - "$dir" <<'PY' || fail "gray samples differ from OpenCV's"
import sys
import numpy as np
import cv2
out = sys.argv[1]
got = np.fromfile(f"{out}/dump", np.uint8).reshape(16, 10, 10)
for i, line in enumerate(open(f"{out}/val.txt").read().split("\n")[:16]):   # Caffe's ReadImageToCVMat, is_color false
    name = line.split()[0]
    im = cv2.resize(cv2.imread(f"{out}/img/{name}", cv2.IMREAD_GRAYSCALE), (12, 12), interpolation=cv2.INTER_LINEAR)
    if not np.array_equal(got[i], im[1:11, 1:11]):
        print(f"{name}: largest difference {np.abs(got[i].astype(int) - im[1:11, 1:11]).max()}"); sys.exit(1)
print("16 gray samples (JPEG, PNG, CMYK JPEG) equal OpenCV's imread(IMREAD_GRAYSCALE), resize to 12x12 and center crop")
PY

# gray against the net's channels: refused at check time
sed 's/input_shape: \[1, 10, 10\]/input_shape: [3, 10, 10]/; s/mean_value: \[128\]/mean_value: [128, 128, 128]/g' "$dir/net.spec" >"$dir/three.spec"
rc=0; "$TRAINC" check "$dir/three.spec" >"$dir/three.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "gray images have one channel, but net.input_shape has 3" "$dir/three.txt" \
  || { fail "gray with a 3-channel input: exit $rc"; cat "$dir/three.txt"; }
sed 's/ gray: true//g' "$dir/net.spec" >"$dir/nogray.spec"
rc=0; "$TRAINC" check "$dir/nogray.spec" >"$dir/nogray.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "image sources decode RGB (3 channels), but net.input_shape has 1" "$dir/nogray.txt" \
  && grep -q "set gray: true" "$dir/nogray.txt" || { fail "a 1-channel net on colour images: exit $rc"; cat "$dir/nogray.txt"; }
# OpenCV's filter resizes whole images, not a random-resized crop
sed 's/random_crop { size: 10 }/random_resized_crop { size: 10 }/; s/ resize_to: \[12, 12\]//' "$dir/net.spec" >"$dir/rrc.spec"
rc=0; "$TRAINC" check "$dir/rrc.spec" >"$dir/rrc.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "interpolation OPENCV_LINEAR resizes whole images" "$dir/rrc.txt" \
  || { fail "OPENCV_LINEAR with random_resized_crop: exit $rc"; cat "$dir/rrc.txt"; }
[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "gray ImageData (is_color: false): imported, trained, samples equal OpenCV's, mismatches refused"
