#!/usr/bin/env python3
"""Makes an ImageNet-style tree of real JPEGs from Fashion-MNIST for the image-pipeline tests:
  OUT/train/<class>/[part<k>/]<name>.JPEG   RGB, upscaled to SIZE..SIZE*1.5 (random aspect), q90
  OUT/val/<class>/<name>.JPEG                the validation split, same layout
  OUT/val_flat/<name>.JPEG + labels.txt      the same validation images, flat with a label file
and, with --bad, a handful of deliberately bad files in train/ (each kind trainc pack names):
a PNG named .JPEG, a CMYK JPEG, a grayscale JPEG, a truncated JPEG, an empty file, a text file.
Usage: make_tree.py OUT TRAIN_PER_CLASS VAL_PER_CLASS SIZE [--bad] [--from-test]"""
import gzip, os, struct, sys
import numpy as np
from PIL import Image

CLASSES = ["tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot"]
DATA = "/usr/share/datasets/fashion-mnist"

def idx(path):
    with gzip.open(path) as f:
        magic, = struct.unpack(">I", f.read(4))
        dims = struct.unpack(">" + "I" * (magic & 0xff), f.read(4 * (magic & 0xff)))
        return np.frombuffer(f.read(), np.uint8).reshape(dims)

def rgb(img28, rng, size):
    """A coloured, upscaled image: the garment tinted, on a tinted background."""
    tint = rng.uniform(0.5, 1.0, 3)
    bg = rng.uniform(0, 60, 3)
    a = img28.astype(np.float32)[..., None] / 255.0
    pix = bg * (1 - a) + 255 * tint * a
    w = int(size * rng.uniform(1.0, 1.5)); h = int(size * rng.uniform(1.0, 1.5))
    return Image.fromarray(np.clip(pix, 0, 255).astype(np.uint8), "RGB").resize((w, h), Image.BICUBIC)

def main():
    out, ntrain, nval, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    bad = "--bad" in sys.argv
    rng = np.random.default_rng(1)
    xtr, ytr = idx(f"{DATA}/train-images-idx3-ubyte.gz"), idx(f"{DATA}/train-labels-idx1-ubyte.gz")
    xte, yte = idx(f"{DATA}/t10k-images-idx3-ubyte.gz"), idx(f"{DATA}/t10k-labels-idx1-ubyte.gz")
    for split, x, y, n in (("train", xtr, ytr, ntrain), ("val", xte, yte, nval)):
        for c, name in enumerate(CLASSES):
            picks = np.nonzero(y == c)[0][:n]
            for k, i in enumerate(picks):
                sub = f"part{k % 2}/" if split == "train" else ""   # nested class folders
                d = os.path.join(out, split, name, sub)
                os.makedirs(d, exist_ok=True)
                img = rgb(x[i], rng, size)
                img.save(os.path.join(d, f"{split}_{i:05d}.JPEG"), "JPEG", quality=90)
                if split == "val":
                    os.makedirs(os.path.join(out, "val_flat"), exist_ok=True)
                    img.save(os.path.join(out, "val_flat", f"val_{i:05d}.JPEG"), "JPEG", quality=90)
                    with open(os.path.join(out, "val_flat", "labels.txt"), "a") as f:
                        f.write(f"val_{i:05d}.JPEG {name}\n")
    if bad:
        d = os.path.join(out, "train", CLASSES[0])
        img = rgb(xtr[0], rng, size)
        img.save(os.path.join(d, "bad_png.JPEG"), "PNG")
        img.convert("CMYK").save(os.path.join(d, "bad_cmyk.JPEG"), "JPEG", quality=90)
        img.convert("L").save(os.path.join(d, "bad_gray.JPEG"), "JPEG", quality=90)
        img.save(os.path.join(d, "whole.jpg"), "JPEG", quality=90)
        data = open(os.path.join(d, "whole.jpg"), "rb").read()
        os.remove(os.path.join(d, "whole.jpg"))
        open(os.path.join(d, "bad_truncated.JPEG"), "wb").write(data[: len(data) // 2])
        open(os.path.join(d, "bad_empty.JPEG"), "wb").close()
        open(os.path.join(d, "bad_text.JPEG"), "w").write("this is not an image\n")

main()
