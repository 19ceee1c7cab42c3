#!/usr/bin/env bash
# Caffe's DataTransformer on its databases: tests/caffe/caffe_transform.prototxt (crop_size 24
# of Fashion-MNIST's 28x28 LMDB records, mirror, compute_image_mean's mean_file, scale) imports
# exactly (normalize.mean_file, random_crop / center_crop) and, started from a caffemodel with a
# learning rate too small to move a float32 weight, the trainer's evaluation loss over the 50
# test records equals numpy's forward of Caffe's TEST transform: the center window at
# ((28 - 24) / 2, (28 - 24) / 2), the mean image subtracted at the pixels' stored places, then
# the scale. It trains (the random windows: tests/unit/test_data_loader's check_caffe_window);
# a mean image of another size is refused by the import, and by the trainer through --data; --predict
# (image files) is refused with a mean image.
set -u
source tests/lib.sh
need_trainc
TRAINC=$PWD/$TRAINC
dir=$BUILD/test-caffe/caffe_transform
fresh_dir "$dir"
mkdir -p "$dir/examples/mnist"
export OMP_NUM_THREADS=1 PYTHONPATH=tests/caffe
fmnist=${FMNIST_DIR:-/usr/share/datasets/fashion-mnist}
"$PY" tests/caffe/write_mnist_lmdb.py "$fmnist" "$dir/examples/mnist" --small 50 >/dev/null || die "writing the LMDBs"
"$PY" - "$dir" "$fmnist" <<'PY' || die "numpy's reference"
import gzip, struct, sys
import numpy as np
import caffemodel as cm
out, idx = sys.argv[1], sys.argv[2]
def images(split):
    raw = gzip.open(f"{idx}/{split}-images-idx3-ubyte.gz").read()
    return np.frombuffer(raw[16:], np.uint8).reshape(-1, 28, 28)[:50].astype(np.float64)
