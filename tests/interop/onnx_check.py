"""tests/interop/onnx_export_test.sh's checker: `trainc export --format onnx` output must pass
onnx.checker with full_check (Debian's python3-onnx: types and shapes inferred through every
node), declare input [batch, C, H, W] and logits [batch, classes], and, run node by node
here with torch's functional ops (an evaluator independent of trainc; Debian has no ONNX
Runtime), give our --predict logits on the same images.

  onnx_check.py MODEL.onnx PREDICTIONS.jsonl MEAN STD      (MEAN/STD: comma-separated)
"""
import json, sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from PIL import Image

torch.set_num_threads(1)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def pads2d(a):   # ONNX [top, left, bottom, right] -> torch's symmetric (h, w)
    p = a.get("pads", [0, 0, 0, 0])
    assert p[0] == p[2] and p[1] == p[3], "asymmetric pads"
    return (p[0], p[1])


def run(model, x):
    env = {"input": x}
    for t in model.graph.initializer:
        env[t.name] = torch.from_numpy(numpy_helper.to_array(t).copy())
    for n in model.graph.node:
        a, i = attrs(n), [env[k] for k in n.input]
        op = n.op_type
        if op == "Conv":
            y = F.conv2d(i[0], i[1], i[2] if len(i) > 2 else None, a["strides"], pads2d(a), a["dilations"], a["group"])
        elif op == "Gemm":
            assert a.get("transB") == 1
            y = F.linear(i[0], i[1], i[2] if len(i) > 2 else None)
        elif op == "BatchNormalization":
            y = F.batch_norm(i[0], i[3], i[4], i[1], i[2], False, 0.0, a["epsilon"])
        elif op == "Relu": y = torch.relu(i[0])
        elif op == "MaxPool":
            y = F.max_pool2d(i[0], a["kernel_shape"], a["strides"], pads2d(a), ceil_mode=bool(a.get("ceil_mode", 0)))
        elif op == "AveragePool":
            y = F.avg_pool2d(i[0], a["kernel_shape"], a["strides"], pads2d(a), ceil_mode=bool(a.get("ceil_mode", 0)),
                             count_include_pad=bool(a.get("count_include_pad", 0)))
        elif op == "GlobalAveragePool": y = i[0].mean((2, 3), keepdim=True)
        elif op == "Flatten": y = i[0].flatten(a.get("axis", 1))
        elif op == "Identity": y = i[0]
        elif op == "Sum": y = sum(i[1:], i[0])
        elif op == "Concat": y = torch.cat(i, a["axis"])
        elif op == "LRN": y = F.local_response_norm(i[0], a["size"], a["alpha"], a["beta"], a["bias"])
        elif op == "ReduceMean": y = i[0].mean(tuple(a["axes"]), keepdim=bool(a.get("keepdims", 1)))
        elif op == "Add": y = i[0] + i[1]
        elif op == "Sub": y = i[0] - i[1]
        elif op == "Mul": y = i[0] * i[1]
        elif op == "Div": y = i[0] / i[1]
        elif op == "Sqrt": y = torch.sqrt(i[0])
        elif op == "Erf": y = torch.erf(i[0])
        else: raise SystemExit("the checker has no evaluation of " + op)
        env[n.output[0]] = y
    return env["logits"]


def main():
    path, preds, mean, std = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    mean = np.array([float(v) for v in mean.split(",")], np.float32)[:, None, None]
    std = np.array([float(v) for v in std.split(",")], np.float32)[:, None, None]
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    assert model.opset_import[0].version >= 13
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    out = inferred.graph.output[0].type.tensor_type.shape.dim
    assert out[0].dim_param == "batch"
    inp = model.graph.input[0].type.tensor_type.shape.dim
    c, h, w = (d.dim_value for d in inp[1:])
    print("%s: onnx.checker (full) passes; %d nodes, %d initializers, input [batch, %d, %d, %d], logits [batch, %d]"
          % (path, len(model.graph.node), len(model.graph.initializer), c, h, w, out[1].dim_value))
    records = [json.loads(l) for l in open(preds)]
    xs = []
    for r in records:
        img = Image.open(r["file"]).convert("L" if c == 1 else "RGB")
        x = np.asarray(img, np.float32) / np.float32(255)
        x = x[None] if c == 1 else x.transpose(2, 0, 1)
        xs.append((x - mean) / std)
    with torch.no_grad():
        logits = run(model, torch.from_numpy(np.stack(xs))).numpy().astype(np.float64)
    worst = 0.0
    for r, ref in zip(records, logits):
        ours = np.array(r["logits"])
        err = np.abs(ours - ref).max() / (1 + np.abs(ref).max())
        assert err < 1e-4, "%s: the ONNX graph gives %s, our trainer %s" % (r["file"], ref[:4], ours[:4])
        worst = max(worst, err)
    assert out[1].dim_value == logits.shape[1]
    print("the ONNX graph, evaluated op by op with torch, gives our --predict logits on %d images (largest "
          "difference %.2g relative)" % (len(records), worst))


main()
