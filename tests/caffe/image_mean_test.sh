#!/usr/bin/env bash
# Caffe's ImageData with a mean_file, exactly: tests/caffe/image_mean.prototxt (PNG images at
# new_height x new_width 12x11, so the resize keeps them as they are; crop_size 8, mirror, a
# 3x12x11 mean image, scale) imports with normalize.mean_file and no approximation, and, started
# from a caffemodel with a learning rate too small to move a float32 weight:
# - TRAIN: every training image is the mean image plus one colour per image, so Caffe's
#   transform (the mean subtracted at the pixel's place in the resized image, then the random
#   crop and mirror) gives that colour at every pixel whatever the crop and the mirror; each
#   step's loss (one batch of all 16 images) equals numpy's. A mean taken at the crop's own
#   pixels, or not mirrored with the image, does not give it.
# - TEST: the evaluation loss over 16 random images equals numpy's forward of Caffe's center
#   crop at ((12 - 8) / 2, (11 - 8) / 2) = (2, 1) (integer division, as Caffe's).
# Without new_height/new_width the images are read at the mean's size (a note). A mean image of
# another size is refused by the import and by the trainer, and mean_file on an image list
# without resize_to by the check. On random images (whose crops differ) the source keeps the
# other sources' promises: the same per-step losses on 1 and 2 ranks, an exact resume.
set -u
source "$(dirname "$0")/../lib.sh"
need_trainc
TRAINC=$PWD/$TRAINC
dir=$BUILD/test-caffe/image_mean
fresh_dir "$dir"
mkdir -p "$dir/data/img"
export OMP_NUM_THREADS=1 PYTHONPATH=tests/caffe
"$PY" - "$dir" <<'PY' || die "writing the images and numpy's reference"
import sys
import numpy as np
from PIL import Image
import caffemodel as cm
out = sys.argv[1]
r = np.random.default_rng(5)
C, H, W, K, S = 3, 12, 11, 8, 0.0078125
mean = r.integers(0, 150, (C, H, W)).astype(np.float64)   # B, G, R planes, as compute_image_mean's
def save(name, bgr):   # a C x H x W array in B, G, R order, as an RGB PNG
    Image.fromarray(bgr[::-1].transpose(1, 2, 0).astype(np.uint8)).save(f"{out}/data/img/{name}")
train, colours = [], []
for i in range(16):
    c = r.integers(0, 100, 3).astype(np.float64)
    save(f"t{i}.png", mean + c[:, None, None])
    colours.append(c)
    train.append(f"t{i}.png {int(c[0] > c[2])}")
val, xs, vl = [], [], []
for i in range(16):
    px = r.integers(0, 256, (C, H, W)).astype(np.float64)
    save(f"v{i}.png", px)
    val.append(f"v{i}.png {i % 2}")
    xs.append(((px - mean)[:, 2:2 + K, 1:1 + K] * S).ravel())
    vl.append(i % 2)
open(f"{out}/data/train.txt", "w").write("\n".join(train) + "\n")
for i in range(16):   # for the promises: images whose crops differ
    save(f"r{i}.png", r.integers(0, 256, (C, H, W)).astype(np.float64))
open(f"{out}/data/train_rand.txt", "w").write("".join(f"r{i}.png {i % 2}\n" for i in range(16)))
open(f"{out}/data/val.txt", "w").write("\n".join(val) + "\n")
blob = cm.M["BlobProto"](num=1, channels=C, height=H, width=W, data=mean.ravel().tolist())
open(f"{out}/data/mean.binaryproto", "wb").write(blob.SerializeToString())
small = cm.M["BlobProto"](num=1, channels=C, height=10, width=10, data=[100.0] * 300)
open(f"{out}/data/small_mean.binaryproto", "wb").write(small.SerializeToString())
w, b = r.normal(0, .05, (2, C * K * K)), r.normal(0, .1, 2)
cm.write(f"{out}/start.caffemodel", [("ip1", "InnerProduct", "data", "ip1", [w, b])], "ImageMeanNet")
w, b = w.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
def loss(x, y):
    z = x @ w.T + b
    z -= z.max(1, keepdims=True)
    return -(z[np.arange(len(y)), y] - np.log(np.exp(z).sum(1))).mean()
xt = np.array([np.broadcast_to((c * S)[:, None, None], (C, K, K)).ravel() for c in colours])
yt = np.array([int(c[0] > c[2]) for c in colours])
open(f"{out}/numpy_loss.txt", "w").write("%r %r" % (loss(xt, yt), loss(np.array(xs), np.array(vl))))
PY
cp tests/caffe/image_mean.prototxt "$dir/net.prototxt"
sed 's|data/mean.binaryproto|data/small_mean.binaryproto|' tests/caffe/image_mean.prototxt >"$dir/small.prototxt"
(cd "$dir" && "$TRAINC" import caffe net.prototxt -o net.spec) >"$dir/import.txt" 2>&1 || { cat "$dir/import.txt"; die "import"; }
for want in 'resize_to: [12, 11]' 'augment { random_crop { size: 8 } flip: true }' 'center_crop: 8' \
            'normalize { mean_file: "data/mean.binaryproto" scale: 0.0078125 }'; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q approximated "$dir/net.spec" && fail "the import notes an approximation"
