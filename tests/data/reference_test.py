#!/usr/bin/env python3
"""Our JPEG sample path against independent references on the same files:
full-size decode vs Pillow (exact), DCT-scaled decode (k/8) vs libjpeg-turbo's djpeg -scale
(exact), and whole samples (of those JPEGs and of a PNG named .JPEG) (random-resized crop, resize + center crop, Caffe resize + random
crop, flip; bilinear, and bicubic for one case of each mode) vs Pillow's crop/resize with the
same filter of the reference decode at the window our sampler printed, i.e. what torchvision's PIL transforms compute for that window: at most 1 grey level
apart (our resampler uses Pillow's fixed-point filter; the window's float coordinates may round
one tap differently). Usage: reference_test.py BUILD WORKDIR"""
import os, subprocess, sys
import numpy as np
from PIL import Image

build, work = sys.argv[1], sys.argv[2]
tool = os.path.join(build, "tests/data-tools/image_dump")
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(7)

def photo(w, h):
    """Smooth colour gradients plus texture and noise: JPEG-typical content."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = 128 + 100 * np.sin(x / 17.0) * np.cos(y / 23.0)
    g = 128 + 90 * np.cos((x + y) / 31.0)
    b = 128 + 80 * np.sin(x * y / 900.0)
    img = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB")

files = []
def save(name, img, **kw):
    p = os.path.join(work, name)
    img.save(p, "JPEG", **kw)
    files.append(p)

save("q90_420.jpg", photo(200, 150), quality=90)
save("q75_444.jpg", photo(123, 177), quality=75, subsampling=0)
save("progressive.jpg", photo(160, 96), quality=85, progressive=True)
save("gray.jpg", photo(90, 70).convert("L"), quality=90)
save("cmyk.jpg", photo(64, 48).convert("CMYK"), quality=90)
# PNG content under a JPEG name, as in a plain folder: the sample path decodes it whole (k=8).
png_named = os.path.join(work, "png_content.JPEG")
photo(111, 83).save(png_named, "PNG")

def run(*args):
    out = subprocess.run([tool, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"image_dump {' '.join(map(str, args))} failed: {out.stdout}{out.stderr}")
    return out.stdout.split()

def read_raw(path, shape):
    return np.fromfile(path, np.uint8).reshape(shape)

def compare(what, got, want, tol):
    d = np.abs(got.astype(int) - want.astype(int))
    if d.max() > tol:
        i = np.unravel_index(d.argmax(), d.shape)
        sys.exit(f"FAIL {what}: max |diff| {d.max()} > {tol} at {i}; first values ours "
                 f"{got.reshape(-1)[:8].tolist()} reference {want.reshape(-1)[:8].tolist()}")
    return int(d.max())

def reference_decode(path, k):
    if k == 8:
        return np.asarray(Image.open(path).convert("RGB"))
    ppm = path + f".{k}.ppm"
    subprocess.run(["djpeg", "-scale", f"{k}/8", "-rgb", "-outfile", ppm, path], check=True)
    return np.asarray(Image.open(ppm).convert("RGB"))

checks = 0
out = os.path.join(work, "out.raw")
for f in files:
    cmyk = f.endswith("cmyk.jpg")
    for k in ([8] if cmyk else [8, 7, 4, 3, 1]):
        w, h = map(int, run("decode", k, f, out))
        ref = reference_decode(f, k)
        compare(f"decode {os.path.basename(f)} at {k}/8", read_raw(out, (h, w, 3)), ref, 0)
        checks += 1

worst = 0
for f in files + [png_named]:
    W, H = Image.open(f).size
    for mode, oh, ow, resize, filt in [("rrc", 32, 32, 0, ""), ("rrc", 20, 28, 0, ""), ("center", 32, 32, 40, ""),
                                       ("center", 24, 24, 0, ""), ("crop", 30, 30, 36, ""),
                                       ("rrc", 32, 32, 0, "bicubic"), ("center", 24, 24, 28, "bicubic"),
                                       ("crop", 30, 30, 36, "bicubic")]:
        pil_filter = Image.BICUBIC if filt else Image.BILINEAR
        for seed in range(2 if filt else 4):   # bicubic: the filter is the only change
            x0, y0, x1, y1, flip, clamp, k = run("sample", mode, oh, ow, resize, 1, seed * 7919 + 1, f, out,
                                                 *([filt] if filt else []))
            x0, y0, x1, y1 = map(float, (x0, y0, x1, y1))
            flip, clamp, k = int(flip), int(clamp), int(k)
            if k != 8 and f.endswith("cmyk.jpg"):
                continue   # djpeg cannot convert CMYK; its full-size decode is checked above
            dec = Image.fromarray(reference_decode(f, k))
            fx, fy = dec.size[0] / W, dec.size[1] / H
            x0, x1, y0, y1 = x0 * fx, x1 * fx, y0 * fy, y1 * fy
            if clamp:   # torchvision: crop (whole pixels), then resize the crop
                lx, ly = int(np.floor(x0)), int(np.floor(y0))
                crop = dec.crop((lx, ly, min(int(np.ceil(x1)), dec.size[0]), min(int(np.ceil(y1)), dec.size[1])))
                ref = crop.resize((ow, oh), pil_filter, box=(x0 - lx, y0 - ly, x1 - lx, y1 - ly))
            else:       # resize the image, then crop: the same as resizing the window
                ref = dec.resize((ow, oh), pil_filter, box=(x0, y0, x1, y1))
            if flip:
                ref = ref.transpose(Image.FLIP_LEFT_RIGHT)
            want = np.asarray(ref).transpose(2, 0, 1)
            worst = max(worst, compare(f"{mode} {filt or 'bilinear'} sample seed {seed} of {os.path.basename(f)} (k={k})",
                                       read_raw(out, (3, oh, ow)), want, 1))
            checks += 1
print(f"{checks} checks passed; samples within {worst} grey level(s) of Pillow")
