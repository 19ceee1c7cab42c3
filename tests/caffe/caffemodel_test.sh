#!/usr/bin/env bash
# Caffe's weights in and out. Google's protobuf (tests/caffe/caffemodel.py, Caffe's field
# numbers) writes two caffemodels: Caffe's LeNet (tests/caffe/lenet.prototxt) in the BVLC
# reference models' V1 form (`layers`, blobs shaped num/channels/height/width), and a net with
# Caffe's BatchNorm + Scale (tests/caffe/bn_net.prototxt) in today's form, with BatchNorm's
# moving-average factor not 1. Each net, imported as it is, trains one epoch from its
# caffemodel (--init-from, every layer in init.freeze, the statistics frozen by Caffe's
# use_global_stats) and its checkpoint comes out of `trainc export --format caffemodel`;
# protobuf reads that file back and every blob equals the one written (the statistics
# divided by the factor, which is then 1), and `--format safetensors` of the same checkpoint
# holds the same values under trainc's names. A trainer started from the exported file
# exports the same bytes again (the round trip). A bn without caffe_scale takes gamma and beta
# from the Scale that reads the BatchNorm's output, or from NVCaffe's five-blob BatchNorm, and
# is written as a Scale named NAME_scale, which reads back. init.fresh leaves out a layer the file lacks;
# a missing layer, another shape, a missing bias blob and a file that is no caffemodel are one
# message each, exit 1.
set -u
source tests/lib.sh
need_trainc
dir=$BUILD/test-caffe/caffemodel
fresh_dir "$dir"
export OMP_NUM_THREADS=1 PYTHONPATH=tests/caffe:tests/interop

"$PY" - "$dir" <<'PY' || die "writing the caffemodels"
import sys
import numpy as np
import caffemodel as cm
out = sys.argv[1]
r = np.random.default_rng(7)
lenet = [("conv1", "Convolution", "data", "conv1", [r.normal(0, .1, (20, 1, 5, 5)), r.normal(0, .1, 20)]),
         ("pool1", "Pooling", "conv1", "pool1", []),
         ("conv2", "Convolution", "pool1", "conv2", [r.normal(0, .05, (50, 20, 5, 5)), r.normal(0, .1, 50)]),
         ("ip1", "InnerProduct", "pool2", "ip1", [r.normal(0, .02, (500, 800)), r.normal(0, .1, 500)]),
         ("relu1", "ReLU", "ip1", "ip1", []),
         ("ip2", "InnerProduct", "ip1", "ip2", [r.normal(0, .05, (10, 500)), r.normal(0, .1, 10)])]
cm.write(out + "/lenet_v1.caffemodel", lenet, "LeNet", v1=True)
cm.write(out + "/lenet_no_ip2.caffemodel", lenet[:-1], "LeNet", v1=True)
wrong = lenet[:-1] + [("ip2", "InnerProduct", "ip1", "ip2", [r.normal(0, .05, (5, 500)), r.normal(0, .1, 5)])]
cm.write(out + "/lenet_ip2_5.caffemodel", wrong, "LeNet", v1=True)
nobias = lenet[:-1] + [("ip2", "InnerProduct", "ip1", "ip2", [lenet[-1][4][0]])]
cm.write(out + "/lenet_ip2_nobias.caffemodel", nobias, "LeNet")
factor = 999.5   # Caffe's sum of moving-average weights: the statistics are blob / factor
bn = [("conv1", "Convolution", "data", "conv1", [r.normal(0, .3, (4, 3, 3, 3))]),
      ("bn_conv1", "BatchNorm", "conv1", "conv1", [r.normal(0, .5, 4) * factor, r.uniform(.5, 2, 4) * factor,
                                                   np.array([factor])]),
      ("scale_conv1", "Scale", "conv1", "conv1", [r.uniform(.5, 1.5, 4), r.normal(0, .2, 4)]),
      ("conv1_relu", "ReLU", "conv1", "conv1", []),
      ("fc", "InnerProduct", "conv1", "fc", [r.normal(0, .1, (10, 144)), r.normal(0, .1, 10)])]
cm.write(out + "/bn.caffemodel", bn, "BNNet")
# NVCaffe's BatchNorm with scale_bias: gamma and beta as its 4th and 5th blobs, no Scale layer
bn5 = [bn[0], ("bn_conv1", "BatchNorm", "conv1", "conv1", bn[1][4] + bn[2][4]), bn[4]]
cm.write(out + "/bn5.caffemodel", bn5, "BNNet")
open(out + "/not.caffemodel", "wb").write(b"\x0a\x05LeNet\xff\xff\xff")
PY

