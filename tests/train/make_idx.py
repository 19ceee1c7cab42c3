# Writes a small Fashion-MNIST subset (first N train / M test samples of the real files) as
# gzip IDX files, plus deliberately damaged variants, for tests/train/bad_input_test.sh.
# usage: make_idx.py SRC_DIR OUT_DIR N_TRAIN N_TEST
import gzip
import os
import struct
import sys

src, out, n_train, n_test = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4:4 + 4 * dims])
    return raw[:4], shape, raw[4 + 4 * dims:]


def write_idx(path, magic, shape, body, gz=True):
    data = magic + struct.pack(">" + "I" * len(shape), *shape) + body
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)


def subset(split, n):
    im_magic, im_shape, im = read_idx(f"{src}/{split}-images-idx3-ubyte.gz")
    lb_magic, _, lb = read_idx(f"{src}/{split}-labels-idx1-ubyte.gz")
    px = im_shape[1] * im_shape[2]
    return (im_magic, (n,) + tuple(im_shape[1:]), im[:n * px]), (lb_magic, (n,), lb[:n])


def write_split(d, split, images, labels):
    write_idx(f"{d}/{split}-images-idx3-ubyte.gz", *images)
    write_idx(f"{d}/{split}-labels-idx1-ubyte.gz", *labels)


train, test = subset("train", n_train), subset("t10k", n_test)


def good(d):
    write_split(d, "train", *train)
    write_split(d, "t10k", *test)


good(f"{out}/good")

# Label count != image count: one label fewer than images.
good(f"{out}/count")
lm, ls, lb = train[1]
write_idx(f"{out}/count/train-labels-idx1-ubyte.gz", lm, (ls[0] - 1,), lb[:-1])

# A label value outside 0..classes-1 (at index 5).
good(f"{out}/label")
write_idx(f"{out}/label/train-labels-idx1-ubyte.gz", lm, ls, lb[:5] + bytes([10]) + lb[6:])

# Wrong magic in the images file.
good(f"{out}/magic")
im, ish, ib = train[0]
write_idx(f"{out}/magic/train-images-idx3-ubyte.gz", b"\x12\x34\x08\x03", ish, ib)

# Images of another shape (32x32) than the net's input (28x28).
good(f"{out}/shape")
write_idx(f"{out}/shape/train-images-idx3-ubyte.gz", im, (ish[0], 32, 32), bytes(ish[0] * 32 * 32))

# Header promises more images than the file holds (gzip itself intact).
good(f"{out}/short")
write_idx(f"{out}/short/train-images-idx3-ubyte.gz", im, ish, ib[:len(ib) // 2])

# Zero images.
good(f"{out}/empty")
write_idx(f"{out}/empty/train-images-idx3-ubyte.gz", im, (0, 28, 28), b"")
write_idx(f"{out}/empty/train-labels-idx1-ubyte.gz", lm, (0,), b"")
