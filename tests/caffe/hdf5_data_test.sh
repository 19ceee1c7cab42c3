#!/usr/bin/env bash
# Caffe's HDF5Data layer as the hdf5 source. h5py writes three training files and one test
# file of float samples [N, 2, 6, 6] (two classes, Gaussian around different means) with
# labels [N, 1], and their lists; tests/caffe/hdf5_data.prototxt imports to source "hdf5"
# with the files' shape and sample count. Started from a caffemodel (tests/caffe/caffemodel.py),
# the trainer's first loss over the whole training set in one batch equals numpy's forward of
# the same weights on the same floats (the samples reach the net as they are), and it trains
# above 90% top-1. The promises of the in-memory sources hold: the same global batch on 1 and
# 2 ranks trains to the same per-step losses, and a resumed run ends at the params_hash of the
# one that never stopped. A label that is not a class index and a missing file are named, exit
# 1; the CUDA backend is refused at build time.
set -u
source tests/lib.sh
need_trainc
dir=$BUILD/test-caffe/hdf5_data
fresh_dir "$dir"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PYTHONPATH=tests/caffe

"$PY" - "$dir" <<'PY' || die "writing the HDF5 files"
import sys
import h5py
import numpy as np
import caffemodel as cm
out = sys.argv[1]
r = np.random.default_rng(5)
def samples(n):
    y = np.arange(n) % 2
    x = r.normal(0, 1, (n, 2, 6, 6)) + np.where(y == 0, -0.7, 0.7)[:, None, None, None]
    return x.astype(np.float32), y.astype(np.float32).reshape(n, 1)
names = []
for i, n in enumerate((40, 40, 16)):
    x, y = samples(n)
    with h5py.File(f"{out}/train{i}.h5", "w") as f:
        f["data"], f["label"] = x, y
    names.append(f"{out}/train{i}.h5")
open(f"{out}/train.txt", "w").write("\n".join(names) + "\n")
x, y = samples(32)
with h5py.File(f"{out}/val.h5", "w") as f:
    f["data"], f["label"] = x.astype(np.float64), y   # any type HDF5 converts to float
open(f"{out}/val.txt", "w").write(f"{out}/val.h5\n")
x, y = samples(8)
y[3] = 2.5
with h5py.File(f"{out}/bad.h5", "w") as f:
    f["data"], f["label"] = x, y
open(f"{out}/bad.txt", "w").write(f"{out}/bad.h5\n")
open(f"{out}/gone.txt", "w").write(f"{out}/train0.h5\n{out}/nothing.h5\n")
# weights to start from, and numpy's loss over the whole training set with them
w1, b1 = r.normal(0, .3, (4, 2, 3, 3)), r.normal(0, .1, 4)
w2, b2 = r.normal(0, .1, (2, 64)), r.normal(0, .1, 2)
cm.write(f"{out}/start.caffemodel", [("conv1", "Convolution", "data", "conv1", [w1, b1]),
                                      ("ip1", "InnerProduct", "conv1", "ip1", [w2, b2])], "HDF5Net")
X = np.concatenate([h5py.File(n, "r")["data"][:] for n in names]).astype(np.float64)
Y = np.concatenate([h5py.File(n, "r")["label"][:] for n in names]).astype(np.int64).ravel()
w1, b1, w2, b2 = (a.astype(np.float32).astype(np.float64) for a in (w1, b1, w2, b2))
conv = np.zeros((len(X), 4, 4, 4))
for i in range(4):
    for j in range(4):
        conv[:, :, i, j] = np.einsum("nchw,ochw->no", X[:, :, i:i + 3, j:j + 3], w1) + b1