# the nets as Caffe has them, each in a spec that gives data and solver and freezes every layer
for net in lenet bn_net; do
  "$TRAINC" import caffe tests/caffe/$net.prototxt -o "$dir/$net.spec" >/dev/null 2>"$dir/err" || { cat "$dir/err"; die "import $net"; }
done
wrap() {  # name, imported spec, init block
  cat >"$dir/$1.spec" <<SPEC
extends: "$2.spec"
data { train_samples: 16 train { source: "synthetic" batch_per_rank: 8 } }
$3
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.1 } }
SPEC
  "$TRAINC" build "$dir/$1.spec" -o "$dir/$1" >/dev/null 2>"$dir/err" || { cat "$dir/err"; die "build $1"; }
}
wrap lenet_t lenet 'init { freeze: ["conv1", "conv2", "ip1", "ip2"] }'
wrap bn_t bn_net 'init { freeze: ["conv1", "bn_conv1", "fc"] }'
wrap lenet_fresh lenet 'init { fresh: ["ip2"] }'
# a bn without caffe_scale (a spec written for trainc): the Scale after the BatchNorm is found
# by its bottom, and written as bn_conv1_scale
sed 's/ caffe_scale: "scale_conv1"//' "$dir/bn_net.spec" >"$dir/bn_own.spec"
grep -q caffe_scale "$dir/bn_own.spec" && die "bn_own.spec still names caffe_scale"
wrap bn_own_t bn_own 'init { freeze: ["conv1", "bn_conv1", "fc"] }'
grep -q "lprotobuf-c" "$dir/lenet_t.src/link_libs.txt" || fail "an init block without init.spec links protobuf-c"

# in: from Caffe's files; out: trainc export --format caffemodel and --format safetensors
run_export() {  # trainer, caffemodel, tag
  "$dir/$1" --init-from "$2" --out "$dir/$3.run" >"$dir/$3.log" 2>&1 || { fail "$3: training from $2:"; tail -3 "$dir/$3.log"; return 1; }
  grep -q "values from $2" "$dir/$3.log" || { fail "$3: no 'values from' line"; return 1; }
  ckpt=$(ls "$dir/$3.run/checkpoints/"ckpt-*.bin | tail -1)
  "$TRAINC" export "$ckpt" --spec "$dir/$1.spec" --format caffemodel -o "$dir/$3.out.caffemodel" >/dev/null \
    && "$TRAINC" export "$ckpt" --spec "$dir/$1.spec" --format safetensors -o "$dir/$3.out.safetensors" >/dev/null \
    || fail "$3: export"
}
run_export lenet_t "$dir/lenet_v1.caffemodel" lenet
run_export bn_t "$dir/bn.caffemodel" bn
"$PY" - "$dir" <<'PY' || fail "the exported blobs differ from the loaded ones"
import sys
import numpy as np
import caffemodel as cm
from torch_check import read_safetensors
out = sys.argv[1]
bad = 0
for tag, src in (("lenet", "lenet_v1"), ("bn", "bn")):
    _, a = cm.read(f"{out}/{src}.caffemodel")
    name, b = cm.read(f"{out}/{tag}.out.caffemodel")
    st, _ = read_safetensors(f"{out}/{tag}.out.safetensors")
    with_blobs = [k for k in a if a[k][1]]
    if sorted(with_blobs) != sorted(b):
        print(f"{tag}: layers {sorted(b)}, expected {sorted(with_blobs)}"); bad += 1; continue
    for k in with_blobs:
        want = [x.astype(np.float32) for x in a[k][1]]
        if a[k][0] == "BatchNorm":   # exported as statistics with a factor of 1
            f = want[2][0]
            want = [(x.astype(np.float64) / f).astype(np.float32) for x in want[:2]] + [np.ones(1, np.float32)]
        got = b[k][1]
        for i, (w, g) in enumerate(zip(want, got)):
            if src == "lenet_v1" and w.ndim > g.ndim and all(d == 1 for d in w.shape[:w.ndim - g.ndim]):
                w = w.reshape(w.shape[w.ndim - g.ndim:])   # V1's [1, 1, out, in] is [out, in], [1, 1, 1, out] [out]
            if w.shape != g.shape or not np.array_equal(w, g):
                print(f"{tag}: {k} blob {i}: {g.shape} vs {w.shape}, max diff {np.abs(g - w).max() if w.shape == g.shape else '-'}"); bad += 1
        # trainc's own names hold the same values (the safetensors export is checked against torch)
        names = {"Convolution": ["weight", "bias"], "InnerProduct": ["weight", "bias"],
                 "BatchNorm": ["running_mean", "running_var"], "Scale": ["weight", "bias"]}[a[k][0]]
        layer = "bn_conv1" if k == "scale_conv1" else k
        for i, n in enumerate(names[:len(got)]):
            t = st[f"{layer}.{n}"].numpy().reshape(got[i].shape)
            if not np.array_equal(t, got[i]):
                print(f"{tag}: safetensors {layer}.{n} differs from caffemodel {k} blob {i}"); bad += 1
    print(f"{tag}: {len(with_blobs)} layers, every blob as loaded ({name})")
