#!/usr/bin/env python3
"""Caffe's ImageData pixels against OpenCV (cv2, Debian's python3-opencv), all bit for bit:
1. rt_image_cv_linear against cv2.resize(INTER_LINEAR) on random 1- and 3-channel images, sizes
   up, down, mixed, 2x (OpenCV's INTER_AREA switch), 1-pixel edges;
2. rt_jpeg_decode_opencv / rt_png_decode_opencv against cv2.imread(IMREAD_GRAYSCALE) and
   (IMREAD_COLOR), on 4:2:0, 4:4:4, gray and CMYK JPEGs and RGB, RGBA, palette, gray, 16-bit
   and gAMA-tagged PNGs, and the EXIF orientations 2..8 (JPEG, both byte orders; PNG eXIf)
   turned upright as cv::imread turns them;
3. whole samples (resize to new_height x new_width, crop at the printed offset, mirror; gray and
   colour, JPEG and PNG) against imread + resize + slicing;
and the mutant: the same samples through Pillow's bilinear filter must differ from cv2 (gray ones
under Pillow's filter equal Pillow's own resize of the gray decode).
Usage: opencv_reference.py IMAGE_DUMP WORKDIR"""
import io, os, struct, subprocess, sys, zlib
import numpy as np
import cv2
from PIL import Image

tool, work = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(11)
failures = 0

def run(*args):
    out = subprocess.run([tool, *map(str, args)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"FAIL: image_dump {' '.join(map(str, args))}: {out.stdout}{out.stderr}")
    return out.stdout.split()

def check(what, got, want):
    global failures
    n = int((got != want).sum())
    if n:
        failures += 1
        d = np.abs(got.astype(int) - want.astype(int))
        print(f"FAIL: {what}: {n} of {got.size} bytes differ from OpenCV (max {d.max()})")

def photo(h, w, c=3):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    planes = [128 + 100 * np.sin(x / (9.0 + 4 * k)) * np.cos(y / (13.0 + 3 * k)) for k in range(c)]
    img = np.stack(planes, -1) + rng.normal(0, 14, (h, w, c))
    return np.clip(img, 0, 255).astype(np.uint8)

# 1. the resize alone: (W, H) -> (RW, RH)
sizes = [((37, 29), (64, 50)), ((64, 50), (37, 29)), ((100, 80), (50, 40)), ((100, 80), (227, 227)),
         ((500, 375), (256, 256)), ((256, 256), (227, 227)), ((13, 7), (3, 2)), ((1, 1), (5, 4)),
         ((5, 1), (1, 9)), ((90, 90), (30, 30)), ((33, 44), (33, 100)), ((256, 256), (256, 255))]
raw_in, raw_out = os.path.join(work, "in.raw"), os.path.join(work, "out.raw")
for (w, h), (rw, rh) in sizes:
    for cn in (1, 3):
        img = rng.integers(0, 256, size=(h, w, cn), dtype=np.uint8)
        img.tofile(raw_in)
        run("cvresize", w, h, cn, rw, rh, raw_in, raw_out)
        got = np.fromfile(raw_out, np.uint8).reshape(cn, rh, rw)
        want = cv2.resize(img if cn == 3 else img[..., 0], (rw, rh), interpolation=cv2.INTER_LINEAR)
        check(f"resize {w}x{h} -> {rw}x{rh}, {cn} channel(s)", got, want.reshape(rh, rw, cn).transpose(2, 0, 1))
print(f"resize: {2 * len(sizes)} cases against cv2.resize")

# 2. decodes
def png_with_gamma(rgb, gamma=45455):
    """An RGB PNG with a gAMA chunk (1/2.2): libpng's rgb_to_gray then works through gamma tables."""
    def chunk(t, data):
        return struct.pack(">I", len(data)) + t + data + struct.pack(">I", zlib.crc32(t + data) & 0xffffffff)
    h, w, _ = rgb.shape
    raw = b"".join(b"\0" + rgb[y].tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"gAMA", struct.pack(">I", gamma)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))

rgb = photo(75, 101)
files = {}
def save(name, img, fmt, **kw):
    p = os.path.join(work, name)
    img.save(p, fmt, **kw)
    files[name] = p
save("q85_420.jpg", Image.fromarray(rgb), "JPEG", quality=85)
save("q90_444.jpg", Image.fromarray(rgb), "JPEG", quality=90, subsampling=0)
save("progressive.jpg", Image.fromarray(rgb), "JPEG", quality=80, progressive=True)
save("gray.jpg", Image.fromarray(rgb[..., 0]), "JPEG", quality=90)
save("cmyk.jpg", Image.fromarray(rgb).convert("CMYK"), "JPEG", quality=90)
save("rgb.png", Image.fromarray(rgb), "PNG")
save("rgba.png", Image.fromarray(np.dstack([rgb, photo(75, 101, 1)])), "PNG")
save("palette.png", Image.fromarray(rgb).convert("P"), "PNG")
save("gray.png", Image.fromarray(rgb[..., 1]), "PNG")
save("gray16.png", Image.fromarray((rgb[..., 2].astype(np.int32) * 257).astype(np.uint16)), "PNG")
files["gamma.png"] = os.path.join(work, "gamma.png")
open(files["gamma.png"], "wb").write(png_with_gamma(rgb))
# EXIF orientations 2..8 (cv::imread turns the image upright), little- and big-endian TIFF
def exif(orientation, big=False):
    if not big:
        e = Image.Exif()
        e[0x0112] = orientation
        return e.tobytes()
    tiff = b"MM\0\x2a\0\0\0\x08" + struct.pack(">HHHIHH", 1, 0x0112, 3, 1, orientation, 0) + b"\0\0\0\0"
    return b"Exif\0\0" + tiff
