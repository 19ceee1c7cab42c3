#!/usr/bin/env bash
# A Caffe Scale with a bias that follows no BatchNorm imports (without --approximate) as a
# depthwise 1x1 conv; this checks that it then trains as Caffe's Scale does, against an
# independent PyTorch reference of the Caffe net (y = gamma_c x + beta_c, Caffe's SGD with
# lr_mult / decay_mult per blob): 16 Fashion-MNIST images in one batch (so the shuffle does
# not matter), constant fillers, the per-step losses of 5 steps within 1e-5 relative.
set -eu
source tests/lib.sh
dir=$BUILD/test-caffe/scale_bias
rm -rf "$dir" && mkdir -p "$dir"
"$PY" tests/train/make_idx.py /usr/share/datasets/fashion-mnist "$dir/data" 16 16 > /dev/null
cat > "$dir/net.prototxt" <<'NET'
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 16 dim: 1 dim: 28 dim: 28 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 3 kernel_size: 4 stride: 4
                            weight_filler { type: "constant" value: 0.05 } bias_filler { type: "constant" value: -0.1 } } }
layer { name: "sc" type: "Scale" bottom: "conv1" top: "sc" param { lr_mult: 3 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
        scale_param { bias_term: true filler { type: "constant" value: 0.5 } bias_filler { type: "constant" value: 0.2 } } }
layer { name: "relu" type: "ReLU" bottom: "sc" top: "sc" }
layer { name: "fc" type: "InnerProduct" bottom: "sc" top: "fc"
        inner_product_param { num_output: 10 weight_filler { type: "constant" value: 0.01 } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" top: "loss" }
NET
cat > "$dir/solver.prototxt" <<'SOLVER'
base_lr: 0.5
lr_policy: "fixed"
momentum: 0
weight_decay: 0.01
max_iter: 5
SOLVER
"$BUILD/trainc" import caffe "$dir/net.prototxt" "$dir/solver.prototxt" -o "$dir/net.spec"
grep -q 'conv { name: "sc" out: 3 kernel: 1 groups: 3 ' "$dir/net.spec" || { echo "FAIL: sc is not a depthwise conv:"; grep '"sc"' "$dir/net.spec"; exit 1; }
cat > "$dir/run.spec" <<SPEC
extends: "net.spec"
data { train_samples: 16 train { source: "idx" } val { source: "idx" batch_per_rank: 16 } }
solver { log_every: 1 }
SPEC
"$BUILD/trainc" build "$dir/run.spec" -o "$dir/trainer" > /dev/null
OMP_NUM_THREADS=1 "$dir/trainer" --data "$dir/data/good" --out "$dir/run" > "$dir/run.log"
"$PY" - "$dir/data/good" "$dir/run/metrics.jsonl" <<'PY'
import gzip, json, struct, sys
import numpy as np, torch
data, metrics = sys.argv[1:3]
def idx(name):
    raw = gzip.open(f"{data}/{name}").read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw[4 + 4 * nd:], np.uint8).reshape(dims)
torch.set_default_dtype(torch.float64)
x = torch.tensor(idx("train-images-idx3-ubyte.gz") / 255.0).reshape(16, 1, 28, 28)
y = torch.tensor(idx("train-labels-idx1-ubyte.gz").astype(np.int64))
# Caffe's net: blobs with their fillers, lr_mult and decay_mult.
blobs = [(torch.full((3, 1, 4, 4), 0.05), 1, 1), (torch.full((3,), -0.1), 1, 1),
         (torch.full((3,), 0.5), 3, 1), (torch.full((3,), 0.2), 2, 0),        # Scale: gamma, beta
         (torch.full((10, 147), 0.01), 1, 1), (torch.zeros(10), 1, 1)]
for b, _, _ in blobs: b.requires_grad_(True)
lr, decay, ours = 0.5, 0.01, []
for step in range(5):
    w, b, gamma, beta, fw, fb = (t for t, _, _ in blobs)
    h = torch.nn.functional.conv2d(x, w, b, stride=4)
    h = torch.relu(h * gamma[None, :, None, None] + beta[None, :, None, None])
    loss = torch.nn.functional.cross_entropy(h.reshape(16, -1) @ fw.T + fb, y)
    ours.append(loss.item())
    for t, _, _ in blobs: t.grad = None
    loss.backward()
    with torch.no_grad():
        for t, lr_mult, decay_mult in blobs: t -= lr * lr_mult * (t.grad + decay * decay_mult * t)
got = [r["loss"] for r in map(json.loads, open(metrics)) if r["event"] == "train"]
worst = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(got, ours)) if len(got) == 5 else float("inf")
if worst > 1e-5:
    sys.exit(f"FAIL: trainc's losses {got} vs the Caffe reference's {ours}: largest relative difference {worst:.3g}")
print(f"Scale with a bias as a depthwise conv: 5 steps' losses match the Caffe reference within {worst:.2g} relative "
      f"({got[0]:.6f} .. {got[-1]:.6f})")
PY