sys.exit(bad > 0)
PY

# the round trip: a trainer started from trainc's caffemodel writes the same file again
run_export bn_t "$dir/bn.out.caffemodel" bn2
cmp -s "$dir/bn.out.caffemodel" "$dir/bn2.out.caffemodel" && echo "round trip: the exported caffemodel exports to the same bytes" \
  || fail "round trip: $dir/bn2.out.caffemodel differs from $dir/bn.out.caffemodel"

# without caffe_scale: in from the Scale that reads the BatchNorm's top, and from NVCaffe's
# five-blob BatchNorm; out as bn_conv1_scale, which reads back by that name
run_export bn_own_t "$dir/bn.caffemodel" own
run_export bn_own_t "$dir/bn5.caffemodel" own5
run_export bn_own_t "$dir/own.out.caffemodel" own2
"$PY" - "$dir" <<'PY' || fail "a bn without caffe_scale: gamma and beta"
import sys
import numpy as np
import caffemodel as cm
out = sys.argv[1]
_, src = cm.read(f"{out}/bn.caffemodel")
want = [x.astype(np.float32) for x in src["scale_conv1"][1]]
bad = 0
for tag in ("own", "own5", "own2"):
    _, got = cm.read(f"{out}/{tag}.out.caffemodel")
    if "bn_conv1_scale" not in got or "scale_conv1" in got:
        print(f"{tag}: layers {sorted(got)}"); bad += 1; continue
    if not all(np.array_equal(w, g) for w, g in zip(want, got["bn_conv1_scale"][1])):
        print(f"{tag}: gamma/beta differ from the source's Scale"); bad += 1
print("without caffe_scale: gamma and beta from the Scale after the BatchNorm, from NVCaffe's 5 blobs, and back "
      "from bn_conv1_scale")
sys.exit(bad > 0)
PY

# init.fresh: a layer the caffemodel lacks starts anew
"$dir/lenet_fresh" --init-from "$dir/lenet_no_ip2.caffemodel" --out "$dir/fresh.run" >"$dir/fresh.log" 2>&1 \
  && grep -q "1 layer fresh" "$dir/fresh.log" || { fail "init.fresh with a caffemodel without ip2:"; tail -3 "$dir/fresh.log"; }

# one message each, exit 1
expect_error() {  # caffemodel, expected text
  if "$dir/lenet_t" --init-from "$1" --out "$dir/err.run" >"$dir/err.log" 2>&1; then
    fail "$(basename "$1"): accepted"
  elif ! grep -qF "$2" "$dir/err.log"; then
    fail "$(basename "$1"): expected '$2'"; cat "$dir/err.log"
  fi
  rm -rf "$dir/err.run"
}
expect_error "$dir/lenet_no_ip2.caffemodel" 'has no layer "ip2"'
expect_error "$dir/lenet_ip2_5.caffemodel" 'the first blob of layer "ip2" is [1, 1, 5, 500] in'
expect_error "$dir/lenet_ip2_nobias.caffemodel" 'layer "ip2" in'
expect_error "$dir/not.caffemodel" 'is not a Caffe NetParameter'
expect_error "$dir/missing.caffemodel" 'missing.caffemodel'

[ $failures -gt 0 ] && { echo "$failures failure(s)"; exit 1; }
echo "caffemodel: V1 and today's files in, Caffe's form out, the same blobs; errors named"