labels = np.frombuffer(gzip.open(f"{idx}/t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)[:50].astype(np.int64)
mean = images("train").mean(0).astype(np.float32).astype(np.float64)   # compute_image_mean's, stored as floats
r = np.random.default_rng(3)
w, b = r.normal(0, .05, (10, 576)), r.normal(0, .1, 10)
cm.write(f"{out}/start.caffemodel", [("ip1", "InnerProduct", "data", "ip1", [w, b])], "TransformNet")
w, b = w.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
x = ((images("t10k") - mean)[:, 2:26, 2:26] * 0.00390625).reshape(50, -1)   # TEST: the center window
z = x @ w.T + b
z -= z.max(1, keepdims=True)
open(f"{out}/numpy_loss.txt", "w").write(repr(-(z[np.arange(50), labels] - np.log(np.exp(z).sum(1))).mean()))
# a 1x20x20 mean image (the wrong size), as a BlobProto
blob = cm.M["BlobProto"](num=1, channels=1, height=20, width=20, data=[100.0] * 400)
open(f"{out}/examples/mnist/small_mean.binaryproto", "wb").write(blob.SerializeToString())
PY
cp tests/caffe/caffe_transform.prototxt "$dir/examples/mnist/"
sed 's|examples/mnist/mean.binaryproto|examples/mnist/small_mean.binaryproto|' tests/caffe/caffe_transform.prototxt \
  >"$dir/examples/mnist/small_mean.prototxt"
(cd "$dir" && "$TRAINC" import caffe examples/mnist/caffe_transform.prototxt -o net.spec) >"$dir/import.txt" 2>&1 \
  || { cat "$dir/import.txt"; die "import"; }
for want in 'input_shape: [1, 24, 24]' 'augment { random_crop { size: 24 } flip: true }' 'center_crop: 24' \
            'normalize { mean_file: "examples/mnist/mean.binaryproto" scale: 0.00390625 }'; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q approximated "$dir/net.spec" && fail "the import notes an approximation"
rc=0; (cd "$dir" && "$TRAINC" import caffe examples/mnist/small_mean.prototxt -o small.spec) >"$dir/small.txt" 2>&1 || rc=$?
[ $rc = 1 ] && grep -q 'the mean file examples/mnist/small_mean.binaryproto is a 1x20x20 image, the database.s images 1x28x28' \
  "$dir/small.txt" || { fail "a 20x20 mean image for 28x28 records: exit $rc"; cat "$dir/small.txt"; }

cat >"$dir/still.spec" <<'SPEC'
extends: "net.spec"
init { }
solver { epochs: 1 sgd { momentum: 0 } lr { base: 1e-30 } }
SPEC
cat >"$dir/train.spec" <<'SPEC'
extends: "net.spec"
solver { epochs: 8 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.01 } }
SPEC
for s in still train; do
  "$TRAINC" build "$dir/$s.spec" -o "$dir/$s" >/dev/null 2>"$dir/$s.err" || { cat "$dir/$s.err"; die "build $s"; }
done
(cd "$dir" && ./still --init-from start.caffemodel --out still.run) >"$dir/still.log" 2>&1 || { tail -3 "$dir/still.log"; die "run from the caffemodel"; }
"$PY" - "$dir" <<'PY' || fail "the evaluation loss differs from numpy's"
import json, sys
out = sys.argv[1]
ev = [r for r in map(json.loads, open(out + "/still.run/metrics.jsonl")) if r["event"] == "eval"][-1]
ref = float(open(out + "/numpy_loss.txt").read())
print("loss over the 50 center-cropped, mean-subtracted test records: trainer %.7f, numpy %.7f" % (ev["loss"], ref))
sys.exit(abs(ev["loss"] - ref) > 1e-5 * abs(ref))
PY
rc=0; (cd "$dir" && ./still --predict still.run/no.ckpt some.png) >"$dir/predict.log" 2>&1 || rc=$?
[ $rc = 2 ] && grep -q "predict decodes image files, and this spec subtracts Caffe's mean image" "$dir/predict.log" ||
  { fail "--predict with a mean image: exit $rc"; cat "$dir/predict.log"; }
(cd "$dir" && ./train --out train.run) >"$dir/train.log" 2>&1 || { fail "training:"; tail -3 "$dir/train.log"; }
"$PY" - "$dir" <<'PY' || fail "training from the random windows did not lower the loss"
import json, sys
rs = [r for r in map(json.loads, open(sys.argv[1] + "/train.run/metrics.jsonl")) if r["event"] == "train"]
print("training loss %.4f -> %.4f over %d steps" % (rs[0]["loss"], rs[-1]["loss"], len(rs)))
sys.exit(not rs[-1]["loss"] < 0.8 * rs[0]["loss"])
PY
# the trainer checks the mean image against the database it reads
mkdir -p "$dir/big"
"$PY" - "$dir/big" <<'PY' || die "writing a 32x32 LMDB"
import sys, lmdb
sys.path.insert(0, "tests/caffe")
import write_mnist_lmdb as w
D = w.datum_class()
env = lmdb.open(sys.argv[1] + "/db", map_size=1 << 24)
with env.begin(write=True) as t:
    for i in range(50):
        t.put(b"%08d" % i, D(channels=1, height=32, width=32, data=bytes(1024), label=i % 10).SerializeToString())
PY
(cd "$dir" && ./train --data big/db --out big.run) >"$dir/big.log" 2>&1 && fail "a 28x28 mean image over 32x32 records was accepted"
grep -q "the mean file examples/mnist/mean.binaryproto is a 1x28x28 image, the database's images 1x32x32" "$dir/big.log" \
  || { fail "the trainer's mean-size message"; tail -3 "$dir/big.log"; }

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "Caffe's transform on LMDBs (crop_size, mirror, mean_file, scale): imported exactly, numpy's TEST forward, trains"
