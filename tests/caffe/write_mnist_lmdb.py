#!/usr/bin/env python3
"""Writes Caffe's MNIST databases from IDX files the way Caffe's convert_mnist_data does: an
LMDB per split, keys "%08d" of the item's index, each value a serialized caffe.Datum
(channels 1, height, width, the raw pixel bytes, the label). The Datum is built with
Google's protobuf (python3-protobuf) from a descriptor of Caffe's field numbers, so the bytes
come from a protobuf implementation independent of the protobuf-c reader under test.

Usage: write_mnist_lmdb.py IDX_DIR OUT_DIR [--bad]
  writes OUT_DIR/mnist_train_lmdb (train-*) and OUT_DIR/mnist_test_lmdb (t10k-*);
  --bad: OUT_DIR/bad_lmdb instead, 100 test images with record 57 cut short (not a Datum)."""
import gzip
import os
import struct
import sys

import lmdb
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def datum_class():
    fdp = descriptor_pb2.FileDescriptorProto(name="caffe_datum_test.proto", package="caffe", syntax="proto2")
    msg = fdp.message_type.add(name="Datum")
    F = descriptor_pb2.FieldDescriptorProto
    for name, number, kind, label in (("channels", 1, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                      ("height", 2, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                      ("width", 3, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                      ("data", 4, F.TYPE_BYTES, F.LABEL_OPTIONAL),
                                      ("label", 5, F.TYPE_INT32, F.LABEL_OPTIONAL),
                                      ("float_data", 6, F.TYPE_FLOAT, F.LABEL_REPEATED),
                                      ("encoded", 7, F.TYPE_BOOL, F.LABEL_OPTIONAL)):
        msg.field.add(name=name, number=number, type=kind, label=label)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("caffe.Datum")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def read_idx(path):
    if not os.path.exists(path):
        path = path[:-3]   # the uncompressed name
    raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return dims, raw[4 + 4 * nd:]


def write(idx_dir, split, out, limit=None, cut=None):
    Datum = datum_class()
    (n, h, w), pixels = read_idx(f"{idx_dir}/{split}-images-idx3-ubyte.gz")
    _, labels = read_idx(f"{idx_dir}/{split}-labels-idx1-ubyte.gz")
    n = min(n, limit or n)
    env = lmdb.open(out, map_size=1 << 30)
    with env.begin(write=True) as txn:
        for i in range(n):
            d = Datum(channels=1, height=h, width=w, data=pixels[i * h * w:(i + 1) * h * w], label=labels[i])
            value = d.SerializeToString()
            if i == cut:
                value = value[:40]   # a Datum cut inside its pixel bytes
            txn.put(b"%08d" % i, value)
    env.close()
    return n


def main():
    idx_dir, out_dir = sys.argv[1], sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    if "--bad" in sys.argv:
        write(idx_dir, "t10k", f"{out_dir}/bad_lmdb", limit=100, cut=57)
        return
    a = write(idx_dir, "train", f"{out_dir}/mnist_train_lmdb")
    b = write(idx_dir, "t10k", f"{out_dir}/mnist_test_lmdb")
    print(f"wrote {out_dir}/mnist_train_lmdb ({a} Datum records) and {out_dir}/mnist_test_lmdb ({b})")


if __name__ == "__main__":
    main()