z = np.maximum(conv, 0).reshape(len(X), -1) @ w2.T + b2
z -= z.max(1, keepdims=True)
loss = -(z[np.arange(len(X)), Y] - np.log(np.exp(z).sum(1))).mean()
open(f"{out}/numpy_loss.txt", "w").write(repr(loss))
PY
sed "s|TRAIN_LIST|$dir/train.txt|; s|VAL_LIST|$dir/val.txt|" tests/caffe/hdf5_data.prototxt >"$dir/net.prototxt"
"$TRAINC" import caffe "$dir/net.prototxt" -o "$dir/net.spec" >"$dir/import.txt" 2>&1 || { cat "$dir/import.txt"; die "import"; }
for want in 'source: "hdf5"' 'input_shape: [2, 6, 6]' 'train_samples: 96' "path: \"$dir/val.txt\""; do
  grep -qF "$want" "$dir/net.spec" || fail "imported spec lacks '$want'"
done
grep -q "HDF5Data \"data\" -> data.train, hdf5" "$dir/import.txt" || fail "the summary names the HDF5Data mapping"

spec() {  # name, batch_per_rank, ranks, epochs, extra
  cat >"$dir/$1.spec" <<SPEC
extends: "net.spec"
data { train { batch_per_rank: $2 } }
solver { epochs: $4 log_every: 1 sgd { momentum: 0.9 lr_in_velocity: true } lr { base: 0.05 } }
parallel { ranks: $3 }
$5
SPEC
  "$TRAINC" build "$dir/$1.spec" -o "$dir/$1" >/dev/null 2>"$dir/$1.err" || { cat "$dir/$1.err"; die "build $1"; }
}
source tests/caffe/source_promises.sh

# the floats reach the net as they are: the first loss over all 96 samples against numpy
spec whole 96 1 1 'init { }'
"$dir/whole" --init-from "$dir/start.caffemodel" --out "$dir/whole.run" >"$dir/whole.log" 2>&1 || { fail "from the caffemodel:"; tail -3 "$dir/whole.log"; }
"$PY" - "$dir" <<'PY' || fail "first loss differs from numpy's"
import json, sys
out = sys.argv[1]
first = [r for r in map(json.loads, open(out + "/whole.run/metrics.jsonl")) if r["event"] == "train"][0]
ref = float(open(out + "/numpy_loss.txt").read())
print("first loss over the 96 HDF5 samples: trainer %.7f, numpy %.7f" % (first["loss"], ref))
sys.exit(abs(first["loss"] - ref) > 1e-5 * abs(ref))
PY

spec r1 16 1 6 ''
spec r2 8 2 6 ''
"$dir/r1" --out "$dir/r1.run" >"$dir/r1.log" 2>&1 || { fail "1 rank:"; tail -3 "$dir/r1.log"; }
top1=$(summary_of "$dir/r1.run/metrics.jsonl" top1 2>/dev/null || echo 0)
"$PY" -c "import sys; sys.exit(float('$top1') < 0.9)" && echo "trains from the HDF5 files: top-1 $top1" || fail "top-1 $top1 < 0.9"
same_on_two_ranks "$dir" 20
exact_resume "$dir" 3

# named, exit 1
"$dir/r1" --data "$dir/bad.txt" --out "$dir/bad.run" >"$dir/bad.log" 2>&1 && fail "a label of 2.5 was accepted"
grep -qF "$dir/bad.h5: \"label\" row 3 is 2.5, not a class index 0..1" "$dir/bad.log" || { fail "bad label message"; cat "$dir/bad.log"; }
"$dir/r1" --data "$dir/gone.txt" --out "$dir/gone.run" >"$dir/gone.log" 2>&1 && fail "a missing file was accepted"
grep -qF "$dir/nothing.h5" "$dir/gone.log" || { fail "missing file message"; cat "$dir/gone.log"; }
if "$TRAINC" build "$dir/r1.spec" --backend cuda -o "$dir/r1cuda" >"$dir/cuda.log" 2>&1; then
  fail "the CUDA backend was not refused"
else
  grep -q "HDF5 samples are floats" "$dir/cuda.log" || { fail "CUDA refusal message"; cat "$dir/cuda.log"; }
fi

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "hdf5 source (Caffe's HDF5Data): imported, floats as they are, the same batches on 1 and 2 ranks, exact resume"
