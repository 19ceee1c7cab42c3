#!/usr/bin/env bash
# ONNX Runtime and TensorBoard read what trainc writes (make bench-interop; needs PyPI):
# tests/interop/onnx_export_test.sh and tensorboard_test.sh produce the ONNX models (every op
# kind, the LeNet, ConvNeXt-Tiny at 32x32) with our --predict logits, and the event files with
# their metrics.jsonl; onnxruntime runs each model on the same images and TensorBoard's
# EventAccumulator loads the event folder. Prints the largest differences (for bench/RESULTS.md).
set -eu
BUILD=${BUILD:-build}
venv=$BUILD/bench-interop/venv
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q onnxruntime tensorboard numpy pillow
fi
bash tests/interop/onnx_export_test.sh > "$BUILD/bench-interop/onnx_export.log"
bash tests/interop/tensorboard_test.sh > "$BUILD/bench-interop/tensorboard.log"
"$venv/bin/python" - "$BUILD/test-interop" <<'PY'
import json, sys
import numpy as np
import onnxruntime as ort
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
root = sys.argv[1]
print("onnxruntime", ort.__version__)
norm = {"ops_mix": ([0, 0, 0], [1, 1, 1]), "lenet": ([0.2860], [0.3530]),
        "convnext": ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])}
for name, (mean, std) in norm.items():
    sess = ort.InferenceSession("%s/onnx_export/%s.onnx" % (root, name), providers=["CPUExecutionProvider"])
    recs = [json.loads(l) for l in open("%s/onnx_export/pred-%s/predictions.jsonl" % (root, name))]
    xs = []
    for r in recs:
        gray = len(mean) == 1
        x = np.asarray(Image.open(r["file"]).convert("L" if gray else "RGB"), np.float32) / np.float32(255)
        x = x[None] if gray else x.transpose(2, 0, 1)
        xs.append((x - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None])
    out = sess.run(["logits"], {"input": np.stack(xs).astype(np.float32)})[0].astype(np.float64)
    worst = max(np.abs(np.array(r["logits"]) - o).max() / (1 + np.abs(o).max()) for r, o in zip(recs, out))
    same = all(int(np.argmax(o)) == r["top1"] for r, o in zip(recs, out))
    print("%-9s ONNX Runtime vs our --predict on %d images: largest difference %.2g relative, top-1 %s"
          % (name, len(recs), worst, "equal" if same else "DIFFERS"))
    assert worst < 1e-4 and same
acc = EventAccumulator(root + "/tensorboard/tb")
acc.Reload()
tags = acc.Tags()["scalars"]
recs = [json.loads(l) for l in open(root + "/tensorboard/run/metrics.jsonl")]
n = 0
for r in recs:
    for tag, key in {"train": [("train/loss", "loss"), ("train/lr", "lr")], "eval": [("eval/top1", "top1")]}.get(r["event"], []):
        got = {e.step: e.value for e in acc.Scalars(tag)}[r["step"]]
        assert got == np.float32(r[key]), (tag, r["step"], got, r[key])
        n += 1
print("TensorBoard's EventAccumulator: tags %s; %d values equal metrics.jsonl's (the resumed run's file "
      "replaces the first one's later steps)" % (sorted(tags), n))
PY