for o in range(2, 9):
    save(f"exif{o}.jpg", Image.fromarray(rgb), "JPEG", quality=90, exif=exif(o))
save("exif8_mm.jpg", Image.fromarray(rgb), "JPEG", quality=90, exif=exif(8, big=True))
save("exif6.png", Image.fromarray(rgb), "PNG", exif=exif(6))
for name, path in files.items():
    for gray in (1, 0):
        w, h = map(int, run("cvdecode", gray, path, raw_out))
        got = np.fromfile(raw_out, np.uint8).reshape(h, w, 1 if gray else 3)
        want = cv2.imread(path, cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_COLOR)
        check(f"decode {name} ({'gray' if gray else 'colour'})", got, want.reshape(h, w, 1) if gray else want[..., ::-1])
print(f"decode: {2 * len(files)} cases against cv2.imread")

# 3. whole samples, and the mutant
def caffe_reference(path, gray, rh, rw, oh, ow, top, left, flip, mode):
    img = cv2.imread(path, cv2.IMREAD_GRAYSCALE if gray else cv2.IMREAD_COLOR)
    if rh:   # Caffe's ReadImageToCVMat with new_height x new_width; else the image as decoded
        img = cv2.resize(img, (rw, rh), interpolation=cv2.INTER_LINEAR)
    if img.ndim == 2:
        img = img[..., None]
    if mode == "center" and (top, left) != ((img.shape[0] - oh) // 2, (img.shape[1] - ow) // 2):
        return None   # Caffe's TEST crop: h_off = (height - crop_h) / 2 in integers
    img = img[top:top + oh, left:left + ow]
    if flip:
        img = img[:, ::-1]
    planes = img.transpose(2, 0, 1)
    return planes if gray else planes[::-1]   # OpenCV's B, G, R as the sampler's R, G, B

mutant_differs = samples = 0
cases = [("q85_420.jpg", "crop", 56, 56, 64, 80), ("q90_444.jpg", "center", 40, 40, 48, 48),
         ("gray.jpg", "crop", 100, 120, 110, 130), ("rgba.png", "crop", 30, 30, 36, 40),
         ("cmyk.jpg", "center", 20, 24, 30, 35), ("progressive.jpg", "crop", 90, 90, 150, 200),
         ("exif6.jpg", "crop", 40, 30, 80, 60), ("exif6.png", "center", 30, 30, 40, 50),
         ("q85_420.jpg", "center", 40, 40, 0, 0), ("gray.png", "crop", 50, 50, 0, 0)]   # 0: no resize
for name, mode, oh, ow, rh, rw in cases:
    for gray in (0, 1):
        for seed in (1, 2, 3):
            out = os.path.join(work, "sample.raw")
            top, left, flip = map(int, run("caffe", mode, oh, ow, rh, rw, gray, 1, seed, files[name], out))
            got = np.fromfile(out, np.uint8).reshape(1 if gray else 3, oh, ow)
            want = caffe_reference(files[name], gray, rh, rw, oh, ow, top, left, flip, mode)
            if want is None:
                failures += 1
                print(f"FAIL: sample {name} {mode}: the center crop at ({top}, {left}), not Caffe's integer halves")
                continue
            check(f"sample {name} {mode} {oh}x{ow} of {rh}x{rw} gray={gray} seed {seed}", got, want)
            samples += 1
            run("caffe", mode, oh, ow, rh, rw, gray, 1, seed, files[name], out, "pillow")
            mutant = np.fromfile(out, np.uint8).reshape(got.shape)
            mutant_differs += int((mutant != want).any())
            if gray and rh:   # a gray image under Pillow's filter: Pillow's resize of the gray decode, at the crop's box
                im = Image.fromarray(cv2.imread(files[name], cv2.IMREAD_GRAYSCALE))
                W, H = im.size
                box = (left * W / rw, top * H / rh, (left + ow) * W / rw, (top + oh) * H / rh)
                pil = np.asarray(im.resize((ow, oh), Image.BILINEAR, box=box))
                check(f"gray sample {name} under Pillow's filter", mutant[0], pil[:, ::-1] if flip else pil)
print(f"samples: {samples} against imread + resize + crop + mirror; the Pillow-filter mutant differs in "
      f"{mutant_differs} of them")
if mutant_differs < samples // 2:
    failures += 1
    print("FAIL: the mutant (Pillow's bilinear filter) matches OpenCV too often: the comparison cannot fail")
if failures:
    sys.exit(1)
print("opencv_reference: all bit-exact")