grep -q "mean image data/mean.binaryproto" "$dir/import.txt" || fail "the summary names the mean image"
grep -q "cv::resize" "$dir/net.spec" || fail "the spec's notes say how the resize differs from Caffe's"
rc=0; (cd "$dir" && "$TRAINC" import caffe small.prototxt -o small.spec) >"$dir/small.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'the mean file data/small_mean.binaryproto is a 3x10x10 image, the resized images 3x12x11' \
  "$dir/small.txt" || { fail "a 10x10 mean image for 12x11 images: exit $rc"; cat "$dir/small.txt"; }
# without new_height/new_width: the images are read at the mean's size (Caffe refuses others)
sed 's/ new_height: 12 new_width: 11//' tests/caffe/image_mean.prototxt >"$dir/own.prototxt"
(cd "$dir" && "$TRAINC" import caffe own.prototxt -o own.spec) >"$dir/own.txt" 2>&1 || { cat "$dir/own.txt"; fail "import without new_height"; }
grep -qF 'resize_to: [12, 11]' "$dir/own.spec" && grep -q "no new_height/new_width; the images are read at the mean image's 12x11" \
  "$dir/own.spec" || fail "without new_height, the spec reads the images at the mean's size, with a note"
sed '/resize_to/s/ resize_to: \[12, 11\]//g' "$dir/net.spec" >"$dir/noresize.spec"
rc=0; "$TRAINC" check "$dir/noresize.spec" >"$dir/noresize.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "mean_file on an image list needs every image resized to one size (resize_to)" "$dir/noresize.txt" \
  || { fail "mean_file on an image list without resize_to: exit $rc"; cat "$dir/noresize.txt"; }

cat >"$dir/still.spec" <<'SPEC'
extends: "net.spec"
init { }
data { decode_threads: 2 }
solver { epochs: 3 log_every: 1 sgd { momentum: 0 } lr { base: 1e-30 } }
SPEC
"$TRAINC" build "$dir/still.spec" -o "$dir/still" >/dev/null 2>"$dir/still.err" || { cat "$dir/still.err"; die "build"; }
(cd "$dir" && ./still --init-from start.caffemodel --out still.run) >"$dir/still.log" 2>&1 || { tail -3 "$dir/still.log"; die "run from the caffemodel"; }
"$PY" - "$dir" <<'PY' || fail "the losses differ from numpy's"
import json, sys
out = sys.argv[1]
rs = list(map(json.loads, open(out + "/still.run/metrics.jsonl")))
train = [r["loss"] for r in rs if r["event"] == "train"]
ev = [r for r in rs if r["event"] == "eval"][-1]
ref_t, ref_v = map(float, open(out + "/numpy_loss.txt").read().split())
print("TRAIN (random crops, mirrored at random): trainer %s, numpy %.7f" % (" ".join("%.7f" % l for l in train), ref_t))
print("TEST (center crop): trainer %.7f, numpy %.7f" % (ev["loss"], ref_v))
bad = len(train) != 3 or any(abs(l - ref_t) > 1e-5 * abs(ref_t) for l in train) or abs(ev["loss"] - ref_v) > 1e-5 * abs(ref_v)
sys.exit(bad)
PY

# the trainer checks the mean image against resize_to
cat >"$dir/wide.spec" <<'SPEC'
extends: "net.spec"
data { train { resize_to: [12, 12] } val { resize_to: [12, 12] } }
solver { epochs: 1 sgd { momentum: 0 } lr { base: 0.01 } }
SPEC
"$TRAINC" build "$dir/wide.spec" -o "$dir/wide" >/dev/null 2>"$dir/wide.err" || { cat "$dir/wide.err"; die "build wide"; }
rc=0; (cd "$dir" && ./wide --out wide.run) >"$dir/wide.log" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q "the mean file data/mean.binaryproto is a 3x12x11 image, and data.train resizes the images to 3x12x12" \
  "$dir/wide.log" || { fail "a 12x11 mean image for images resized to 12x12: exit $rc"; tail -3 "$dir/wide.log"; }

# the promises of the other sources, on images whose crops differ (data/train_rand.txt): the same
# global batch of 16 on 1 and 2 ranks, the same per-step losses; stopped after epoch 2 and
# resumed, the same params as the run that never stopped
for r in 1 2; do
  cat >"$dir/r$r.spec" <<SPEC
extends: "net.spec"
data { train { path: "data/train_rand.txt" batch_per_rank: $((16 / r)) } decode_threads: 2 }
solver { epochs: 6 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.01 } }
parallel { ranks: $r }
SPEC
  "$TRAINC" build "$dir/r$r.spec" -o "$dir/r$r" >/dev/null 2>"$dir/r$r.err" || { cat "$dir/r$r.err"; die "build r$r"; }
done
source tests/caffe/source_promises.sh
cd "$dir"   # the lists' paths are relative, as Caffe's
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
./r1 --out r1.run >r1.log 2>&1 || { fail "1 rank:"; tail -3 r1.log; }
same_on_two_ranks . 6
exact_resume . 2

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "Caffe's ImageData mean_file: imported exactly; TRAIN crops and mirrors and the TEST center crop equal numpy's; 1 vs 2 ranks, resume"
