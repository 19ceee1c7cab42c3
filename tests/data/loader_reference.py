#!/usr/bin/env python3
"""The loader's validation samples (dataset order, resize shorter side + center crop, floats
x/255) against an independent decode: libjpeg-turbo's djpeg at the DCT scale the loader uses
for that window (Pillow's own decode where the scale is 8/8), then torchvision's Resize +
CenterCrop arithmetic done with Pillow's resize (bilinear, or bicubic if FILTER is "bicubic").
Tolerance: 1/255 (one grey level).
Usage: loader_reference.py VAL_DIR DUMP RESIZE CROP COUNT [FILTER]"""
import math, os, subprocess, sys, tempfile
import numpy as np
from PIL import Image

val, dump, resize, crop, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
pil_filter = Image.BICUBIC if sys.argv[6:] == ["bicubic"] else Image.BILINEAR
files = []
for c in sorted(d for d in os.listdir(val) if os.path.isdir(os.path.join(val, d))):
    for root, dirs, names in sorted(os.walk(os.path.join(val, c))):
        dirs.sort()
        files += [os.path.join(root, n) for n in sorted(names)]
got = np.fromfile(dump, np.float32).reshape(-1, 3, crop, crop)
worst = 0.0
tmp = tempfile.mkdtemp()
for i, f in enumerate(files[:count]):
    W, H = Image.open(f).size
    rw, rh = (resize, int(resize * H / W)) if W <= H else (int(resize * W / H), resize)
    top, left = int(round((rh - crop) / 2.0)), int(round((rw - crop) / 2.0))
    sx, sy = W / rw, H / rh
    box = [left * sx, top * sy, (left + crop) * sx, (top + crop) * sy]
    k = next((k for k in range(1, 8) if (box[2] - box[0]) * k / 8 >= crop and (box[3] - box[1]) * k / 8 >= crop), 8)
    if k == 8:
        img = Image.open(f).convert("RGB")
    else:
        ppm = os.path.join(tmp, "s.ppm")
        subprocess.run(["djpeg", "-scale", f"{k}/8", "-rgb", "-outfile", ppm, f], check=True)
        img = Image.open(ppm).convert("RGB")
    fx, fy = img.size[0] / W, img.size[1] / H
    ref = img.resize((crop, crop), pil_filter, box=(box[0] * fx, box[1] * fy, box[2] * fx, box[3] * fy))
    want = np.asarray(ref).transpose(2, 0, 1).astype(np.float32) / 255.0
    d = np.abs(got[i] - want)
    worst = max(worst, float(d.max()))
    if d.max() > 1.0 / 255 + 1e-6:
        j = np.unravel_index(d.argmax(), d.shape)
        sys.exit(f"FAIL sample {i} ({f}, DCT scale {k}/8): max |diff| {d.max() * 255:.2f}/255 at {j}; "
                 f"ours {got[i].reshape(-1)[:6] * 255} reference {want.reshape(-1)[:6] * 255}")
print(f"{min(count, len(files))} validation samples ({'bicubic' if pil_filter == Image.BICUBIC else 'bilinear'}) "
      f"within {worst * 255:.2f}/255 of the reference")
