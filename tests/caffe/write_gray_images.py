#!/usr/bin/env python3
"""Two classes of small colour images, told apart by their brightness (class 0 dark, class 1
light, each of random hue so that only the gray level says the class), as JPEG, PNG and CMYK
JPEG files of assorted sizes under OUT/img/{train,val}/c{label}/, and Caffe's "path label"
lists OUT/train.txt (48 images) and OUT/val.txt (16). Usage: write_gray_images.py OUT"""
import os, sys
import numpy as np
from PIL import Image

out = sys.argv[1]
r = np.random.default_rng(5)
sizes = [(14, 10), (12, 12), (9, 16), (20, 13)]
for split, n in (("train", 48), ("val", 16)):
    lines = []
    for i in range(n):
        label = i % 2
        h, w = sizes[i % 4]
        hue = r.uniform(0.3, 1.0, 3)
        base = hue / hue.mean() * (70 if label == 0 else 180)
        px = np.clip(base + r.normal(0, 25, (h, w, 3)), 0, 255).astype(np.uint8)
        sub = f"{split}/c{label}"
        os.makedirs(f"{out}/img/{sub}", exist_ok=True)
        kind = ("png", "jpg", "cmyk.jpg")[i % 3]
        name = f"{sub}/{i:03d}.{kind}"
        im = Image.fromarray(px)
        (im.convert("CMYK") if kind == "cmyk.jpg" else im).save(f"{out}/img/{name}", "PNG" if kind == "png" else "JPEG")
        lines.append(f"{name} {label}")
    open(f"{out}/{split}.txt", "w").write("\n".join(lines) + "\n")
