#!/usr/bin/env python3
"""Writes Caffe's MNIST databases from IDX files the way Caffe's convert_mnist_data does: an
LMDB per split, keys "%08d" of the item's index, each value a serialized caffe.Datum
(channels 1, height, width, the raw pixel bytes, the label). The Datum is built with
Google's protobuf (python3-protobuf) from a descriptor of Caffe's field numbers, so the bytes
come from a protobuf implementation independent of the protobuf-c reader under test.

Usage: write_mnist_lmdb.py IDX_DIR OUT_DIR [--bad | --small N] [--leveldb]
  writes OUT_DIR/mnist_train_lmdb (train-*) and OUT_DIR/mnist_test_lmdb (t10k-*);
  --bad: OUT_DIR/bad_lmdb instead, 100 test images with record 57 cut short (not a Datum);
  --small N: the first N images of each split only, and OUT_DIR/mean.binaryproto, the training
  images' per-pixel mean as Caffe's compute_image_mean writes it (a BlobProto), whose overall
  average it prints;
  --leveldb: LevelDB databases (Caffe's default backend, through python3-plyvel) instead, named
  *_leveldb, with the same keys and records."""
import gzip
import os
import struct
import sys

import lmdb
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


F = descriptor_pb2.FieldDescriptorProto


def message_class(name, fields):
    fdp = descriptor_pb2.FileDescriptorProto(name=f"caffe_{name}_test.proto", package="caffe", syntax="proto2")
    msg = fdp.message_type.add(name=name)
    for fname, number, kind, label in fields:
        f = msg.field.add(name=fname, number=number, type=kind, label=label)
        if label == F.LABEL_REPEATED:
            f.options.packed = True
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("caffe." + name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def write_mean(idx_dir, out, limit):
    """compute_image_mean: the per-pixel mean of the training images, a [1, 1, H, W] BlobProto."""
    Blob = message_class("BlobProto", (("num", 1, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                       ("channels", 2, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                       ("height", 3, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                       ("width", 4, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                       ("data", 5, F.TYPE_FLOAT, F.LABEL_REPEATED)))
    (n, h, w), pixels = read_idx(f"{idx_dir}/train-images-idx3-ubyte.gz")
    n = min(n, limit)
    mean = [sum(pixels[i * h * w + p] for i in range(n)) / n for p in range(h * w)]
    open(out, "wb").write(Blob(num=1, channels=1, height=h, width=w, data=mean).SerializeToString())
    return sum(mean) / len(mean)


def datum_class():
    return message_class("Datum", (("channels", 1, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                   ("height", 2, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                   ("width", 3, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                   ("data", 4, F.TYPE_BYTES, F.LABEL_OPTIONAL),
                                   ("label", 5, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                   ("float_data", 6, F.TYPE_FLOAT, F.LABEL_REPEATED),
                                   ("encoded", 7, F.TYPE_BOOL, F.LABEL_OPTIONAL)))


def read_idx(path):
    if not os.path.exists(path):
        path = path[:-3]   # the uncompressed name
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return dims, raw[4 + 4 * nd:]


def write(idx_dir, split, out, limit=None, cut=None, leveldb=False):
    Datum = datum_class()
    (n, h, w), pixels = read_idx(f"{idx_dir}/{split}-images-idx3-ubyte.gz")
    _, labels = read_idx(f"{idx_dir}/{split}-labels-idx1-ubyte.gz")
    n = min(n, limit or n)
    records = []
    for i in range(n):
        d = Datum(channels=1, height=h, width=w, data=pixels[i * h * w:(i + 1) * h * w], label=labels[i])
        value = d.SerializeToString()
        if i == cut:
            value = value[:40]   # a Datum cut inside its pixel bytes
        records.append((b"%08d" % i, value))
    if leveldb:
        import plyvel
        db = plyvel.DB(out, create_if_missing=True, error_if_exists=True)
        with db.write_batch() as batch:
            for k, v in records:
                batch.put(k, v)
        db.close()
        return n
    env = lmdb.open(out, map_size=1 << 30)
    with env.begin(write=True) as txn:
        for k, v in records:
            txn.put(k, v)
    env.close()
    return n


def main():
    idx_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    ldb = "--leveldb" in sys.argv
    kind = "leveldb" if ldb else "lmdb"
    if "--bad" in sys.argv:
        write(idx_dir, "t10k", f"{out_dir}/bad_{kind}", limit=100, cut=57, leveldb=ldb)
        return
    limit = int(sys.argv[sys.argv.index("--small") + 1]) if "--small" in sys.argv else None
    a = write(idx_dir, "train", f"{out_dir}/mnist_train_{kind}", limit=limit, leveldb=ldb)
    b = write(idx_dir, "t10k", f"{out_dir}/mnist_test_{kind}", limit=limit, leveldb=ldb)
    if limit and not ldb:
        print("mean.binaryproto average %.9g" % write_mean(idx_dir, f"{out_dir}/mean.binaryproto", limit))
    print(f"wrote {out_dir}/mnist_train_{kind} ({a} Datum records) and {out_dir}/mnist_test_{kind} ({b})")


if __name__ == "__main__":
    main()
