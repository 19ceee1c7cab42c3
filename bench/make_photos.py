#!/usr/bin/env python3
"""ImageNet-sized photographic JPEGs for `make bench-data`: crops of the photographs in
Debian's mate-backgrounds (its nature/ and other JPEG photos), resized so the shorter side is
375 (about 500x375, ImageNet's typical size) and re-encoded at quality 90.
Usage: make_photos.py OUT COUNT"""
import glob, os, sys
import numpy as np
from PIL import Image

out, count = sys.argv[1], int(sys.argv[2])
srcs = sorted(glob.glob("/usr/share/backgrounds/mate/**/*.jpg", recursive=True))
if not srcs:
    sys.exit("no photographs found: apt-get install mate-backgrounds")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
for i in range(count):
    img = Image.open(srcs[i % len(srcs)]).convert("RGB")
    W, H = img.size
    cw, ch = int(W * rng.uniform(0.5, 1.0)), 0
    ch = min(H, int(cw * 0.75))
    x, y = int(rng.integers(0, W - cw + 1)), int(rng.integers(0, H - ch + 1))
    crop = img.crop((x, y, x + cw, y + ch)).resize((500, 375), Image.BICUBIC)
    if i % 3 == 0:
        crop = crop.transpose(Image.TRANSPOSE).resize((375, 500), Image.BICUBIC)   # some portraits
    crop.save(os.path.join(out, f"photo_{i:04d}.jpg"), "JPEG", quality=90)
print(f"{count} photos from {len(srcs)} wallpapers in {out}")
