#!/usr/bin/env bash
# --layout nhwc for the ops AlexNet, GoogLeNet and VGG need, in whole trainers under the
# emulator (tests/emu/): a small net with across-channels and within-channel LRN, a channel
# concat, average pooling and adaptive average pooling, then two heads: a flatten, a dropout
# and a linear (torchvision's AlexNet classifier), and a dropout and a linear straight on a
# tensor with positions (Caffe's InnerProduct), summed into the logits. BF16, 4 steps of
# batch 4 on synthetic data, built channels-last and NCHW with the same seed: per step the
# losses, and the final checkpoint's parameters, agree within 5e-3 relative (why: below);
# the channels-last trainer allocates no more device memory than its start-up check counted;
# and a tiny AlexNet-shaped spec (11x11/4 stem, max pools, LRN, adaptive pooling, flatten,
# dropout, linears) builds channels-last. test_ops_gpu checks each kernel against the CPU op.
#
# The tolerance: both runs keep BF16 activations, and the two layouts reach the same values
# by different summation orders (a linear on positions runs as a cuDNN conv channels-last,
# as a cuBLASLt GEMM in NCHW); an FP32 sum that differs in its last bits rounds to a BF16
# value one unit (2^-8 relative) apart now and then, and 4 SGD steps carry such differences
# into the loss and the weights at well under 5e-3 (measured: 6e-5 and 2e-4). A wrong
# flatten order, mask or window changes them by far more (the dropout mask drawn at the
# channels-last index instead: 1.5e-1).
set -u
. tests/emu/emu_prelude.sh
emu_prelude test-emu-nhwc-ops
status=0

cat > "$out/ops.spec" <<'SPEC'
name: "nhwc_ops_emu"
seed: 5
net {
  input_shape: [3, 12, 12]
  classes: 10
  conv { name: "c1" out: 10 kernel: 3 pad: 1 }
  relu { name: "r1" }
  lrn { name: "norm1" size: 5 alpha: 0.5 beta: 0.75 k: 2 }
  conv { name: "a" out: 6 kernel: 1 inputs: ["norm1"] }
  conv { name: "b" out: 7 kernel: 3 pad: 1 inputs: ["norm1"] }
  concat { name: "cat" inputs: ["a", "b"] }
  avgpool { name: "pool" kernel: 2 stride: 2 }
  lrn { name: "norm2" size: 3 alpha: 0.5 beta: 0.75 k: 1 region: WITHIN_CHANNEL }
  adaptive_avgpool { name: "ap" size: 3 }
  flatten { name: "flat" }
  dropout { name: "drop" p: 0.3 }
  linear { name: "fc_a" out: 10 }
  dropout { name: "drop_pos" p: 0.2 inputs: ["pool"] }
  linear { name: "fc_b" out: 10 }
  add { name: "logits" inputs: ["fc_a", "fc_b"] }
}
data {
  train { source: "synthetic" samples: 16 batch_per_rank: 4 }
  val { source: "synthetic" batch_per_rank: 4 }
  val_samples: 4
}
precision { compute: BF16 }
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.05 } log_every: 1 }
SPEC

cat > "$out/alexnet_tiny.spec" <<'SPEC'
name: "alexnet_tiny_nhwc"
net {
  input_shape: [3, 67, 67]
  classes: 10
  conv { name: "conv1" out: 16 kernel: 11 stride: 4 pad: 2 }
  relu { name: "relu1" }
  lrn { name: "norm1" size: 5 alpha: 0.0001 beta: 0.75 }
  maxpool { name: "pool1" kernel: 3 stride: 2 }
  conv { name: "conv2" out: 24 kernel: 5 pad: 2 }
  relu { name: "relu2" }
  maxpool { name: "pool2" kernel: 3 stride: 2 }
  adaptive_avgpool { name: "avgpool" size: 3 }
  flatten { name: "flatten" }
  dropout { name: "drop6" p: 0.5 }
  linear { name: "fc6" out: 32 }
  relu { name: "relu6" }
  dropout { name: "drop7" p: 0.5 }
  linear { name: "fc7" out: 10 }
}
data { train { source: "synthetic" samples: 8 batch_per_rank: 4 } }
precision { compute: BF16 }
solver { epochs: 1 sgd { momentum: 0.9 } lr { base: 0.01 } }
SPEC

run() {  # tag [trainc flags...]: builds and runs $out/TAG from ops.spec on the emulated GPU
  local tag=$1; shift
  "$BUILD/trainc" build "$out/ops.spec" -o "$out/$tag" --backend cuda "$@" > "$out/$tag.build" 2>&1 ||
    { fail "$tag: trainc build $*"; tail -20 "$out/$tag.build"; return 1; }
  "$out/$tag" --out "$out/$tag.run" > "$out/$tag.log" 2>&1 || { fail "$tag: the run"; tail -25 "$out/$tag.log"; return 1; }
}

# The last checkpoint's parameters (FP32 master weights, the spec's C,H,W order in both).
params_close() {  # what, run dir A, run dir B, relative tolerance
  "$PY" - "$@" <<'PY'
import array, glob, struct, sys
what, a, b, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
def params(d):
    path = sorted(glob.glob(d + "/checkpoints/ckpt-*.bin"))[-1]
    raw = open(path, "rb").read()
    n, off = struct.unpack_from("<I", raw, 12)[0], 112
    for _ in range(n):
        ln = struct.unpack_from("<I", raw, off)[0]; off += 4
        name = raw[off:off + ln].decode(); off += ln
        size = struct.unpack_from("<Q", raw, off)[0]; off += 12
        if name == "params": return list(array.array("f", raw[off:off + size]))
        off += size
    sys.exit(f"{path}: no params section")
pa, pb = params(a), params(b)
assert len(pa) == len(pb), f"{len(pa)} vs {len(pb)} parameters"
scale = max(abs(v) for v in pb)
worst = max(range(len(pa)), key=lambda i: abs(pa[i] - pb[i]))
rel = abs(pa[worst] - pb[worst]) / scale
print(f"{what}: {len(pa)} parameters, largest difference {rel:.2e} of the largest |param| at index {worst} "
      f"({pa[worst]:.7g} vs {pb[worst]:.7g}); first values {pa[:3]} vs {pb[:3]}; tolerance {tol:g}")
sys.exit(0 if rel <= tol else 1)
PY
}

if run nchw && run nhwc --layout nhwc; then
  r=$("$PY" tests/gpu/compare_runs.py "$out/nhwc.run/metrics.jsonl" "$out/nchw.run/metrics.jsonl" 5e-3 2>&1) &&
    echo "losses, BF16 --layout nhwc vs NCHW: $(echo "$r" | head -1)" || { fail "losses:"; echo "$r"; }
  params_close "final parameters, BF16 --layout nhwc vs NCHW" "$out/nhwc.run" "$out/nchw.run" 5e-3 ||
    fail "the final parameters differ"
  emu_within_plan "nhwc ops net device memory" "$out/nhwc.log" "$out/ops.spec" "--layout nhwc" || status=1
fi
"$BUILD/trainc" build "$out/alexnet_tiny.spec" -o "$out/alexnet_tiny" --backend cuda --layout nhwc \
  > "$out/alexnet_tiny.build" 2>&1 && echo "tiny AlexNet-shaped spec: builds with --layout nhwc" ||
  { fail "tiny AlexNet-shaped spec: trainc build --layout nhwc"; tail -20 "$out/alexnet_tiny.build"; }
[ $status = 0 ] && echo "AlexNet/GoogLeNet ops channels-last in emulated CUDA trainers: ok"
exit $status
