#!/usr/bin/env python3
"""The Caffe model zoos' classification training nets, for bench/caffe_zoo_import.sh.

  caffe_zoo.py list ROOT         one line a training net under ROOT (a Caffe checkout, where
                                 Caffe runs and its paths are relative to): "net PATH SOLVER..."
                                 for a classification net (a SoftmaxWithLoss and no detection
                                 layer) with the solvers whose net/train_net names it, and
                                 "skip PATH REASON" for the other nets (deploy nets, detection,
                                 regression, siamese ...)
  caffe_zoo.py standin ROOT NET  writes what the net's data layers read where it is missing:
                                 Caffe's databases are the user's, not the zoo's, so the bench
                                 stands in a 4-record LMDB / LevelDB of Datum records at the
                                 size Caffe's own scripts write (MNIST 1x28x28, CIFAR 3x32x32,
                                 ImageNet 3x256x256: create_imagenet.sh's resize), a mean
                                 binaryproto of that size, an ImageData list, HDF5 files.

The text format is read by a small protobuf-text parser (messages, repeated fields, strings,
numbers, enums), enough for prototxts."""
import os
import re
import struct
import sys

TOKEN = re.compile(r'\s+|#[^\n]*|("(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')|([{}<>:\[\],;])|([^\s{}<>:\[\],;"\'#]+)')


def tokens(text):
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("bad character at %d" % pos)
        pos = m.end()
        if m.group(1):
            yield ("str", m.group(1)[1:-1])
        elif m.group(2):
            yield ("p", m.group(2))
        elif m.group(3):
            yield ("w", m.group(3))


def parse(text):
    """A message as a list of (field, value); value is a str, a number's text or a list."""
    toks = list(tokens(text))
    i = 0

    def msg(end):
        nonlocal i
        out = []
        while i < len(toks) and not (toks[i][0] == "p" and toks[i][1] in end):
            name = toks[i][1]
            i += 1
            if toks[i] == ("p", ":"):
                i += 1
            if toks[i][0] == "p" and toks[i][1] in "{<":
                close = "}" if toks[i][1] == "{" else ">"
                i += 1
                out.append((name, msg(close)))
                i += 1
            elif toks[i] == ("p", "["):
                i += 1
                while toks[i] != ("p", "]"):
                    if toks[i] != ("p", ","):
                        out.append((name, toks[i][1]))
                    i += 1
                i += 1
            else:
                out.append((name, toks[i][1]))
                i += 1
            while i < len(toks) and toks[i] in (("p", ","), ("p", ";")):
                i += 1
        return out

    return msg(())


def get(m, name, default=None):
    for k, v in m:
        if k == name:
            return v
    return default


def get_all(m, name):
    return [v for k, v in m if k == name]


SOLVER_FIELDS = {"base_lr", "lr_policy", "max_iter", "net", "train_net", "solver_mode", "test_iter"}
DETECTION = {"PriorBox", "MultiBoxLoss", "DetectionOutput", "DetectionEvaluate", "ROIPooling", "PSROIPooling",
             "Permute", "AnnotatedData", "SmoothL1Loss", "Proposal", "RegionLoss", "DetectNetTransformation",
             "ClusterDetections", "Reorg", "WindowData", "DetectionOutputLayer", "ROIAlign"}
V1_TYPES = {"SOFTMAX_LOSS": "SoftmaxWithLoss", "DATA": "Data", "IMAGE_DATA": "ImageData", "HDF5_DATA": "HDF5Data",
            "WINDOW_DATA": "WindowData", "EUCLIDEAN_LOSS": "EuclideanLoss", "CONTRASTIVE_LOSS": "ContrastiveLoss",
            "SIGMOID_CROSS_ENTROPY_LOSS": "SigmoidCrossEntropyLoss", "HINGE_LOSS": "HingeLoss",
            "INFOGAIN_LOSS": "InfogainLoss", "MULTINOMIAL_LOGISTIC_LOSS": "MultinomialLogisticLoss",
            "DUMMY_DATA": "DummyData", "MEMORY_DATA": "MemoryData"}


def layers_of(m):
    return get_all(m, "layer") + get_all(m, "layers")


def layer_type(L):
    t = get(L, "type", "")
    return V1_TYPES.get(t, t)


def read(path):
    try:
        return parse(open(path, encoding="utf-8", errors="replace").read())
    except (ValueError, IndexError):
        return None


def classify(path):
    """('net', None), ('solver', net path), or ('skip', reason); None for other files."""
    m = read(path)
    if m is None:
        return None
    keys = {k for k, _ in m}
    if keys & SOLVER_FIELDS and not layers_of(m):
        return ("solver", get(m, "net") or get(m, "train_net"))
    layers = layers_of(m)
    if not layers:
        return None
    types = [layer_type(L) for L in layers]
    python = [get(get(L, "python_param", []), "module", "") or "" for L in layers if layer_type(L) == "Python"]
    losses = sorted({t for t in types if t.endswith("Loss")})
    if not losses and not any("loss" in str(get(L, "loss_weight", "")) for L in layers):
        return ("skip", "no loss layer (a deploy or test net)")
    det = sorted(set(types) & DETECTION) + [p for p in python if re.search(r"rpn|roi|proposal|detect", p, re.I)]
    if det:
        return ("skip", "detection (%s)" % ", ".join(det[:3]))
    if losses != ["SoftmaxWithLoss"]:
        return ("skip", "not a softmax classifier (%s)" % ", ".join(losses))
    if "LSTM" in types or "RNN" in types:
        return ("skip", "a recurrent net (LSTM)")
    return ("net", None)


def list_zoo(root):
    nets, skips, solvers = {}, [], {}
    for d, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith(".prototxt"):
                continue
            path = os.path.relpath(os.path.join(d, f), root)
            c = classify(os.path.join(root, path))
            if c is None:
                continue
            if c[0] == "net":
                nets[path] = []
            elif c[0] == "skip":
                skips.append((path, c[1]))
            elif c[1]:
                solvers.setdefault(os.path.normpath(c[1]), []).append(path)
                # a solver's net path is Caffe's (relative to where it runs), or beside it
                beside = os.path.normpath(os.path.join(os.path.dirname(path), c[1]))
                if beside != os.path.normpath(c[1]):
                    solvers.setdefault(beside, []).append(path)
    for net in nets:
        nets[net] = sorted(set(solvers.get(os.path.normpath(net), [])))
    for net in sorted(nets):
        print("net", net, *nets[net])
    for path, why in sorted(skips):
        print("skip", path, why)


def datum(c, h, w, label):
    """A caffe.Datum, serialized by hand (fields 1-3 and 5 varints, 4 the pixel bytes)."""
    def varint(n):
        out = b""
        while True:
            b = n & 0x7F
            n >>= 7
            out += bytes([b | (0x80 if n else 0)])
            if not n:
                return out
    pixels = bytes((i * 7 + label * 31) % 256 for i in range(c * h * w))
    return (b"\x08" + varint(c) + b"\x10" + varint(h) + b"\x18" + varint(w) + b"\x22" + varint(len(pixels)) + pixels +
            b"\x28" + varint(label))


def shape_for(source):
    """The stored size a database at this path has in Caffe's own scripts: a size the path
    names (ilsvrc12_320x320_train_lmdb), MNIST's, CIFAR's, or create_imagenet.sh's 256x256."""
    s = source.lower()
    m = re.search(r"(\d{2,4})x(\d{2,4})", s)
    if "mnist" in s:
        return (1, 28, 28)
    if "cifar" in s:
        return (3, 32, 32)
    if m:
        return (3, int(m.group(1)), int(m.group(2)))
    return (3, 256, 256)


def write_db(path, shape, leveldb):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    records = [(b"%08d" % i, datum(*shape, i % 10)) for i in range(4)]
    if leveldb:
        import plyvel
        db = plyvel.DB(path, create_if_missing=True)
        for k, v in records:
            db.put(k, v)
        db.close()
    else:
        import lmdb
        env = lmdb.open(path, map_size=1 << 28)
        with env.begin(write=True) as txn:
            for k, v in records:
                txn.put(k, v)
        env.close()


def write_mean(path, shape):
    """compute_image_mean's BlobProto [1, C, H, W] of a flat 110."""
    c, h, w = shape
    data = struct.pack("<%df" % (c * h * w), *([110.0] * (c * h * w)))
    body = b"\x08\x01\x10" + bytes([c]) + b"\x18" + _v(h) + b"\x20" + _v(w) + b"\x2a" + _v(len(data)) + data
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    open(path, "wb").write(body)


def _v(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def rebase(root, net):
    """The net itself, or where it names absolute paths (a user's /data/imagenet/...), a copy
    beside it with them under ROOT/_abs, so that nothing is written outside ROOT; prints the
    net to import."""
    text = open(os.path.join(root, net), encoding="utf-8", errors="replace").read()
    fields = r'((?:source|mean_file|root_folder)\s*:\s*")/'
    if not re.search(fields, text):
        return net
    copy = net[:-len(".prototxt")] + ".rebased.prototxt"
    open(os.path.join(root, copy), "w").write(re.sub(fields, r"\1_abs/", text))
    return copy


def inside(root, rel):
    """ROOT/rel when it stays inside ROOT (the bench writes nothing elsewhere), else None."""
    path = os.path.realpath(os.path.join(root, rel))
    return path if path.startswith(os.path.realpath(root) + os.sep) else None


def standin(root, net):
    net = rebase(root, net)
    print(net)
    m = read(os.path.join(root, net))
    for L in layers_of(m):
        t = layer_type(L)
        tp = get(L, "transform_param", [])
        if t == "Data":
            p = get(L, "data_param", [])
            src = get(p, "source")
            if not src:
                continue
            path = inside(root, src)
            shape = shape_for(src)
            if path and not os.path.exists(path):
                write_db(path, shape, get(p, "backend", "LEVELDB") in ("LEVELDB", "0"))
            mean = get(tp, "mean_file")
            if mean and inside(root, mean) and not os.path.exists(inside(root, mean)):
                write_mean(inside(root, mean), shape)
        elif t == "ImageData":
            p = get(L, "image_data_param", [])
            mean = get(tp, "mean_file")
            h, w = int(get(p, "new_height", "256")), int(get(p, "new_width", "256"))
            if mean and inside(root, mean) and not os.path.exists(inside(root, mean)):
                write_mean(inside(root, mean), (3, h or 256, w or 256))
            src = get(p, "source")
            if src and inside(root, src) and not os.path.exists(inside(root, src)):
                os.makedirs(os.path.dirname(inside(root, src)), exist_ok=True)
                open(inside(root, src), "w").write("".join("img%d.jpg %d\n" % (i, i) for i in range(4)))
        elif t == "HDF5Data":
            p = get(L, "hdf5_data_param", [])
            src = get(p, "source")
            if src and inside(root, src) and not os.path.exists(inside(root, src)):
                import h5py
                import numpy as np
                h5 = inside(root, src) + ".h5"
                os.makedirs(os.path.dirname(h5) or ".", exist_ok=True)
                with h5py.File(h5, "w") as f:   # hdf5_classification's notebook: 4 features, 2 classes
                    f["data"] = np.zeros((8, 4), dtype=np.float32)
                    f["label"] = (np.arange(8) % 2).astype(np.float32)
                open(inside(root, src), "w").write(h5 + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "list":
        list_zoo(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "standin":
        standin(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
