"""tests/interop/torch_export_test.sh's PyTorch side: reads the safetensors file `trainc export`
wrote (with the format's own few rules below: Debian has no safetensors module), loads it
into the torch module with strict=True, and compares its outputs with ours.

  torch_check.py lenet   FILE.safetensors PREDICTIONS.jsonl EVAL.jsonl N_VAL
  torch_check.py resnet18|convnext_tiny|mlp|example_resnet FILE.safetensors PREDICTIONS.jsonl
"""
import gzip, json, struct, sys

import numpy as np
import torch
import torchvision
from PIL import Image

torch.set_num_threads(1)


def read_safetensors(path):
    """The safetensors format: u64 little-endian header length N, N bytes of JSON (name ->
    dtype, shape, data_offsets into the data after the header; "__metadata__"), the data."""
    b = open(path, "rb").read()
    n = struct.unpack_from("<Q", b, 0)[0]
    header = json.loads(b[8:8 + n])
    data = b[8 + n:]
    meta = header.pop("__metadata__", {})
    dtypes = {"F32": np.float32, "I64": np.int64}
    out, ends = {}, []
    for name, t in header.items():
        lo, hi = t["data_offsets"]
        a = np.frombuffer(data[lo:hi], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
        out[name] = torch.from_numpy(a.copy())
        ends.append((lo, hi))
    ends.sort()
    assert ends[0][0] == 0 and ends[-1][1] == len(data), "the data must be indexed whole"
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:])), "holes or overlaps in the data"
    return out, meta


def write_safetensors(path, state_dict):
    """The same format written: what safetensors.torch.save_file writes for a state_dict of
    contiguous CPU tensors (F32 and I64 here), data 8-byte aligned after the header."""
    names = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, at = {}, [], 0
    for k, v in state_dict.items():
        b = v.detach().contiguous().numpy().tobytes()
        header[k] = {"dtype": names[v.dtype], "shape": list(v.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


class LeNet(torch.nn.Module):   # specs/examples/fmnist_lenet.spec, with its layer names
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = torch.nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = torch.nn.Linear(3136, 512)
        self.fc2 = torch.nn.Linear(512, 10)

    def forward(self, x):
        x = torch.max_pool2d(torch.relu(self.conv1(x)), 2)
        x = torch.max_pool2d(torch.relu(self.conv2(x)), 2)
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class MLP(torch.nn.Module):   # specs/examples/fmnist_mlp.spec
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 128)
        self.fc2 = torch.nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class Basic(torch.nn.Module):   # specs/examples/fmnist_resnet.spec's block, with its layer names
    def __init__(self, cin, planes, stride, project):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, planes, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(planes)
        self.conv2 = torch.nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(planes)
        self.project = project
        if project:
            self.down = torch.nn.Conv2d(cin, planes, 1, stride, bias=False)
            self.down_bn = torch.nn.BatchNorm2d(planes)

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (self.down_bn(self.down(x)) if self.project else x))


class ExampleResNet(torch.nn.Module):   # specs/examples/fmnist_resnet.spec
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(1, 32, 3, 1, 1, bias=False)
        self.stem_bn = torch.nn.BatchNorm2d(32)
        self.layer1 = torch.nn.Sequential(Basic(32, 32, 1, False), Basic(32, 32, 1, False))
        self.layer2 = torch.nn.Sequential(Basic(32, 64, 2, True), Basic(64, 64, 1, False))
        self.layer3 = torch.nn.Sequential(Basic(64, 128, 2, True), Basic(128, 128, 1, False))
        self.fc = torch.nn.Linear(128, 10)

    def forward(self, x):
        x = torch.relu(self.stem_bn(self.stem(x)))
        return self.fc(self.layer3(self.layer2(self.layer1(x))).mean((2, 3)))


def load(model, path):
    sd, meta = read_safetensors(path)
    model.load_state_dict(sd, strict=True)   # every key present, none extra, same shapes
    model.eval()
    return sd, meta


def compare_predictions(model, preds_path, mean, std, gray):
    worst, n = 0.0, 0
    for line in open(preds_path):
        r = json.loads(line)
        img = Image.open(r["file"]).convert("L" if gray else "RGB")
        x = np.asarray(img, dtype=np.float32) / np.float32(255)
        x = x[None] if gray else x.transpose(2, 0, 1)
        x = (x - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None, None]
        with torch.no_grad():
            ref = model(torch.from_numpy(x[None]))[0].numpy().astype(np.float64)
        ours = np.array(r["logits"])
        err = np.abs(ours - ref).max() / (1 + np.abs(ref).max())
        assert err < 1e-4, "%s: logits differ by %g (ours %s, torch %s)" % (r["file"], err, ours[:4], ref[:4])
        assert int(np.argmax(ref)) == r["top1"], r["file"]
        worst, n = max(worst, err), n + 1
    assert n > 0, "no predictions to compare"
    print("torch logits = ours on %d images (largest difference %.2g relative)" % (n, worst))


def main():
    kind, st = sys.argv[1], sys.argv[2]
    if kind == "lenet":
        model = LeNet()
        sd, meta = load(model, st)
        compare_predictions(model, sys.argv[3], [0.2860], [0.3530], True)
        # the eval record's top-1 and loss on the same evenly spaced subset of the test split
        d, n_val = "/usr/share/datasets/fashion-mnist", int(sys.argv[5])
        x = np.frombuffer(gzip.open(d + "/t10k-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(-1, 1, 28, 28)
        y = np.frombuffer(gzip.open(d + "/t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)
        pick = [i * len(x) // n_val for i in range(n_val)]
        xs = (torch.from_numpy(x[pick].astype(np.float32)) / 255 - 0.2860) / 0.3530
        with torch.no_grad():
            logits = model(xs)
        ys = torch.from_numpy(y[pick].astype(np.int64))
        top1 = (logits.argmax(1) == ys).double().mean().item()
        loss = torch.nn.functional.cross_entropy(logits.double(), ys).item()
        rec = [json.loads(l) for l in open(sys.argv[4])][-1]
        print("torch on the export: top-1 %.4f loss %.5f; --eval: top-1 %.4f loss %.5f" % (top1, loss, rec["top1"], rec["loss"]))
        assert abs(top1 - rec["top1"]) <= 2.0 / n_val, "top-1 differs"
        assert abs(loss - rec["loss"]) <= 1e-4 * (1 + loss), "loss differs"
        assert meta["trainc_spec_hash"] == rec["spec_hash"] and int(meta["trainc_step"]) == rec["step"]
    elif kind in ("mlp", "example_resnet"):
        model = MLP() if kind == "mlp" else ExampleResNet()
        load(model, st)
        compare_predictions(model, sys.argv[3], [0.2860], [0.3530], True)
    elif kind == "convnext_tiny":
        model = torchvision.models.convnext_tiny(num_classes=10)
        load(model, st)
        compare_predictions(model, sys.argv[3], [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], False)
    elif kind == "resnet18":
        model = torchvision.models.resnet18(num_classes=10)
        sd, meta = load(model, st)
        assert sd["bn1.num_batches_tracked"].dtype == torch.int64 and sd["bn1.num_batches_tracked"].dim() == 0
        assert int(sd["bn1.num_batches_tracked"]) == int(meta["trainc_step"])
        assert not torch.allclose(sd["bn1.running_var"], torch.ones(64)), "BN statistics not exported"
        compare_predictions(model, sys.argv[3], [0.485, 0.456, 0.406], [0.229, 0.224, 0.225], False)
    else:
        raise SystemExit("unknown kind " + kind)


if __name__ == "__main__":
    main()
